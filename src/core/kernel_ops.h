// The ops of the project's ONNX Runtime kernel library (src/kernels) as the
// core sees them: their domain, and the type and shape of what they produce.
// Mode ONNX builds them; exported files hold them only when asked to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pytensor_onnx {

class Graph;
struct Node;

inline constexpr const char* kKernelDomain = "pytensor_onnx.kernels";
inline constexpr int kKernelDomainVersion = 1;

// Fills in the outputs' dtypes and shapes of a kernel-library node: every
// "<kernel>_<dtype>" node gives its dtype; Elemwise and ScalarLoop are shaped
// as their inputs broadcast, the linear-algebra kernels as their recipes.
// Returns false for ops of other domains.
bool infer_kernel_node(Node& node);

// An Elemwise kernel node may run several programs in order (attribute
// `stages`, src/kernels/elemwise.h; passes/merge_kernel_stages.h makes
// them): attribute `name` of stage s >= 1 is "<name>_s<s>", stage 0's is
// `name`, so a one-program node is a node of one stage. The wiring is
// attributes `stage_inputs` (per program input of each stage in order: node
// input k >= 0, or -(g + 1) for output g of the stages, numbered across them)
// and `stage_outputs` (per program output: the node output it is, or -1).
bool has_stages(const Node& node);
// Whether `node` is an Elemwise node of the kernel library (any dtype, one
// stage or several).
bool is_elemwise_kernel(const Node& node);
std::string stage_attribute(const std::string& name, size_t stage);
// The attributes every stage has (some optional): the one-program node's.
const std::vector<std::string>& stage_attribute_names();
// Whether stage `stage` is a ScalarLoop (attributes `num_state`,
// `next_state`, `until` beside `program` and `input_dtypes`, as a
// ScalarLoop node's): its inputs are the step count, then its body's.
bool is_loop_stage(const Node& node, size_t stage);
// The numbers of program inputs and outputs of stage `stage` (attributes
// `input_dtypes` and `output_registers`; a loop's step count and states,
// and its until flag).
size_t stage_input_count(const Node& node, size_t stage);
size_t stage_output_count(const Node& node, size_t stage);

// Whether input `i` of an Elemwise kernel node (program input `i` of stage
// `stage`) is read for the size of one of its axes (attribute `dim_inputs`:
// pairs input, axis; the kernel reads that size as an int64 scalar), not for
// its elements.
bool reads_a_dim(const Node& node, size_t i, size_t stage = 0);

// The view an Elemwise kernel node reads input `i` as (attribute
// `input_axes`: records input, rank k, then k output axes or -1; see
// src/kernels/elemwise.h): for each axis of the input, the output axis it
// runs along, or -1 where the view drops it (size 1). nullopt: the input is
// read as NumPy broadcasts it.
std::optional<std::vector<int64_t>> input_axes_of(const Node& node, size_t i, size_t stage = 0);

// The element-wise programs of the Elemwise kernel nodes of `graph` and of
// its If/Loop bodies, each once: per program stage (a loop's is its own),
// its attributes `input_dtypes`, `program`, `output_registers`, the key under
// which the kernel library looks up the program's compiled code
// (src/kernels/compiled.h), and which of its inputs hold one element
// whatever the run (static sizes of 1, or an axis's size it reads), which a
// compiled variant reads once. The merge pass writes programs of its own
// (ONNX's arithmetic as a stage), which only the final graph shows.
struct StageProgram {
  std::string input_dtypes;
  std::string program;
  std::vector<int64_t> output_registers;
  std::vector<bool> scalar_inputs;
};
std::vector<StageProgram> stage_programs(const Graph& graph);

// The same records from a map per input (nullopt: not a view).
std::vector<int64_t> input_axes_attribute(const std::vector<std::optional<std::vector<int64_t>>>& axes);

// Per node input, or per element of the packed output, the shape attribute
// `packed_input_shapes` or `packed_output_shapes` (`name`) of an Elemwise
// kernel node records for it (records: input or element, rank, dims...;
// passes/pack_small_arrays.h), and a scalar's (empty) for the others.
// `count`: the node's inputs or packed elements. Throws BuildError where
// the records are malformed.
std::vector<std::vector<int64_t>> packed_shapes(const Node& node, const std::string& name, size_t count);

}  // namespace pytensor_onnx
