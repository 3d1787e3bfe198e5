// Real Schur decomposition a = z t z^T (scipy.linalg.schur(a, output="real"),
// LAPACK's gees without sorting) from standard ONNX ops:
//
// - Householder reduction to upper Hessenberg form, one Loop over columns.
// - Francis double-shift QR sweeps (Golub and Van Loan, "Matrix
//   Computations", 4th ed., Algorithms 7.5.1-7.5.2) with the strategy of
//   LAPACK's dlahqr as its documentation and LAPACK Working Note 122
//   describe it: each sweep chases the bulge through the bottom-most
//   unreduced block of size >= 3 of every matrix with 3-element reflectors,
//   applied to whole rows and columns (so t and z stay a similarity of a);
//   shifts from the block's trailing 2x2 (one real shift taken twice when
//   both are real), exceptional shifts after 10 and 20 sweeps without a
//   deflation, a sweep started lower where two consecutive subdiagonal
//   entries are small, and the Ahues-Kressner deflation test. A matrix is
//   done when its unreduced blocks are 1x1 or 2x2. Following dlahqr's
//   choices makes the eigenvalues come out in LAPACK's order.
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

// (B, m) vectors read along the diagonals, indexed by row r (or column c).
Value* diagonal_sum(const Ops& o, Value* mask, Value* t, int64_t axis) {
  return o.reduce("ReduceSum", o.where(mask, t, o.real(t->dtype, 0.0)), {axis}, false);
}
Value* sub_by_row(const Ops& o, const Frame& f, Value* t) { return diagonal_sum(o, f.on_sub, t, 2); }    // t[r, r-1]
Value* sub_by_col(const Ops& o, const Frame& f, Value* t) { return diagonal_sum(o, f.on_sub, t, 1); }    // t[c+1, c]
Value* super_by_row(const Ops& o, const Frame& f, Value* t) { return diagonal_sum(o, f.on_super, t, 2); }  // t[r, r+1]
Value* super_by_col(const Ops& o, const Frame& f, Value* t) { return diagonal_sum(o, f.on_super, t, 1); }  // t[c-1, c]

// y[r] = x[r - 1] (down) or x[r + 1] (up) of (B, m), 0 where it falls outside.
Value* shifted(const Ops& o, Value* x, bool down) {
  Value* zero = o.expand(o.real(x->dtype, 0.0), o.concat({o.dim(x, 0), o.ints({1})}, 0));
  if (down) return o.concat({zero, o.slice(x, o.ints({0}), o.ints({-1}), o.ints({1}))}, 1);
  return o.concat({o.slice(x, o.ints({1}), o.ints({std::numeric_limits<int64_t>::max()}), o.ints({1})), zero}, 1);
}

// Subdiagonal entries t[r, r-1] that LAPACK's dlahqr deems negligible become
// 0: below safmin n / ulp, or below ulp (|t_r-1,r-1| + |t_rr|) and small by
// the Ahues-Kressner test against their neighbours (LAPACK Working Note 122's
// conservative criterion). The rounding left below the subdiagonal goes too.
Value* deflate(const Ops& o, const Frame& f, Value* t, Value* n) {
  const DType dtype = t->dtype;
  const double ulp = epsilon_of(dtype);
  auto abs_ = [&](Value* x) { return o.abs(x); };
  Value* zero = o.real(dtype, 0.0);
  Value* small_number = o.mul(o.cast(n, dtype), o.real(dtype, tiny_of(dtype) / ulp));
  Value* d = diagonal(o, t, f.m);
  Value* h = abs_(sub_by_row(o, f, t));           // |t[r, r-1]|
  Value* h_up = abs_(super_by_col(o, f, t));      // |t[r-1, r]|
  Value* d_up = shifted(o, d, true);              // t[r-1, r-1]
  Value* test = o.add(abs_(d_up), abs_(d));
  Value* neighbours = o.add(shifted(o, h, true), shifted(o, h, false));  // |t[r-1, r-2]| + |t[r+1, r]|
  test = o.where(o.equal(test, zero), o.add(test, neighbours), test);
  Value* ab = o.max(h, h_up);
  Value* ba = o.min(h, h_up);
  Value* gap = abs_(o.sub(d_up, d));
  Value* aa = o.max(abs_(d), gap);
  Value* bb = o.min(abs_(d), gap);
  Value* s = o.add(aa, ab);
  s = o.where(o.equal(s, zero), o.real(dtype, 1.0), s);
  Value* relative = o.and_(o.op("LessOrEqual", {h, o.mul(o.real(dtype, ulp), test)}),
                           o.op("LessOrEqual", {o.mul(ba, o.div(ab, s)),
                                                o.max(small_number, o.mul(o.real(dtype, ulp), o.mul(bb, o.div(aa, s))))}));
  Value* small = o.or_(o.op("LessOrEqual", {h, small_number}), relative);  // (B, m) by row
  Value* mask = o.or_(o.and_(f.on_sub, o.unsqueeze(small, {2})), f.below);
  return o.where(mask, zero, t);
}

// The bottom-most unreduced block of size >= 3 of each matrix: rows l..p.
struct Window {
  Value* active;  // (B,) bool: the matrix has such a block
  Value* l;       // (B,) int64
  Value* p;       // (B,) int64
};

Window active_window(const Ops& o, const Frame& f, Value* t) {
  Value* linked = o.not_(o.equal(sub_by_row(o, f, t), o.real(t->dtype, 0.0)));  // (B, m): row r joins r - 1
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

// The two shifts (re1 + i im1, re2 + i im2) of a sweep, as dlahqr takes them:
// the eigenvalues of the window's trailing 2x2, the one of two real ones
// nearer t_pp taken twice; after every 10th sweep without a deflation an
// exceptional shift from the window's top, after every 20th from its bottom
// (the ad hoc shifts of EISPACK's hqr).
struct Shifts {
  Value* re1;
  Value* im1;
  Value* re2;
  Value* im2;
};

Shifts francis_shifts(const Ops& o, const Frame& f, Value* t, const Window& w, Value* count) {
  const DType dtype = t->dtype;
  Value* one = o.int0(1);
  Value* q = o.sub(w.p, one);
  Value* l1 = o.add(w.l, one);
  Value* bottom = o.equal(o.op("Mod", {count, o.int0(2 * kExceptionalEvery)}), o.int0(0));
  Value* top = o.and_(o.not_(bottom), o.equal(o.op("Mod", {count, o.int0(kExceptionalEvery)}), o.int0(0)));
  Value* ss = o.where(bottom, o.add(o.abs(entry(o, f, t, w.p, q)), o.abs(entry(o, f, t, q, o.sub(q, one)))),
                      o.add(o.abs(entry(o, f, t, l1, w.l)), o.abs(entry(o, f, t, o.add(l1, one), l1))));
  Value* exceptional = o.or_(bottom, top);
  Value* diagonal_entry = o.where(bottom, entry(o, f, t, w.p, w.p), entry(o, f, t, w.l, w.l));
  Value* e11 = o.add(o.mul(o.real(dtype, 0.75), ss), diagonal_entry);
  Value* h11 = o.where(exceptional, e11, entry(o, f, t, q, q));
  Value* h12 = o.where(exceptional, o.mul(o.real(dtype, -0.4375), ss), entry(o, f, t, q, w.p));
  Value* h21 = o.where(exceptional, ss, entry(o, f, t, w.p, q));
  Value* h22 = o.where(exceptional, e11, entry(o, f, t, w.p, w.p));
  // Scaled by the block's size, so the discriminant neither overflows nor underflows.
  Value* s = o.add(o.add(o.abs(h11), o.abs(h12)), o.add(o.abs(h21), o.abs(h22)));
  Value* zero = o.real(dtype, 0.0);
  s = o.where(o.equal(s, zero), o.real(dtype, 1.0), s);
  h11 = o.div(h11, s);
  h12 = o.div(h12, s);
  h21 = o.div(h21, s);
  h22 = o.div(h22, s);
  Value* trace = o.mul(o.real(dtype, 0.5), o.add(h11, h22));
  Value* det = o.sub(o.mul(o.sub(h11, trace), o.sub(h22, trace)), o.mul(h12, h21));
  Value* root = o.sqrt(o.abs(det));
  Value* complex = o.op("GreaterOrEqual", {det, zero});
  Value* r1 = o.add(trace, root);
  Value* r2 = o.sub(trace, root);
  Value* nearer = o.where(o.op("LessOrEqual", {o.abs(o.sub(r1, h22)), o.abs(o.sub(r2, h22))}), r1, r2);
  Value* re = o.mul(o.where(complex, trace, nearer), s);
  Value* im = o.where(complex, o.mul(root, s), zero);
  return {re, im, re, o.neg(im)};
}

// Where the sweep starts (dlahqr): the lowest row m in (l, p - 2] where the
// bulge's first column would make t[m, m-1] negligible (two consecutive small
// subdiagonal entries), else l; and that column, scaled (B,) each.
struct Start {
  Value* m;
  Value* x;
  Value* y;
  Value* z;
};

Start sweep_start(const Ops& o, const Frame& f, Value* t, const Window& w, const Shifts& sh) {
  const DType dtype = t->dtype;
  Value* zero = o.real(dtype, 0.0);
  Value* one = o.real(dtype, 1.0);
  auto nonzero = [&](Value* x) { return o.where(o.equal(x, zero), one, x); };
  auto col = [&](Value* x) { return o.unsqueeze(x, {1}); };  // (B,) -> (B, 1)
  Value* d = diagonal(o, t, f.m);        // t[m, m]
  Value* sub = sub_by_col(o, f, t);      // t[m+1, m]
  Value* super = super_by_row(o, f, t);  // t[m, m+1]
  Value* d_next = shifted(o, d, false);  // t[m+1, m+1]
  Value* re1 = col(sh.re1);
  Value* re2 = col(sh.re2);
  Value* s = nonzero(o.add(o.add(o.abs(o.sub(d, re2)), o.abs(col(sh.im2))), o.abs(sub)));
  Value* h21s = o.div(sub, s);
  Value* v1 = o.sub(o.add(o.mul(h21s, super), o.mul(o.sub(d, re1), o.div(o.sub(d, re2), s))),
                    o.mul(col(sh.im1), o.div(col(sh.im2), s)));
  Value* v2 = o.mul(h21s, o.sub(o.sub(o.add(d, d_next), re1), re2));
  Value* v3 = o.mul(h21s, shifted(o, sub, false));  // t[m+2, m+1]
  Value* norm = nonzero(o.add(o.add(o.abs(v1), o.abs(v2)), o.abs(v3)));
  v1 = o.div(v1, norm);
  v2 = o.div(v2, norm);
  v3 = o.div(v3, norm);
  Value* h00 = o.mul(o.abs(shifted(o, sub, true)), o.add(o.abs(v2), o.abs(v3)));
  Value* h01 = o.mul(o.abs(v1), o.add(o.add(o.abs(shifted(o, d, true)), o.abs(d)), o.abs(d_next)));
  Value* row = o.squeeze(f.cols, {0});
  Value* inside = o.and_(o.greater(row, col(w.l)), o.op("LessOrEqual", {row, col(o.sub(w.p, o.int0(2)))}));
  Value* ok = o.and_(inside, o.op("LessOrEqual", {h00, o.mul(o.real(dtype, epsilon_of(dtype)), h01)}));
  Value* m = o.max(o.reduce("ReduceMax", o.where(ok, row, o.int0(-1)), {1}, false), w.l);
  Value* at = col(m);
  auto pick = [&](Value* v) { return o.squeeze(o.gather_elements(v, at, 1), {1}); };
  return {m, pick(v1), pick(v2), pick(v3)};
}

// One Francis double-shift sweep over each matrix's window: step j reflects
// rows and columns k = m + j .. k + 2 (k + 1 at the window's end).
Similarity francis_sweep(const Ops& o, const Frame& f, const Similarity& s, const Window& w, Value* count) {
  const DType dtype = s.t->dtype;
  const Start st = sweep_start(o, f, s.t, w, francis_shifts(o, f, s.t, w, count));
  Value* one = o.int0(1);

  Loop loop(o.g, "schur_bulge", {s.t, s.z}, {true, true});
  Ops& b = loop.body();
  Value* t = loop.carried()[0];
  Value* j = loop.iteration();
  Value* k = b.add(st.m, j);
  Value* k1 = b.add(k, one);
  Value* k2 = b.add(k1, one);
  Value* before = b.sub(k, one);
  Value* first = b.equal(j, b.int0(0));
  Value* x = b.where(first, st.x, entry(b, f, t, k, before));
  Value* y = b.where(first, st.y, entry(b, f, t, k1, before));
  Value* z = b.where(first, st.z, entry(b, f, t, k2, before));
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
// Each matrix counts its sweeps since its window's bottom last moved (the
// exceptional shifts' clock, dlahqr's KDEFL).
struct QrResult {
  Similarity s;
  Value* unconverged;
};

QrResult qr_iterations(const Ops& o, const Frame& f, const Similarity& start, Value* n) {
  Value* count0 = o.expand(o.int0(0), o.dim(start.t, 0));
  Loop loop(o.g, "schur_sweep", {start.t, start.z, count0}, {true, true, true});
  Ops& b = loop.body();
  const Similarity current{loop.carried()[0], loop.carried()[1]};
  const Window w = active_window(b, f, current.t);
  Value* count = b.add(loop.carried()[2], b.int0(1));
  const Similarity swept = francis_sweep(b, f, current, w, count);
  Value* t = deflate(b, f, swept.t, n);
  const Window after = active_window(b, f, t);
  Value* next_count = b.where(b.equal(after.p, w.p), count, b.int0(0));
  Value* budget = o.scalar_of(o.mul(o.ints({kSweepsPerSize}), o.max(n, o.ints({10}))));
  const auto out = loop.finish(budget, {t, swept.z, next_count}, {}, any_active(b, after),
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
  // b == 0: the block is lower triangular; swapping its rows and columns
  // makes it upper triangular (dlanv2's first case).
  Value* swap = o.and_(block, o.equal(b, zero));
  Rotation2 r;
  r.cs = o.where(swap, zero, o.where(block, o.where(real, cs_real, cs_eq), one));
  r.sn = o.where(swap, one, o.where(block, o.where(real, sn_real, sn_eq), zero));
  r.complex = o.and_(o.and_(block, complex), o.not_(swap));
  r.triangular = o.and_(block, o.not_(r.complex));
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
  s.t = deflate(o, f, s.t, sq.n);
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
