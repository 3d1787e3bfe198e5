// Decompositions and solvers of dense real matrices from standard ONNX ops
// (ONNX has none but Det, whose ONNX Runtime kernel is float32-only).
//
// Every recipe takes stacks of matrices with any leading batch dims (flattened
// to one, see linalg_ops.h) and works in the input's float dtype.
//
// Design for ONNX Runtime, which runs one op after another and Loop
// iterations one after another: each algorithm does O(n) (factorizations) or
// O(log n) (triangular inverses) sequential steps, each step a few whole-matrix
// ops over every matrix of the batch, never O(n^2) scalar steps.
// - Cholesky: blocked right-looking, one block of columns per Loop iteration
//   (rank-1 steps on the block's panel, one MatMul update of the Schur
//   complement).
// - LU: partial pivoting as LAPACK's getrf (the first largest |a_ik| is the
//   pivot), one column per Loop iteration, rows swapped with Where; the pivots
//   are LAPACK's ipiv (0-based), so Det/SLogDet/LUFactor match SciPy's.
// - Triangular inverse: recursive doubling. The inverses of the diagonal blocks
//   of size s are combined pairwise into those of size 2s,
//   inv([[A, 0], [C, B]]) = [[inv A, 0], [-inv B C inv A, inv B]], all pairs of
//   a level in one batched MatMul (log2 n levels). Triangular solves multiply
//   by that inverse; for triangular systems this is as accurate as
//   substitution (Du Croz and Higham, "Stability of methods for matrix
//   inversion", IMA J. Numer. Anal. 12, 1992).
// Failures follow LAPACK as PyTensor reports them: a matrix that is not
// positive definite gives a Cholesky factor of NaN, an exactly singular matrix
// a NaN solution, Det 0 and SLogDet (0, -inf).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "errors.h"
#include "linalg.h"
#include "linalg_ops.h"
#include "registry.h"

namespace pytensor_onnx::recipes::linalg {

namespace {

// Columns per Loop iteration of the blocked Cholesky (bench/linalg.py).
constexpr int64_t kCholeskyBlock = 8;

void require_float(const std::string& recipe, const std::vector<Value*>& inputs) {
  for (Value* v : inputs) {
    if (v->dtype != DType::Float32 && v->dtype != DType::Float64) {
      throw BuildError(recipe + ": takes float32 or float64 inputs, got " + dtype_name(v->dtype));
    }
    if (!v->rank()) throw BuildError(recipe + ": input of unknown rank");
  }
  if (inputs.size() > 1 && inputs[0]->dtype != inputs[1]->dtype) {
    throw BuildError(recipe + ": inputs must have one dtype");
  }
}

bool known_positive(Value* n) {
  return n->constant && n->constant->to_int64s().at(0) > 0;
}

// The number of doubling levels and the padded size 2^levels >= max(n, 1).
struct PowerOfTwo {
  Value* levels;  // 0-D int64
  Value* size;    // 1-D int64 of one element
};

PowerOfTwo power_of_two_above(const Ops& o, Value* n) {
  if (n->constant) {
    const int64_t size = std::max<int64_t>(n->constant->to_int64s().at(0), 1);
    int64_t levels = 0;
    while ((int64_t{1} << levels) < size) ++levels;
    return {o.int0(levels), o.ints({int64_t{1} << levels})};
  }
  // ceil(log2(n - 1/2)) is exact for integers n >= 1: n - 1/2 is never within
  // rounding of a power of two.
  Value* nf = o.cast(o.max(n, o.ints({1})), DType::Float64);
  Value* log2 = o.div(o.log(o.sub(nf, o.real(DType::Float64, 0.5))), o.real(DType::Float64, std::log(2.0)));
  Value* levels = o.max(o.op("Ceil", {log2}), o.real(DType::Float64, 0.0));
  Value* size = o.op("Round", {o.op("Pow", {o.real(DType::Float64, 2.0), levels})});
  return {o.scalar_of(o.cast(levels, DType::Int64)), o.cast(size, DType::Int64)};
}

// The algorithms read the order n from the last dim only. Matrices whose
// last two dims are static and differ are refused: their model would fail
// the ONNX checker (a Concat of dims that inference proves unequal) or its
// run. Non-square matrices known only at run time fail there, as NumPy raises.
void require_square(Value* a) {
  if (!a->shape || a->shape->size() < 2) return;
  const Dim& rows = (*a->shape)[a->shape->size() - 2];
  const Dim& cols = a->shape->back();
  if (rows.is_known() && cols.is_known() && rows.size != cols.size) {
    throw BuildError("linalg recipe: takes square matrices, got " + std::to_string(rows.size) + " x " +
                     std::to_string(cols.size));
  }
}

}  // namespace

Square square_stack(const Ops& o, Value* a, Value* batch, bool broadcast) {
  require_square(a);
  Square s;
  s.a = flatten_batch(o, a, 2, batch, broadcast);
  s.n = o.dim(a, -1);
  return s;
}

NonEmpty non_empty(const Ops& o, Value* a, Value* n) {
  if (known_positive(n)) return {a, n, false};
  Value* one = o.ints({1});
  return {pad_with_identity(o, a, n, one), o.add(n, one), true};
}

Value* rows_padded(const Ops& o, Value* b, bool padded) {
  if (!padded) return b;
  // One zero row after the last: (B, n, k) -> (B, n + 1, k).
  return o.op("Pad", {b, o.ints({0, 0, 0, 0, 1, 0}), o.real(b->dtype, 0.0)});
}

Value* symmetric_from_triangle(const Ops& o, Value* a, Value* n, bool lower) {
  const Grid grid = index_grid(o, n);
  Value* keep = triangle_mask(o, grid, lower);
  return o.where(keep, a, o.swap_last2(a));
}

// Blocked right-looking Cholesky (the structure of LAPACK's potrf; Golub and
// Van Loan, "Matrix Computations", 4th ed., section 4.2.9): one Loop
// iteration per block of kCholeskyBlock columns. The iteration factors its
// panel (all rows, the block's columns) with that many rank-1 steps unrolled
// in the body, then updates the whole Schur complement with one MatMul.
// ONNX Runtime charges ~2 us per node and a few us per Loop iteration
// whatever their size (bench/linalg.py measures both), so the cost is the
// number of nodes run: 7 per column plus ~12 per block, against 9 per
// column plus a Loop iteration per column unblocked; the rank-1 steps touch
// only the n x k panel, so large n also move far less memory.
// The steps work on the LDL^T form (column c of the panel is column c of L
// times sqrt(d_c)), so each costs no square root; the block's columns of L
// are scaled once at its end.
Value* cholesky_lower(const Ops& o, Value* a, Value* n) {
  // Small static orders take one block of their own size (no padding).
  const int64_t k = n->constant ? std::clamp<int64_t>(n->constant->to_int64s().at(0), 1, kCholeskyBlock) : kCholeskyBlock;
  // ceil(n / k), at least 1: n = 0 factors one block of padding.
  Value* blocks = o.max(o.div(o.add(n, o.ints({k - 1})), o.ints({k})), o.ints({1}));
  Value* size = o.mul(blocks, o.ints({k}));
  const bool exact = n->constant && n->constant->to_int64s().at(0) > 0 && n->constant->to_int64s().at(0) % k == 0;
  // Identity rows and columns up to a multiple of k factor to themselves.
  Value* padded = exact ? a : pad_with_identity(o, a, n, o.sub(size, n));

  Loop loop(o.g, "cholesky_block", {padded}, {true});
  Ops& b = loop.body();
  Value* schur = loop.carried()[0];  // (B, N, N): rows and columns of earlier blocks are rounding noise
  std::vector<int64_t> offsets(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c) offsets[static_cast<size_t>(c)] = c;
  Value* first = b.mul(b.unsqueeze(loop.iteration(), {0}), b.ints({k}));
  Value* indices = b.add(first, b.ints(offsets));  // (k,): the block's rows and columns
  Value* panel = b.gather(schur, indices, 2);      // (B, N, k)
  const std::vector<Value*> index = k == 1 ? std::vector<Value*>{indices}
                                           : b.ops("Split", {indices, b.ints(std::vector<int64_t>(static_cast<size_t>(k), 1))},
                                                   {{"axis", int64_t{0}}}, static_cast<size_t>(k));
  // A column (B, N, 1) as a row (B, 1, N) is the same data in a new shape.
  // L^T is built from such rows rather than by a Transpose: ONNX Runtime
  // pushes transposes down into the MatMul below, giving its FusedMatMul,
  // which has no float64 kernel before 1.26.
  // Reshape targets whose 0 copies the batch dim (that Reshape's default),
  // so an empty batch needs no allowzero emulation at opset 13.
  Value* row_shape = o.concat({o.ints({0, 1}), size}, 0);
  std::vector<Value*> columns, rows, pivots;
  for (int64_t c = 0; c < k; ++c) {
    Value* column = b.gather(panel, b.ints({c}), 2);                 // (B, N, 1)
    Value* row = b.gather(panel, index[static_cast<size_t>(c)], 1);  // (B, 1, k): by symmetry, the column's entries in the block
    Value* pivot = b.gather(row, b.ints({c}), 2);                    // (B, 1, 1): d_c
    columns.push_back(column);
    rows.push_back(b.op("Reshape", {column, row_shape}));
    pivots.push_back(pivot);
    if (c + 1 < k) panel = b.sub(panel, b.mul(column, b.div(row, pivot)));
  }
  Value* scaled = k == 1 ? columns[0] : b.concat(columns, 2);  // (B, N, k): L D^(1/2)
  Value* scaled_t = k == 1 ? rows[0] : b.concat(rows, 1);      // (B, k, N)
  Value* d = k == 1 ? pivots[0] : b.concat(pivots, 1);          // (B, k, 1)
  // A pivot that is not positive (or NaN) gives NaN: its sqrt, or 0/0 on the diagonal.
  Value* root = b.sqrt(d);
  Value* l_t = b.div(scaled_t, root);  // (B, k, N): the block's rows of L^T
  Value* l = b.div(scaled, b.op("Reshape", {root, b.ints({0, 1, k})}));  // (B, N, k)
  Value* next = b.sub(schur, b.matmul(l, l_t));
  const auto outs = loop.finish(o.scalar_of(blocks), {next}, {l});
  // outs[1]: (blocks, B, N, k), block j's columns at [j].
  Value* factor = o.transpose(outs[1], {1, 2, 0, 3});  // (B, N, blocks, k)
  factor = o.reshape(factor, o.concat({o.dim(a, 0), size, size}, 0));
  if (!exact) factor = leading_block(o, factor, n, n);
  factor = triangle(o, factor, index_grid(o, n), true);
  // potrf stops at the first pivot that is not positive (or NaN); PyTensor
  // then returns NaN everywhere.
  return nan_where(o, any_nan(o, factor), factor);
}

Value* lower_triangular_inverse(const Ops& o, Value* l, Value* n) {
  const PowerOfTwo p = power_of_two_above(o, n);
  Value* padded = l;
  if (!(n->constant && p.size->constant && n->constant->to_int64s() == p.size->constant->to_int64s())) {
    padded = pad_with_identity(o, l, n, o.sub(p.size, n));
  }
  Value* batch = o.dim(l, 0);
  // Inverses of the 1x1 diagonal blocks: (B, P, 1, 1).
  Value* blocks = o.unsqueeze(o.div(o.real(l->dtype, 1.0), diagonal(o, padded, p.size)), {2, 3});

  Loop loop(o.g, "triangular_inverse_level", {blocks, o.ints({1})}, {false, true});
  Ops& b = loop.body();
  Value* inverses = loop.carried()[0];  // (B, m, s, s)
  Value* s = loop.carried()[1];         // block size, 1-D
  Value* pairs = b.div(p.size, b.add(s, s));
  Value* two = b.ints({2});
  Value* split = b.reshape(inverses, b.concat({batch, pairs, two, s, s}, 0));
  Value* upper_left = b.gather(split, b.int0(0), 2);   // inv A: (B, pairs, s, s)
  Value* lower_right = b.gather(split, b.int0(1), 2);  // inv B
  // C of pair q: rows (2q+1)s.., columns 2qs.. of the padded matrix.
  Value* grid = b.reshape(padded, b.concat({batch, pairs, two, s, pairs, two, s}, 0));
  Value* below = b.gather(b.gather(grid, b.int0(1), 2), b.int0(0), 4);  // (B, q, s, q', s)
  Value* by_pair = b.reshape(b.transpose(below, {0, 1, 3, 2, 4}), b.concat({batch, b.mul(pairs, pairs), s, s}, 0));
  Value* on_diagonal = b.op("Range", {b.int0(0), b.scalar_of(b.mul(pairs, pairs)), b.scalar_of(b.add(pairs, b.ints({1})))});
  Value* c = b.gather(by_pair, on_diagonal, 1);  // (B, pairs, s, s)
  Value* corner = b.neg(b.matmul(b.matmul(lower_right, c), upper_left));
  Value* top = b.concat({upper_left, b.zeros_like(upper_left)}, 3);
  Value* bottom = b.concat({corner, lower_right}, 3);
  Value* merged = b.concat({top, bottom}, 2);
  const auto outs = loop.finish(p.levels, {merged, b.add(s, s)});
  Value* inverse = o.squeeze(outs[0], {1});  // (B, P, P)
  return leading_block(o, inverse, n, n);
}

Value* upper_triangular_inverse(const Ops& o, Value* u, Value* n) {
  return o.swap_last2(lower_triangular_inverse(o, o.swap_last2(u), n));
}

Value* zero_on_diagonal(const Ops& o, Value* a, Value* n) {
  Value* zeros = o.cast(o.equal(diagonal(o, a, n), o.real(a->dtype, 0.0)), a->dtype);
  return o.unsqueeze(o.greater(o.reduce("ReduceSum", zeros, {1}, false), o.real(a->dtype, 0.0)), {1, 2});
}

Lu lu_factor(const Ops& o, Value* a, Value* n) {
  const DType dtype = a->dtype;
  const Grid grid = index_grid(o, n);  // rows (n, 1)
  Value* batch = o.dim(a, 0);
  Value* n1 = o.add(n, o.ints({1}));
  // Column n holds each row's original index, so swaps carry the permutation.
  Value* original = o.expand(o.cast(grid.rows, dtype), o.concat({batch, n, o.ints({1})}, 0));
  Value* augmented = o.concat({a, original}, 2);
  Value* cols = o.unsqueeze(o.iota(n1), {0});       // (1, n + 1)
  Value* not_index = o.less(cols, n);               // (1, n + 1)
  Value* row_shape = o.concat({batch, o.ints({1}), n1}, 0);

  Loop loop(o.g, "lu_column", {augmented}, {true});
  Ops& b = loop.body();
  Value* m = loop.carried()[0];
  Value* it = loop.iteration();
  Value* k = b.unsqueeze(it, {0});
  Value* column = b.gather(m, k, 2);  // (B, n, 1)
  // The pivot is LAPACK's (idamax): the first largest |x| from row k on,
  // NaNs skipped but for row k's own (nothing compares larger than it).
  Value* size = b.abs(column);
  Value* nan_size = b.where(b.equal(grid.rows, it), b.real(dtype, INFINITY), b.real(dtype, -1.0));
  Value* candidates = b.where(b.less(grid.rows, it), b.real(dtype, -1.0), b.where(b.op("IsNaN", {size}), nan_size, size));
  Value* p = b.op("ArgMax", {candidates}, {{"axis", int64_t{1}}, {"keepdims", int64_t{1}}});  // (B, 1, 1)
  Value* row_p = b.gather_elements(m, b.expand(p, row_shape), 1);  // (B, 1, n + 1)
  Value* row_k = b.gather(m, k, 1);
  m = b.where(b.equal(grid.rows, it), row_p, b.where(b.equal(grid.rows, p), row_k, m));
  Value* pivot = b.gather(row_p, k, 2);  // (B, 1, 1)
  // getrf skips the scaling of a column whose pivot is exactly 0 (all of it is 0 then).
  Value* divisor = b.where(b.equal(pivot, b.real(dtype, 0.0)), b.real(dtype, 1.0), pivot);
  Value* below = b.greater(grid.rows, it);  // (n, 1)
  Value* l = b.where(below, b.div(b.gather(m, k, 2), divisor), b.real(dtype, 0.0));  // (B, n, 1)
  Value* right = b.and_(b.greater(cols, it), not_index);  // (1, n + 1)
  Value* u = b.where(right, row_p, b.real(dtype, 0.0));   // (B, 1, n + 1)
  // (Only below and right of the pivot, as getrf's update: l and u are 0
  // elsewhere, and a NaN or inf times 0 would spread NaN where LAPACK has
  // none: into earlier columns of L, and into the permutation's column,
  // then an index out of range.)
  m = b.where(b.and_(below, right), b.sub(m, b.mul(l, u)), m);
  m = b.where(b.and_(below, b.equal(cols, it)), l, m);
  const auto outs = loop.finish(o.scalar_of(n), {m}, {p});
  Lu lu;
  lu.packed = o.slice(outs[0], o.ints({0}), n, o.ints({2}));
  lu.perm = o.cast(o.squeeze(o.slice(outs[0], n, n1, o.ints({2})), {2}), DType::Int64);
  lu.pivots = o.squeeze(o.transpose(outs[1], {1, 0, 2, 3}), {2, 3});  // (B, n)
  return lu;
}

Value* unit_lower(const Ops& o, Value* packed, Value* n) {
  const Grid grid = index_grid(o, n);
  Value* strictly_lower = o.greater(grid.rows, grid.cols);
  Value* eye = o.cast(o.equal(grid.rows, grid.cols), packed->dtype);
  return o.where(strictly_lower, packed, eye);
}

Value* rows_permuted(const Ops& o, Value* b, Value* perm) {
  Value* index = o.expand(o.unsqueeze(perm, {2}), o.shape(b));
  return o.gather_elements(b, index, 1);
}

Value* solve_with_lu(const Ops& o, const Lu& lu, Value* b, Value* n) {
  Value* l_inverse = lower_triangular_inverse(o, unit_lower(o, lu.packed, n), n);
  Value* u_inverse = upper_triangular_inverse(o, triangle(o, lu.packed, index_grid(o, n), false), n);
  return o.matmul(u_inverse, o.matmul(l_inverse, rows_permuted(o, b, lu.perm)));
}

namespace {

// ---------------------------------------------------------------- recipes

int64_t flag(const Attributes& attrs, const char* name, int64_t fallback) { return attrs.get_int(name, fallback); }

// b's core rank: 1 for a vector right-hand side, 2 for a matrix.
size_t b_core_rank(const Attributes& attrs) {
  const int64_t b_ndim = flag(attrs, "b_ndim", 2);
  if (b_ndim != 1 && b_ndim != 2) throw BuildError("linalg recipe: b_ndim must be 1 or 2");
  return static_cast<size_t>(b_ndim);
}

// Both operands of a solve as stacks with one broadcast batch: a (B, n, n),
// b (B, n, k) (a vector b gets k = 1).
struct System {
  Value* a;
  Value* b;
  Value* n;
  Value* batch;
  size_t b_rank;
};

System system_of(const Ops& o, Value* a, Value* b, const Attributes& attrs) {
  require_square(a);
  System s;
  s.b_rank = b_core_rank(attrs);
  s.batch = broadcast_batch_shapes(o, {batch_shape(o, a, 2), batch_shape(o, b, s.b_rank)});
  s.a = flatten_batch(o, a, 2, s.batch, true);
  s.b = flatten_batch(o, b, s.b_rank, s.batch, true);
  if (s.b_rank == 1) s.b = o.unsqueeze(s.b, {2});
  s.n = o.dim(a, -1);
  return s;
}

Value* solution_of(const Ops& o, const System& s, Value* x) {
  if (s.b_rank == 1) x = o.squeeze(x, {2});
  return unflatten_batch(o, x, s.b_rank, s.batch);
}

std::vector<Value*> cholesky_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("cholesky", in);
  const Ops o{g};
  const bool lower = flag(attrs, "lower", 1) != 0;
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  Value* factor = cholesky_lower(o, symmetric_from_triangle(o, sq.a, sq.n, lower), sq.n);
  if (!lower) factor = o.swap_last2(factor);
  return {unflatten_batch(o, factor, 2, batch)};
}

std::vector<Value*> solve_triangular_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("solve_triangular", in);
  const Ops o{g};
  const bool lower = flag(attrs, "lower", 0) != 0;
  const bool trans = flag(attrs, "trans", 0) != 0;
  const bool unit_diagonal = flag(attrs, "unit_diagonal", 0) != 0;
  const System s = system_of(o, in[0], in[1], attrs);
  const Grid grid = index_grid(o, s.n);
  Value* t = triangle(o, s.a, grid, lower);
  if (unit_diagonal) t = o.where(o.equal(grid.rows, grid.cols), o.real(t->dtype, 1.0), t);
  Value* inverse = lower ? lower_triangular_inverse(o, t, s.n) : upper_triangular_inverse(o, t, s.n);
  if (trans) inverse = o.swap_last2(inverse);
  Value* x = o.matmul(inverse, s.b);
  // trtrs reports an exactly zero diagonal element; PyTensor returns NaN then.
  if (!unit_diagonal) x = nan_where(o, zero_on_diagonal(o, t, s.n), x);
  return {solution_of(o, s, x)};
}

std::vector<Value*> cholesky_solve_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("cholesky_solve", in);
  const Ops o{g};
  const bool lower = flag(attrs, "lower", 0) != 0;
  const System s = system_of(o, in[0], in[1], attrs);
  Value* factor = triangle(o, s.a, index_grid(o, s.n), lower);
  if (!lower) factor = o.swap_last2(factor);
  Value* l_inverse = lower_triangular_inverse(o, factor, s.n);
  // A = L L^T: x = L^-T L^-1 b.
  Value* x = o.matmul(o.swap_last2(l_inverse), o.matmul(l_inverse, s.b));
  return {solution_of(o, s, x)};
}

std::vector<Value*> solve_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("solve", in);
  const Ops o{g};
  const std::string assume_a = attrs.get_string("assume_a").value_or("gen");
  const bool lower = flag(attrs, "lower", 0) != 0;
  const System s = system_of(o, in[0], in[1], attrs);
  Value* a = s.a;
  const Grid grid = index_grid(o, s.n);
  if (assume_a == "sym" || assume_a == "her" || assume_a == "pos") {
    // sytrf/potrf read one triangle only.
    a = symmetric_from_triangle(o, a, s.n, lower);
  } else if (assume_a == "tridiagonal") {
    // gtsv reads the three diagonals only.
    Value* offset = o.abs(o.sub(grid.rows, grid.cols));
    a = o.where(o.op("LessOrEqual", {offset, o.int0(1)}), a, o.real(a->dtype, 0.0));
  } else if (assume_a != "gen" && assume_a != "banded") {
    throw BuildError("solve: unknown assume_a '" + assume_a + "'");
  }
  if (assume_a == "pos") {
    // The blocked Cholesky and the triangular inverse take n = 0 as it is.
    Value* l_inverse = lower_triangular_inverse(o, cholesky_lower(o, a, s.n), s.n);
    // NaN already where the matrix is not positive definite (the factor is).
    return {solution_of(o, s, o.matmul(o.swap_last2(l_inverse), o.matmul(l_inverse, s.b)))};
  }
  const NonEmpty ne = non_empty(o, a, s.n);
  Value* b = rows_padded(o, s.b, ne.padded);
  const Lu lu = lu_factor(o, ne.a, ne.n);
  Value* x = nan_where(o, zero_on_diagonal(o, lu.packed, ne.n), solve_with_lu(o, lu, b, ne.n));
  if (ne.padded) x = o.slice(x, o.ints({0}), s.n, o.ints({1}));
  return {solution_of(o, s, x)};
}

// (packed LU with NaN where singular, LAPACK pivots, the row permutation)
std::vector<Value*> lu_factor_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  require_float("lu_factor", in);
  const Ops o{g};
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const NonEmpty ne = non_empty(o, sq.a, sq.n);
  Lu lu = lu_factor(o, ne.a, ne.n);
  Value* packed = lu.packed;
  if (ne.padded) {
    packed = leading_block(o, packed, sq.n, sq.n);
    lu.pivots = o.slice(lu.pivots, o.ints({0}), sq.n, o.ints({1}));
    lu.perm = o.slice(lu.perm, o.ints({0}), sq.n, o.ints({1}));
  }
  return {unflatten_batch(o, packed, 2, batch), unflatten_batch(o, lu.pivots, 1, batch),
          unflatten_batch(o, lu.perm, 1, batch), unflatten_batch(o, o.squeeze(zero_on_diagonal(o, packed, sq.n), {1, 2}), 0, batch)};
}

// (inverse, singular): the inverse is NaN where the matrix is exactly singular.
std::vector<Value*> matrix_inverse_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  require_float("matrix_inverse", in);
  const Ops o{g};
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const NonEmpty ne = non_empty(o, sq.a, sq.n);
  const Lu lu = lu_factor(o, ne.a, ne.n);
  Value* eye = o.expand(identity(o, ne.n, ne.a->dtype), o.shape(ne.a));
  Value* singular = zero_on_diagonal(o, lu.packed, ne.n);
  Value* inverse = nan_where(o, singular, solve_with_lu(o, lu, eye, ne.n));
  if (ne.padded) inverse = leading_block(o, inverse, sq.n, sq.n);
  return {unflatten_batch(o, inverse, 2, batch), unflatten_batch(o, o.squeeze(singular, {1, 2}), 0, batch)};
}

struct LogDet {
  Value* sign;       // (B,)
  Value* log_abs;    // (B,)
};

// numpy.linalg.slogdet from getrf: the sign of the pivots' permutation times
// the signs of U's diagonal, and the sum of log|u_ii|; an exactly singular
// matrix gives (0, -inf).
LogDet log_determinant(const Ops& o, Value* a3, Value* n) {
  const NonEmpty ne = non_empty(o, a3, n);
  const Lu lu = lu_factor(o, ne.a, ne.n);
  Value* d = diagonal(o, lu.packed, ne.n);  // (B, n)
  Value* swaps = o.reduce("ReduceSum", o.cast(o.not_(o.equal(lu.pivots, o.unsqueeze(o.iota(ne.n), {0}))), DType::Int64),
                          {1}, false);
  Value* odd = o.equal(o.op("Mod", {swaps, o.int0(2)}), o.int0(1));
  const DType dtype = a3->dtype;
  Value* perm_sign = o.where(odd, o.real(dtype, -1.0), o.real(dtype, 1.0));
  Value* diag_sign = o.reduce("ReduceProd", o.sign(d), {1}, false);
  Value* log_abs = o.reduce("ReduceSum", o.log(o.abs(d)), {1}, false);
  Value* singular = o.equal(diag_sign, o.real(dtype, 0.0));
  Value* sign = o.mul(perm_sign, diag_sign);
  log_abs = o.where(singular, o.real(dtype, -std::numeric_limits<double>::infinity()), log_abs);
  return {sign, log_abs};
}

std::vector<Value*> slogdet_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  require_float("slogdet", in);
  const Ops o{g};
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const LogDet ld = log_determinant(o, sq.a, sq.n);
  return {unflatten_batch(o, ld.sign, 0, batch), unflatten_batch(o, ld.log_abs, 0, batch)};
}

// numpy.linalg.det: sign * exp(log|det|), as NumPy computes it from slogdet.
std::vector<Value*> det_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  require_float("det", in);
  const Ops o{g};
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const LogDet ld = log_determinant(o, sq.a, sq.n);
  return {unflatten_batch(o, o.mul(ld.sign, o.exp(ld.log_abs)), 0, batch)};
}

// PyTensor's PivotToPermutations: LAPACK's sequential row swaps applied to
// 0..n-1 (the rows of P A in terms of A's rows); with inverse=0 its argsort.
std::vector<Value*> pivot_to_permutation_recipe(GraphBuilder& g, const std::vector<Value*>& in,
                                                const Attributes& attrs) {
  const Ops o{g};
  Value* pivots = in[0];
  if (!pivots->rank() || !is_integer(pivots->dtype)) throw BuildError("pivot_to_permutation: takes integer pivots");
  Value* batch = batch_shape(o, pivots, 1);
  Value* p = o.cast(flatten_batch(o, pivots, 1, batch), DType::Int64);  // (B, n)
  Value* n = o.dim(pivots, -1);
  Value* positions = o.unsqueeze(o.iota(n), {0});  // (1, n)
  Value* start = o.expand(positions, o.shape(p));

  Loop loop(g, "pivot_swap", {start}, {true});
  Ops& b = loop.body();
  Value* perm = loop.carried()[0];
  Value* k = b.unsqueeze(loop.iteration(), {0});
  Value* target = b.gather(p, k, 1);                        // (B, 1)
  Value* at_k = b.gather(perm, k, 1);                       // (B, 1)
  Value* at_target = b.gather_elements(perm, target, 1);    // (B, 1)
  Value* is_k = b.equal(positions, loop.iteration());        // (1, n)
  Value* is_target = b.equal(positions, target);             // (B, n)
  Value* next = b.where(is_k, at_target, b.where(is_target, at_k, perm));
  Value* perm_out = loop.finish(o.scalar_of(n), {next})[0];
  if (flag(attrs, "inverse", 1) == 0) {
    // The argsort of a permutation is its inverse.
    perm_out = o.op("ScatterElements", {o.zeros_like(perm_out), perm_out, start}, {{"axis", int64_t{1}}});
  }
  return {unflatten_batch(o, perm_out, 1, batch)};
}

}  // namespace

void add_linalg_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"cholesky", cholesky_recipe, 1, 1,
                   "Cholesky factor of stacks of symmetric matrices (attr lower); NaN where not positive definite"});
  table.push_back({"solve_triangular", solve_triangular_recipe, 2, 2,
                   "x with op(A) x = b, A triangular (attrs lower, trans, unit_diagonal, b_ndim); NaN if singular"});
  table.push_back({"cholesky_solve", cholesky_solve_recipe, 2, 2,
                   "x with A x = b given A's Cholesky factor (attrs lower, b_ndim)"});
  table.push_back({"solve", solve_recipe, 2, 2,
                   "x with A x = b (attrs assume_a gen/sym/her/pos/tridiagonal/banded, lower, b_ndim); NaN if singular"});
  table.push_back({"lu_factor", lu_factor_recipe, 1, 1,
                   "getrf: packed LU, 0-based pivots, row permutation, singular flag"});
  table.push_back({"matrix_inverse", matrix_inverse_recipe, 1, 1,
                   "inverse by LU with partial pivoting and a singular flag (NaN inverse where singular)"});
  table.push_back({"slogdet", slogdet_recipe, 1, 1, "sign and log|det| by LU, (0, -inf) where singular"});
  table.push_back({"det", det_recipe, 1, 1, "determinant by LU as NumPy computes it, float32 and float64"});
  table.push_back({"pivot_to_permutation", pivot_to_permutation_recipe, 1, 1,
                   "row permutation of LAPACK pivots (attr inverse: 1 gives P A's rows, 0 their argsort)"});
}

}  // namespace pytensor_onnx::recipes::linalg

namespace pytensor_onnx::recipes {
void add_linalg_recipes(std::vector<RecipeInfo>& table) { linalg::add_linalg_recipes(table); }
}  // namespace pytensor_onnx::recipes
