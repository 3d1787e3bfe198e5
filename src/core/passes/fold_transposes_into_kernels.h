// Lets the kernel library's MatMul and SolveTriangular nodes read a
// transposed matrix operand in place, instead of after a Transpose that
// copies it, and MatMul nodes multiply by a vector without the axes that
// made it a matrix.
#pragma once
#include "../ir.h"
namespace pytensor_onnx {
// A MatMul kernel node (src/kernels/matmul_kernel.h) whose operand is a
// standard Transpose that swaps the last two dims (perm [1, 0] of a matrix,
// [..., r-1, r-2] of a stack) reads the Transpose's input instead, with its
// trans_a / trans_b attribute flipped: BLAS reads either layout. PyTensor's
// gradient of X @ w is X.T @ v; copying a 10000 x 20 X costs as much as the
// product, and were X an initializer, constant folding (ours or ONNX
// Runtime's) would keep a transposed copy of it in the model. This pass runs
// before constant folding in each sweep, so it sees the Transpose first.
// Returns true if the graph changed (the bypassed nodes are left for the
// dead-node pass).
bool fold_transposes_into_matmul_kernels(Graph& graph);

// A MatMul kernel node that multiplies by a vector made a matrix, and whose
// result only a Squeeze of that axis reads (PyTensor's gemv form of a
// matrix-vector product: `A @ v[:, None]` then `[:, 0]`, or `v[None, :] @ B`
// then `[0, :]`), multiplies by the vector itself and gives the Squeeze's
// result: NumPy's matmul of a vector, the same BLAS call (gemv) and bits,
// two nodes fewer. Returns true if the graph changed (the Unsqueeze is left
// for the dead-node pass).
bool fold_vector_axes_into_matmul_kernels(Graph& graph);

// A SolveTriangular kernel node whose matrix is a standard Transpose that
// swaps the last two dims (PyTensor's solve_triangular(L.T, b, lower=False),
// the second solve of a Cholesky system) reads the Transpose's input with
// `lower` and `trans` flipped: the same system, and the LAPACK call SciPy
// (PyTensor's Python implementation) makes on L.T, a view of L, without the
// copy. Its right-hand side, a matrix (b_ndim 2) made by such a Transpose
// or by a Neg, is read before them too (attributes transpose_b, negate_b:
// the kernel negates and transposes as it copies b into LAPACK's layout,
// which it does anyway; negation is exact, so the bits are the same). The
// Gaussian process's gradient solves by -x and by a solve's result
// transposed. Returns true if the graph changed (the bypassed nodes are
// left for the dead-node pass where nothing else reads them).
bool fold_transposes_into_solve_kernels(Graph& graph);
}  // namespace pytensor_onnx
