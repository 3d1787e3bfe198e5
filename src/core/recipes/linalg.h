// The matrix algorithms of linalg.cc that other linear-algebra recipes reuse.
// All work on stacks (B, n, n) of one float dtype; `n` is a 1-D int64 of one
// element.
#pragma once

#include <vector>

#include "linalg_ops.h"
#include "registry.h"

namespace pytensor_onnx::recipes::linalg {

struct Square {
  Value* a;  // (B, n, n)
  Value* n;
};
// a (batch..., n, n) as a stack; `batch` is its (or, with broadcast, a common) batch shape.
Square square_stack(const Ops& o, Value* a, Value* batch, bool broadcast = false);

// Algorithms that need n >= 1 run on a copy grown by one identity row and
// column when n may be 0 (results are then cut back to n).
struct NonEmpty {
  Value* a;
  Value* n;
  bool padded;
};
NonEmpty non_empty(const Ops& o, Value* a, Value* n);
// Right-hand sides (B, n, k) grown by a zero row when the matrix was padded.
Value* rows_padded(const Ops& o, Value* b, bool padded);

// The symmetric matrix whose lower (or upper) triangle is a's.
Value* symmetric_from_triangle(const Ops& o, Value* a, Value* n, bool lower);
// Lower Cholesky factor of symmetric a (n >= 0), NaN where a is not positive definite.
Value* cholesky_lower(const Ops& o, Value* a, Value* n);
// Inverses of lower (upper) triangular matrices; any n, inf/NaN where singular.
Value* lower_triangular_inverse(const Ops& o, Value* l, Value* n);
Value* upper_triangular_inverse(const Ops& o, Value* u, Value* n);
// (B, 1, 1) bool: some diagonal element is exactly 0.
Value* zero_on_diagonal(const Ops& o, Value* a, Value* n);

// LU with partial pivoting as LAPACK's getrf (n >= 1).
struct Lu {
  Value* packed;  // (B, n, n): unit-lower L below the diagonal, U on and above
  Value* pivots;  // (B, n) int64: LAPACK's ipiv, 0-based (row k was swapped with row pivots[k])
  Value* perm;    // (B, n) int64: row i of P A is row perm[i] of A
};
Lu lu_factor(const Ops& o, Value* a, Value* n);
// The unit lower triangle of packed LU factors.
Value* unit_lower(const Ops& o, Value* packed, Value* n);
// b (B, n, k) with its rows in the order `perm` (B, n).
Value* rows_permuted(const Ops& o, Value* b, Value* perm);
// x with A x = b from A's LU factors.
Value* solve_with_lu(const Ops& o, const Lu& lu, Value* b, Value* n);


}  // namespace pytensor_onnx::recipes::linalg
