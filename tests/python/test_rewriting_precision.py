"""Float64 graphs give PyTensor's default-mode results whatever dtypes their
constants have (pytensor_onnx/rewriting.py, "Constants as FAST_RUN computes them").

PyTensor's canonizers, left out of the ONNX rewrite set, combine the
constants of a product or sum in its output dtype; without them constant
folding computed ``reciprocal(float32 c)`` and the sum of flattened float32 (or
int8) constants in their own dtype: 1e-8 relative off (issue 25), or int8
overflow. Each graph is compared with FAST_RUN and with the default mode at
1e-12 relative: mode ONNX with the kernel library, the portable mode
(kernels=False), and the exported file.
"""

import numpy as np
import onnxruntime as ort
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytensor.compile.mode import Mode, get_default_mode

from pytensor_onnx import export_onnx
from pytensor_onnx.mode import onnx_mode
from pytensor_onnx.testing import check_model, compare_onnx_and_py

F32 = np.float32


def _c(value):
    return pt.constant(value)


# name -> graph of a float64 vector x; each one was 1e-9 to 1e-7 relative
# off FAST_RUN (or int8-wrapped) before the rewrite.
GRAPHS = {
    "reciprocal_of_float32_times_exp": lambda x: pt.reciprocal(_c(F32(1 / 3))) * pt.exp(x),
    "sum_of_float32_constants": lambda x: x + F32(0.1) + F32(0.2),
    "product_of_float32_constants": lambda x: x * F32(0.3) * F32(0.7),
    "product_of_int_and_float32_constants": lambda x: x * 3 * F32(0.1),
    "product_of_int8_constants_overflowing": lambda x: x * 100 * 100,
    "division_by_float32_product": lambda x: x / (_c(F32(0.1)) * _c(F32(0.7))),
    "float32_quotient_times_x": lambda x: x * (_c(F32(0.1)) / _c(F32(0.7))),
    "int_over_float32_times_x": lambda x: x * (_c(np.int8(3)) / _c(F32(0.7))),
    "float32_over_int_times_exp": lambda x: pt.exp(x) * (_c(F32(0.1)) / _c(np.int8(3))),
    "float32_sum_of_product_plus_x": lambda x: x + (_c(F32(0.1)) + _c(F32(0.7)) * _c(F32(0.3))),
    # (An exponent exact in float32: PyTensor 2.38's FAST_RUN writes an
    # inlined float32 constant such as 1.3000001 into its C code as a double
    # literal, 1e-8 off its own unfused result.)
    "power_with_float32_sum_exponent": lambda x: x ** (_c(F32(0.25)) + F32(1.0)) * F32(0.3) * F32(0.7),
    "exp_times_reciprocal_of_float32": lambda x: pt.exp(-x) / _c(F32(0.7)) * pt.reciprocal(_c(F32(0.3))),
    # The canonizer gathers these trees (a constant operand to combine; a
    # nested sum to flatten) before constant folding computes their parts.
    "difference_of_float32_expression_and_constant": lambda x: x - (pt.gammaln(_c(F32(1.5))) + _c(F32(0.3))),
    "x_plus_float32_sum_of_expressions": lambda x: x + (pt.gammaln(_c(F32(1.5))) + pt.log(_c(F32(0.5)))),
}

# Constant operands that FAST_RUN computes in their own dtype, since its
# canonizer does not enter them (a sum inside a product, a product inside a
# sum, a reciprocal PyTensor makes a Pow first): the rewrite leaves them as
# they are. These pass without the rewrite; a rewrite that upcast every
# constant expression made them 1e-9 to 1e-7 off.
BOUNDARY = {
    "division_by_float32_difference": lambda x: x / (_c(F32(0.1)) - _c(F32(0.7))),
    "float32_reciprocal_plus_x": lambda x: x + 1 / _c(F32(0.1)),
    "float32_product_plus_x": lambda x: x + _c(F32(0.1)) * _c(F32(0.7)),
    "float32_sum_times_x": lambda x: x * (_c(F32(0.1)) + _c(F32(0.7))),
    "reciprocal_of_float32_sum_times_x": lambda x: x * pt.reciprocal(_c(F32(0.1)) + _c(F32(0.7))),
    # A float32 sum of constant expressions (no constant operand) in a
    # difference: the canonizer has nothing to combine, constant folding sums
    # it in float32 (PyMC's ChiSquared(nu=3) and HalfStudentT(nu=3), below).
    "x_minus_float32_sum_of_expressions": lambda x: x - (-pt.gammaln(_c(F32(1.5))) + _c(F32(1.5)) * pt.log(_c(F32(0.5)))),
    "float32_sum_of_expressions_minus_exp": lambda x: (pt.gammaln(_c(F32(1.5))) + pt.log(_c(F32(0.5)))) - pt.exp(x),
}


def _relative(got, want):
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))


@pytest.mark.parametrize("name", sorted(GRAPHS) + sorted(BOUNDARY))
def test_float64_graph_with_constants_of_other_dtypes_matches_pytensor(name):
    x = pt.dvector("x")
    out = {**GRAPHS, **BOUNDARY}[name](x)
    assert out.dtype == "float64"
    value = np.array([0.3, 1.7, 2.5, 0.9])
    want = pytensor.function([x], out, mode="FAST_RUN")(value)
    np.testing.assert_allclose(pytensor.function([x], out, mode=get_default_mode())(value), want, rtol=0, atol=0)
    results = {}
    for label, mode in (("mode ONNX", onnx_mode()), ("portable mode ONNX", onnx_mode(kernels=False))):
        results[label] = pytensor.function([x], out, mode=mode)(value)
    model = export_onnx([x], [out])
    check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results["exported model"] = session.run(None, {session.get_inputs()[0].name: value})[0]
    for label, got in results.items():
        assert got.dtype == want.dtype
        assert _relative(got, want) <= 1e-12, f"{label}: {got} vs FAST_RUN {want}"


# Random trees of float32 and int8 constants (sums, differences, products,
# quotients, negations, reciprocals, and other functions between them) in a
# float64 graph: whichever parts FAST_RUN's canonizers gather (and rebuild
# with other dtypes) and whichever constant folding computes as built, mode
# ONNX and the export follow.
_LEAVES = [np.float32(v) for v in (0.1, 0.3, 0.7, 1.5, 2.5)] + [np.int8(v) for v in (2, 3, 5)]
_OF_A_LEAF = {"gammaln": pt.gammaln, "log": pt.log, "sqrt": pt.sqrt}
_OF_A_TREE = {"exp": pt.exp, "tanh": pt.tanh, "sigmoid": pt.sigmoid}
_FAMILY_UNARY = {"neg": lambda t: -t, "reciprocal": pt.reciprocal}
_FAMILY_BINARY = {"add": pt.add, "sub": pt.sub, "mul": pt.mul, "div": pt.true_div}
_WITH_X = {
    "x + t": lambda x, t: x + t, "x - t": lambda x, t: x - t, "t - x": lambda x, t: t - x,
    "x * t": lambda x, t: x * t, "x / t": lambda x, t: x / t, "t - exp(x)": lambda x, t: t - pt.exp(x),
    "exp(x) * t": lambda x, t: pt.exp(x) * t,
}


@st.composite
def _constant_trees(draw, depth=3):
    """(description, float32/int8 constant expression)."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from(_LEAVES))
        if draw(st.booleans()):
            name = draw(st.sampled_from(sorted(_OF_A_LEAF)))
            return f"{name}({leaf!r})", _OF_A_LEAF[name](pt.constant(leaf))
        return repr(leaf), pt.constant(leaf)
    kind = draw(st.sampled_from(["binary", "binary", "family unary", "other unary"]))
    if kind == "binary":
        name = draw(st.sampled_from(sorted(_FAMILY_BINARY)))
        (a, ta), (b, tb) = draw(_constant_trees(depth - 1)), draw(_constant_trees(depth - 1))
        return f"{name}({a}, {b})", _FAMILY_BINARY[name](ta, tb)
    table = _FAMILY_UNARY if kind == "family unary" else _OF_A_TREE
    name = draw(st.sampled_from(sorted(table)))
    a, ta = draw(_constant_trees(depth - 1))
    return f"{name}({a})", table[name](ta)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_float64_graph_with_a_random_tree_of_float32_constants_matches_fast_run(data):
    x = pt.dvector("x")
    described, tree = data.draw(_constant_trees())
    form = data.draw(st.sampled_from(sorted(_WITH_X)))
    out = _WITH_X[form](x, tree)
    if out.dtype != "float64":
        return
    value = np.array([0.3, 1.7, 2.5, 0.9])
    with np.errstate(all="ignore"):
        want = pytensor.function([x], out, mode=Mode(linker="py", optimizer="fast_run"))(value)
        if not np.isfinite(want).all():
            return
        got = {label: pytensor.function([x], out, mode=mode)(value)
               for label, mode in (("mode ONNX", onnx_mode()), ("portable mode ONNX", onnx_mode(kernels=False)))}
        model = export_onnx([x], [out])
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got["exported model"] = session.run(None, {session.get_inputs()[0].name: value})[0]
    for label, result in got.items():
        assert _relative(result, want) <= 1e-12, f"{form} with t = {described}: {label} {result} vs FAST_RUN {want}"


def test_int64_product_of_int8_constants_does_not_wrap():
    # x * 100 * 100 on int64: constant_fold_branches_of_add_mul multiplied
    # the int8 constants (100 * 100 = 16 in int8).
    x = pt.lvector("x")
    out = x * 100 * 100
    value = np.array([1, -2, 3])
    for mode in (onnx_mode(), onnx_mode(kernels=False)):
        np.testing.assert_array_equal(pytensor.function([x], out, mode=mode)(value), value * 10000)


def test_gaussian_process_marginal_likelihood_matches_pymc():
    # Issue 25: logp -23.308063466 in mode ONNX and the export where PyMC's
    # modes give -23.308062870 (a float32 1/3 in the Gamma(20, 3) prior,
    # reciprocated in float32).
    pm = pytest.importorskip("pymc")

    rng = np.random.default_rng(0)
    X = np.linspace(0, 10, 30)[:, None]
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=30)
    with pm.Model() as model:
        ls = pm.Gamma("ls", 2, 1)
        period = pm.Gamma("period", 20, 3)
        eta = pm.HalfNormal("eta", 1)
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ls=ls) + pm.gp.cov.Periodic(1, period=period, ls=ls)
        gp = pm.gp.Marginal(cov_func=cov)
        sigma = pm.HalfNormal("sigma", 1)
        gp.marginal_likelihood("y", X=X, y=y, sigma=sigma)
    _assert_logp_and_gradient_match_pymc(model, model.initial_point())


@pytest.mark.parametrize("distribution", ["ChiSquared", "HalfStudentT", "TruncatedNormal"])
def test_integer_parameters_match_pymc(distribution):
    # Python ints are int8 constants, and PyMC computes with them in float32:
    # nu / 2 of nu=3, the truncation bounds' standardization (-2 - 0) / 1 /
    # sqrt(float32 2). FAST_RUN sums ChiSquared's -gammaln(nu / 2) + (nu / 2)
    # * log(1 / 2) in float32 (-0.9189385175704956; mode ONNX and the export
    # added its float32 parts in float64, -0.9189385324716568), and its
    # canonizer makes that standardization a float32 division (float64 as
    # built): logps 1e-9 to 1e-8 relative off PyMC's.
    pm = pytest.importorskip("pymc")

    with pm.Model() as model:
        if distribution == "ChiSquared":
            pm.ChiSquared("x", nu=3, shape=3)
        elif distribution == "HalfStudentT":
            pm.HalfStudentT("x", nu=3, sigma=1, shape=3)
        else:
            pm.TruncatedNormal("x", 0, 1, lower=-2, upper=3, shape=3)
    [value_var] = model.value_vars
    _assert_logp_and_gradient_match_pymc(model, {value_var.name: np.array([0.3, -1.2, 0.7])})


def _assert_logp_and_gradient_match_pymc(model, point):
    """The model's logp and gradient at ``point`` in mode ONNX (both paths) and
    its exported logp, against PyMC's default mode, to 1e-12 relative."""
    from pytensor_onnx.pymc import export_logp

    want_logp = model.compile_logp()(point)
    want_grad = model.compile_dlogp()(point)
    for mode in (onnx_mode(), onnx_mode(kernels=False)):
        got_logp = model.compile_logp(mode=mode)(point)
        got_grad = model.compile_dlogp(mode=mode)(point)
        assert _relative(got_logp, want_logp) <= 1e-12, (got_logp, want_logp)
        assert _relative(got_grad, want_grad) <= 1e-12, (got_grad, want_grad)

    exported = export_logp(model)
    check_model(exported)
    session = ort.InferenceSession(exported.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(point[i.name]) for i in session.get_inputs()}
    got = session.run(None, feed)
    assert _relative(got[0], want_logp) <= 1e-12, (got[0], want_logp)


@pytest.mark.parametrize("dtype", ["uint32", "uint8", "int64"])
def test_logsumexp_of_integers_is_taken_in_floats(dtype):
    # logsumexp of integers computes in floats as written, but PyTensor's
    # rewrites subtract the maximum in the integers' dtype: ``x - logsumexp(x)``
    # became an integer LogSoftmax, and the stabilized ``log(sum(exp(x)))``
    # subtracts before exp; x - max(x) of unsigned integers wraps (-inf for
    # uint32 [1, 0]; FUZZ_SEED=2797303143). Mode ONNX's rewrites cast first
    # (rewriting.local_onnx_logsumexp_of_integers, local_onnx_exp_of_integers).
    from pytensor_onnx.testing import compare_onnx_and_py

    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    outputs = [x - pt.logsumexp(x, keepdims=True), pt.log(pt.sum(pt.exp(x), axis=1))]
    value = np.array([[1, 0, 3], [0, 0, 2]], dtype=dtype)
    if dtype == "int64":
        value[0, 0] = np.iinfo(np.int64).min  # (x - max(x) would overflow)
    _, results = compare_onnx_and_py([x], outputs, [value])
    as_floats = value.astype(np.float64)
    shifted = as_floats - as_floats.max()
    rtol = 1e-6 if results[0].dtype == np.float32 else 1e-13  # (uint8's exp is float32)
    np.testing.assert_allclose(results[0], shifted - np.log(np.exp(shifted).sum()), rtol=rtol)


@pytest.mark.parametrize("value", [0.0, 2.0, np.inf])
def test_zero_divided_by_zero_is_nan(value):
    # PyTensor's local_zero_div makes 0 / x a zero, NaN in the py linker where
    # x is 0 (or NaN): mode ONNX leaves it out. The mean of an empty constant
    # is such a 0 / 0 once the early constant folding has made its sum a
    # literal 0 (FUZZ_SEED=699548079: it gave 0.0).
    x = pt.scalar("x", dtype="float64")
    outputs = [pt.constant(0.0) / x, pt.eye(1, 0, 0, dtype="float64").mean() + x]
    compare_onnx_and_py([x], outputs, [np.float64(value)])
