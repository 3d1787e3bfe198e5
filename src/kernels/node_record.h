// What a run of an Elemwise node found from its inputs' dtypes and shapes
// alone, kept for later runs of inputs of the same dtypes and shapes
// (ElemwiseKernel::compute), which replay it: a program stage that ran one
// compiled block (evaluate.h, OneBlockRun) runs that block again on its
// inputs' memory, without reading, broadcasting and checking their shapes
// or looking its plan up again; reductions and reshapes skip their shapes'
// work too. That was ~50 ns of a stage's ~60 ns of bookkeeping, and a PyMC
// model's node has up to 60 stages, most of them over a few dozen elements
// (bench/results.md, "twenty-sixth step"). Every other stage runs as it
// always does, on the shapes the replayed stages give their outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "evaluate.h"
#include "keyed_cache.h"

namespace pytensor_onnx::kernels {

struct StageRecord {
  // How the stage replays: a program stage that ran one compiled block runs
  // it again (`one`, `dims`); a reduction reduces its input of
  // `input_shape`; a reshape that only later stages read is its input's
  // memory again; other stages run as usual (None).
  enum class Replay { None, Block, Reduce, Alias };
  Replay replay = Replay::None;
  OneBlockRun one;
  std::vector<int64_t> dims;  // per program input read as the size of an axis (dim_inputs): that size
  std::vector<int64_t> input_shape;
  std::vector<std::vector<int64_t>> output_shapes;  // per output of the stage, where it replays
};

struct NodeRecord {
  // Per node input: its dtype (DType's number, or -1 for one the stages
  // read only a size of), its rank, its dims. Shapes decide everything a
  // record keeps: no stage's bookkeeping reads the elements.
  std::vector<int64_t> key;
  std::vector<StageRecord> stages;
};

using NodeRecordCache = KeyedCache<std::vector<int64_t>, NodeRecord>;

}  // namespace pytensor_onnx::kernels
