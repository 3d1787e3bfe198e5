"""One-call ONNX export of PyMC models (needs PyMC: ``pip install pytensor-onnx[pymc]``).

::

    from pytensor_onnx.pymc import export_logp, read_layout

    model_proto = export_logp(model, "model.onnx")        # logp and its gradient
    export_logp(model, "flat.onnx", flat=True)             # one input vector, one gradient vector
    layout = read_layout("model.onnx")                      # what a client needs, from the file

The exported model computes the joint log-density (log-prior + log-likelihood
+ potentials, with the Jacobian of the transforms) of the model's
*unconstrained* value variables, and its gradient, exactly as PyMC's
``model.compile_logp()`` / ``model.compile_dlogp()`` do. Its metadata
(``metadata_props``) records the layout as JSON under :data:`LAYOUT_KEY`: each
value variable's name, the random variable and distribution it belongs to,
its transform, shape, dtype, and where it sits in the flat vector, so a
client in any language can fill the inputs and read the outputs without
Python. ``docs/pymc.md`` describes the format.

:func:`export_deterministics` exports the map from value variables to the
constrained random variables and ``pm.Deterministic`` values (what a trace
stores); :func:`export_posterior_predictive` the draws of observed variables
given posterior values (needs rules for PyMC's random variables).

A model that cannot be exported fails here, at export time, with a
``NotImplementedError`` naming the model variables whose graphs hold an Op
without an ONNX rule, and that Op.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

try:
    import pymc as pm
except ImportError as exc:  # pragma: no cover - exercised only without PyMC
    raise ImportError(
        "pytensor_onnx.pymc needs PyMC; install it with `pip install pytensor-onnx[pymc]`"
    ) from exc

import numpy as np
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.traversal import ancestors  # (pytensor.graph.basic.ancestors is deprecated in 3.x)
from pytensor.graph.replace import graph_replace

from pytensor_onnx.dispatch.basic import ONNX_OPSET_VERSION
from pytensor_onnx.export import ExportOptions, build_fgraph, check_string_map, export_fgraph, rewrite_for_export

#: The metadata_props key of the layout JSON.
LAYOUT_KEY = "pytensor_onnx.pymc.layout"
#: Version of the layout format (raised on incompatible changes).
LAYOUT_VERSION = 1
#: Name of the flat input vector and of the flat gradient (``flat=True``).
FLAT_INPUT = "point"
FLAT_GRADIENT = "dlogp"

__all__ = [
    "FLAT_GRADIENT",
    "FLAT_INPUT",
    "LAYOUT_KEY",
    "export_deterministics",
    "export_logp",
    "export_posterior_predictive",
    "read_layout",
    "unsupported_ops",
]


def _model(model):
    model = pm.modelcontext(model)
    if not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pymc.Model, got {type(model).__name__}")
    return model


def _check_flags(**flags) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {value!r}")


def _check_var_names(var_names) -> None:
    if var_names is None:
        return
    if isinstance(var_names, str) or not isinstance(var_names, Sequence):
        raise TypeError(f"var_names must be a list of variable names, got {type(var_names).__name__}")
    for i, name in enumerate(var_names):
        if not isinstance(name, str):
            raise TypeError(f"var_names[{i}] must be a variable name (str), got {name!r}")


def _check_parameter_rewrite(model) -> str:
    # What pm.compile runs (pymc.pytensorf.compile): parameter checks become
    # -inf (check_bounds=True) or are removed (check_bounds=False).
    return "local_check_parameter_to_ninf_switch" if model.check_bounds else "local_remove_check_parameter"


def _transform_name(transform) -> str | None:
    if transform is None:
        return None
    return getattr(transform, "name", None) or type(transform).__name__


def _distribution(rv) -> str:
    op = rv.owner.op if rv.owner is not None else None
    return type(op).__name__ if op is not None else "?"


def _gradient_name(value_name: str) -> str:
    return f"dlogp_{value_name}"


class _ValueLayout:
    """The value variables' shapes (from the model's initial point) and flat offsets."""

    def __init__(self, model, value_vars):
        point = model.initial_point(random_seed=0)
        self.value_vars = list(value_vars)
        self.shapes = [tuple(np.shape(point[v.name])) for v in self.value_vars]
        self.sizes = [int(np.prod(s, dtype=np.int64)) for s in self.shapes]
        self.offsets = list(np.cumsum([0, *self.sizes[:-1]]).astype(int))
        self.size = int(sum(self.sizes))
        value_to_rv = {value: rv for rv, value in model.rvs_to_values.items()}
        self.rvs = [value_to_rv[v] for v in self.value_vars]
        self.transforms = [model.rvs_to_transforms.get(rv) for rv in self.rvs]
        dtypes = {v.type.dtype for v in self.value_vars}
        if len(dtypes) > 1:
            raise TypeError(
                f"the value variables have several dtypes ({', '.join(sorted(dtypes))}); "
                "export them with flat=False"
            )
        self.dtype = dtypes.pop() if dtypes else "float64"

    def entries(self, float32: bool, flat: bool, gradient: bool) -> list[dict]:
        out = []
        for v, rv, transform, shape, size, offset in zip(
            self.value_vars, self.rvs, self.transforms, self.shapes, self.sizes, self.offsets, strict=True
        ):
            entry = {
                "name": v.name,
                "rv": rv.name,
                "distribution": _distribution(rv),
                "transform": _transform_name(transform),
                "shape": list(shape),
                "size": size,
                "dtype": _exported_dtype(v.type.dtype, float32),
            }
            if flat:
                entry["offset"] = int(offset)
            else:
                entry["input"] = v.name
                if gradient:
                    entry["gradient"] = _gradient_name(v.name)
            out.append(entry)
        return out

    def flat_replacements(self):
        """A flat input vector and the value variables as slices of it."""
        flat = pt.tensor(FLAT_INPUT, shape=(self.size,), dtype=self.dtype)
        replacements = {}
        for v, shape, size, offset in zip(self.value_vars, self.shapes, self.sizes, self.offsets, strict=True):
            piece = flat[offset : offset + size].reshape(shape) if shape else flat[offset]
            replacements[v] = pt.specify_shape(piece, shape) if shape else piece
        return flat, replacements

    def shaped_inputs(self):
        """One input per value variable, of the static shape the layout
        records (the value variables' own types leave sizes unknown, and an
        input whose dims are unknown would broadcast a length 1 where PyMC
        raises), and the value variables replaced by them."""
        inputs = [pt.tensor(v.name, shape=shape, dtype=v.type.dtype) for v, shape in zip(self.value_vars, self.shapes)]
        return inputs, dict(zip(self.value_vars, inputs))


def _exported_dtype(dtype: str, float32: bool) -> str:
    return "float32" if float32 and dtype == "float64" else dtype


def _data_inputs(model, data_names):
    """Symbolic stand-ins for the pm.Data containers named in ``data_names``."""
    if data_names is None:
        return {}
    if isinstance(data_names, str) or not isinstance(data_names, Sequence):
        raise TypeError("data_inputs must be a list of pm.Data names")
    replacements = {}
    for name in data_names:
        var = model.named_vars.get(name)
        if not isinstance(var, SharedVariable):
            data = sorted(n for n, v in model.named_vars.items() if isinstance(v, SharedVariable))
            raise ValueError(f"data_inputs: {name!r} is not a pm.Data container of the model (those are: {data})")
        replacements[var] = pt.tensor(name, shape=(None,) * var.type.ndim, dtype=var.type.dtype)
    return replacements


def _data_entries(data_replacements, float32: bool) -> list[dict]:
    return [
        {"name": sym.name, "shape": [None] * sym.type.ndim, "dtype": _exported_dtype(sym.type.dtype, float32)}
        for sym in data_replacements.values()
    ]


def _metadata(layout: dict) -> dict[str, str]:
    return {LAYOUT_KEY: json.dumps(layout, sort_keys=False), "pymc_version": pm.__version__}


def _options(described: dict, *, doc_string: str, default_doc: str, metadata, input_docs, output_docs,
             default_input_docs=None, default_output_docs=None, **options) -> ExportOptions:
    """The ExportOptions of a PyMC export: the layout and PyMC version in the metadata (which the
    user's entries may add to, not replace), the user's docs over the exporter's own, by name."""

    metadata = check_string_map(metadata, "metadata")
    ours = _metadata(described)
    clash = sorted(set(metadata) & set(ours))
    if clash:
        raise ValueError(f"metadata: {', '.join(clash)} are written by pytensor_onnx.pymc (the layout); "
                         "choose other keys")
    docs = {}
    for what, given, default in (("input_docs", input_docs, default_input_docs),
                                 ("output_docs", output_docs, default_output_docs)):
        if given is not None and not isinstance(given, Mapping):
            raise TypeError(f"{what} of a PyMC export must be a mapping by input/output name "
                            f"(the names are in the layout), got {type(given).__name__}")
        docs[what] = {**(default or {}), **check_string_map(given, what)}
    return ExportOptions(
        doc_string=default_doc if doc_string is None else doc_string,
        metadata={**ours, **metadata}, **docs, **options,
    )


def _export(model, inputs, outputs, options, describe_terms):
    """Export, turning a conversion failure into an error naming the model variables affected."""
    fgraph, shared_values = build_fgraph(inputs, outputs)
    including = (_check_parameter_rewrite(model),)
    try:
        return export_fgraph(fgraph, shared_values, options, rewrites_including=including)
    except NotImplementedError as exc:
        culprits = []
        for label, term_inputs, term_outputs in describe_terms():
            term_fgraph, term_values = build_fgraph(term_inputs, term_outputs)
            try:
                export_fgraph(
                    term_fgraph, term_values, ExportOptions(opset_version=options.opset_version),
                    rewrites_including=including,
                )
            except NotImplementedError as term_exc:
                missing = _ops_without_rules(term_fgraph)
                why = f"no ONNX rule for {', '.join(missing)}" if missing else str(term_exc).splitlines()[0]
                culprits.append(f"  - {label}: {why}")
        if not culprits:
            raise
        raise NotImplementedError(
            "This PyMC model cannot be exported to ONNX yet:\n" + "\n".join(culprits)
            + "\nRegister a rule for the Op (pytensor_onnx.onnx_funcify.register) or change the model."
        ) from exc


def _ops_without_rules(fgraph) -> list[str]:
    """Names of the Ops in ``fgraph`` (and the inner graphs of its nodes) that no rule converts."""
    from pytensor.scalar.basic import Composite
    from pytensor.tensor.elemwise import CAReduce, Elemwise

    from pytensor_onnx.dispatch.basic import onnx_funcify

    fallback = onnx_funcify.dispatch(object)
    found: dict[str, None] = {}

    def visit(graph):
        for node in graph.toposort():
            ops = [node.op]
            if isinstance(node.op, Elemwise | CAReduce):
                ops.append(node.op.scalar_op)
            for op in ops:
                inner = getattr(op, "fgraph", None)
                if onnx_funcify.dispatch(type(op)) is fallback:
                    found[type(op).__name__] = None
                elif inner is not None and (isinstance(op, Composite) or _inlined(op)):
                    visit(inner)

    visit(fgraph)
    return list(found)


def unsupported_ops(model=None, *, gradient: bool = True, jacobian: bool = True) -> list[str]:
    """Names of the Ops in the model's log-density (and gradient) graph, as it is exported, that no ONNX rule
    converts; empty when :func:`export_logp` has a rule for every Op."""
    model = _model(model)
    logp = model.logp(jacobian=jacobian)
    outputs = [logp, *(pt.grad(logp, model.value_vars) if gradient else [])]
    fgraph, _ = build_fgraph(list(model.value_vars), outputs)
    rewrite_for_export(fgraph, (_check_parameter_rewrite(model),))
    return _ops_without_rules(fgraph)


def _inlined(op) -> bool:
    # OpFromGraph without a rule of its own is converted by inlining its inner graph.
    from pytensor.compile.builders import OpFromGraph

    from pytensor_onnx.dispatch.basic import onnx_funcify

    return isinstance(op, OpFromGraph) and onnx_funcify.dispatch(type(op)) is onnx_funcify.dispatch(OpFromGraph)


def export_logp(
    model=None,
    filename=None,
    *,
    flat: bool = False,
    gradient: bool = True,
    jacobian: bool = True,
    data_inputs: Sequence[str] | None = None,
    float32: bool = False,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pymc_logp",
    external_data: bool | None = None,
    doc_string: str | None = None,
    metadata: Mapping[str, str] | None = None,
    input_docs: Mapping[str, str] | None = None,
    output_docs: Mapping[str, str] | None = None,
    inline_functions: bool = False,
):
    """Export the model's joint log-density and its gradient as one ONNX model.

    Parameters
    ----------
    model
        A ``pm.Model`` (default: the model of the current ``with`` context).
    filename
        Where to write the ``.onnx`` file (optional).
    flat
        ``False``: one input per value variable, named after it, and one
        gradient output per value variable (``dlogp_<name>``). ``True``: one
        input vector ``point`` holding all value variables (raveled, in
        ``model.value_vars`` order, as PyMC's samplers do) and one gradient
        vector ``dlogp``.
    gradient
        Also output the gradient (default). ``False``: ``logp`` only.
    jacobian
        Include the log-Jacobian of the transforms (the density of the
        unconstrained values; what samplers need). ``False`` gives the density
        of the constrained values at the transformed point.
    data_inputs
        Names of ``pm.Data`` containers to make graph inputs (fed at run time)
        instead of baking their current values into the model.
    float32
        Export the float64 computation in float32 (see ``export_onnx``).
    opset_version, model_name, external_data, doc_string, metadata, inline_functions
        As for :func:`pytensor_onnx.export_onnx` (``metadata`` adds entries to
        the layout's; ``doc_string`` replaces the exporter's description).
    input_docs, output_docs
        Documentation of inputs/outputs by name, over the exporter's own.
        (Input and output names, and PyMC's rewrites, are fixed by the layout.)

    Returns
    -------
    onnx.ModelProto
        Outputs ``logp`` (a scalar) and the gradient; the layout is in the
        metadata (:func:`read_layout`).
    """
    _check_flags(flat=flat, gradient=gradient, jacobian=jacobian, float32=float32)
    user_input_docs, user_output_docs = input_docs, output_docs
    model = _model(model)
    value_vars = list(model.value_vars)
    if not value_vars:
        raise ValueError("the model has no free random variables, so its log-density has no inputs")
    layout = _ValueLayout(model, value_vars)
    logp = model.logp(jacobian=jacobian)
    grads = pt.grad(logp, value_vars) if gradient else []
    data = _data_inputs(model, data_inputs)
    if data:
        logp, *grads = graph_replace([logp, *grads], data, strict=False)

    if flat:
        flat_input, replacements = layout.flat_replacements()
        flat_grad = pt.concatenate([g.ravel() for g in grads]) if grads else None
        outputs = [logp] + ([flat_grad] if grads else [])
        outputs = graph_replace(outputs, replacements, strict=False)
        inputs = [flat_input]
        output_names = ["logp"] + ([FLAT_GRADIENT] if grads else [])
        input_names = [FLAT_INPUT]
    else:
        inputs, replacements = layout.shaped_inputs()
        outputs = graph_replace([logp, *grads], replacements, strict=False)
        output_names = ["logp"] + [_gradient_name(v.name) for v in value_vars][: len(grads)]
        input_names = [v.name for v in value_vars]
    inputs = inputs + list(data.values())
    input_names = input_names + [sym.name for sym in data.values()]

    dtype = _exported_dtype(layout.dtype, float32)
    described = {
        "format": "pytensor-onnx.pymc.logp",
        "version": LAYOUT_VERSION,
        "input": "flat" if flat else "variables",
        "jacobian": jacobian,
        "check_bounds": bool(model.check_bounds),
        "float32": float32,
        "size": layout.size,
        "dtype": dtype,
        "variables": layout.entries(float32, flat, gradient),
        "data": _data_entries(data, float32),
        "outputs": {"logp": "logp", "gradient": (FLAT_GRADIENT if flat else None) if gradient else None},
    }
    if flat:
        described["flat_input"] = FLAT_INPUT
    input_docs = {sym.name: f"pm.Data container {sym.name}" for sym in data.values()}
    output_docs = {"logp": "joint log-density of the model at the given unconstrained point"
                   + (" (with the Jacobian of the transforms)" if jacobian else "")}
    if flat:
        input_docs[FLAT_INPUT] = f"the {layout.size} unconstrained values, raveled in model.value_vars order"
        if gradient:
            output_docs[FLAT_GRADIENT] = "gradient of logp with respect to point"
    else:
        for v, rv, transform in zip(value_vars, layout.rvs, layout.transforms, strict=True):
            how = f"{_transform_name(transform)}-transformed value of" if transform is not None else "value of"
            input_docs[v.name] = f"{how} {rv.name} ~ {_distribution(rv)}"
            if gradient:
                output_docs[_gradient_name(v.name)] = f"gradient of logp with respect to {v.name}"

    options = _options(
        described, doc_string=doc_string,
        default_doc=f"log-density{' and gradient' if gradient else ''} of a PyMC model",
        metadata=metadata, input_docs=user_input_docs, output_docs=user_output_docs,
        default_input_docs=input_docs, default_output_docs=output_docs,
        filename=filename, opset_version=opset_version, model_name=model_name,
        input_names=input_names, output_names=output_names, external_data=external_data,
        float32=float32, inline_functions=inline_functions,
    )

    def terms():
        # One log-density term per random variable and potential, with its gradient.
        for rv in [*model.free_RVs, *model.observed_RVs]:
            term = model.logp(vars=[rv], jacobian=jacobian)
            outs = [term, *(pt.grad(term, value_vars, disconnected_inputs="ignore") if gradient else [])]
            yield f"{rv.name} ~ {_distribution(rv)}", value_vars, outs
        for potential in model.potentials:
            term = model.logp(vars=[potential], jacobian=jacobian)
            outs = [term, *(pt.grad(term, value_vars, disconnected_inputs="ignore") if gradient else [])]
            yield f"pm.Potential {potential.name}", value_vars, outs

    return _export(model, inputs, outputs, options, terms)


def export_deterministics(
    model=None,
    filename=None,
    *,
    flat: bool = False,
    var_names: Sequence[str] | None = None,
    float32: bool = False,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pymc_deterministics",
    external_data: bool | None = None,
    doc_string: str | None = None,
    metadata: Mapping[str, str] | None = None,
    input_docs: Mapping[str, str] | None = None,
    output_docs: Mapping[str, str] | None = None,
    inline_functions: bool = False,
):
    """Export the map from unconstrained values to what a trace stores.

    Inputs are the value variables (or one flat vector, as in
    :func:`export_logp`); outputs are the constrained value of each
    transformed free random variable (named after it) and each
    ``pm.Deterministic``, or only those in ``var_names``. (Untransformed
    variables are their own inputs.) The other options are those of
    :func:`export_logp`.
    """
    _check_flags(flat=flat, float32=float32)
    _check_var_names(var_names)
    model = _model(model)
    value_vars = list(model.value_vars)
    layout = _ValueLayout(model, value_vars)
    candidates = [rv for rv in model.free_RVs if model.rvs_to_transforms.get(rv) is not None]
    candidates += list(model.deterministics)
    if var_names is not None:
        known = {v.name: v for v in candidates}
        missing = [n for n in var_names if n not in known]
        if missing:
            raise ValueError(
                f"var_names: {missing} are not transformed free variables or deterministics "
                f"(those are: {sorted(known)})"
            )
        candidates = [known[n] for n in var_names]
    if not candidates:
        raise ValueError("the model has no transformed variables or deterministics to export")
    outputs = model.replace_rvs_by_values(candidates)
    if flat:
        flat_input, replacements = layout.flat_replacements()
        outputs = graph_replace(outputs, replacements, strict=False)
        inputs, input_names = [flat_input], [FLAT_INPUT]
    else:
        inputs, replacements = layout.shaped_inputs()
        outputs = graph_replace(outputs, replacements, strict=False)
        input_names = [v.name for v in value_vars]
    used = set(input_names)
    output_names = [v.name if v.name not in used else f"{v.name}_out" for v in candidates]
    described = {
        "format": "pytensor-onnx.pymc.deterministics",
        "version": LAYOUT_VERSION,
        "input": "flat" if flat else "variables",
        "float32": float32,
        "size": layout.size,
        "dtype": _exported_dtype(layout.dtype, float32),
        "variables": layout.entries(float32, flat, gradient=False),
        "outputs": [
            {"name": name, "var": v.name, "kind": "deterministic" if v in model.deterministics else "free_rv",
             "dtype": _exported_dtype(v.type.dtype, float32)}
            for name, v in zip(output_names, candidates, strict=True)
        ],
    }
    if flat:
        described["flat_input"] = FLAT_INPUT
    options = _options(
        described, doc_string=doc_string, default_doc="constrained values and deterministics of a PyMC model",
        metadata=metadata, input_docs=input_docs, output_docs=output_docs,
        filename=filename, opset_version=opset_version, model_name=model_name, input_names=input_names,
        output_names=output_names, external_data=external_data, float32=float32, inline_functions=inline_functions,
    )

    def terms():
        for name, out in zip(output_names, outputs, strict=True):
            yield name, inputs, [out]

    return _export(model, inputs, outputs, options, terms)


def export_posterior_predictive(
    model=None,
    filename=None,
    *,
    var_names: Sequence[str] | None = None,
    float32: bool = False,
    opset_version: int = ONNX_OPSET_VERSION,
    model_name: str = "pymc_posterior_predictive",
    external_data: bool | None = None,
    doc_string: str | None = None,
    metadata: Mapping[str, str] | None = None,
    input_docs: Mapping[str, str] | None = None,
    output_docs: Mapping[str, str] | None = None,
    inline_functions: bool = False,
):
    """Export one posterior-predictive draw of the observed variables.

    Inputs are the constrained values of the free random variables (one
    posterior draw, as a trace stores them, named after the variables);
    outputs are a draw of each observed variable (or those in ``var_names``)
    given them. Needs ONNX rules for the random variables involved. The other
    options are those of :func:`export_logp`.
    """
    _check_flags(float32=float32)
    _check_var_names(var_names)
    model = _model(model)
    observed = list(model.observed_RVs)
    if var_names is not None:
        known = {v.name: v for v in observed}
        missing = [n for n in var_names if n not in known]
        if missing:
            raise ValueError(f"var_names: {missing} are not observed variables (those are: {sorted(known)})")
        observed = [known[n] for n in var_names]
    if not observed:
        raise ValueError("the model has no observed variables")
    free = list(model.free_RVs)
    shapes = _constrained_shapes(model, free)
    stand_ins = {rv: pt.tensor(rv.name, shape=rv.type.shape, dtype=rv.type.dtype) for rv in free}
    # Replace only the free variables the observed ones reach without passing
    # through another free variable: the others (hyperpriors) act only through
    # those, and PyTensor 2.38's graph_replace fails on nested keys ("i-2 is not
    # a part of graph"). Every free variable stays an input.
    reached = set(ancestors(observed, blockers=free))
    outputs = graph_replace(observed, {rv: s for rv, s in stand_ins.items() if rv in reached}, strict=False)
    inputs = list(stand_ins.values())
    output_names = [f"{v.name}_draw" for v in observed]
    described = {
        "format": "pytensor-onnx.pymc.posterior_predictive",
        "version": LAYOUT_VERSION,
        "float32": float32,
        "inputs": [
            {"name": rv.name, "distribution": _distribution(rv), "shape": list(shape),
             "dtype": _exported_dtype(rv.type.dtype, float32)}
            for rv, shape in zip(free, shapes, strict=True)
        ],
        "outputs": [
            {"name": name, "var": v.name, "distribution": _distribution(v),
             "dtype": _exported_dtype(v.type.dtype, float32)}
            for name, v in zip(output_names, observed, strict=True)
        ],
    }
    options = _options(
        described, doc_string=doc_string,
        default_doc="posterior-predictive draw of a PyMC model's observed variables",
        metadata=metadata, input_docs=input_docs, output_docs=output_docs,
        filename=filename, opset_version=opset_version, model_name=model_name,
        input_names=[rv.name for rv in free], output_names=output_names, external_data=external_data,
        float32=float32, inline_functions=inline_functions,
    )

    def terms():
        for name, v, out in zip(output_names, observed, outputs, strict=True):
            yield f"{v.name} ~ {_distribution(v)}", inputs, [out]

    return _export(model, inputs, outputs, options, terms)


def _constrained_shapes(model, rvs) -> list[tuple]:
    """Shapes of the free variables' constrained values at the initial point (a simplex has one more entry
    than its unconstrained value, for instance)."""
    point = model.initial_point(random_seed=0)
    fn = model.compile_fn(model.replace_rvs_by_values(rvs), inputs=model.value_vars, on_unused_input="ignore",
                          point_fn=True)
    return [tuple(np.shape(value)) for value in fn(point)]


def read_layout(model) -> dict:
    """The layout JSON of a model exported by this module (a ModelProto or a path)."""
    import onnx

    if not isinstance(model, onnx.ModelProto):
        if not isinstance(model, str | os.PathLike):
            # onnx.load would read an int as an open file descriptor.
            raise TypeError(f"model must be an onnx.ModelProto or a path, got {type(model).__name__}")
        model = onnx.load(model, load_external_data=False)
    for prop in model.metadata_props:
        if prop.key == LAYOUT_KEY:
            return json.loads(prop.value)
    raise ValueError(f"the model has no {LAYOUT_KEY!r} metadata; it was not exported by pytensor_onnx.pymc")


# --------------------------------------------------------------------------
# Rules for the Ops PyMC defines itself (registered on import of this module;
# pytensor_onnx.dispatch.optional imports it before a conversion once PyMC is
# imported). Each follows the Op's own definition in the installed PyMC.
# --------------------------------------------------------------------------

from pytensor_onnx.dispatch.basic import onnx_funcify  # noqa: E402
from pytensor_onnx.dispatch.scalar import float_recipe  # noqa: E402
from pytensor_onnx.dispatch.utils import int64_const, output_dtype  # noqa: E402


def _pymc_op(module: str, name: str):
    """PyMC's Op class ``module.name``, or None where this PyMC line does not define it."""
    import importlib

    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:  # pragma: no cover - a module of the other PyMC line
        return None


# dist_math.I0e / I1e: scipy.special.i0e / i1e (Rice, VonMises), the table recipes of PyTensor's Ive.
onnx_funcify.register(_pymc_op("pymc.distributions.dist_math", "I0e"))(float_recipe("i0e"))
onnx_funcify.register(_pymc_op("pymc.distributions.dist_math", "I1e"))(float_recipe("i1e"))


@onnx_funcify.register(_pymc_op("pymc.math", "BatchedDiag"))
def _batched_diag(op, node, g, diag):
    """(b, n) -> (b, n, n): each row on the diagonal of a zero matrix (a Where, so inf stays off the rest)."""
    n = g.op("Gather", g.op("Shape", diag), int64_const(g, 1), axis=0)
    index = g.op("Range", int64_const(g, 0), n, int64_const(g, 1))
    eye = g.op("Equal", g.op("Unsqueeze", index, axes=[1]), g.op("Unsqueeze", index, axes=[0]))
    zero = g.const(np.zeros((), dtype=output_dtype(node)))
    return g.op("Where", eye, g.op("Unsqueeze", g.cast(diag, zero.dtype), axes=[2]), zero)


_LogDet = _pymc_op("pymc.math", "LogDet")  # PyMC 5 only
if _LogDet is not None:

    @onnx_funcify.register(_LogDet)
    def _logdet(op, node, g, x):
        """LogDet.perform: the sum of the logs of the absolute singular values."""
        dtype = output_dtype(node)
        s = g.recipe("svd", g.cast(x, dtype), full_matrices=0, compute_uv=0, tall=int(_tall(node.inputs[0])))
        return g.op("ReduceSum", g.op("Log", g.op("Abs", s)), axes=[-1], keepdims=0)


def _tall(var) -> bool:
    rows, cols = var.type.shape[-2:]
    return rows is not None and cols is not None and rows >= cols


_PosDefMatrix = _pymc_op("pymc.distributions.multivariate", "PosDefMatrix")  # PyMC 5 only
if _PosDefMatrix is not None:

    @onnx_funcify.register(_PosDefMatrix)
    def _pos_def_matrix(op, node, g, x):
        """PosDefMatrix.perform: whether ``scipy.linalg.cholesky`` succeeds. It reads the upper
        triangle and fails on a non-positive pivot: the Cholesky recipe's factor of the upper
        triangle is NaN exactly there. (SciPy raises ValueError on a NaN or inf entry, which
        PyMC lets through; here such a matrix is not positive definite: False.)"""
        dtype = x.dtype if x.dtype in ("float32", "float64") else "float64"
        factor = g.recipe("cholesky", g.cast(x, dtype), lower=0)
        bad = g.op("Or", g.op("IsNaN", factor), g.op("IsInf", factor))
        n_bad = g.op("ReduceSum", g.cast(bad, "int64"), axes=[0, 1], keepdims=0)
        return g.op("Equal", n_bad, int64_const(g, 0))


@onnx_funcify.register(_pymc_op("pymc.distributions.dist_math", "SplineWrapper"))
def _spline_wrapper(op, node, g, x):
    """SplineWrapper.perform: ``op.spline(x)``, a SciPy (FITPACK) spline, as a piecewise polynomial.

    Each interval between the spline's distinct knots holds one polynomial of
    degree k; its Taylor coefficients at the interval's left end are the
    spline's derivatives there (``scipy.interpolate.splev``, which takes the
    interval to the right of a knot). The run-time evaluation finds the
    interval (``searchsorted``), and runs Horner's scheme. Outside the knots the
    spline's ``ext`` applies: 0 extrapolates the end polynomials, 1 gives zeros,
    3 the boundary value; 2 (raise) is refused at conversion.
    """
    from math import factorial

    from scipy.interpolate import splev

    spline = op.spline
    # (t, c, k): what UnivariateSpline.__call__ itself hands to FITPACK's splev.
    tck = getattr(spline, "_eval_args", None)
    if tck is None:
        raise NotImplementedError(
            f"SplineWrapper of a {type(spline).__name__}: the rule converts scipy.interpolate.UnivariateSpline "
            "(and its subclasses, as PyMC builds them)"
        )
    t, _, k = tck
    ext = int(getattr(spline, "ext", 0))
    if ext == 2:
        raise NotImplementedError(
            "SplineWrapper of a spline with ext='raise' (an error outside the knots) has no ONNX form; "
            "build the spline with ext='extrapolate', 'zeros' or 'const'"
        )
    breaks = np.unique(np.asarray(t[k: len(t) - k], dtype=np.float64))
    starts = breaks[:-1] if len(breaks) > 1 else breaks
    coefficients = np.stack([np.asarray(splev(starts, tck, der=j)) / factorial(j) for j in range(k + 1)])
    out_dtype = output_dtype(node)
    xf = g.cast(x, "float64")
    evaluated = xf if ext != 3 else g.op("Clip", xf, g.const(breaks[:1].reshape(())), g.const(breaks[-1:].reshape(())))
    if len(starts) > 1:
        interval = g.recipe("searchsorted", g.const(starts[1:]), evaluated, right=1)
        if isinstance(interval, list | tuple):
            (interval,) = interval
    else:
        interval = g.op("Mul", g.cast(evaluated, "int64"), int64_const(g, 0))
    dx = g.op("Sub", evaluated, g.op("Gather", g.const(starts), interval, axis=0))
    value = g.op("Gather", g.const(coefficients[k]), interval, axis=0)
    for j in range(k - 1, -1, -1):
        value = g.op("Add", g.op("Mul", value, dx), g.op("Gather", g.const(coefficients[j]), interval, axis=0))
    if ext == 1:
        outside = g.op("Or", g.op("Less", xf, g.const(breaks[:1].reshape(()))),
                       g.op("Greater", xf, g.const(breaks[-1:].reshape(()))))
        value = g.op("Where", outside, g.const(np.zeros((), dtype=np.float64)), value)
    return g.cast(value, out_dtype)
