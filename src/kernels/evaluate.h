// Evaluating a scalar program over broadcast arrays, block by block: what an
// element-wise kernel node does, apart from ONNX Runtime (so it is tested,
// and sanitized, without a runtime).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "program.h"

namespace pytensor_onnx::kernels {

struct ArrayArg {
  const void* data;  // elements of the program's input dtype
  std::vector<int64_t> shape;
  // Empty: the elements are C-contiguous, and `shape` is aligned with the
  // output's on the right (NumPy's broadcasting). Else a view (an Elemwise
  // node's attribute `input_axes`): `shape` has the output's rank, and the
  // element at index k is at data + sum(k[d] * strides[d]) elements (axes of
  // size 1 broadcast whatever their stride).
  std::vector<int64_t> strides = {};
};

// The arguments of one run: `size()` ArrayArgs from `begin()`, often the
// first ones of a buffer a kernel keeps from run to run (its stages read
// different numbers of inputs; shrinking the buffer would free their
// shapes' memory, allocated again by the next stage).
class ArgList {
 public:
  explicit ArgList(const std::vector<ArrayArg>& args) : ArgList(args.data(), args.size()) {}
  ArgList(const ArrayArg* first, size_t count) : first_(first), count_(count) {}
  size_t size() const { return count_; }
  const ArrayArg& operator[](size_t i) const { return first_[i]; }

 private:
  const ArrayArg* first_;
  size_t count_;
};

// The sum of a[0..n) as NumPy's add.reduce adds a contiguous array
// (pairwise); a summed output of a program is 0.0 + numpy_sum(its values).
double numpy_sum(const double* a, size_t n);

// A shape as Python prints it: "(3,)", "(2, 4)".
std::string shape_text(const std::vector<int64_t>& shape);

// NumPy broadcasting of `shapes`; throws std::invalid_argument naming them.
std::vector<int64_t> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes);
// The same into `out` (whose storage a kernel reuses from run to run).
void broadcast_into(const std::vector<const std::vector<int64_t>*>& shapes, std::vector<int64_t>& out);

// Runs `task(0) ... task(n - 1)`, possibly in parallel (ONNX Runtime's
// intra-op pool in a session).
using ParallelFor = std::function<void(size_t n, const std::function<void(size_t)>& task)>;

// Runs `work(first, last)` over [0, total) in chunks of `chunk`: on
// `parallel` when one is given and there is more than one chunk, else in
// one call on this thread.
void run_chunked(size_t total, size_t chunk, const ParallelFor* parallel,
                 const std::function<void(size_t first, size_t last)>& work);

// A run of one compiled block over every position, a PyMC-sized stage's
// usual run (inputs each of one element or of the output's shape, no views,
// at most one block): the block function and the number of positions. A
// later run of inputs of the same shapes runs the same (run_one_block).
struct OneBlockRun {
  const CompiledBlock* block = nullptr;  // nullptr: not such a run
  size_t size = 0;
};

// Writes the program's outputs, each of shape `out_shape` (the inputs'
// broadcast shape), into `outputs`. Large arrays are split into tasks for
// `parallel` when one is given. `ran`, when given, tells whether the run was
// one compiled block, and which.
void evaluate(const Program& program, ArgList inputs, const std::vector<int64_t>& out_shape,
              const std::vector<void*>& outputs, const ParallelFor* parallel = nullptr, OneBlockRun* ran = nullptr);
inline void evaluate(const Program& program, const std::vector<ArrayArg>& inputs, const std::vector<int64_t>& out_shape,
                     const std::vector<void*>& outputs, const ParallelFor* parallel = nullptr) {
  evaluate(program, ArgList(inputs), out_shape, outputs, parallel);
}

// What evaluate did in the run that gave `one` (a block), on inputs of the
// same shapes at `inputs` (input i's data): the same function on them, the
// same reductions. Nothing is checked: the shapes must be those of that run.
void run_one_block(const Program& program, const OneBlockRun& one, const void* const* inputs,
                   const std::vector<void*>& outputs);

}  // namespace pytensor_onnx::kernels
