"""Special functions of ``pytensor.scalar.math``, applied element-wise.

Every one is a recipe of the C++ library (``src/core/recipes/special.cc``
and its neighbours): built from standard ONNX ops, accurate to a few ulp in
float64 over the whole domain (see docs/semantics.md for the measured
accuracy of each), and stored once per model as a model-local function.
Other float dtypes are computed in float64 and rounded back. Special values
(poles, infinities, NaN) follow SciPy, which PyTensor's implementations call.
"""

import numpy as np
import pytensor.scalar.math as psm

from pytensor_onnx import compat
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.scalar import cast_all, float_recipe, require_float
from pytensor_onnx.dispatch.utils import output_dtype

for _scalar_op, _recipe in [
    (psm.Erf, "erf"),
    (psm.Erfc, "erfc"),
    (psm.Erfcx, "erfcx"),
    (psm.Erfinv, "erfinv"),
    (psm.Erfcinv, "erfcinv"),
    (psm.Gamma, "gamma"),
    (psm.GammaLn, "gammaln"),
    (psm.Psi, "digamma"),
    (psm.TriGamma, "trigamma"),
    (psm.Softplus, "softplus"),
    (psm.Log1mexp, "log1mexp"),
]:
    onnx_funcify.register(_scalar_op)(float_recipe(_recipe))

if compat.NdtriExp is not None:
    onnx_funcify.register(compat.NdtriExp)(float_recipe("ndtri_exp"))


@onnx_funcify.register(psm.PolyGamma)
def _polygamma(op, node, g, n, x):
    # n is an integer tensor; the recipe takes it as a float of x's dtype
    # (exact: |n| < 2^24 is the only range where polygamma is finite anyway).
    dtype = output_dtype(node)
    require_float(op, node, dtype)
    return g.recipe("polygamma", *cast_all(g, [n, x], dtype))


def _x_times_log_zero_at_zero(op, node, g, x, y):
    # PyTensor's XlogX/XlogY0: 0 where x == 0 (whatever y is, NaN too),
    # x * log(y) elsewhere.
    dtype = output_dtype(node)
    require_float(op, node, dtype)
    x, y = cast_all(g, [x, y], dtype)
    zero = g.const(np.zeros((), dtype=dtype))
    return g.op("Where", g.op("Equal", x, zero), zero, g.op("Mul", x, g.op("Log", y)))


if compat.XlogX is not None:

    @onnx_funcify.register(compat.XlogX)
    def _xlogx(op, node, g, x):
        return _x_times_log_zero_at_zero(op, node, g, x, x)

    @onnx_funcify.register(compat.XlogY0)
    def _xlogy0(op, node, g, x, y):
        return _x_times_log_zero_at_zero(op, node, g, x, y)


for _scalar_op, _recipe in [(psm.I0, "i0"), (psm.I1, "i1")]:
    onnx_funcify.register(_scalar_op)(float_recipe(_recipe))


def _constant_order(v):
    """The order of Ive/Iv when it is a constant 0 or 1 everywhere, else None."""
    values = v.constant_value
    if values is not None:
        values = np.unique(np.asarray(values))
        if values.size == 1 and values[0] in (0, 1):
            return int(values[0])
    return None


def _bessel_rule(scaled):
    # Constant orders 0 and 1 use the table recipes i0e/i1e (no Loop); any
    # other order, constant or not, the real-order recipe
    # (src/core/recipes/bessel_ik.cc).
    def rule(op, node, g, v, x):
        dtype = output_dtype(node)
        require_float(op, node, dtype)
        order = _constant_order(v)
        if order is None:
            return g.recipe("ive" if scaled else "iv", *cast_all(g, [v, x], dtype))
        (x,) = cast_all(g, [x], dtype)
        result = g.recipe(f"i{order}e" if scaled else f"i{order}", x)
        if scaled:  # SciPy's ive (AMOS) is NaN at +-inf, where the limit is 0
            nan = g.const(np.full((), np.nan, dtype=dtype))
            result = g.op("Where", g.op("IsInf", x), nan, result)
        # The output has the broadcast shape of v and x: where v's constant
        # adds dimensions, an all-true Where broadcasts without arithmetic.
        true = g.const(np.ones(np.shape(v.constant_value), dtype=bool))
        return g.op("Where", true, result, result)

    return rule


onnx_funcify.register(psm.Ive)(_bessel_rule(scaled=True))
if compat.Iv is not None:
    onnx_funcify.register(compat.Iv)(_bessel_rule(scaled=False))
onnx_funcify.register(psm.Kve)(float_recipe("kve"))


# Bessel functions of the first kind: Jv of real order by series, continued
# fractions and recurrences (src/core/recipes/bessel_jy.cc); J0 and J1 by
# tables, without iterations (special.cc).
onnx_funcify.register(psm.Jv)(float_recipe("jv"))
onnx_funcify.register(psm.J0)(float_recipe("j0"))
onnx_funcify.register(psm.J1)(float_recipe("j1"))


# The regularized incomplete gamma functions (src/core/recipes/incomplete_gamma.cc).
onnx_funcify.register(psm.GammaInc)(float_recipe("gammainc"))
onnx_funcify.register(psm.GammaIncC)(float_recipe("gammaincc"))

# Their inverses in x (src/core/recipes/incomplete_gamma_inverse.cc).
onnx_funcify.register(psm.GammaIncInv)(float_recipe("gammaincinv"))
onnx_funcify.register(psm.GammaIncCInv)(float_recipe("gammainccinv"))

# The inverse of the regularized incomplete beta function in x
# (src/core/recipes/incomplete_beta_inverse.cc).
onnx_funcify.register(psm.BetaIncInv)(float_recipe("betaincinv"))

# Owen's T function (src/core/recipes/owens_t.cc).
onnx_funcify.register(psm.Owens_t)(float_recipe("owens_t"))


def _unregularized(recipe):
    # GammaU/GammaL.impl: SciPy's gammaincc/gammainc times gamma(k), as written
    # (so overflow of gamma(k) gives what PyTensor gives), in float64 and
    # rounded once: PyTensor's Elemwise evaluates the impl on Python floats
    # for float32 too (a float32 Q underflowing to 0 would turn inf * Q into NaN).
    def rule(op, node, g, k, x):
        dtype = output_dtype(node)
        require_float(op, node, dtype)
        k, x = cast_all(g, [k, x], "float64")
        return g.cast(g.op("Mul", g.recipe(recipe, k, x), g.recipe("gamma", k)), dtype)

    return rule


if compat.GammaU is not None:  # PyTensor 2.38; 3.3 builds gammau/gammal as graphs
    onnx_funcify.register(compat.GammaU)(_unregularized("gammaincc"))
    onnx_funcify.register(compat.GammaL)(_unregularized("gammainc"))


# The regularized incomplete beta function (src/core/recipes/incomplete_beta.cc).
onnx_funcify.register(psm.BetaInc)(float_recipe("betainc"))

# The Gauss hypergeometric function 2F1(a, b; c; z) (src/core/recipes/hyp2f1.cc;
# its gradient is a Grad2F1Loop, converted by scalar_loop.py, plus Hyp2F1 itself).
onnx_funcify.register(psm.Hyp2F1)(float_recipe("hyp2f1"))
