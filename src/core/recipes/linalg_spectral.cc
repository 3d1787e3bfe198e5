// Spectral decompositions and what builds on them, from standard ONNX ops:
// symmetric eigendecomposition, SVD, QR (with or without column pivoting),
// the pseudo-inverse, least squares and the matrix exponential.
//
// - Eigh: cyclic Jacobi in parallel (round-robin) order. Each round rotates
//   m/2 disjoint index pairs at once, as whole-matrix row and column
//   operations (Gather of the partner rows/columns, two multiply-adds); a
//   sweep is m - 1 rounds, so every pair meets once; sweeps repeat until the
//   off-diagonal part is below eps * ||A||_F (quadratic convergence, about
//   6-10 sweeps). Rotation formulas: Golub and Van Loan, "Matrix
//   Computations", 4th ed., Algorithm 8.5.1 (symmetric Schur).
// - SVD: one-sided Jacobi (Hestenes 1958; Demmel and Veselic 1992) with the
//   same pairing, rotating columns until every pair is orthogonal to
//   relative precision; columns that are zero get orthonormal completions
//   from a Householder QR.
// - QR: Householder reflectors exactly as LAPACK's dlarfg/dgeqrf choose them
//   (beta = -sign(alpha) ||x||, tau = 0 when x is already reduced), so R's
//   signs match SciPy's; column pivoting as dgeqp3 (largest remaining norm).
// - Expm: scaling and squaring with the [13/13] Pade approximant
//   (Higham, SIAM J. Matrix Anal. Appl. 26(4), 2005, Table 2.3 and eq. 2.3).
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

double epsilon_of(DType dtype) {
  return dtype == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

void require_float(const std::string& recipe, const std::vector<Value*>& inputs) {
  for (Value* v : inputs) {
    if (v->dtype != DType::Float32 && v->dtype != DType::Float64) {
      throw BuildError(recipe + ": takes float32 or float64 inputs, got " + dtype_name(v->dtype));
    }
    rank_of(v);
  }
}

// Round-robin pairing of m (even) indices: in round r, index i meets
// partner[r, i]; every pair meets exactly once in m - 1 rounds (the circle
// method: index 0 stays, the others rotate). sign[r, i] is +1 for the smaller
// index of its pair, -1 for the larger.
struct Pairing {
  Value* partner;  // (m - 1, m) int64
  Value* sign;     // (m - 1, m) float
  Value* rounds;   // 0-D int64
};

Pairing round_robin(const Ops& o, Value* m, DType dtype) {
  Value* m1 = o.sub(m, o.ints({1}));  // rounds, 1-D
  Value* r = o.unsqueeze(o.iota(m1), {1});  // (m - 1, 1)
  Value* i = o.unsqueeze(o.iota(m), {0});   // (1, m)
  Value* zero = o.int0(0);
  Value* one = o.int0(1);
  // Position of index i >= 1 in round r, then the index seated opposite.
  Value* position = o.where(o.equal(i, zero), zero,
                            o.add(o.op("Mod", {o.sub(o.sub(i, one), r), m1}), one));
  Value* opposite = o.sub(o.sub(m, one), position);
  Value* partner = o.where(o.equal(opposite, zero), zero,
                           o.add(o.op("Mod", {o.add(o.sub(opposite, one), r), m1}), one));
  Value* sign = o.where(o.less(i, partner), o.real(dtype, 1.0), o.real(dtype, -1.0));
  return {partner, sign, o.scalar_of(m1)};
}

// The rotation of each index with its partner: x_i <- c_i x_i + s_i x_partner,
// from the pair's Gram entries (d_i, d_partner, g_i = <i, partner>), chosen to
// zero g (Golub and Van Loan, Alg. 8.5.1), the same for both members of a
// pair. `d`, `g`: (B, m); `sign`: (m,).
struct Rotation {
  Value* c;  // (B, m)
  Value* s;  // (B, m)
};

Rotation pair_rotation(const Ops& b, Value* d, Value* g, Value* partner, Value* sign) {
  const DType dtype = d->dtype;
  Value* d_partner = b.gather(d, partner, 1);
  Value* zero = b.real(dtype, 0.0);
  Value* one = b.real(dtype, 1.0);
  Value* tau = b.div(b.mul(sign, b.sub(d_partner, d)), b.mul(b.real(dtype, 2.0), g));
  Value* sgn = b.where(b.op("GreaterOrEqual", {tau, zero}), one, b.real(dtype, -1.0));
  Value* t = b.div(sgn, b.add(b.abs(tau), b.sqrt(b.add(one, b.mul(tau, tau)))));
  t = b.where(b.equal(g, zero), zero, t);  // already orthogonal: no rotation
  Value* c = b.div(one, b.sqrt(b.add(one, b.mul(t, t))));
  // The pair's smaller index takes -s, the larger +s.
  Value* s = b.neg(b.mul(sign, b.mul(t, c)));
  return {c, s};
}

// Mixes the columns (axis 2) or rows (axis 1) of x with their partners'.
Value* rotate(const Ops& b, Value* x, const Rotation& rot, Value* partner, int64_t axis) {
  const std::vector<int64_t> at{axis == 2 ? int64_t{1} : int64_t{2}};
  Value* mixed = b.gather(x, partner, axis);
  return b.add(b.mul(b.unsqueeze(rot.c, at), x), b.mul(b.unsqueeze(rot.s, at), mixed));
}

// The partner's entry of each row, averaged over the pair so both members
// see the same value (a rounding-level asymmetry would tilt the rotation).
Value* pair_entries(const Ops& b, Value* a, Value* partner, Value* index_shape) {
  Value* index = b.expand(b.unsqueeze(partner, {0, 2}), index_shape);
  Value* own = b.squeeze(b.gather_elements(a, index, 2), {2});
  return b.mul(b.real(a->dtype, 0.5), b.add(own, b.gather(own, partner, 1)));
}

constexpr int64_t kMaxSweeps = 60;

struct EigenPairs {
  Value* values;   // (B, n) ascending
  Value* vectors;  // (B, n, n) columns
};

// Eigenvalues and eigenvectors of symmetric a (B, n, n), any n.
EigenPairs jacobi_eigh(const Ops& o, Value* a, Value* n) {
  const DType dtype = a->dtype;
  // An even size of at least 2; the padding is decoupled (its entries stay
  // exactly 0 off the diagonal, so it is never rotated) and cut off at the end.
  Value* two = o.ints({2});
  Value* m = o.max(o.add(n, o.op("Mod", {n, two})), two);
  Value* padded = pad_with_identity(o, a, n, o.sub(m, n));
  Value* batch = o.dim(a, 0);
  Value* v0 = o.expand(identity(o, m, dtype), o.shape(padded));
  const Pairing pairs = round_robin(o, m, dtype);
  const Grid grid = index_grid(o, m);
  Value* off_diagonal = o.not_(o.equal(grid.rows, grid.cols));
  Value* index_shape = o.concat({batch, m, o.ints({1})}, 0);
  const double eps = epsilon_of(dtype);

  Loop sweeps(o.g, "jacobi_sweep", {padded, v0}, {true, true});
  Ops& s = sweeps.body();
  Loop rounds(s.g, "jacobi_round", {sweeps.carried()[0], sweeps.carried()[1]}, {true, true});
  Ops& b = rounds.body();
  {
    Value* x = rounds.carried()[0];
    Value* v = rounds.carried()[1];
    Value* partner = b.gather(pairs.partner, rounds.iteration(), 0);  // (m,)
    Value* sign = b.gather(pairs.sign, rounds.iteration(), 0);
    const Rotation rot = pair_rotation(b, diagonal(b, x, m), pair_entries(b, x, partner, index_shape), partner, sign);
    x = rotate(b, rotate(b, x, rot, partner, 1), rot, partner, 2);
    // The rotated pairs' entries are 0 in exact arithmetic.
    Value* pair_mask = b.equal(grid.cols, b.unsqueeze(partner, {1}));
    x = b.where(pair_mask, b.real(dtype, 0.0), x);
    v = rotate(b, v, rot, partner, 2);
    const auto outs = rounds.finish(pairs.rounds, {x, v});
    Value* squares = s.mul(outs[0], outs[0]);
    Value* off = s.reduce("ReduceSum", s.where(off_diagonal, squares, s.real(dtype, 0.0)), {1, 2}, false);
    Value* total = s.reduce("ReduceSum", squares, {1, 2}, false);
    Value* unconverged = s.greater(off, s.mul(s.real(dtype, eps * eps), total));
    Value* more = s.greater(s.reduce("ReduceSum", s.cast(unconverged, DType::Int64), {0}, false), s.int0(0));
    const auto swept = sweeps.finish(o.int0(kMaxSweeps), {outs[0], outs[1]}, {}, more, o.g.constant(Tensor::scalar(DType::Bool, 1.0), "true"));
    Value* values = o.slice(diagonal(o, swept[0], m), o.ints({0}), n, o.ints({1}));
    Value* vectors = leading_block(o, swept[1], n, n);
    // Ascending order, as LAPACK's syevd.
    auto sorted = o.ops("TopK", {values, n}, {{"axis", int64_t{1}}, {"largest", int64_t{0}}, {"sorted", int64_t{1}}}, 2);
    Value* order = o.expand(o.unsqueeze(sorted[1], {1}), o.shape(vectors));
    return {sorted[0], o.gather_elements(vectors, order, 2)};
  }
}

// Householder QR of (B, r, c): LAPACK's reflectors, optionally with column
// pivoting. Returns the packed factor (R on and above the diagonal, the
// reflectors' v below, as geqrf), tau (B, k), the full Q (B, r, r), and the
// column permutation (B, c) int64 (identity without pivoting).
struct Householder {
  Value* packed;
  Value* tau;
  Value* q;
  Value* perm;
};

Householder householder_qr(const Ops& o, Value* a, Value* rows_n, Value* cols_n, bool pivoting) {
  const DType dtype = a->dtype;
  Value* batch = o.dim(a, 0);
  Value* k = o.min(rows_n, cols_n);
  Value* q0 = o.expand(identity(o, rows_n, dtype), o.concat({batch, rows_n, rows_n}, 0));
  Value* rows = o.unsqueeze(o.iota(rows_n), {1});  // (r, 1)
  Value* cols = o.unsqueeze(o.iota(cols_n), {0});  // (1, c)
  Value* perm0 = o.expand(o.unsqueeze(cols, {0}), o.concat({batch, o.ints({1}), cols_n}, 0));  // (B, 1, c)
  Value* zero = o.real(dtype, 0.0);
  Value* one = o.real(dtype, 1.0);

  Loop loop(o.g, "householder_column", {a, q0, perm0}, {true, true, true});
  Ops& b = loop.body();
  Value* x = loop.carried()[0];
  Value* q = loop.carried()[1];
  Value* perm = loop.carried()[2];
  Value* it = loop.iteration();
  Value* kk = b.unsqueeze(it, {0});
  if (pivoting) {
    // dgeqp3: the column of largest norm over rows k.. comes next.
    Value* squares = b.where(b.op("GreaterOrEqual", {rows, it}), b.mul(x, x), zero);
    Value* norms = b.reduce("ReduceSum", squares, {1}, true);  // (B, 1, c)
    norms = b.where(b.less(cols, it), b.real(dtype, -1.0), norms);
    Value* p = b.op("ArgMax", {norms}, {{"axis", int64_t{2}}, {"keepdims", int64_t{1}}});  // (B, 1, 1)
    Value* col_index = b.expand(p, b.concat({batch, rows_n, b.ints({1})}, 0));
    Value* col_p = b.gather_elements(x, col_index, 2);
    Value* col_k = b.gather(x, kk, 2);
    Value* is_k = b.equal(cols, it);
    Value* is_p = b.equal(cols, p);  // (B, 1, c)
    x = b.where(is_k, col_p, b.where(is_p, col_k, x));
    Value* perm_p = b.gather_elements(perm, p, 2);
    Value* perm_k = b.gather(perm, kk, 2);
    perm = b.where(is_k, perm_p, b.where(is_p, perm_k, perm));
  }
  Value* column = b.gather(x, kk, 2);  // (B, r, 1)
  Value* alpha = b.gather(column, kk, 1);  // (B, 1, 1)
  Value* below = b.greater(rows, it);
  Value* tail = b.where(below, column, zero);
  Value* tail_norm2 = b.reduce("ReduceSum", b.mul(tail, tail), {1}, true);
  Value* trivial = b.equal(tail_norm2, zero);
  Value* sgn = b.where(b.op("GreaterOrEqual", {alpha, zero}), one, b.real(dtype, -1.0));
  Value* beta = b.neg(b.mul(sgn, b.sqrt(b.add(b.mul(alpha, alpha), tail_norm2))));
  Value* safe_beta = b.where(trivial, one, beta);
  Value* tau = b.where(trivial, zero, b.div(b.sub(beta, alpha), safe_beta));
  Value* scale = b.where(trivial, zero, b.div(one, b.sub(alpha, safe_beta)));
  Value* is_k_row = b.equal(rows, it);
  Value* v = b.where(is_k_row, one, b.mul(tail, scale));  // (B, r, 1), v_k = 1
  // H = I - tau v v^T applied to x (from the left) and accumulated into Q (from the right).
  // Only the columns right of k: the ones left of it hold earlier reflectors.
  Value* w = b.where(b.greater(cols, it), b.reduce("ReduceSum", b.mul(v, x), {1}, true), zero);  // v^T x: (B, 1, c)
  x = b.sub(x, b.mul(b.mul(tau, v), w));
  Value* qv = b.matmul(q, v);  // (B, r, 1)
  q = b.sub(q, b.mul(b.mul(tau, qv), b.transpose(v, {0, 2, 1})));
  // Column k: beta on the diagonal (alpha when H = I), v below, as geqrf stores them.
  Value* is_k_col = b.equal(cols, it);
  Value* r_kk = b.where(trivial, alpha, beta);
  x = b.where(b.and_(is_k_col, is_k_row), r_kk, b.where(b.and_(is_k_col, below), v, x));
  const auto outs = loop.finish(o.scalar_of(k), {x, q, perm}, {tau});
  Householder h;
  h.packed = outs[0];
  h.q = outs[1];
  h.perm = o.squeeze(outs[2], {1});
  // Scan output (k, B, 1, 1) -> (B, k); a Loop of 0 iterations gives no scan
  // values to stack, so k = 0 is served by the padded (k + 1) copy below.
  h.tau = o.squeeze(o.transpose(outs[3], {1, 0, 2, 3}), {2, 3});
  return h;
}

// Householder QR with at least one reflector: a (B, r, c) with r or c
// possibly 0 is padded by one zero column, whose reflector is dropped.
Householder householder_qr_any(const Ops& o, Value* a, Value* r, Value* c, bool pivoting) {
  if (r->constant && c->constant && r->constant->to_int64s()[0] > 0 && c->constant->to_int64s()[0] > 0) {
    return householder_qr(o, a, r, c, pivoting);
  }
  // One extra row and column (zeros): k + 1 >= 1 reflectors; the extra row
  // and column never mix with the rest (their entries stay 0).
  Value* one = o.ints({1});
  Value* grown = o.op("Pad", {a, o.ints({0, 0, 0, 0, 1, 1}), o.real(a->dtype, 0.0)});
  // With pivoting the zero column is never chosen before a real one (ties
  // go to the first column).
  Householder h = householder_qr(o, grown, o.add(r, one), o.add(c, one), pivoting);
  h.packed = leading_block(o, h.packed, r, c);
  h.q = leading_block(o, h.q, r, r);
  h.tau = o.slice(h.tau, o.ints({0}), o.min(r, c), o.ints({1}));
  h.perm = o.slice(h.perm, o.ints({0}), c, o.ints({1}));
  return h;
}

struct Svd {
  Value* u;   // (B, r, r) with full, else (B, r, k)
  Value* s;   // (B, k) descending
  Value* vt;  // (B, c, c) with full, else (B, k, c)
};

// SVD of a (B, r, c) by one-sided Jacobi on the columns of the taller orientation.
Svd jacobi_svd(const Ops& o, Value* a, Value* r, Value* c, bool tall, bool full, bool compute_uv) {
  const DType dtype = a->dtype;
  // Work on x (B, p, q) with p >= q: a itself when tall, else a^T.
  Value* x = tall ? a : o.swap_last2(a);
  Value* p = tall ? r : c;
  Value* q = tall ? c : r;
  Value* two = o.ints({2});
  Value* m = o.max(o.add(q, o.op("Mod", {q, two})), two);
  Value* batch = o.dim(a, 0);
  // Zero columns up to m: orthogonal to everything, never rotated.
  Value* pads = o.concat({o.ints({0, 0, 0, 0, 0}), o.sub(m, q)}, 0);
  x = o.op("Pad", {x, pads, o.real(dtype, 0.0)});
  Value* v0 = o.expand(identity(o, m, dtype), o.concat({batch, m, m}, 0));
  const Pairing pairs = round_robin(o, m, dtype);
  const double eps = epsilon_of(dtype);
  const Grid grid = index_grid(o, m);
  Value* off_diagonal = o.not_(o.equal(grid.rows, grid.cols));

  Loop sweeps(o.g, "svd_sweep", {x, v0}, {false, true});
  Ops& s = sweeps.body();
  Loop rounds(s.g, "svd_round", {sweeps.carried()[0], sweeps.carried()[1]}, {false, true});
  Ops& b = rounds.body();
  Value* xr = rounds.carried()[0];
  Value* vr = rounds.carried()[1];
  Value* partner = b.gather(pairs.partner, rounds.iteration(), 0);
  Value* sign = b.gather(pairs.sign, rounds.iteration(), 0);
  Value* norms = b.reduce("ReduceSum", b.mul(xr, xr), {1}, false);                       // (B, m)
  Value* dots = b.reduce("ReduceSum", b.mul(xr, b.gather(xr, partner, 2)), {1}, false);  // (B, m)
  const Rotation rot = pair_rotation(b, norms, dots, partner, sign);
  xr = rotate(b, xr, rot, partner, 2);
  vr = rotate(b, vr, rot, partner, 2);
  const auto outs = rounds.finish(pairs.rounds, {xr, vr});
  // Converged when every pair of columns is orthogonal to relative
  // precision: |<x_i, x_j>| <= eps ||x_i|| ||x_j|| (0/0 for zero columns is
  // NaN, which never exceeds the bound).
  Value* gram = s.matmul(s.swap_last2(outs[0]), outs[0]);
  Value* d = diagonal(s, gram, m);
  Value* scale = s.mul(s.unsqueeze(d, {2}), s.unsqueeze(d, {1}));
  Value* cosines2 = s.div(s.mul(gram, gram), scale);
  Value* bad = s.and_(off_diagonal, s.greater(cosines2, s.real(dtype, 16.0 * eps * eps)));
  Value* more = s.greater(s.reduce("ReduceSum", s.cast(bad, DType::Int64), {0, 1, 2}, false), s.int0(0));
  const auto swept = sweeps.finish(o.int0(kMaxSweeps), {outs[0], outs[1]}, {}, more,
                                   o.g.constant(Tensor::scalar(DType::Bool, 1.0), "true"));
  Value* columns = o.slice(swept[0], o.ints({0}), q, o.ints({2}));  // (B, p, q)
  Value* sigma = o.sqrt(o.reduce("ReduceSum", o.mul(columns, columns), {1}, false));  // (B, q)
  auto sorted = o.ops("TopK", {sigma, q}, {{"axis", int64_t{1}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}}, 2);
  // min(p, q) singular values: with p < q (a wide matrix worked on as it
  // is), the last q - p columns have gone to zero.
  Value* k = o.min(p, q);
  Value* first_k = o.ints({0});
  Svd out{nullptr, o.slice(sorted[0], first_k, k, o.ints({1})), nullptr};
  if (!compute_uv) return out;
  Value* order = sorted[1];  // (B, q)
  Value* vectors = leading_block(o, swept[1], q, q);
  Value* right = o.gather_elements(vectors, o.expand(o.unsqueeze(order, {1}), o.shape(vectors)), 2);  // (B, q, q)
  Value* left = o.gather_elements(columns, o.expand(o.unsqueeze(order, {1}), o.shape(columns)), 2);   // (B, p, q)
  Value* zero = o.real(dtype, 0.0);
  Value* s_k = out.s;                                                    // (B, k)
  left = o.slice(left, first_k, k, o.ints({2}));                         // (B, p, k)
  Value* positive = o.unsqueeze(o.greater(s_k, zero), {1});              // (B, 1, k)
  Value* divisor = o.unsqueeze(o.where(o.equal(s_k, zero), o.real(dtype, 1.0), s_k), {1});
  left = o.where(positive, o.div(left, divisor), zero);
  // Orthonormal completion: Q of the left vectors (zero columns, which sort
  // last, included) spans them first, then the rest of the space.
  const Householder h = householder_qr_any(o, left, p, k, false);
  Value* completed = o.where(positive, left, o.slice(h.q, first_k, k, o.ints({2})));  // (B, p, k)
  Value* left_all = o.concat({completed, o.slice(h.q, k, p, o.ints({2}))}, 2);         // (B, p, p)
  Value* left_out = full ? left_all : completed;
  Value* right_out = full ? right : o.slice(right, first_k, k, o.ints({2}));
  // x = L S R^T; x is a when tall, else a^T (then a = R S L^T).
  out.u = tall ? left_out : right_out;
  out.vt = o.swap_last2(tall ? right_out : left_out);
  return out;
}

// ---------------------------------------------------------------- recipes

int64_t flag(const Attributes& attrs, const char* name, int64_t fallback) { return attrs.get_int(name, fallback); }

// Whether matrices a (..., r, c) have r >= c: from the static shape, else
// attr tall (the Jacobi SVD orthogonalizes the columns of the taller
// orientation, chosen when the graph is built; the other gives the same
// result, only slower); tall by default.
bool is_tall(Value* a, const Attributes& attrs) {
  const auto& dims = *a->shape;
  const Dim& r = dims[dims.size() - 2];
  const Dim& c = dims[dims.size() - 1];
  if (r.is_known() && c.is_known()) return r.size >= c.size;
  return flag(attrs, "tall", 1) != 0;
}

// (w, v) of symmetric a, or of the pencil (a, b) with b positive definite
// (scipy.linalg.eigh(a, b): v^T b v = I).
std::vector<Value*> eigh_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("eigh", in);
  const Ops o{g};
  const bool lower = flag(attrs, "lower", 1) != 0;
  std::vector<Value*> shapes{batch_shape(o, in[0], 2)};
  if (in.size() > 1) shapes.push_back(batch_shape(o, in[1], 2));
  Value* batch = broadcast_batch_shapes(o, shapes);
  const bool broadcast = in.size() > 1;
  const Square sq = square_stack(o, in[0], batch, broadcast);
  Value* a = symmetric_from_triangle(o, sq.a, sq.n, lower);
  Value* back = nullptr;  // L^-T for the generalized problem
  if (in.size() > 1) {
    Value* bm = symmetric_from_triangle(o, flatten_batch(o, in[1], 2, batch, true), sq.n, lower);
    Value* l_inverse = lower_triangular_inverse(o, cholesky_lower(o, bm, sq.n), sq.n);
    a = o.matmul(o.matmul(l_inverse, a), o.swap_last2(l_inverse));
    a = symmetric_from_triangle(o, a, sq.n, true);
    back = o.swap_last2(l_inverse);
  }
  const EigenPairs e = jacobi_eigh(o, a, sq.n);
  Value* vectors = back ? o.matmul(back, e.vectors) : e.vectors;
  return {unflatten_batch(o, e.values, 1, batch), unflatten_batch(o, vectors, 2, batch)};
}

// (u, s, vt), or s alone with compute_uv=0.
std::vector<Value*> svd_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("svd", in);
  const Ops o{g};
  const bool full = flag(attrs, "full_matrices", 1) != 0;
  const bool compute_uv = flag(attrs, "compute_uv", 1) != 0;
  Value* batch = batch_shape(o, in[0], 2);
  Value* a = flatten_batch(o, in[0], 2, batch);
  Value* r = o.dim(in[0], -2);
  Value* c = o.dim(in[0], -1);
  const Svd s = jacobi_svd(o, a, r, c, is_tall(in[0], attrs), full, compute_uv);
  if (!compute_uv) return {unflatten_batch(o, s.s, 1, batch)};
  return {unflatten_batch(o, s.u, 2, batch), unflatten_batch(o, s.s, 1, batch), unflatten_batch(o, s.vt, 2, batch)};
}

// (packed, tau, q, perm): geqrf's (or geqp3's) packed factor, tau, the full
// Q (orgqr), and the column permutation.
std::vector<Value*> qr_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("qr", in);
  const Ops o{g};
  const bool pivoting = flag(attrs, "pivoting", 0) != 0;
  Value* batch = batch_shape(o, in[0], 2);
  Value* a = flatten_batch(o, in[0], 2, batch);
  const Householder h = householder_qr_any(o, a, o.dim(in[0], -2), o.dim(in[0], -1), pivoting);
  return {unflatten_batch(o, h.packed, 2, batch), unflatten_batch(o, h.tau, 1, batch), unflatten_batch(o, h.q, 2, batch),
          unflatten_batch(o, h.perm, 1, batch)};
}

// numpy.linalg.pinv: V diag(1/s) U^T over the singular values above
// rcond * max(s) (attr rcond; NumPy's default 1e-15).
std::vector<Value*> pinv_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("pinv", in);
  const Ops o{g};
  const double rcond = [&] {
    const AttrValue* v = attrs.find("rcond");
    return v ? std::get<double>(*v) : 1e-15;
  }();
  Value* batch = batch_shape(o, in[0], 2);
  Value* a = flatten_batch(o, in[0], 2, batch);
  Value* r = o.dim(in[0], -2);
  Value* c = o.dim(in[0], -1);
  const bool tall = is_tall(in[0], attrs);
  const DType dtype = a->dtype;
  Value* result;
  if (flag(attrs, "hermitian", 0) != 0) {
    // NumPy: s = |w|, u = v * sign(w), vt = v^T.
    const Square sq{a, c};
    const EigenPairs e = jacobi_eigh(o, symmetric_from_triangle(o, sq.a, sq.n, true), sq.n);
    Value* magnitude = o.abs(e.values);
    Value* largest = o.reduce("ReduceMax", o.op("Pad", {magnitude, o.ints({0, 0, 0, 1}), o.real(dtype, 0.0)}), {1}, true);
    Value* keep = o.greater(magnitude, o.mul(o.real(dtype, rcond), largest));
    Value* inverse = o.where(keep, o.div(o.real(dtype, 1.0), o.where(keep, e.values, o.real(dtype, 1.0))), o.real(dtype, 0.0));
    result = o.matmul(o.mul(e.vectors, o.unsqueeze(inverse, {1})), o.swap_last2(e.vectors));
  } else {
    const Svd s = jacobi_svd(o, a, r, c, tall, false, true);
    // max(s) of an empty s is 0 (a Pad with one 0 keeps ReduceMax defined).
    Value* largest = o.reduce("ReduceMax", o.op("Pad", {s.s, o.ints({0, 0, 0, 1}), o.real(dtype, 0.0)}), {1}, true);
    Value* keep = o.greater(s.s, o.mul(o.real(dtype, rcond), largest));
    Value* inverse = o.where(keep, o.div(o.real(dtype, 1.0), o.where(keep, s.s, o.real(dtype, 1.0))), o.real(dtype, 0.0));
    result = o.matmul(o.mul(o.swap_last2(s.vt), o.unsqueeze(inverse, {1})), o.swap_last2(s.u));
  }
  return {unflatten_batch(o, result, 2, batch)};
}

// numpy.linalg.lstsq(a, b, rcond) through the SVD: (x, residuals, rank, s).
// residuals: the squared column norms of b - a x when rank == n < m, else
// empty (NumPy's rule). Inputs a (m, n), b (m, k), rcond 0-D.
std::vector<Value*> lstsq_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes& attrs) {
  require_float("lstsq", {in[0], in[1]});
  const Ops o{g};
  Value* a = o.unsqueeze(in[0], {0});
  Value* b = o.unsqueeze(in[1], {0});
  Value* r = o.dim(in[0], -2);
  Value* c = o.dim(in[0], -1);
  const DType dtype = a->dtype;
  const Svd s = jacobi_svd(o, a, r, c, is_tall(in[0], attrs), false, true);
  // gelsd: a negative rcond means machine precision.
  Value* rcond = o.cast(in[2], dtype);
  rcond = o.where(o.less(rcond, o.real(dtype, 0.0)), o.real(dtype, epsilon_of(dtype)), rcond);
  Value* largest = o.reduce("ReduceMax", o.op("Pad", {s.s, o.ints({0, 0, 0, 1}), o.real(dtype, 0.0)}), {1}, true);
  Value* keep = o.greater(s.s, o.mul(rcond, largest));
  Value* inverse = o.where(keep, o.div(o.real(dtype, 1.0), o.where(keep, s.s, o.real(dtype, 1.0))), o.real(dtype, 0.0));
  Value* x = o.matmul(o.mul(o.swap_last2(s.vt), o.unsqueeze(inverse, {1})), o.matmul(o.swap_last2(s.u), b));
  Value* rank = o.reduce("ReduceSum", o.cast(keep, DType::Int64), {1}, false);  // (1,)
  Value* residual = o.sub(b, o.matmul(a, x));
  Value* squares = o.reduce("ReduceSum", o.mul(residual, residual), {1}, false);  // (1, k)
  Value* has_residuals = o.and_(o.equal(rank, c), o.greater(r, c));
  Value* length = o.mul(o.cast(has_residuals, DType::Int64), o.dim(in[1], -1));
  Value* residuals = o.slice(o.squeeze(squares, {0}), o.ints({0}), length, o.ints({0}));
  return {o.squeeze(x, {0}), residuals, o.squeeze(rank, {0}), o.squeeze(s.s, {0})};
}

// scipy.linalg.expm by scaling and squaring with the [13/13] Pade approximant.
std::vector<Value*> expm_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  require_float("expm", in);
  const Ops o{g};
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const NonEmpty ne = non_empty(o, sq.a, sq.n);
  Value* a = ne.a;
  const DType dtype = a->dtype;
  // Higham (2005), Table 2.3: theta_13, and the coefficients b_0..b_13 of p_13.
  constexpr double kTheta13 = 5.371920351148152;
  constexpr double kB[] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
                           129060195264000.0,   10559470521600.0,    670442572800.0,     33522128640.0,
                           1323241920.0,        40840800.0,          960960.0,           16380.0,
                           182.0,               1.0};
  // s = max(0, ceil(log2(||A||_1 / theta_13))), per matrix.
  Value* norm1 = o.reduce("ReduceMax", o.reduce("ReduceSum", o.abs(a), {1}, false), {1}, false);  // (B,)
  Value* ratio = o.cast(o.div(norm1, o.real(dtype, kTheta13)), DType::Float64);
  Value* log2 = o.div(o.log(ratio), o.real(DType::Float64, std::log(2.0)));
  Value* s = o.max(o.op("Ceil", {log2}), o.real(DType::Float64, 0.0));
  s = o.where(o.op("IsNaN", {s}), o.real(DType::Float64, 0.0), s);  // NaN input: no squaring
  s = o.min(s, o.real(DType::Float64, 1024.0));                       // inf input
  Value* scale = o.cast(o.op("Pow", {o.real(DType::Float64, 2.0), o.neg(s)}), dtype);
  a = o.mul(a, o.unsqueeze(scale, {1, 2}));
  Value* eye = o.expand(identity(o, ne.n, dtype), o.shape(a));
  Value* a2 = o.matmul(a, a);
  Value* a4 = o.matmul(a2, a2);
  Value* a6 = o.matmul(a4, a2);
  auto c = [&](int i) { return o.real(dtype, kB[i]); };
  auto lin = [&](int i6, int i4, int i2) { return o.add(o.add(o.mul(c(i6), a6), o.mul(c(i4), a4)), o.mul(c(i2), a2)); };
  Value* u = o.matmul(a, o.add(o.matmul(a6, lin(13, 11, 9)), o.add(lin(7, 5, 3), o.mul(c(1), eye))));
  Value* v = o.add(o.matmul(a6, lin(12, 10, 8)), o.add(lin(6, 4, 2), o.mul(c(0), eye)));
  const Lu lu = lu_factor(o, o.sub(v, u), ne.n);
  Value* r = solve_with_lu(o, lu, o.add(u, v), ne.n);
  // Square s times (the largest s of the batch; each matrix stops at its own).
  Value* steps = o.cast(o.reduce("ReduceMax", o.op("Pad", {s, o.ints({0, 1}), o.real(DType::Float64, 0.0)}), {0}, false), DType::Int64);
  Value* s_int = o.unsqueeze(o.cast(s, DType::Int64), {1, 2});
  Loop loop(g, "expm_squaring", {r}, {true});
  Ops& b = loop.body();
  Value* x = loop.carried()[0];
  Value* squared = b.where(b.less(loop.iteration(), s_int), b.matmul(x, x), x);
  r = loop.finish(steps, {squared})[0];
  if (ne.padded) r = leading_block(o, r, sq.n, sq.n);
  return {unflatten_batch(o, r, 2, batch)};
}

}  // namespace

void add_spectral_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"eigh", eigh_recipe, 1, 2,
                   "ascending eigenvalues and eigenvectors of symmetric (a) or of the pencil (a, b) (attr lower); Jacobi"});
  table.push_back({"svd", svd_recipe, 1, 1,
                   "u, s, vt (attrs full_matrices, compute_uv; tall when the shape is symbolic); one-sided Jacobi"});
  table.push_back({"qr", qr_recipe, 1, 1, "Householder QR as geqrf/geqp3 (attr pivoting): packed, tau, full Q, permutation"});
  table.push_back({"pinv", pinv_recipe, 1, 1, "Moore-Penrose pseudo-inverse as numpy.linalg.pinv (attrs rcond, hermitian)"});
  table.push_back({"lstsq", lstsq_recipe, 3, 3, "numpy.linalg.lstsq(a, b, rcond): x, residuals, rank, s"});
  table.push_back({"expm", expm_recipe, 1, 1, "matrix exponential, scaling and squaring with Pade 13"});
}

}  // namespace pytensor_onnx::recipes::linalg

namespace pytensor_onnx::recipes {
void add_linalg_spectral_recipes(std::vector<RecipeInfo>& table) { linalg::add_spectral_recipes(table); }
}  // namespace pytensor_onnx::recipes
