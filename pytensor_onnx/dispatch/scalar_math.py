"""Special functions of ``pytensor.scalar.math``, applied element-wise.

Every one is a recipe of the C++ library (``src/core/recipes/special.cc``
and its neighbours): built from standard ONNX ops, accurate to a few ulp in
float64 over the whole domain (see docs/semantics.md for the measured
accuracy of each), and stored once per model as a model-local function.
Other float dtypes are computed in float64 and rounded back. Special values
(poles, infinities, NaN) follow SciPy, which PyTensor's implementations call.
"""

import pytensor.scalar.math as psm

from pytensor_onnx import compat
from pytensor_onnx.dispatch.basic import onnx_funcify
from pytensor_onnx.dispatch.scalar import cast_all, float_recipe, out_dtype, require_float

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
    dtype = out_dtype(node)
    require_float(op, node, dtype)
    return g.recipe("polygamma", *cast_all(g, [n, x], dtype))
