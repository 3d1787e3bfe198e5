#include "evaluate.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "pairwise.h"
#include "thread_instance.h"

namespace pytensor_onnx::kernels {
namespace {

// Elements per block: 512 float64 are 4 KiB a register, so a program's live
// registers stay in L1/L2 while each instruction runs over the block.
constexpr size_t kBlock = 512;
// Below this many elements, and this much work (elements times the
// program's cost per element, in adds: Program::cost), one thread runs the
// whole node: handing work to the pool costs more than it saves. At 2^14
// float32 elements a bias-and-ReLU node already gains from two threads; a
// node of a few exps and logs (cost ~60) gains from ~4,000 elements on (a
// logistic regression's 1e4 elements: 430 us on one thread, half on two),
// while PyMC's Normal log-density on 1e4 (cost ~12, two sums) lost 25% on
// the pool: measured, bench/results.md.
constexpr size_t kParallelMin = 1 << 14;
constexpr int64_t kParallelWork = 1 << 18;
// A task of the pool is about this much work (blocks of a cheap program,
// down to one block of a costly one): 16 blocks of a program of cost 2.
constexpr int64_t kTaskWork = 16 * static_cast<int64_t>(kBlock) * 2;
constexpr size_t kMaxBlocksPerTask = 16;
// A compiled block writes its reduced outputs into a thread's buffer, one
// after the other this many 8-byte words apart: a block's worth and a cache
// line, so that the outputs' stores are not 4 KiB apart (x86 then takes
// loads and stores at the same low address bits for conflicts).
constexpr size_t kReducedStride = kBlock + 8;
// A thread keeps the buffer of position-order sums' terms up to this many
// values (and of pairwise sums' leaf sums up to a 64th of it).
constexpr size_t kKeptTerms = 1 << 22;

// One input as the block loop reads it.
struct InputView {
  const char* data;
  size_t itemsize;
  enum Kind { Full, Scalar, Broadcast } kind;
  std::vector<int64_t> strides;  // in elements, per output axis; 0 where broadcast
};

struct Call {
  const Program* program;
  // The program's inputs: the first num_inputs of `inputs`, which only grows
  // (programs of other sizes share this thread's Call, and a shrink freed
  // the views' strides, allocated again on the next run).
  std::vector<InputView> inputs;
  size_t num_inputs = 0;
  std::vector<int64_t> out_shape;
  size_t size;
  std::vector<char*> outputs;
  const RunPlan* plan = nullptr;       // what the inputs of one element decide (run_plan.h)
  std::vector<bool> scalar_inputs;     // per input: whether it holds one element
  std::vector<uint64_t> scalar_value;  // per register holding a scalar (plan->scalar)
  std::vector<int> reduced_index;      // per output: its column of `partials`, -1 unless reduced
  size_t num_reduced = 0;
  size_t blocks_per_task = kMaxBlocksPerTask;
  // Per task, per reduced output: the task's sum (all/any: 1 or 0). Tasks of
  // one call write disjoint entries, so the runs that share the call may
  // write them.
  mutable std::vector<double> partials;
  // A position-order sum's terms (per reduced output, `size` values), added
  // once every block has run: the same bits whichever threads computed them.
  mutable std::vector<double> terms;
  // Pairwise sums (Reduction::Sum): the leaves of NumPy's summation tree
  // (pairwise.h), starting at leaf_start[l] (and leaf_start.back() == size);
  // blocks are whole leaves, block b from position block_start[b] and leaf
  // block_leaf[b], so each block adds its own leaves' values while they are
  // in cache, into leaf_sums (per reduced output, one value per leaf). The
  // tree over the leaves' sums is added once every block has run. Empty
  // block_start: blocks of kBlock positions.
  std::vector<size_t> leaf_start, block_start, block_leaf;
  mutable std::vector<double> leaf_sums;
  // The compiled block function this call runs (compiled.h), or none: the
  // instructions are interpreted.
  const CompiledBlock* compiled = nullptr;
};

// Fills `dst` with `n` copies of the element at `src`.
void fill(char* dst, const char* src, size_t n, size_t itemsize) {
  switch (itemsize) {
    case 8: {
      uint64_t v;
      std::memcpy(&v, src, 8);
      for (size_t k = 0; k < n; ++k) std::memcpy(dst + 8 * k, &v, 8);
      return;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, src, 4);
      for (size_t k = 0; k < n; ++k) std::memcpy(dst + 4 * k, &v, 4);
      return;
    }
    default:
      for (size_t k = 0; k < n; ++k) std::memcpy(dst + itemsize * k, src, itemsize);
  }
}

// Copies `run` elements of `Word`s, `stride` elements apart from `src` on
// (0: one element repeated), to `dst`. Inline loops rather than memcpy calls:
// PyMC's broadcast operands have rows of a few elements (a (70, 1) column
// against (70, 3)), and a call per row cost more than its copy.
template <class Word>
inline void copy_run(Word* dst, const char* src, size_t run, int64_t stride) {
  if (stride == 0) {
    Word v;
    std::memcpy(&v, src, sizeof v);
    for (size_t r = 0; r < run; ++r) dst[r] = v;
  } else if (stride == 1 && run >= 16) {
    std::memcpy(dst, src, run * sizeof(Word));
  } else {
    const auto step = static_cast<std::ptrdiff_t>(stride) * static_cast<std::ptrdiff_t>(sizeof(Word));
    for (size_t r = 0; r < run; ++r, src += step) std::memcpy(dst + r, src, sizeof(Word));
  }
}

// Block [start, start + n) of a matrix broadcast along one axis, PyMC's
// usual shapes: a row repeated down the rows (a (3,) parameter against
// (70, 3) observations, strides (0, s)), or each row's one element repeated
// along it (a (70, 1) column, strides (s, 0)). Returns false for the other
// layouts. The general walk below paid its bookkeeping per row, ~0.7 ns an
// element on rows of 3: the Dirichlet mixture gathers eight (70, 3) blocks a
// call, the Gaussian process eight (20, 20) ones.
template <class Word>
bool gather_matrix_broadcast(const InputView& in, const std::vector<int64_t>& shape, size_t start, size_t n,
                             Word* dst) {
  const auto cols = static_cast<size_t>(shape[1]);
  const int64_t row_stride = in.strides[0], col_stride = in.strides[1];
  if (n == 0 || (row_stride != 0 && col_stride != 0)) return false;
  const auto load = [&in](int64_t element) {
    Word v;
    std::memcpy(&v, in.data + element * static_cast<int64_t>(sizeof(Word)), sizeof v);
    return v;
  };
  size_t col = start % cols;
  if (row_stride == 0) {
    // One period of `cols` elements from the block's first column on, then
    // copies of what is written, doubling: every copy starts a period.
    const size_t period = std::min(n, cols);
    for (size_t k = 0; k < period; ++k) {
      dst[k] = load(static_cast<int64_t>(col) * col_stride);
      if (++col == cols) col = 0;
    }
    for (size_t have = period; have < n;) {
      const size_t copied = std::min(have, n - have);
      std::memcpy(dst + have, dst, copied * sizeof(Word));
      have += copied;
    }
    return true;
  }
  int64_t element = static_cast<int64_t>(start / cols) * row_stride;
  for (size_t k = 0; k < n; element += row_stride) {
    const Word v = load(element);
    const size_t run = std::min(cols - col, n - k);
    for (size_t r = 0; r < run; ++r) dst[k + r] = v;
    k += run;
    col = 0;
  }
  return true;
}

// Copies block [start, start + n) of a broadcast input into `dst` (a slot:
// 8-byte aligned) row by row of the innermost axis: a run of the row's
// elements (a copy where the input is contiguous there, repeats of one
// element where it is broadcast, strided reads of a view), then the next
// row, whose position is kept in locals for the two innermost axes and in
// `index` (the caller's buffer, BlockScratch) for the outer ones.
// Per-element index arithmetic made a (1, 64) bias over (256, 64) rows
// cost 3x ONNX Runtime's own Add.
template <class Word>
void gather_words(const InputView& in, const std::vector<int64_t>& shape, size_t start, size_t n, Word* dst,
                  std::vector<int64_t>& index) {
  const size_t rank = shape.size();
  if (rank == 2 && gather_matrix_broadcast(in, shape, start, n, dst)) return;
  index.assign(rank, 0);
  int64_t offset = 0;
  size_t rest = start;
  for (size_t d = rank; d-- > 0;) {
    index[d] = static_cast<int64_t>(rest % static_cast<size_t>(shape[d]));
    rest /= static_cast<size_t>(shape[d]);
    offset += index[d] * in.strides[d];
  }
  const size_t last = rank - 1;
  const int64_t inner = shape[last], inner_stride = in.strides[last];
  // The row axis (the one before the innermost); a vector is one row.
  const int64_t rows = rank >= 2 ? shape[last - 1] : 1;
  const int64_t row_stride = rank >= 2 ? in.strides[last - 1] : 0;
  int64_t col = index[last];
  int64_t row = rank >= 2 ? index[last - 1] : 0;
  size_t k = 0;
  while (true) {
    const size_t run = std::min(static_cast<size_t>(inner - col), n - k);
    copy_run(dst + k, in.data + offset * static_cast<int64_t>(sizeof(Word)), run, inner_stride);
    k += run;
    if (k >= n) return;
    // (The row ended: the next one starts at column 0.)
    offset += row_stride - col * inner_stride;
    col = 0;
    if (++row < rows) continue;
    offset -= row_stride * rows;
    row = 0;
    for (size_t d = rank >= 2 ? last - 1 : 0; d-- > 0;) {
      offset += in.strides[d];
      if (++index[d] < shape[d]) break;
      offset -= in.strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

void gather(const InputView& in, const std::vector<int64_t>& shape, size_t start, size_t n, char* dst,
            std::vector<int64_t>& index) {
  switch (in.itemsize) {
    case 8:
      return gather_words(in, shape, start, n, reinterpret_cast<uint64_t*>(dst), index);
    case 4:
      return gather_words(in, shape, start, n, reinterpret_cast<uint32_t*>(dst), index);
    case 2:
      return gather_words(in, shape, start, n, reinterpret_cast<uint16_t*>(dst), index);
    case 1:
      return gather_words(in, shape, start, n, reinterpret_cast<uint8_t*>(dst), index);
    default:  // (every DType is 1, 2, 4 or 8 bytes)
      throw std::logic_error("gather: an element of " + std::to_string(in.itemsize) + " bytes");
  }
}

// Whether the pairwise sums of this run are added block by block, each
// block's leaves while its values are in cache (Call::leaf_start), rather
// than kept as terms and added after every block ran. From kSumsInBlocksMin
// positions on: below it the terms stay in cache anyway, and blocks of
// whole leaves (not a multiple of the compiled loop's vector step) left a
// scalar remainder in every block (PyMC Normal on 1e4 observations: 10.1 us
// with terms, 12 us in blocks; on 1e6, 1.64 ms with terms, 0.35 ms in blocks).
constexpr size_t kSumsInBlocksMin = size_t{1} << 15;
bool sums_in_blocks(const Call& call) { return !call.block_start.empty(); }

// NumPy adds a sum in chunks of this many positions, the chunks in order
// (NumPy 2.0's buffer: Program::sum_chunk), or all at once.
size_t sum_chunk(const Program& p, size_t size) {
  return p.sum_chunk > 0 ? static_cast<size_t>(p.sum_chunk) : std::max<size_t>(size, 1);
}

// The leaves of NumPy's pairwise summation of [start, start + n), in order.
void add_leaves(size_t start, size_t n, std::vector<size_t>& leaf_start) {
  if (n <= kPairwiseLeaf) {
    leaf_start.push_back(start);
    return;
  }
  size_t half = n / 2;
  half -= half % 8;
  add_leaves(start, half, leaf_start);
  add_leaves(start + half, n - half, leaf_start);
}

// NumPy's pairwise sum of n positions from the sums of its leaves, taken in
// order from `leaf_sums` (numpy_sum's splits).
double pairwise_tree(size_t n, const double*& leaf_sums) {
  if (n <= kPairwiseLeaf) return *leaf_sums++;
  size_t half = n / 2;
  half -= half % 8;
  const double left = pairwise_tree(half, leaf_sums);
  return left + pairwise_tree(n - half, leaf_sums);
}

// Leaves of every chunk, and blocks of whole leaves of up to kBlock positions.
void plan_leaf_blocks(Call& call, size_t chunk) {
  for (size_t start = 0; start < call.size; start += chunk) add_leaves(start, std::min(chunk, call.size - start), call.leaf_start);
  call.leaf_start.push_back(call.size);
  const size_t num_leaves = call.leaf_start.size() - 1;
  for (size_t l = 0; l < num_leaves;) {
    call.block_start.push_back(call.leaf_start[l]);
    call.block_leaf.push_back(l);
    const size_t limit = call.leaf_start[l] + kBlock;
    ++l;  // (a leaf holds at most kPairwiseLeaf <= kBlock positions)
    while (l < num_leaves && call.leaf_start[l + 1] <= limit) ++l;
  }
  call.block_start.push_back(call.size);
  call.block_leaf.push_back(num_leaves);
}

// What the blocks of a run need besides the Call, per thread: concurrent
// runs of one session share the program, never the scratch. One object
// per thread for all of them (thread_instance.h): the calling thread's
// fetched with its Call, a pool thread's once per task.
struct BlockScratch {
  std::vector<uint64_t> slots;        // kBlock 8-byte elements per slot of the program
  std::vector<Operand> operands;      // per register (interpreted programs)
  std::vector<double> filled;         // a one-value output, filled, for its leaves' sums
  std::vector<const void*> inputs;    // per input of a compiled block function
  std::vector<void*> outputs;         // per output of a compiled block function
  std::vector<uint64_t> reduced;      // reduced outputs' values of one block
  std::vector<int64_t> index;         // gather's position
};

// One block through the compiled function: inputs it reads as arrays are
// the input's own elements, or gathered (broadcast) or filled (one element)
// into their slots; outputs are written in place, or into a buffer that
// `reduce(j, values, scalar)` then reduces.
template <class SlotData, class Reduce>
void run_compiled_block(const Call& call, size_t start, size_t n, SlotData& slot_data, Reduce& reduce,
                        BlockScratch& scratch) {
  const Program& p = *call.program;
  const std::vector<bool>& scalar = call.compiled->scalar_inputs;
  std::vector<const void*>& inputs = scratch.inputs;
  std::vector<void*>& outputs = scratch.outputs;
  std::vector<uint64_t>& reduced = scratch.reduced;
  inputs.resize(call.num_inputs);
  outputs.resize(p.outputs.size());
  if (reduced.size() < call.num_reduced * kReducedStride) reduced.resize(call.num_reduced * kReducedStride);
  for (size_t i = 0; i < call.num_inputs; ++i) {
    const InputView& in = call.inputs[i];
    if (scalar[i]) {
      inputs[i] = &call.scalar_value[i];
    } else if (in.kind == InputView::Full) {
      inputs[i] = in.data + start * in.itemsize;
    } else {
      char* slot = slot_data(static_cast<int>(i));
      if (in.kind == InputView::Broadcast) gather(in, call.out_shape, start, n, slot, scratch.index);
      else fill(slot, reinterpret_cast<const char*>(&call.scalar_value[i]), n, in.itemsize);
      inputs[i] = slot;
    }
  }
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    if (call.reduced_index[j] >= 0 && is_sum(p.reductions[j]) && !(sums_in_blocks(call) && p.reductions[j] == Reduction::Sum)) {
      outputs[j] = call.terms.data() + static_cast<size_t>(call.reduced_index[j]) * call.size + start;
    } else if (call.reduced_index[j] >= 0) {
      outputs[j] = reduced.data() + static_cast<size_t>(call.reduced_index[j]) * kReducedStride;
    } else {
      outputs[j] = call.outputs[j] + start * dtype_size(p.registers[p.outputs[j]]);
    }
  }
  call.compiled->fn(inputs.data(), outputs.data(), static_cast<int64_t>(n));
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    if (call.reduced_index[j] >= 0) reduce(j, outputs[j], false);
  }
}

// Blocks [first_block, last_block) of `call`, with `scratch`: the running
// thread's.
void run_blocks(const Call& call, size_t first_block, size_t last_block, BlockScratch& scratch) {
  const Program& p = *call.program;
  const size_t words = static_cast<size_t>(p.num_slots) * kBlock;
  if (scratch.slots.size() < words) scratch.slots.resize(words);
  std::vector<Operand>& operands = scratch.operands;
  if (call.compiled == nullptr) {
    if (operands.size() < p.registers.size()) operands.resize(p.registers.size());
    for (size_t r = 0; r < p.registers.size(); ++r) {
      operands[r] = call.plan->scalar[r] ? Operand{&call.scalar_value[r], true} : Operand{nullptr, false};
    }
  }
  auto slot_data = [&](int r) {
    return reinterpret_cast<char*>(scratch.slots.data() + static_cast<size_t>(p.slot[r]) * kBlock);
  };
  Operand args[kMaxArity];
  std::vector<double>& filled = scratch.filled;
  for (size_t b = first_block; b < last_block; ++b) {
    const bool leaf_blocks = !call.block_start.empty();
    const size_t start = leaf_blocks ? call.block_start[b] : b * kBlock;
    const size_t n = leaf_blocks ? call.block_start[b + 1] - start : std::min(kBlock, call.size - start);
    for (size_t i = 0; i < call.num_inputs && call.compiled == nullptr; ++i) {
      const InputView& in = call.inputs[i];
      if (in.kind == InputView::Full) {
        operands[i] = {in.data + start * in.itemsize, false};
      } else if (in.kind == InputView::Broadcast) {
        gather(in, call.out_shape, start, n, slot_data(static_cast<int>(i)), scratch.index);
        operands[i] = {slot_data(static_cast<int>(i)), false};
      }
    }
    // Output j's reduction over this block's values (`scalar`: one value for
    // all n): a sum's terms are kept, an all/any is taken here.
    auto reduce = [&](size_t j, const void* data, bool scalar) {
      if (p.reductions[j] == Reduction::Sum && leaf_blocks) {
        const double* values = static_cast<const double*>(data);
        if (scalar) {
          filled.assign(n, values[0]);
          values = filled.data();
        }
        const size_t num_leaves = call.leaf_start.size() - 1;
        double* sums = call.leaf_sums.data() + static_cast<size_t>(call.reduced_index[j]) * num_leaves;
        size_t l = call.block_leaf[b];
        for (; l + 1 < call.block_leaf[b + 1]; l += 2) {
          const size_t a = call.leaf_start[l], mid = call.leaf_start[l + 1], end = call.leaf_start[l + 2];
          if (mid - a < 8 || end - mid < 8) break;  // (a leaf of fewer than 8: only a whole sum of < 8)
          two_leaf_sums(values + (a - start), mid - a, values + (mid - start), end - mid, sums + l);
        }
        for (; l < call.block_leaf[b + 1]; ++l) {
          sums[l] = leaf_sum(values + (call.leaf_start[l] - start), call.leaf_start[l + 1] - call.leaf_start[l]);
        }
        return;
      }
      if (is_sum(p.reductions[j])) {  // (terms, added after every block ran)
        const double* values = static_cast<const double*>(data);
        double* dst = call.terms.data() + static_cast<size_t>(call.reduced_index[j]) * call.size + start;
        if (values != dst) {
          for (size_t k = 0; k < n; ++k) dst[k] = values[scalar ? 0 : k];
        }
        return;
      }
      double& acc = call.partials[first_block / call.blocks_per_task * call.num_reduced + call.reduced_index[j]];
      const size_t count = scalar ? 1 : n;
      const bool* values = static_cast<const bool*>(data);
      const bool all = p.reductions[j] == Reduction::All;
      bool held = acc != 0.0;
      for (size_t k = 0; k < count && held == all; ++k) held = values[k];
      acc = held ? 1.0 : 0.0;
    };
    if (call.compiled != nullptr) {
      run_compiled_block(call, start, n, slot_data, reduce, scratch);
      continue;
    }
    for (size_t k : call.plan->block_code) {
      const Instruction& ins = p.code[k];
      for (size_t a = 0; a < ins.args.size(); ++a) args[a] = operands[ins.args[a]];
      char* out = slot_data(ins.result);
      ins.loop(args, out, n);
      operands[ins.result] = {out, false};
    }
    for (size_t j = 0; j < p.outputs.size(); ++j) {
      const int r = p.outputs[j];
      if (call.reduced_index[j] >= 0) {
        reduce(j, operands[r].data, operands[r].scalar);
        continue;
      }
      const size_t itemsize = dtype_size(p.registers[r]);
      char* dst = call.outputs[j] + start * itemsize;
      const char* src = static_cast<const char*>(operands[r].data);
      if (operands[r].scalar) {
        for (size_t k = 0; k < n; ++k) std::memcpy(dst + k * itemsize, src, itemsize);
      } else {
        std::memcpy(dst, src, n * itemsize);
      }
    }
  }
}

// The plan for a run whose inputs hold one element where `scalar_inputs`
// says (run_plan.h).
RunPlan make_plan(const Program& p, const std::vector<bool>& scalar_inputs) {
  RunPlan plan;
  plan.key = scalar_inputs;
  plan.scalar.assign(p.registers.size(), false);
  for (size_t i = 0; i < scalar_inputs.size(); ++i) plan.scalar[i] = scalar_inputs[i];
  for (size_t r = p.num_inputs(); r < p.registers.size(); ++r) {
    if (!p.is_constant[r]) continue;
    plan.scalar[r] = true;
    plan.constants.push_back(static_cast<int>(r));
  }
  for (size_t k = 0; k < p.code.size(); ++k) {
    const Instruction& ins = p.code[k];
    const bool all_scalar =
        std::all_of(ins.args.begin(), ins.args.end(), [&plan](int a) { return plan.scalar[static_cast<size_t>(a)]; });
    if (all_scalar) {
      plan.scalar_code.push_back(k);
      plan.scalar[static_cast<size_t>(ins.result)] = true;
    } else {
      plan.block_code.push_back(k);
    }
  }
  // A compiled block function written for inputs that are one element here,
  // preferably for exactly those; else the blocks interpret.
  for (size_t v = 0; v < p.compiled.size(); ++v) {
    const CompiledBlock& variant = p.compiled[v];
    if (variant.scalar_inputs.size() != scalar_inputs.size()) continue;
    bool fits = true, exact = true;
    for (size_t i = 0; i < scalar_inputs.size(); ++i) {
      fits = fits && (scalar_inputs[i] || !variant.scalar_inputs[i]);
      exact = exact && scalar_inputs[i] == variant.scalar_inputs[i];
    }
    if (fits && (plan.compiled < 0 || exact)) plan.compiled = static_cast<int>(v);
  }
  plan.cost = 0;
  for (size_t k : plan.block_code) plan.cost += p.code[k].cost;
  plan.cost = std::max<int64_t>(plan.cost, 1);
  return plan;
}

// A sum's `size` terms added as the program asks when no block added its
// own leaves: 0.0 plus NumPy's pairwise sums of its chunks (Reduction::Sum),
// or the terms in position order (SequentialSum).
double sum_of_terms(const Program& p, Reduction reduction, const double* terms, size_t size) {
  double total = 0.0;
  if (reduction == Reduction::Sum) {
    const size_t chunk = sum_chunk(p, size);
    for (size_t start = 0; start < size; start += chunk) total += numpy_sum(terms + start, std::min(chunk, size - start));
  } else {
    for (size_t k = 0; k < size; ++k) total += terms[k];
  }
  return total;
}

// Block function `block` over `size` positions of the inputs at `in`, its
// reduced outputs' values into the thread's buffer and reduced as the
// general path reduces one block.
void call_one_block(const Program& p, const CompiledBlock& block, const void* const* in, size_t size,
                    const std::vector<void*>& outputs, BlockScratch& scratch) {
  std::vector<void*>& out = scratch.outputs;
  out.assign(outputs.begin(), outputs.end());
  const size_t num_reduced = static_cast<size_t>(
      std::count_if(p.reductions.begin(), p.reductions.end(), [](Reduction r) { return r != Reduction::None; }));
  if (scratch.reduced.size() < num_reduced * kReducedStride) scratch.reduced.resize(num_reduced * kReducedStride);
  for (size_t j = 0, k = 0; j < p.reductions.size(); ++j) {
    if (p.reductions[j] != Reduction::None) out[j] = scratch.reduced.data() + (k++) * kReducedStride;
  }
  block.fn(in, out.data(), static_cast<int64_t>(size));
  for (size_t j = 0; j < p.reductions.size(); ++j) {
    const Reduction reduction = p.reductions[j];
    if (reduction == Reduction::None) continue;
    if (is_sum(reduction)) {
      const double total = sum_of_terms(p, reduction, static_cast<const double*>(out[j]), size);
      std::memcpy(outputs[j], &total, sizeof total);
    } else {
      const auto* values = static_cast<const bool*>(out[j]);
      const bool all = reduction == Reduction::All;
      bool held = all;
      for (size_t k = 0; k < size && held == all; ++k) held = values[k];
      std::memcpy(outputs[j], &held, sizeof held);
    }
  }
}

// A run of one block whose inputs are each the output's own elements or one
// element, through a compiled function (a PyMC-sized stage's usual run):
// the function on the inputs' own memory (call_one_block), without the
// set-up the general path makes for views, broadcasting, tasks and their
// partial reductions, which cost more than such a stage's work (~0.1 us a
// stage). The function the general path picks, on the same values, the
// same sums: its bits. False (nothing done) where the general path must
// run: a view, a broadcast, a one-element input that the function reads as
// an array (filled per block there), an interpreted program.
bool run_one_compiled_block(const Program& p, ArgList inputs, size_t size, const std::vector<void*>& outputs,
                            Call& call, BlockScratch& scratch, OneBlockRun* ran) {
  if (p.compiled.empty() || size == 0 || size > kBlock) return false;
  std::vector<bool>& scalar_inputs = call.scalar_inputs;
  scalar_inputs.assign(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].strides.empty()) return false;
    size_t count = 1;
    for (int64_t d : inputs[i].shape) count *= static_cast<size_t>(d);
    if (count == 1) scalar_inputs[i] = true;
    else if (count != size) return false;
  }
  const RunPlan& plan = p.plans.find(scalar_inputs, [&p, &scalar_inputs] { return make_plan(p, scalar_inputs); });
  if (plan.compiled < 0) return false;
  const CompiledBlock& block = p.compiled[static_cast<size_t>(plan.compiled)];
  std::vector<const void*>& in = scratch.inputs;
  in.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (scalar_inputs[i] && !block.scalar_inputs[i] && size > 1) return false;
    in[i] = inputs[i].data;
  }
  call_one_block(p, block, in.data(), size, outputs, scratch);
  if (ran != nullptr) *ran = {&block, size};
  return true;
}

// One Call per thread, its vectors reused from run to run: a PyMC-sized
// node is a few hundred ns of work, and a dozen allocations cost as much.
// (Pool threads only read the calling thread's Call.) The calling thread's
// block scratch comes with it, in one thread_instance call.
struct EvaluateScratch {
  Call call;
  BlockScratch blocks;
};

}  // namespace

double numpy_sum(const double* a, size_t n) {
  // NumPy's pairwise summation (its add.reduce over a contiguous array):
  // fewer than 8 values in order from 0; up to 128 (a leaf) in eight
  // running sums, combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 +
  // s7)), the rest added after; more split at a multiple of 8 near the
  // middle. Where both halves are leaves they run together (pairwise.h).
  if (n <= kPairwiseLeaf) return leaf_sum(a, n);
  size_t half = n / 2;
  half -= half % 8;
  if (n - half <= kPairwiseLeaf) {  // (half <= n - half: both are leaves)
    double sums[2];
    two_leaf_sums(a, half, a + half, n - half, sums);
    return sums[0] + sums[1];
  }
  return numpy_sum(a, half) + numpy_sum(a + half, n - half);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

void broadcast_into(const std::vector<const std::vector<int64_t>*>& shapes, std::vector<int64_t>& out) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  out.assign(rank, 1);
  for (const auto* shape : shapes) {
    const std::vector<int64_t>& s = *shape;
    const size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[offset + d];
      if (s[d] < 0) throw std::invalid_argument("negative dimension in shape " + shape_text(s));
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string all;
      for (const auto* t : shapes) all += (all.empty() ? "" : " ") + shape_text(*t);
      throw std::invalid_argument("input shapes " + all + " do not broadcast");
    }
  }
}

std::vector<int64_t> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<const std::vector<int64_t>*> pointers;
  for (const auto& s : shapes) pointers.push_back(&s);
  std::vector<int64_t> out;
  broadcast_into(pointers, out);
  return out;
}

void run_one_block(const Program& p, const OneBlockRun& one, const void* const* inputs,
                   const std::vector<void*>& outputs) {
  call_one_block(p, *one.block, inputs, one.size, outputs, thread_instance<EvaluateScratch>().blocks);
}

void evaluate(const Program& p, ArgList inputs, const std::vector<int64_t>& out_shape,
              const std::vector<void*>& outputs, const ParallelFor* parallel, OneBlockRun* ran) {
  if (ran != nullptr) *ran = {};
  if (inputs.size() != p.num_inputs()) {
    throw std::invalid_argument("the program reads " + std::to_string(p.num_inputs()) + " inputs, got " +
                                std::to_string(inputs.size()));
  }
  if (outputs.size() != p.outputs.size()) {
    throw std::invalid_argument("the program has " + std::to_string(p.outputs.size()) + " outputs, got " +
                                std::to_string(outputs.size()));
  }
  EvaluateScratch& scratch = thread_instance<EvaluateScratch>();
  Call& call = scratch.call;
  size_t size = 1;
  for (int64_t d : out_shape) size *= static_cast<size_t>(d);
  if (run_one_compiled_block(p, inputs, size, outputs, call, scratch.blocks, ran)) return;
  call.program = &p;
  call.out_shape.assign(out_shape.begin(), out_shape.end());
  call.size = size;
  call.outputs.clear();
  for (void* out : outputs) call.outputs.push_back(static_cast<char*>(out));
  call.num_reduced = 0;
  call.reduced_index.assign(p.outputs.size(), -1);
  for (size_t j = 0; j < p.reductions.size(); ++j) {
    if (p.reductions[j] != Reduction::None) call.reduced_index[j] = static_cast<int>(call.num_reduced++);
  }
  call.leaf_start.clear();
  call.block_start.clear();
  call.block_leaf.clear();
  if (size >= kSumsInBlocksMin &&
      std::any_of(p.reductions.begin(), p.reductions.end(), [](Reduction r) { return r == Reduction::Sum; })) {
    plan_leaf_blocks(call, sum_chunk(p, size));
  }
  const size_t blocks = call.block_start.empty() ? (size + kBlock - 1) / kBlock : call.block_start.size() - 1;
  size_t tasks = 1;  // (set below, once the instructions run per element are known)
  // The reductions: each task's, taken in task order.
  auto write_reductions = [&call, &p, &tasks] {
    for (size_t j = 0; j < call.reduced_index.size(); ++j) {
      if (call.reduced_index[j] < 0) continue;
      const double* partial = call.partials.data() + call.reduced_index[j];
      if (is_sum(p.reductions[j])) {
        double total = 0.0;
        if (p.reductions[j] == Reduction::Sum && sums_in_blocks(call)) {
          const size_t num_leaves = call.leaf_start.empty() ? 0 : call.leaf_start.size() - 1;  // (none when empty)
          const double* sums = call.leaf_sums.data() + static_cast<size_t>(call.reduced_index[j]) * num_leaves;
          const size_t chunk = sum_chunk(p, call.size);
          for (size_t start = 0; start < call.size; start += chunk) {
            total += pairwise_tree(std::min(chunk, call.size - start), sums);
          }
        } else {
          const double* terms = call.terms.data() + static_cast<size_t>(call.reduced_index[j]) * call.size;
          total = sum_of_terms(p, p.reductions[j], terms, call.size);
        }
        std::memcpy(call.outputs[j], &total, sizeof total);
      } else {
        const bool all = p.reductions[j] == Reduction::All;
        bool held = all;
        for (size_t t = 0; t < tasks && held == all; ++t) held = partial[t * call.num_reduced] != 0.0;
        std::memcpy(call.outputs[j], &held, sizeof held);
      }
    }
  };
  // Each task's partial reductions start empty: all([]) holds, any([]) does not.
  auto start_partials = [&call, &p, &tasks] {
    call.partials.resize(tasks * call.num_reduced);
    for (size_t j = 0; j < p.reductions.size(); ++j) {
      if (call.reduced_index[j] < 0) continue;
      const double start = p.reductions[j] == Reduction::All ? 1.0 : 0.0;
      for (size_t t = 0; t < tasks; ++t) call.partials[t * call.num_reduced + call.reduced_index[j]] = start;
    }
  };
  if (size == 0) {
    start_partials();
    write_reductions();
    return;
  }

  // Inputs are read in place when they have the output's shape, broadcast
  // as one value when they hold one element, gathered per block otherwise.
  const size_t rank = out_shape.size();
  std::vector<bool>& scalar_inputs = call.scalar_inputs;
  scalar_inputs.assign(inputs.size(), false);
  call.scalar_value.resize(p.registers.size());
  if (call.inputs.size() < inputs.size()) call.inputs.resize(inputs.size());
  call.num_inputs = inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<int64_t>& shape = inputs[i].shape;
    InputView& view = call.inputs[i];
    view.data = static_cast<const char*>(inputs[i].data);
    view.itemsize = dtype_size(p.registers[i]);
    view.kind = InputView::Full;
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    if (count == 1) {
      view.kind = InputView::Scalar;
      scalar_inputs[i] = true;
      call.scalar_value[i] = 0;
      std::memcpy(&call.scalar_value[i], view.data, view.itemsize);
    } else if (!inputs[i].strides.empty()) {
      // A view (ArrayArg::strides): read in place only if it is laid out as
      // the output is, gathered per block otherwise.
      if (shape.size() != rank || inputs[i].strides.size() != rank) {
        throw std::invalid_argument("input " + std::to_string(i) + " is a view of rank " +
                                    std::to_string(shape.size()) + " of an output of rank " + std::to_string(rank));
      }
      view.strides.assign(rank, 0);
      bool in_place = count == size;
      int64_t contiguous = 1;
      for (size_t d = rank; d-- > 0;) {
        if (shape[d] == 1) continue;
        view.strides[d] = inputs[i].strides[d];
        in_place = in_place && view.strides[d] == contiguous;
        contiguous *= out_shape[d];
      }
      view.kind = in_place ? InputView::Full : InputView::Broadcast;
    } else if (count != size) {
      view.kind = InputView::Broadcast;
      view.strides.assign(rank, 0);
      const size_t offset = rank - shape.size();
      int64_t stride = 1;
      for (size_t d = shape.size(); d-- > 0;) {
        view.strides[offset + d] = shape[d] == 1 ? 0 : stride;
        stride *= shape[d];
      }
    }
  }
  const RunPlan& plan = p.plans.find(scalar_inputs, [&p, &scalar_inputs] { return make_plan(p, scalar_inputs); });
  call.plan = &plan;
  call.compiled = plan.compiled >= 0 ? &p.compiled[static_cast<size_t>(plan.compiled)] : nullptr;
  if (call.compiled == nullptr) {
    // Instructions whose operands are all scalars run once, here (a
    // compiled block function computes them itself, once per block).
    for (int r : plan.constants) call.scalar_value[r] = p.constant_bits[r];
    Operand args[kMaxArity];
    for (size_t k : plan.scalar_code) {
      const Instruction& ins = p.code[k];
      for (size_t a = 0; a < ins.args.size(); ++a) args[a] = {&call.scalar_value[ins.args[a]], true};
      ins.loop(args, &call.scalar_value[ins.result], 1);
    }
  }

  // The work per element is that of the instructions left for the blocks:
  // work on scalars alone (a parameter's gammaln inlined into the kernel)
  // runs once per run and must not send a cheap loop to the pool.
  const int64_t cost = plan.cost;
  // (One block, a PyMC-sized stage's usual run, is one task: these two
  // 64-bit divisions were a tenth of evaluate's own time in a node of 41
  // one-instruction stages.)
  call.blocks_per_task =
      blocks <= 1 ? 1
                  : static_cast<size_t>(
                        std::clamp<int64_t>(kTaskWork / (static_cast<int64_t>(kBlock) * cost), 1, kMaxBlocksPerTask));
  tasks = blocks <= 1 ? 1 : std::max<size_t>(1, (blocks + call.blocks_per_task - 1) / call.blocks_per_task);
  start_partials();
  const bool worth_threads = size >= kParallelMin || static_cast<int64_t>(size) * cost >= kParallelWork;
  const ParallelFor* pool = worth_threads ? parallel : nullptr;
  if (std::any_of(p.reductions.begin(), p.reductions.end(), [&call](Reduction r) {
        return r == Reduction::SequentialSum || (r == Reduction::Sum && !sums_in_blocks(call));
      })) {
    call.terms.resize(call.num_reduced * size);
  }
  if (!call.leaf_start.empty()) call.leaf_sums.resize(call.num_reduced * (call.leaf_start.size() - 1));
  if (pool == nullptr || blocks <= call.blocks_per_task) {
    run_blocks(call, 0, blocks, scratch.blocks);  // (one task, on this thread: no std::function)
  } else {
    run_chunked(blocks, call.blocks_per_task, pool,
                [&call](size_t first, size_t last) {
                  // (A pool thread's own scratch: tasks of one call run at once.)
                  run_blocks(call, first, last, thread_instance<BlockScratch>());
                });
  }
  write_reductions();
  if (call.terms.size() > kKeptTerms) std::vector<double>().swap(call.terms);  // (a large array's terms go)
  if (call.leaf_sums.size() > kKeptTerms / 64) std::vector<double>().swap(call.leaf_sums);  // (a leaf: >= 64 values)
}

void run_chunked(size_t total, size_t chunk, const ParallelFor* parallel,
                 const std::function<void(size_t first, size_t last)>& work) {
  if (parallel == nullptr || total <= chunk) {
    work(0, total);
    return;
  }
  const size_t tasks = (total + chunk - 1) / chunk;
  (*parallel)(tasks, [&](size_t t) { work(t * chunk, std::min(total, (t + 1) * chunk)); });
}

}  // namespace pytensor_onnx::kernels
