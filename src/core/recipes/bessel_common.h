// What the Bessel-function recipes of real order share (bessel_ik.cc,
// bessel_jy.cc): the iteration cap, the convergence test, the power series
// and the rescaled downward recurrence of Numerical Recipes' bessik and
// bessjy.
#pragma once

#include <cstdint>
#include <string>

#include "method_constants.h"
#include "elementwise.h"
#include "loops.h"

namespace pytensor_onnx::recipes::bessel {

// Zeros in the shape of v (v * 0 would be NaN where v is infinite).
inline Value* zeros_like(const Ew& f, Value* v) { return f.where(f.isnan(v), 0.0, 0.0); }

// Whether an element is done: not(error >= tolerance), so NaN stops.
inline Value* small(const Ew& e, Value* error, Value* tolerance) { return e.not_(e.ge(error, tolerance)); }

// The sum of the power series of I_nu (alternating: J_nu) at y = x^2 / 4
// without its prefactor (x/2)^nu / Gamma(nu + 1): sum_k t_k with t_0 = 1 and
// t_k = s t_k-1 y / (k (nu + k)), s = +1 (I) or -1 (J). `one` holds ones in
// the shape of the result. An element stops when a term falls below
// kEpsilon of the sum; for J also not before k = -nu, past which the terms
// only shrink (negative non-integer orders). state[0] is the sum.
inline LoopResult power_series(const Ew& f, Value* nu, Value* y, Value* one, bool alternating,
                               const std::string& name) {
  return elementwise_loop(
      f.g(), {one, one, f.sub(one, 1.0)}, kMaxSteps,
      [nu, y, alternating](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *sum = s[0], *term = s[1], *k = s[2];
        Value* k1 = e.add(k, 1.0);
        Value* next_term = e.div(e.mul(term, y), e.mul(k1, e.add(nu, k1)));
        if (alternating) next_term = e.neg(next_term);
        Value* next_sum = e.add(sum, next_term);
        Value* done = alternating ? e.and_(small(e, e.abs(next_term), e.mul(e.abs(next_sum), kEpsilon)),
                                           e.ge(e.add(k1, nu), 0.0))
                                  : small(e, next_term, e.mul(next_sum, kEpsilon));
        return LoopStep{{next_sum, next_term, k1}, done};
      },
      name);
}

struct Downward {
  Value* value;       // Z at order nu - n, times kRescale^rescales
  Value* derivative;  // Z' there, scaled alike
  Value* rescales;    // how many times the recurrence was rescaled
  Value* converged;
};

// From (Z_nu, Z'_nu) = (value, derivative) n steps down (n per element,
// 0 <= n): Z_l-1 = (l / x) Z_l + Z'_l, Z'_l-1 = ((l - 1) / x) Z_l-1 + sign Z_l,
// with sign +1 for I (modified) and -1 for J; xi = 1 / x. Each time |Z|
// passes 1 / kRescale both are scaled by kRescale.
inline Downward downward_recurrence(const Ew& f, Value* value, Value* derivative, Value* nu, Value* xi, Value* n,
                                    double sign, const std::string& name) {
  Value* zero = zeros_like(f, value);
  LoopResult down = elementwise_loop(
      f.g(), {value, derivative, f.mul(nu, xi), zero, zero}, kMaxSteps,
      [n, xi, sign](GraphBuilder& body, Value*, const std::vector<Value*>& s) {
        const Ew e(body, DType::Float64);
        Value *z = s[0], *z_prime = s[1], *fact = s[2], *count = s[3], *l = s[4];
        Value* l1 = e.add(l, 1.0);
        Value* step = e.lt(l, n);
        Value* next_z = e.add(e.mul(fact, z), z_prime);
        Value* next_fact = e.sub(fact, xi);
        Value* scaled = e.mul(next_fact, next_z);
        Value* next_z_prime = sign > 0 ? e.add(scaled, z) : e.sub(scaled, z);
        Value* big = e.gt(e.abs(next_z), 1.0 / kRescale);
        next_z = e.where(big, e.mul(next_z, kRescale), next_z);
        next_z_prime = e.where(big, e.mul(next_z_prime, kRescale), next_z_prime);
        Value* next_count = e.where(big, e.add(count, 1.0), count);
        return LoopStep{{e.where(step, next_z, z), e.where(step, next_z_prime, z_prime), e.where(step, next_fact, fact),
                         e.where(step, next_count, count), l1},
                        e.ge(l1, n)};
      },
      name);
  return {down.state[0], down.state[1], down.state[3], down.converged};
}

}  // namespace pytensor_onnx::recipes::bessel
