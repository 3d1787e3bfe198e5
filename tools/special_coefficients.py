"""Generates src/core/recipes/special_tables.h: polynomial tables for the special-function recipes.

Run with the project venv (mpmath is a test dependency)::

    .venv/bin/python tools/special_coefficients.py > src/core/recipes/special_tables.h

Each table approximates a smooth function f(w) on [lo, hi] split into
`pieces` equal intervals; on piece k the recipe evaluates the polynomial
sum_j c[k][j] * s^j with s = (w - lo) * pieces / (hi - lo) - k - 1/2 in
[-1/2, 1/2] (Horner, one Gather per coefficient). The coefficients are the
Chebyshev interpolants of f on each piece, computed with mpmath at 50 digits
and converted to powers of s; the degree is the smallest one whose
interpolant is within `target` (relative) of f at points between the nodes.
The script prints the measured error of the double-precision evaluation to
stderr.

The functions are written so that the recipes keep relative accuracy:
zeros of the target functions are factored out here (lgamma has zeros at 1
and 2, digamma at x0 = 1.4616...), and fast-growing factors (exp(x^2) in
erfc, exp(x) in the Bessel functions) are left to the recipe.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp

mp.mp.dps = 50


@dataclass
class Table:
    name: str  # C++ identifier stem
    doc: str
    f: object  # mpf -> mpf
    lo: float
    hi: float
    pieces: int
    target: float = 4e-18


def cheb_to_power(cheb):
    """Chebyshev series sum c_k T_k(t) -> power coefficients in t."""
    n = len(cheb)
    power = [mp.mpf(0)] * n
    t_prev, t_cur = [mp.mpf(1)] + [mp.mpf(0)] * (n - 1), [mp.mpf(0), mp.mpf(1)] + [mp.mpf(0)] * (n - 2)
    for k, c in enumerate(cheb):
        tk = t_prev if k == 0 else t_cur
        if k >= 2:
            nxt = [mp.mpf(0)] * n
            for i in range(n - 1):
                nxt[i + 1] += 2 * t_cur[i]
            for i in range(n):
                nxt[i] -= t_prev[i]
            t_prev, t_cur = t_cur, nxt
            tk = t_cur
        for i in range(n):
            power[i] += c * tk[i]
    return power


def piece_poly(f, a, b, degree):
    """Power coefficients in s in [-1/2, 1/2] (x = mid + s (b - a)) of the Chebyshev interpolant."""
    n = degree + 1
    mid, half = (a + b) / 2, (b - a) / 2
    nodes = [mp.cos(mp.pi * (i + mp.mpf(0.5)) / n) for i in range(n)]
    values = [f(mid + half * t) for t in nodes]
    cheb = []
    for k in range(n):
        c = 2 * mp.fsum(v * mp.chebyt(k, t) for v, t in zip(values, nodes)) / n
        cheb.append(c / 2 if k == 0 else c)
    in_t = cheb_to_power(cheb)
    return [c * 2**j for j, c in enumerate(in_t)]  # t = 2 s


def rel_error(f, coeffs, a, b, samples=12):
    worst = mp.mpf(0)
    for i in range(samples):
        s = mp.mpf(i + 0.37) / samples - mp.mpf(0.5)
        x = (a + b) / 2 + s * (b - a)
        p = mp.mpf(0)
        for c in reversed(coeffs):
            p = p * s + c
        fx = f(x)
        worst = max(worst, abs(p - fx) / abs(fx))
    return worst


def fit(table: Table):
    lo, hi = mp.mpf(table.lo), mp.mpf(table.hi)
    width = (hi - lo) / table.pieces
    for degree in range(3, 26):
        polys, ok = [], True
        for k in range(table.pieces):
            a, b = lo + k * width, lo + (k + 1) * width
            coeffs = piece_poly(table.f, a, b, degree)
            if rel_error(table.f, coeffs, a, b) > table.target:
                ok = False
                break
            polys.append(coeffs)
        if ok:
            return degree, polys
    raise RuntimeError(f"{table.name}: no degree below 26 reaches {table.target}")


def double_eval_error(table, polys):
    """Max relative error (in ulps of 2^-53) of the table evaluated in double precision, at random points."""
    rng = random.Random(1)
    lo, hi, n = table.lo, table.hi, table.pieces
    coeffs = [[float(c) for c in p] for p in polys]
    worst = 0.0
    for _ in range(2000):
        w = rng.uniform(lo, hi)
        u = (w - lo) * (n / (hi - lo))
        k = min(max(int(u // 1), 0), n - 1)
        s = u - k - 0.5
        p = 0.0
        for c in reversed(coeffs[k]):
            p = p * s + c
        exact = table.f(mp.mpf(w))
        worst = max(worst, float(abs((p - exact) / exact)) / 2.0**-53)
    return worst


# --- the functions -----------------------------------------------------------

X0 = mp.findroot(mp.digamma, mp.mpf("1.4616321449683623"))  # positive root of digamma


def erf_small(z):
    """erf(x) / x as a function of z = x^2, for |x| <= 1/2."""
    if z == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(z)
    return mp.erf(x) / x


def erfcx_of_w(w):
    """erfcx(x) for x = 4/w - 4, i.e. w = 4 / (4 + x)."""
    x = 4 / w - 4
    return mp.exp(x * x) * mp.erfc(x)


def lgamma_over_zeros(x):
    """lgamma(x) / ((x - 1)(x - 2))."""
    if x == 1:
        return -mp.euler / -1  # lgamma'(1) = -gamma; (x - 2) = -1
    if x == 2:
        return 1 - mp.euler  # lgamma'(2) = 1 - gamma; (x - 1) = 1
    return mp.loggamma(x) / ((x - 1) * (x - 2))


def digamma_over_root(x):
    return mp.digamma(x) / (x - X0)


def trigamma(x):
    return mp.psi(1, x)


def i0e_small(x):
    return mp.besseli(0, x) * mp.exp(-x)


def i1e_small_over_x(x):
    if x == 0:
        return mp.mpf(0.5)
    return mp.besseli(1, x) * mp.exp(-x) / x


def i0e_large(w):
    """sqrt(x) * i0e(x) for x = 8 / w."""
    x = 8 / w
    return mp.sqrt(x) * mp.besseli(0, x) * mp.exp(-x)


def i1e_large(w):
    x = 8 / w
    return mp.sqrt(x) * mp.besseli(1, x) * mp.exp(-x)


J0_ZEROS = (mp.besseljzero(0, 1), mp.besseljzero(0, 2))  # the zeros of J0 below 8
J1_ZEROS = (mp.besseljzero(1, 1), mp.besseljzero(1, 2))  # the zeros of J1 below 8


def j0_over_zeros(z):
    """J0(x) / ((z - j01^2)(z - j02^2)) for z = x^2, 0 <= x <= 8 (no zero left)."""
    return mp.besselj(0, mp.sqrt(z)) / ((z - J0_ZEROS[0] ** 2) * (z - J0_ZEROS[1] ** 2))


def j1_over_x_and_zeros(z):
    """J1(x) / (x (z - j11^2)(z - j12^2)) for z = x^2, 0 <= x <= 8."""
    factors = (z - J1_ZEROS[0] ** 2) * (z - J1_ZEROS[1] ** 2)
    if z == 0:
        return mp.mpf(1) / 2 / factors
    x = mp.sqrt(z)
    return mp.besselj(1, x) / x / factors


def hankel_pq(order, w):
    """Hankel's P and Q of J_order(x), Y_order(x) for x = 8 / w:
    J = sqrt(2 / (pi x)) (P cos chi - Q sin chi), Y = sqrt(2 / (pi x)) (P sin chi + Q cos chi),
    chi = x - (order / 2 + 1/4) pi."""
    x = 8 / w
    chi = x - (mp.mpf(order) / 2 + mp.mpf(1) / 4) * mp.pi
    j, y = mp.besselj(order, x), mp.bessely(order, x)
    scale = mp.sqrt(mp.pi * x / 2)
    return scale * (j * mp.cos(chi) + y * mp.sin(chi)), scale * (y * mp.cos(chi) - j * mp.sin(chi))


def j0_p(w):
    return hankel_pq(0, w)[0]


def j0_q_over_w(w):
    """Q / w: Q = -1 / (8 x) + ... = -w / 64 + ..., so Q / w stays away from 0."""
    return hankel_pq(0, w)[1] / w


def j1_p(w):
    return hankel_pq(1, w)[0]


def j1_q_over_w(w):
    return hankel_pq(1, w)[1] / w


def atan_correction(z):
    """(atan(t) - t) / t^3 for z = t^2."""
    if z == 0:
        return mp.mpf(-1) / 3
    t = mp.sqrt(z)
    return (mp.atan(t) - t) / t**3


def erfinv_small(z):
    """erfinv(y) / y for z = y^2, |y| <= 1/2."""
    if z == 0:
        return mp.sqrt(mp.pi) / 2
    y = mp.sqrt(z)
    return mp.erfinv(y) / y


def erfcinv_tail(t):
    """erfcinv(q) / t for t = sqrt(-log q), q <= 1/2."""
    x = mp.findroot(lambda v: mp.log(mp.erfc(v)) + t * t, t)
    return x / t


TABLES = [
    Table("ErfinvSmall", "erfinv(y) / y in z = y^2, |y| <= 1/2", erfinv_small, 0.0, 0.25, 4),
    Table("ErfcinvMid", "erfcinv(q) / t in t = sqrt(-log q), 1e-16 <= q <= 1/2", erfcinv_tail, 0.83, 6.1, 32),
    Table("ErfcinvTail", "erfcinv(q) / t in t = sqrt(-log q), q <= 1e-16 (t <= 27.3)", erfcinv_tail, 6.0, 27.3, 16),
    Table("AtanCorrection", "(atan(t) - t) / t^3 in z = t^2, |t| <= 7/16", atan_correction, 0.0, (7 / 16) ** 2, 1),
    Table("ErfSmall", "erf(x) / x in z = x^2, 0 <= z <= 1/4", erf_small, 0.0, 0.25, 1),
    Table("ErfcxMid", "erfcx(x) in w = 4 / (4 + x), 1/2 <= x <= 50", erfcx_of_w, 4 / 54, 4 / 4.5, 64),
    Table("LgammaOverZeros", "lgamma(x) / ((x - 1)(x - 2)), 1 <= x <= 8", lgamma_over_zeros, 1.0, 8.0, 56),
    Table("DigammaOverRoot", "digamma(x) / (x - x0), 1 <= x <= 8", digamma_over_root, 1.0, 8.0, 56),
    Table("Trigamma", "trigamma(x), 1 <= x <= 8", trigamma, 1.0, 8.0, 56),
    Table("I0eSmall", "exp(-x) I0(x), 0 <= x <= 8", i0e_small, 0.0, 8.0, 32),
    Table("I1eSmallOverX", "exp(-x) I1(x) / x, 0 <= x <= 8", i1e_small_over_x, 0.0, 8.0, 32),
    Table("I0eLarge", "sqrt(x) exp(-x) I0(x) in w = 8 / x, x >= 8", i0e_large, 0.0, 1.0, 16),
    Table("I1eLarge", "sqrt(x) exp(-x) I1(x) in w = 8 / x, x >= 8", i1e_large, 0.0, 1.0, 16),
    Table("J0OverZeros", "J0(x) / ((z - j01^2)(z - j02^2)) in z = x^2, 0 <= x <= 8", j0_over_zeros, 0.0, 64.0, 32),
    Table("J1OverXAndZeros", "J1(x) / (x (z - j11^2)(z - j12^2)) in z = x^2, 0 <= x <= 8", j1_over_x_and_zeros,
          0.0, 64.0, 32),
    Table("J0P", "Hankel's P of J0 in w = 8 / x, x >= 8", j0_p, 0.0, 1.0, 16),
    Table("J0QOverW", "Hankel's Q of J0 over w = 8 / x, x >= 8", j0_q_over_w, 0.0, 1.0, 16),
    Table("J1P", "Hankel's P of J1 in w = 8 / x, x >= 8", j1_p, 0.0, 1.0, 16),
    Table("J1QOverW", "Hankel's Q of J1 over w = 8 / x, x >= 8", j1_q_over_w, 0.0, 1.0, 16),
]


def bernoulli_series():
    """B_2k as fractions, k = 1..20."""
    return [Fraction(int(mp.bernfrac(2 * k)[0]), int(mp.bernfrac(2 * k)[1])) for k in range(1, 21)]


def hexfloat(v: float) -> str:
    return float(v).hex()


def main(argv):
    only = set(argv[1:])
    out = []
    out.append("// Generated by tools/special_coefficients.py (mpmath, 50 digits); do not edit.")
    out.append("// Piecewise polynomial tables: see PiecewiseTable in piecewise_table.h.")
    out.append("#pragma once\n")
    out.append('#include "piecewise_table.h"\n')
    out.append("namespace pytensor_onnx::recipes::tables {\n")
    for table in TABLES:
        if only and table.name not in only:
            continue
        # Zero tails of exactly representable functions would make the
        # relative error meaningless: tables are all of non-vanishing functions.
        degree, polys = fit(table)
        ulps = double_eval_error(table, polys)
        print(f"{table.name}: {table.pieces} pieces, degree {degree}, {ulps:.2f} ulp in double", file=sys.stderr)
        flat = [c for p in polys for c in p]
        out.append(f"// {table.doc}: {table.pieces} pieces of degree {degree}.")
        out.append(f"inline constexpr double k{table.name}Coefficients[] = {{")
        for p in polys:
            out.append("    " + ", ".join(hexfloat(float(c)) for c in p) + ",")
        out.append("};")
        out.append(
            f"inline constexpr PiecewiseTable k{table.name}{{{hexfloat(table.lo)}, {hexfloat(table.hi)}, "
            f"{table.pieces}, {degree}, k{table.name}Coefficients}};\n"
        )
        del flat
    constants = {
        "DigammaRoot": ("the positive root of digamma", X0),
        "AtanHalf": ("atan(1/2)", mp.atan(mp.mpf(0.5))),
        "AtanOneAndHalf": ("atan(3/2)", mp.atan(mp.mpf(1.5))),
        "PiOver4": ("pi / 4", mp.pi / 4),
        "PiOver2": ("pi / 2", mp.pi / 2),
        "Pi": ("pi", mp.pi),
        "J0Zero1": ("the first zero of J0", J0_ZEROS[0]),
        "J0Zero2": ("the second zero of J0", J0_ZEROS[1]),
        "J1Zero1": ("the first positive zero of J1", J1_ZEROS[0]),
        "J1Zero2": ("the second positive zero of J1", J1_ZEROS[1]),
    }
    for name, (doc, value) in constants.items():
        hi = float(value)
        lo = float(value - mp.mpf(hi))
        out.append(f"// {doc} as hi + lo")
        out.append(f"inline constexpr double k{name}Hi = {hexfloat(hi)};")
        out.append(f"inline constexpr double k{name}Lo = {hexfloat(lo)};")
    out.append("")
    out.append("// Bernoulli numbers B_2, B_4, ..., B_40.")
    out.append("inline constexpr double kBernoulli2k[] = {")
    out.append("    " + ", ".join(hexfloat(float(mp.mpf(b.numerator) / b.denominator)) for b in bernoulli_series()) + ",")
    out.append("};\n")
    out.append("}  // namespace pytensor_onnx::recipes::tables")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv)
