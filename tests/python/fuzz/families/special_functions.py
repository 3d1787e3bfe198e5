"""Special functions (dispatch/scalar_math.py and the recipes of
src/core/recipes/): each maps its operand into the function's domain with graph
operations in ``build`` (so computed operands work too), keeping the regions
where implementations differ: tiny and huge arguments, poles, tails."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from hypothesis import strategies as st

from fuzz.registry import OpGenerator, is_numeric, register


def _finite(x):
    """NaN -> 0 and ±inf -> ±1e300 (float64) / ±1e38 (float32): the
    functions' own NaN/inf handling is tested by test_special_functions; here
    the interest is the finite domain."""
    big = 1e38 if x.dtype == "float32" else 1e300
    return pt.switch(pt.isnan(x), 0, pt.clip(x, -big, big)).astype(x.dtype)


def _open_unit(x):
    """Into (-1, 1), keeping values near ±1 (tanh of large |x|)."""
    return pt.tanh(_finite(x) * 0.25)


def _nonpositive(x):
    return -pt.abs(_finite(x))


def _at_least_one(x):
    return 1 + pt.abs(_finite(x))


def _bounded(limit):
    return lambda x: pt.clip(_finite(x), -limit, limit)


#: name -> (function, domain map applied to the operand first).
FUNCTIONS = {
    "log1p": (pt.log1p, lambda x: pt.abs(_finite(x)) - 0.5),
    "expm1": (pt.expm1, _bounded(700.0)),
    "softplus": (pt.softplus, _finite),
    "log1mexp": (pt.log1mexp, _nonpositive),
    "erf": (pt.erf, _finite),
    "erfc": (pt.erfc, _bounded(26.0)),
    "erfcx": (pt.erfcx, _bounded(25.0)),
    "erfinv": (pt.erfinv, _open_unit),
    "erfcinv": (pt.erfcinv, lambda x: 1 + _open_unit(x)),
    "gammaln": (pt.gammaln, lambda x: _finite(x) + 0.25),  # off the poles at 0, -1, ...
    "gamma": (pt.gamma, lambda x: pt.clip(_finite(x), -30.0, 30.0) + 0.25),
    "psi": (pt.psi, lambda x: pt.clip(_finite(x), -1e6, 1e6) + 0.25),
    "tri_gamma": (pt.tri_gamma, lambda x: pt.clip(_finite(x), -1e6, 1e6) + 0.25),
    "i0": (pt.i0, _bounded(600.0)),
    "i1": (pt.i1, _bounded(600.0)),
    "j0": (pt.j0, _bounded(1e4)),
    "j1": (pt.j1, _bounded(1e4)),
    "tan": (pt.tan, _bounded(1e6)),
    "arcsin": (pt.arcsin, _open_unit),
    "arccos": (pt.arccos, _open_unit),
    "arctan": (pt.arctan, _finite),
    "sinh": (pt.sinh, _bounded(700.0)),
    "cosh": (pt.cosh, _bounded(700.0)),
    "arcsinh": (pt.arcsinh, _finite),
    "arccosh": (pt.arccosh, _at_least_one),
    "arctanh": (pt.arctanh, _open_unit),
    "log_sigmoid": (lambda x: pt.log(pt.sigmoid(x)), _bounded(700.0)),
}


@register
class SpecialFunction(OpGenerator):
    name = "special_functions.unary"
    exact = False
    weight = 6.0  # 27 functions

    def accepts(self, meta):
        # Integer operands are upcast to float by PyTensor; wide ints to float64.
        return is_numeric(meta)

    def draw(self, ctx, x):
        return {"fn": ctx.draw(st.sampled_from(sorted(FUNCTIONS)))}

    def build(self, params, x):
        fn, domain = FUNCTIONS[params["fn"]]
        if x.dtype.startswith(("int", "uint")):
            x = x.astype("float64" if np.dtype(x.dtype).itemsize > 2 else "float32")
        return fn(domain(x))
