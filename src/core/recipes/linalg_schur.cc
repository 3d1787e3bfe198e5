// Real Schur decomposition a = z t z^T (scipy.linalg.schur(a, output="real"),
// LAPACK's gees without sorting) from standard ONNX ops:
//
// - Householder reduction to upper Hessenberg form, one Loop over columns.
// - Francis double-shift QR sweeps (Golub and Van Loan, "Matrix
//   Computations", 4th ed., Algorithms 7.5.1-7.5.2): each sweep chases the
//   bulge through the bottom-most unreduced block of size >= 3 of every
//   matrix with 3-element reflectors, applied to whole rows and columns (so t
//   and z stay a similarity of a). Every tenth sweep takes the classical
//   exceptional shift (EISPACK hqr) so that cycles such as permutation
//   matrices break. A subdiagonal entry is set to 0 once it is below
//   eps (|t_kk| + |t_k+1,k+1|); a matrix is done when its unreduced blocks
//   are 1x1 or 2x2.
// - The 2x2 blocks are then standardized as LAPACK's dlanv2 leaves them
//   (Anderson et al., LAPACK Users' Guide): blocks with real eigenvalues are
//   rotated to upper triangular, blocks with complex ones to equal diagonal
//   entries and off-diagonal entries of opposite sign. All blocks are
//   disjoint, so one orthogonal matrix of 2x2 rotations applies them at once.
//
// Every operation is an orthogonal similarity applied to whole matrices, so
// the result is backward stable (||a - z t z^T|| of a few eps ||a||) whatever
// the number of sweeps. The matrices are padded with three identity rows and
// columns, decoupled from the rest (their subdiagonal entry is exactly 0), so
// that sizes 0, 1 and 2 need no special case; the padding is cut off at the end.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "linalg.h"
#include "linalg_ops.h"
#include "registry.h"

namespace pytensor_onnx::recipes::linalg {
namespace {

constexpr int64_t kPadding = 3;
constexpr int64_t kExceptionalEvery = 10;
constexpr int64_t kSweepsPerSize = 30;  // at most 30 max(10, n) sweeps, LAPACK dlahqr's budget

double epsilon_of(DType dtype) {
  return dtype == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

double tiny_of(DType dtype) {
  return dtype == DType::Float32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
}

// The work of one matrix size m: index grids and masks shared by the steps.
struct Frame {
  Value* m;        // 1-D int64: the padded size
  Value* rows;     // (m, 1) int64
  Value* cols;     // (1, m) int64
  Value* column;   // (1, m, 1) int64: row index of a column vector
  Value* on_diag;  // (m, m) bool
  Value* on_sub;   // (m, m) bool: row == col + 1
  Value* on_super; // (m, m) bool: col == row + 1
  Value* below;    // (m, m) bool: row > col + 1 (zero in Hessenberg form)
};

Frame make_frame(const Ops& o, Value* m) {
  const Grid grid = index_grid(o, m);
  Value* one = o.int0(1);
  Frame f{m, grid.rows, grid.cols, o.unsqueeze(grid.rows, {0}), nullptr, nullptr, nullptr, nullptr};
  f.on_diag = o.equal(grid.rows, grid.cols);
  f.on_sub = o.equal(grid.rows, o.add(grid.cols, one));
  f.on_super = o.equal(grid.cols, o.add(grid.rows, one));
  f.below = o.greater(grid.rows, o.add(grid.cols, one));
  return f;
}

// x[r, c] of each matrix of x (B, m, m), for r, c (B,) int64 (clamped to the matrix).
Value* entry(const Ops& o, const Frame& f, Value* x, Value* r, Value* c) {
  Value* last = o.sub(f.m, o.ints({1}));
  auto clamp = [&](Value* i) { return o.max(o.min(i, last), o.int0(0)); };
  Value* flat = o.op("Flatten", {x}, {{"axis", int64_t{1}}});  // (B, m m)
  Value* index = o.add(o.mul(clamp(r), f.m), clamp(c));
  return o.squeeze(o.gather_elements(flat, o.unsqueeze(index, {1}), 1), {1});
}

// A Householder reflector I - tau v v^T that maps the vector with `alpha` at
// row `lead` and `tail` elsewhere to beta e_lead (LAPACK's dlarfg choice:
// beta = -sign(alpha) ||(alpha, tail)||, v_lead = 1; tau = 0 when the tail is
// already 0 or `off`). alpha, off: (B, 1, 1); tail: (B, m, 1) with 0 at lead.
struct Reflector {
  Value* v;    // (B, m, 1)
  Value* tau;  // (B, 1, 1)
};

Reflector reflector(const Ops& o, Value* alpha, Value* tail, Value* is_lead, Value* off) {
  const DType dtype = alpha->dtype;
  Value* zero = o.real(dtype, 0.0);
  Value* one = o.real(dtype, 1.0);
  // Scaled by the largest entry, so the norm neither overflows nor underflows.
  Value* biggest = o.max(o.abs(alpha), o.reduce("ReduceMax", o.abs(tail), {1}, true));
  Value* scale = o.where(o.equal(biggest, zero), one, biggest);
  Value* a = o.div(alpha, scale);
  Value* t = o.div(tail, scale);
  Value* tail_norm2 = o.reduce("ReduceSum", o.mul(t, t), {1}, true);
  Value* trivial = o.or_(o.equal(tail_norm2, zero), off);
  Value* sgn = o.where(o.op("GreaterOrEqual", {a, zero}), one, o.real(dtype, -1.0));
  Value* beta = o.neg(o.mul(sgn, o.sqrt(o.add(o.mul(a, a), tail_norm2))));
  Value* safe_beta = o.where(trivial, one, beta);
  Value* tau = o.where(trivial, zero, o.div(o.sub(beta, a), safe_beta));
  Value* factor = o.where(trivial, zero, o.div(one, o.sub(a, safe_beta)));
  return {o.where(is_lead, one, o.mul(t, factor)), tau};
}

struct Similarity {
  Value* t;  // (B, m, m)
  Value* z;  // (B, m, m): accumulated transformations, a = z t z^T
};

// t <- P t P, z <- z P with P = I - tau v v^T, on whole rows and columns.
Similarity reflect(const Ops& o, const Similarity& s, const Reflector& r) {
  Value* vt = o.transpose(r.v, {0, 2, 1});
  Value* tau_vt = o.mul(r.tau, vt);
  Value* t = o.sub(s.t, o.mul(o.mul(r.tau, r.v), o.matmul(vt, s.t)));
  t = o.sub(t, o.mul(o.matmul(t, r.v), tau_vt));
  Value* z = o.sub(s.z, o.mul(o.matmul(s.z, r.v), tau_vt));
  return {t, z};
}

// Reduction to upper Hessenberg form: reflector k zeroes column k below row k + 1.
Similarity hessenberg(const Ops& o, const Frame& f, const Similarity& start) {
  Loop loop(o.g, "schur_hessenberg", {start.t, start.z}, {true, true});
  Ops& b = loop.body();
  Value* k = loop.iteration();
  Value* k1 = b.add(k, b.int0(1));
  Value* column = b.gather(loop.carried()[0], b.unsqueeze(k, {0}), 2);  // (B, m, 1)
  Value* alpha = b.gather(column, b.unsqueeze(k1, {0}), 1);            // (B, 1, 1)
  Value* tail = b.where(b.greater(f.column, k1), column, b.real(column->dtype, 0.0));
  Value* never = b.g.constant(Tensor::scalar(DType::Bool, 0.0), "false");
  const Reflector r = reflector(b, alpha, tail, b.equal(f.column, k1), never);
  const Similarity next = reflect(b, {loop.carried()[0], loop.carried()[1]}, r);
  Value* steps = o.scalar_of(o.sub(f.m, o.ints({2})));
  const auto out = loop.finish(steps, {next.t, next.z});
  return {out[0], out[1]};
}

// Subdiagonal entries below eps (|t_kk| + |t_k+1,k+1|) (or below the
// smallest normal number over eps) become 0, and so does the rounding left
// below the subdiagonal.
Value* deflate(const Ops& o, const Frame& f, Value* t) {
  const DType dtype = t->dtype;
  Value* d = o.abs(diagonal(o, t, f.m));  // (B, m)
  Value* neighbours = o.add(o.unsqueeze(d, {2}), o.unsqueeze(d, {1}));  // [r, c] = |t_rr| + |t_cc|
  Value* bound = o.max(o.mul(o.real(dtype, epsilon_of(dtype)), neighbours),
                       o.real(dtype, tiny_of(dtype) / epsilon_of(dtype)));
  Value* small = o.and_(f.on_sub, o.op("LessOrEqual", {o.abs(t), bound}));
  return o.where(o.or_(small, f.below), o.real(dtype, 0.0), t);
}

// The subdiagonal as (B, m): entry r is t[r, r - 1] (0 for r = 0).
Value* subdiagonal_by_row(const Ops& o, const Frame& f, Value* t) {
  return o.reduce("ReduceSum", o.where(f.on_sub, t, o.real(t->dtype, 0.0)), {2}, false);
}

// The bottom-most unreduced block of size >= 3 of each matrix: rows l..p.
struct Window {
  Value* active;  // (B,) bool: the matrix has such a block
  Value* l;       // (B,) int64
  Value* p;       // (B,) int64
};

Window active_window(const Ops& o, const Frame& f, Value* t) {
  Value* linked = o.not_(o.equal(subdiagonal_by_row(o, f, t), o.real(t->dtype, 0.0)));  // (B, m): row r joins r - 1
  Value* batch = o.dim(t, 0);
  Value* unlinked_first = o.expand(o.g.constant(Tensor::scalar(DType::Bool, 0.0), "false"), o.concat({batch, o.ints({1})}, 0));
  Value* previous = o.concat({unlinked_first, o.slice(linked, o.ints({0}), o.ints({-1}), o.ints({1}))}, 1);
  Value* row = o.squeeze(f.cols, {0});  // (m,)
  Value* none = o.int0(-1);
  Value* p = o.reduce("ReduceMax", o.where(o.and_(linked, previous), row, none), {1}, false);
  // l: the last row at or above p that does not join the row above (row 0 never does).
  Value* starts = o.and_(o.not_(linked), o.op("LessOrEqual", {row, o.unsqueeze(p, {1})}));
  Value* l = o.reduce("ReduceMax", o.where(starts, row, o.int0(0)), {1}, false);
  return {o.op("GreaterOrEqual", {p, o.int0(0)}), l, p};
}

Value* column3(const Ops& o, Value* x) { return o.unsqueeze(x, {1, 2}); }  // (B,) -> (B, 1, 1)

// The shifts' sum and product: the eigenvalues of the trailing 2x2 of the
// window, or every tenth sweep the exceptional shift.
struct Shifts {
  Value* sum;
  Value* product;
};

Shifts francis_shifts(const Ops& o, const Frame& f, Value* t, const Window& w, Value* sweep) {
  Value* one = o.int0(1);
  Value* q = o.sub(w.p, one);
  Value* a11 = entry(o, f, t, q, q);
  Value* a12 = entry(o, f, t, q, w.p);
  Value* a21 = entry(o, f, t, w.p, q);
  Value* a22 = entry(o, f, t, w.p, w.p);
  const DType dtype = t->dtype;
  Value* sum = o.add(a11, a22);
  Value* product = o.sub(o.mul(a11, a22), o.mul(a12, a21));
  Value* ss = o.add(o.abs(a21), o.abs(entry(o, f, t, q, o.sub(q, one))));
  Value* h = o.add(o.mul(o.real(dtype, 0.75), ss), a22);
  Value* exceptional_product = o.add(o.mul(h, h), o.mul(o.real(dtype, 0.4375), o.mul(ss, ss)));
  Value* exceptional = o.equal(o.op("Mod", {sweep, o.int0(kExceptionalEvery)}), o.int0(kExceptionalEvery - 1));
  return {o.where(exceptional, o.add(h, h), sum), o.where(exceptional, exceptional_product, product)};
}

// One Francis double-shift sweep over each matrix's window: step j reflects
// rows and columns k = l + j .. k + 2 (k + 1 at the window's end).
Similarity francis_sweep(const Ops& o, const Frame& f, const Similarity& s, const Window& w, Value* sweep) {
  const DType dtype = s.t->dtype;
  const Shifts sh = francis_shifts(o, f, s.t, w, sweep);
  Value* one = o.int0(1);
  Value* l1 = o.add(w.l, one);
  Value* h11 = entry(o, f, s.t, w.l, w.l);
  Value* h21 = entry(o, f, s.t, l1, w.l);
  // The first column of (H - s1 I)(H - s2 I) at rows l, l + 1, l + 2.
  Value* x0 = o.add(o.sub(o.add(o.mul(h11, h11), o.mul(entry(o, f, s.t, w.l, l1), h21)), o.mul(sh.sum, h11)), sh.product);
  Value* y0 = o.mul(h21, o.sub(o.add(h11, entry(o, f, s.t, l1, l1)), sh.sum));
  Value* z0 = o.mul(h21, entry(o, f, s.t, o.add(l1, one), l1));

  Loop loop(o.g, "schur_bulge", {s.t, s.z}, {true, true});
  Ops& b = loop.body();
  Value* t = loop.carried()[0];
  Value* j = loop.iteration();
  Value* k = b.add(w.l, j);
  Value* k1 = b.add(k, one);
  Value* k2 = b.add(k1, one);
  Value* before = b.sub(k, one);
  Value* first = b.equal(j, b.int0(0));
  Value* x = b.where(first, x0, entry(b, f, t, k, before));
  Value* y = b.where(first, y0, entry(b, f, t, k1, before));
  Value* z = b.where(first, z0, entry(b, f, t, k2, before));
  Value* three = b.op("LessOrEqual", {k2, w.p});
  z = b.where(three, z, b.real(dtype, 0.0));
  Value* off = b.not_(b.and_(w.active, b.op("LessOrEqual", {k1, w.p})));
  Value* lead = column3(b, k);
  Value* tail = b.where(b.equal(f.column, b.add(lead, one)), column3(b, y),
                        b.where(b.equal(f.column, b.add(lead, b.int0(2))), column3(b, z), b.real(dtype, 0.0)));
  const Reflector r = reflector(b, column3(b, x), tail, b.equal(f.column, lead), column3(b, off));
  const Similarity next = reflect(b, {t, loop.carried()[1]}, r);
  const auto out = loop.finish(o.scalar_of(o.sub(f.m, o.ints({1}))), {next.t, next.z});
  return {out[0], out[1]};
}

// Whether any matrix of the stack still has a window, as a 0-D bool.
Value* any_active(const Ops& o, const Window& w) {
  return o.greater(o.reduce("ReduceSum", o.cast(w.active, DType::Int64), {0}, false), o.int0(0));
}

// Francis sweeps until every matrix is quasi-triangular (or the budget is
// spent). `unconverged` (B,) bool: the matrices still active at the end.
struct QrResult {
  Similarity s;
  Value* unconverged;
};

QrResult qr_iterations(const Ops& o, const Frame& f, const Similarity& start, Value* n) {
  Loop loop(o.g, "schur_sweep", {start.t, start.z}, {true, true});
  Ops& b = loop.body();
  const Similarity current{loop.carried()[0], loop.carried()[1]};
  const Similarity swept = francis_sweep(b, f, current, active_window(b, f, current.t), loop.iteration());
  Value* t = deflate(b, f, swept.t);
  Value* budget = o.scalar_of(o.mul(o.ints({kSweepsPerSize}), o.max(n, o.ints({10}))));
  const auto out = loop.finish(budget, {t, swept.z}, {}, any_active(b, active_window(b, f, t)),
                               any_active(o, active_window(o, f, start.t)));
  return {{out[0], out[1]}, active_window(o, f, out[0]).active};
}

// The rotation (cs, sn) that standardizes the 2x2 block [[a, b], [c, d]]
// (all (B, m - 1)); blocks with c == 0 get the identity.
struct Rotation2 {
  Value* cs;
  Value* sn;
  Value* triangular;  // the block becomes upper triangular (real eigenvalues)
  Value* complex;     // the block keeps a complex pair
};

// [[a', b'], [c', d']] = G^T [[a, b], [c, d]] G for G = [[cs, -sn], [sn, cs]]: b' and c'.
std::pair<Value*, Value*> rotated_off_diagonal(const Ops& o, Value* a, Value* b, Value* c, Value* d, Value* cs, Value* sn) {
  Value* cc = o.mul(cs, cs);
  Value* ss = o.mul(sn, sn);
  Value* cs_sn_dma = o.mul(o.mul(cs, sn), o.sub(d, a));
  return {o.add(o.sub(o.mul(cc, b), o.mul(ss, c)), cs_sn_dma), o.add(o.sub(o.mul(cc, c), o.mul(ss, b)), cs_sn_dma)};
}

Rotation2 standard_rotation(const Ops& o, Value* a, Value* b, Value* c, Value* d) {
  const DType dtype = a->dtype;
  Value* zero = o.real(dtype, 0.0);
  Value* one = o.real(dtype, 1.0);
  auto sign_of = [&](Value* x) { return o.where(o.op("GreaterOrEqual", {x, zero}), one, o.real(dtype, -1.0)); };
  auto nonzero = [&](Value* x) { return o.where(o.equal(x, zero), one, x); };
  Value* block = o.not_(o.equal(c, zero));
  Value* p = o.mul(o.real(dtype, 0.5), o.sub(a, d));
  // Discriminant p^2 + b c over scale = max(|p|, |b|, |c|), without overflow.
  Value* bc_max = o.max(o.abs(b), o.abs(c));
  Value* bc_min = o.mul(o.mul(o.min(o.abs(b), o.abs(c)), o.sign(b)), o.sign(c));
  Value* scale = nonzero(o.max(o.abs(p), bc_max));
  Value* disc = o.add(o.mul(o.div(p, scale), p), o.mul(o.div(bc_max, scale), bc_min));
  Value* real = o.op("GreaterOrEqual", {disc, o.real(dtype, 4.0 * epsilon_of(dtype))});
  // Well separated real eigenvalues: the first column of G is the eigenvector
  // (z, c) of the eigenvalue d + z, z = p + sign(p) sqrt(p^2 + b c).
  Value* zr = o.add(p, o.mul(sign_of(p), o.mul(o.sqrt(scale), o.sqrt(o.max(disc, zero)))));
  Value* hyp_r = nonzero(o.sqrt(o.add(o.mul(zr, zr), o.mul(c, c))));
  Value* cs_real = o.div(zr, hyp_r);
  Value* sn_real = o.div(c, hyp_r);
  // Otherwise first equalize the diagonal: tan(2 theta) = -(a - d) / (b + c).
  Value* sigma = o.add(b, c);
  Value* hyp = o.sqrt(o.add(o.mul(sigma, sigma), o.mul(o.add(p, p), o.add(p, p))));
  Value* flat = o.equal(hyp, zero);
  Value* cs1 = o.where(flat, one, o.sqrt(o.mul(o.real(dtype, 0.5), o.add(one, o.div(o.abs(sigma), nonzero(hyp))))));
  Value* sn1 = o.where(flat, zero, o.neg(o.mul(o.div(p, o.mul(nonzero(hyp), cs1)), sign_of(sigma))));
  const auto [b1, c1] = rotated_off_diagonal(o, a, b, c, d, cs1, sn1);
  // Equal diagonal t: real eigenvalues t +- sqrt(b1 c1) when b1 and c1 have
  // one sign (the eigenvector (sqrt|b1|, sqrt|c1|) triangularizes), a
  // triangular block when c1 == 0, a swap when b1 == 0.
  Value* same_sign = o.greater(o.mul(b1, c1), zero);
  Value* root = nonzero(o.sqrt(o.abs(o.add(b1, c1))));
  Value* cs2 = o.where(same_sign, o.div(o.sqrt(o.abs(b1)), root), o.where(o.equal(b1, zero), zero, one));
  Value* sn2 = o.where(same_sign, o.div(o.sqrt(o.abs(c1)), root), o.where(o.equal(b1, zero), one, zero));
  Value* done = o.equal(c1, zero);
  cs2 = o.where(done, one, cs2);
  sn2 = o.where(done, zero, sn2);
  Value* cs_eq = o.sub(o.mul(cs1, cs2), o.mul(sn1, sn2));
  Value* sn_eq = o.add(o.mul(sn1, cs2), o.mul(cs1, sn2));
  Value* complex = o.and_(o.not_(real), o.and_(o.not_(same_sign), o.not_(o.or_(done, o.equal(b1, zero)))));
  Rotation2 r;
  r.cs = o.where(block, o.where(real, cs_real, cs_eq), one);
  r.sn = o.where(block, o.where(real, sn_real, sn_eq), zero);
  r.complex = o.and_(block, complex);
  r.triangular = o.and_(block, o.not_(complex));
  return r;
}

// (B, m - 1) per block -> (B, 1, m) per column, with `fill` at column 0 (shift) or m - 1.
Value* by_column(const Ops& o, Value* x, Value* fill, bool shift) {
  Value* pad = o.expand(fill, o.concat({o.dim(x, 0), o.ints({1})}, 0));
  return o.unsqueeze(shift ? o.concat({pad, x}, 1) : o.concat({x, pad}, 1), {1});
}

// The leading m - 1 entries of (B, m).
Value* head(const Ops& o, Value* x) { return o.slice(x, o.ints({0}), o.ints({-1}), o.ints({1})); }
Value* rest(const Ops& o, Value* x) { return o.slice(x, o.ints({1}), o.ints({std::numeric_limits<int64_t>::max()}), o.ints({1})); }

Similarity standardize_blocks(const Ops& o, const Frame& f, const Similarity& s) {
  const DType dtype = s.t->dtype;
  Value* zero = o.real(dtype, 0.0);
  Value* one = o.real(dtype, 1.0);
  Value* d = diagonal(o, s.t, f.m);
  Value* super = head(o, o.reduce("ReduceSum", o.where(f.on_super, s.t, zero), {2}, false));  // t[k, k + 1]
  Value* sub = head(o, o.reduce("ReduceSum", o.where(f.on_sub, s.t, zero), {1}, false));      // t[k + 1, k]
  const Rotation2 r = standard_rotation(o, head(o, d), super, sub, rest(o, d));
  // G: identity with [[cs, -sn], [sn, cs]] on each block (blocks are disjoint).
  Value* diag = o.mul(by_column(o, r.cs, one, false), by_column(o, r.cs, one, true));
  Value* g = o.where(f.on_diag, diag,
                     o.where(f.on_super, by_column(o, o.neg(r.sn), zero, true),
                             o.where(f.on_sub, by_column(o, r.sn, zero, false), zero)));
  Value* t = o.matmul(o.matmul(o.transpose(g, {0, 2, 1}), s.t), g);
  Value* z = o.matmul(s.z, g);
  // The exact structure: zeros below the blocks, equal diagonals in complex blocks.
  Value* falses = o.g.constant(Tensor::scalar(DType::Bool, 0.0), "false");
  t = o.where(o.or_(f.below, o.and_(f.on_sub, by_column(o, r.triangular, falses, false))), zero, t);
  Value* d2 = diagonal(o, t, f.m);
  Value* mean = o.mul(o.real(dtype, 0.5), o.add(head(o, d2), rest(o, d2)));
  Value* from_left = by_column(o, r.complex, falses, false);
  Value* from_right = by_column(o, r.complex, falses, true);
  Value* equalized = o.where(from_left, by_column(o, mean, zero, false),
                             o.where(from_right, by_column(o, mean, zero, true), o.unsqueeze(d2, {1})));
  return {o.where(f.on_diag, equalized, t), z};
}

// (t, z) of a (batch..., n, n): quasi-upper-triangular t, orthogonal z.
// Matrices with a non-finite entry, or whose iteration did not converge,
// give NaN (as PyTensor's Schur does for LAPACK failures and non-finite input).
std::vector<Value*> schur_recipe(GraphBuilder& g, const std::vector<Value*>& in, const Attributes&) {
  const Ops o{g};
  for (Value* v : in) {
    if (v->dtype != DType::Float32 && v->dtype != DType::Float64) {
      throw BuildError("schur: takes float32 or float64 inputs, got " + dtype_name(v->dtype));
    }
    rank_of(v);
  }
  Value* batch = batch_shape(o, in[0], 2);
  const Square sq = square_stack(o, in[0], batch);
  const DType dtype = sq.a->dtype;
  Value* not_finite = any_nan(o, o.sub(sq.a, sq.a));  // inf - inf and NaN - NaN are NaN
  Value* a = o.where(not_finite, o.real(dtype, 0.0), sq.a);
  Value* m = o.add(sq.n, o.ints({kPadding}));
  const Frame f = make_frame(o, m);
  a = pad_with_identity(o, a, sq.n, o.ints({kPadding}));
  Value* eye = o.expand(identity(o, m, dtype), o.shape(a));
  Similarity s = hessenberg(o, f, {a, eye});
  s.t = deflate(o, f, s.t);
  const QrResult qr = qr_iterations(o, f, s, sq.n);
  s = standardize_blocks(o, f, qr.s);
  Value* failed = o.or_(not_finite, column3(o, qr.unconverged));
  Value* t = nan_where(o, failed, leading_block(o, s.t, sq.n, sq.n));
  Value* z = nan_where(o, failed, leading_block(o, s.z, sq.n, sq.n));
  return {unflatten_batch(o, t, 2, batch), unflatten_batch(o, z, 2, batch)};
}

}  // namespace

void add_schur_recipes(std::vector<RecipeInfo>& table) {
  table.push_back({"schur", schur_recipe, 1, 1,
                   "real Schur form t and Schur vectors z of a (a = z t z^T, 2x2 blocks standardized as LAPACK's); "
                   "Hessenberg reduction and Francis double-shift QR"});
}

}  // namespace pytensor_onnx::recipes::linalg

namespace pytensor_onnx::recipes {
void add_linalg_schur_recipes(std::vector<RecipeInfo>& table) { linalg::add_schur_recipes(table); }
}  // namespace pytensor_onnx::recipes
