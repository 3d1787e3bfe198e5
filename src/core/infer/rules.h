// The inference function of each default-domain op, by family: each sets the
// dtypes and shapes of a node's outputs from its inputs and attributes (the
// op table, ops.cc, says which op uses which). Unknown facts stay unknown;
// they throw BuildError when the inputs are provably inconsistent.
#pragma once

#include "ir.h"

namespace pytensor_onnx::infer {

// Element-wise (elementwise.cc).
void same_as_input(Node& node);  // the input's dtype and shape
void cast(Node& node);
void cast_like(Node& node);
void predicate(Node& node);      // bool of the input's shape (IsNaN, IsInf, Not)
void broadcast(Node& node);      // the first input's dtype, the inputs' broadcast shape
void comparison(Node& node);     // bool of the broadcast shape
void where(Node& node);

// Reductions (reduce.cc).
void reduce(Node& node);  // Reduce*: axes from the attribute or the constant input
void arg_reduce(Node& node);

// Linear algebra (linalg.cc).
void matmul(Node& node);
void gemm(Node& node);
void einsum(Node& node);
void det(Node& node);
void trilu(Node& node);  // the input's dtype and shape; refuses rank < 2

// Shapes and layout (shape_ops.cc).
void transpose(Node& node);
void reshape(Node& node);
void flatten(Node& node);
void squeeze(Node& node);
void unsqueeze(Node& node);
void concat(Node& node);
void split(Node& node);
void slice(Node& node);
void expand(Node& node);
void tile(Node& node);
void pad(Node& node);
void shape(Node& node);
void size(Node& node);

// Indexing and selection (indexing.cc).
void gather(Node& node);
void gather_elements(Node& node);
void gather_nd(Node& node);
void scatter(Node& node);
void compress(Node& node);
void nonzero(Node& node);
void topk(Node& node);
void unique(Node& node);

// Values made from attributes and sizes (generators.cc).
void constant(Node& node);
void constant_of_shape(Node& node);
void range(Node& node);
void eye_like(Node& node);
void random(Node& node);       // RandomNormal, RandomUniform
void random_like(Node& node);  // RandomNormalLike, RandomUniformLike, Bernoulli

// Subgraphs (control_flow.cc).
void if_(Node& node);
void loop(Node& node);

}  // namespace pytensor_onnx::infer
