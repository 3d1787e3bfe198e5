"""Which PyTensor Ops have ONNX rules: read from the ``onnx_funcify`` registry.

The registry is the single source of truth, so the table always says what
this installation (plus any rules the user registered) can convert.
``docs/ops.md`` is generated from :func:`ops_markdown`
(``pytensor-onnx ops --markdown > docs/ops.md``); a test keeps it current.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytensor.graph.op import Op
from pytensor.scalar.basic import ScalarOp

import pytensor_onnx.dispatch  # noqa: F401  (registers the built-in rules)
from pytensor_onnx.dispatch.basic import onnx_funcify

#: Modules whose rules ship with pytensor-onnx.
BUILTIN_RULE_PREFIX = "pytensor_onnx."

KIND_OP = "Op"
KIND_SCALAR = "scalar Op"


@dataclass(frozen=True)
class RuleEntry:
    """One registered rule: the class it is registered for and where it lives."""

    op_class: type
    rule: object

    @property
    def kind(self) -> str:
        # Scalar ops run element-wise through the Elemwise rule (and as
        # reductions through CAReduce), so they are listed apart.
        return KIND_SCALAR if issubclass(self.op_class, ScalarOp) else KIND_OP

    @property
    def op_name(self) -> str:
        return self.op_class.__qualname__

    @property
    def op_module(self) -> str:
        return self.op_class.__module__

    @property
    def rule_module(self) -> str:
        return getattr(self.rule, "__module__", None) or "?"

    @property
    def builtin(self) -> bool:
        return self.rule_module.startswith(BUILTIN_RULE_PREFIX)


def rule_entries(*, builtin_only: bool = False) -> list[RuleEntry]:
    """All registered rules for Op classes, Ops first, then scalar Ops, each sorted by module and name."""
    entries = [
        RuleEntry(cls, rule)
        for cls, rule in onnx_funcify.registry.items()
        if isinstance(cls, type) and issubclass(cls, Op)
    ]
    if builtin_only:
        # PyMC's Ops have a table of their own (PYMC_OPS): their rules register only once PyMC is imported.
        entries = [e for e in entries if e.builtin and not e.op_module.startswith("pymc.")]
    return sorted(entries, key=lambda e: (e.kind != KIND_OP, e.op_module, e.op_name))


def supported_ops(*, builtin_only: bool = False) -> list[type]:
    """The PyTensor Op classes and scalar Op classes that have an ONNX rule.

    A rule registered for a base class also converts its subclasses (e.g.
    ``TypeCastingOp`` covers ``ViewOp`` and ``OutputGuard``). ``Elemwise`` and
    ``CAReduce`` convert when their scalar op is listed (``CAReduce`` only for
    the reductions ONNX has: Add, Mul, Maximum, Minimum, AND, OR).

    Parameters
    ----------
    builtin_only
        Leave out rules registered outside ``pytensor_onnx`` (user rules).
    """
    return [entry.op_class for entry in rule_entries(builtin_only=builtin_only)]


def _rows(entries):
    return [(e.op_name, e.kind, e.op_module, e.rule_module) for e in entries]


HEADER = ("Op class", "kind", "PyTensor module", "rule module")


def coverage_table(*, markdown: bool = False, builtin_only: bool = False) -> str:
    """A table of the supported ops: op class, kind, PyTensor module, rule module.

    Plain text by default, a Markdown table with ``markdown=True``.
    """
    rows = _rows(rule_entries(builtin_only=builtin_only))
    if markdown:
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
        lines += ["| " + " | ".join(f"`{cell}`" if i != 1 else cell for i, cell in enumerate(row)) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]

    def fmt(row):
        return "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()

    lines = [fmt(HEADER), fmt(tuple("-" * w for w in widths))]
    lines += [fmt(row) for row in rows]
    n_ops = sum(1 for row in rows if row[1] == KIND_OP)
    lines.append(f"{n_ops} Op rules, {len(rows) - n_ops} scalar Op rules")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PyMCOps:
    """Op classes PyMC (5.28 and 6.x) defines itself, and whether and how they convert."""

    names: tuple[str, ...]
    module: str
    status: str
    reason: str


CONVERTED = "converted"
NOT_CONVERTED = "not converted"
BASE_CLASS = "converted as its PyTensor base class"
NO_NUMERIC_MEANING = "no numeric meaning"

#: PyMC's own Ops (tests/python/test_pymc_ops.py checks this against the installed PyMC).
#: The rules of the converted ones are in ``pytensor_onnx.pymc``, registered once PyMC is imported.
PYMC_OPS = (
    PyMCOps(("I0e", "I1e"), "pymc.distributions.dist_math", CONVERTED,
            "SciPy's i0e/i1e (Rice, VonMises): the recipes of PyTensor's Ive"),
    PyMCOps(("SplineWrapper",), "pymc.distributions.dist_math", CONVERTED,
            "the SciPy spline (Interpolated) as a piecewise polynomial; a spline with ext='raise' is refused"),
    PyMCOps(("BatchedDiag",), "pymc.math", CONVERTED, "rows onto diagonals"),
    PyMCOps(("LogDet",), "pymc.math", CONVERTED, "PyMC 5 only: the sum of the logs of the singular values"),
    PyMCOps(("PosDefMatrix",), "pymc.distributions.multivariate", CONVERTED,
            "PyMC 5 only (Wishart): whether SciPy's Cholesky of the upper triangle succeeds; "
            "a NaN entry gives False where SciPy raises"),
    PyMCOps(("CheckParameterValue", "TruncationCheck"), "pymc.logprob.utils, pymc.distributions.truncated",
            BASE_CLASS, "CheckAndRaise; exports rewrite parameter checks to -inf (check_bounds) as PyMC does"),
    PyMCOps(("InitialPoint",), "pymc.initial_point", BASE_CLASS, "TypeCastingOp"),
    PyMCOps(("MinibatchOp",), "pymc.data", BASE_CLASS, "OpFromGraph, inlined"),
    PyMCOps(("Measurable*",), "pymc.logprob", BASE_CLASS,
            "subclasses of PyTensor Ops with rules (MeasurableElemwise, MeasurableScan, ...)"),
    PyMCOps(("BetaClippedRV", "MinibatchIndexRV"), "pymc.distributions.continuous, pymc.data", BASE_CLASS,
            "BetaRV and IntegersRV (draws)"),
    PyMCOps(("_PolyaGammaLogDistFunc",), "pymc.distributions.continuous", NOT_CONVERTED,
            "PolyaGamma's logp/logcdf call the optional `polyagamma` package's C code at run time; no "
            "graph to convert (and no gradient in PyMC either), so PolyaGamma models do not export, "
            "with gradient=False neither"),
    PyMCOps(("DifferentialEquation",), "pymc.ode", NOT_CONVERTED,
            "solves the ODE with SciPy's odeint (LSODA) at run time; no standard-ONNX form"),
    PyMCOps(("*RV", "SymbolicRandomVariable", "SymbolicMVNormalUsedInternally"), "pymc.distributions", NOT_CONVERTED,
            "PyMC's own RandomVariable classes (RiceRV, WaldRV, ...) draw samples: they appear in "
            "export_posterior_predictive graphs only, never in log-densities; the SymbolicRandomVariables "
            "are OpFromGraphs, inlined where their inner random variables convert"),
    PyMCOps(("ModelVar", "ModelFreeRV", "ModelObservedRV", "ModelValuedVar", "ModelDeterministic",
             "ModelPotential", "ModelNamed", "ModelAnchor", "ValuedRV", "PromisedValuedRV",
             "TransformedValue", "TransformedValueRV", "DiracDelta", "MixtureRV", "MinibatchRandomVariable",
             "MeasurableXTensorFromTensor"),
            "pymc.model, pymc.logprob, pymc.variational, pymc.dims", NO_NUMERIC_MEANING,
            "markers of PyMC's model and log-probability graphs, removed before a function is compiled"),
)


def pymc_markdown() -> str:
    """The table of PyMC's own Ops (a section of ``docs/ops.md``)."""
    lines = ["| PyMC Op class | PyMC module | status | how / why |", "|---|---|---|---|"]
    for entry in PYMC_OPS:
        names = ", ".join(f"`{name}`" for name in entry.names)
        lines.append(f"| {names} | `{entry.module}` | {entry.status} | {entry.reason} |")
    return "\n".join(lines) + "\n"


def ops_markdown() -> str:
    """The content of ``docs/ops.md``: the built-in rules as a Markdown page."""
    import pytensor

    table = coverage_table(markdown=True, builtin_only=True)
    line = ".".join(pytensor.__version__.split(".")[:2])
    return (
        "# Supported operations\n"
        "\n"
        "<!-- Generated by `make docs` (`pytensor-onnx ops --markdown > docs/ops.md`); do not edit by hand.\n"
        "     tests/python/test_cli.py checks that this file is current. -->\n"
        "\n"
        f"Generated with PyTensor {line}.x. Other supported lines differ only in the Op classes\n"
        "they define (`pytensor_onnx.compat.LINE_SPECIFIC_OPS`).\n"
        "\n"
        "Every PyTensor Op class (and scalar Op class) with a built-in ONNX rule.\n"
        "A rule registered for a base class also converts its subclasses\n"
        "(`TypeCastingOp` covers `ViewOp` and `OutputGuard`). Scalar Ops run\n"
        "element-wise through the `Elemwise` rule; `CAReduce` converts the reductions\n"
        "ONNX has (sum, prod, max, min, all, any). Any other Op raises\n"
        "`NotImplementedError` at conversion, naming the Op; see\n"
        "[usage.md](usage.md#extending-rules-for-your-own-ops) to add a rule.\n"
        "\n"
        f"{table}"
        "\n"
        "## PyMC's own Ops\n"
        "\n"
        "The Op classes PyMC 5.28 and 6.x define themselves. The rules of those converted here live in\n"
        "`pytensor_onnx.pymc` and register as soon as PyMC is imported (before any conversion).\n"
        "\n"
        f"{pymc_markdown()}"
    )
