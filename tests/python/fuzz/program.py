"""Fuzz cases: a random program of op-generator steps, drawn by Hypothesis,
rebuilt into a PyTensor graph, saved to and loaded from JSON.

A case is a list of *nodes*; node ``k`` defines variable ``k``. A node is
either a graph input (dtype, concrete shape, static shape, value domain,
optionally a fixed value) or a step (generator name, operand indices, JSON
parameters). ``outputs`` lists the variables the function returns and
``values`` the input values. Everything is plain data, so a case written to
JSON (``tests/python/fuzz_cases/*.json``) rebuilds the same graph later.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytensor.tensor as pt
from hypothesis import event, reject
from hypothesis import strategies as st

from fuzz import values as fuzz_values
from fuzz.registry import REGISTRY, Meta, load_families

FORMAT_VERSION = 1


@dataclass
class InputNode:
    dtype: str
    shape: tuple
    static: tuple  # PyTensor's static shape: an int or None per dim
    domain: str | None = None  # see fuzz.values.values_for
    value: object = None  # a fixed value (nested lists), else drawn

    def to_json(self):
        data = {"input": {"dtype": self.dtype, "shape": list(self.shape), "static": list(self.static)}}
        if self.domain is not None:
            data["input"]["domain"] = self.domain
        if self.value is not None:
            data["input"]["value"] = self.value
        return data


@dataclass
class StepNode:
    gen: str
    args: list
    params: dict

    def to_json(self):
        return {"gen": self.gen, "args": list(self.args), "params": self.params}


@dataclass
class Case:
    opset: int
    nodes: list
    outputs: list
    values: list = field(default_factory=list)  # one ndarray per InputNode, in order
    export_function: bool = False  # also export a FAST_RUN-compiled function
    note: str = ""

    @property
    def input_nodes(self):
        return [n for n in self.nodes if isinstance(n, InputNode)]

    def to_json(self) -> str:
        data = {
            "format": FORMAT_VERSION,
            "note": self.note,
            "opset": self.opset,
            "export_function": self.export_function,
            "nodes": [n.to_json() for n in self.nodes],
            "outputs": list(self.outputs),
            "values": [fuzz_values.array_to_json(v) for v in self.values],
        }
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Case:
        data = json.loads(text)
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"unknown fuzz case format {data.get('format')!r}")
        nodes = []
        for node in data["nodes"]:
            if "input" in node:
                spec = node["input"]
                nodes.append(
                    InputNode(spec["dtype"], tuple(spec["shape"]), tuple(spec["static"]), spec.get("domain"), spec.get("value"))
                )
            else:
                nodes.append(StepNode(node["gen"], list(node["args"]), dict(node["params"])))
        return cls(
            opset=data["opset"],
            nodes=nodes,
            outputs=list(data["outputs"]),
            values=[fuzz_values.array_from_json(v) for v in data["values"]],
            export_function=data.get("export_function", False),
            note=data.get("note", ""),
        )

    def describe(self) -> str:
        """The program as readable lines (for failure messages)."""
        lines = [f"opset {self.opset}, outputs {self.outputs}, export_function={self.export_function}"]
        for k, node in enumerate(self.nodes):
            if isinstance(node, InputNode):
                extra = f", domain {node.domain}" if node.domain else ""
                lines.append(f"  v{k} = input {node.dtype}{list(node.shape)} static {list(node.static)}{extra}")
            else:
                args = ", ".join(f"v{a}" for a in node.args)
                lines.append(f"  v{k} = {node.gen}({args}) {node.params}")
        return "\n".join(lines)


class GraphState:
    """The graph being grown (or rebuilt): one ``Meta`` per node."""

    def __init__(self):
        self.metas: list[Meta] = []
        self.parents: list[list[int]] = []
        self.input_vars: list = []

    def add_input(self, node: InputNode) -> Meta:
        var = pt.tensor(f"x{len(self.input_vars)}", dtype=node.dtype, shape=tuple(node.static))
        self.input_vars.append(var)
        return self._add(var, tuple(node.shape), True, [])

    def apply(self, node: StepNode) -> Meta:
        gen = REGISTRY[node.gen]
        operands = [self.metas[i] for i in node.args]
        var = gen.build(node.params, *[m.var for m in operands])
        shape = tuple(int(s) for s in gen.shape(node.params, *[m.shape for m in operands]))
        if var.type.ndim != len(shape):
            raise AssertionError(f"fuzz generator {node.gen} computed shape {shape} for a rank-{var.type.ndim} result")
        return self._add(var, shape, gen.result_is_exact(node.params, operands), list(node.args),
                         gen.result_keeps_zero_signs(node.params, operands))

    def _add(self, var, shape, exact, parents, zero_signs=True) -> Meta:
        meta = Meta(len(self.metas), var, shape, exact, zero_signs)
        self.metas.append(meta)
        self.parents.append(parents)
        return meta

    def ancestors(self, index: int) -> set[int]:
        seen, todo = set(), [index]
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(self.parents[k])
        return seen


def build_graph(case: Case) -> GraphState:
    load_families()
    state = GraphState()
    for node in case.nodes:
        if isinstance(node, InputNode):
            state.add_input(node)
        else:
            state.apply(node)
    return state


class DrawContext:
    """What a generator's ``draw`` works with: the Hypothesis draw, the graph so
    far, the target opset, and the operands of the step being drawn."""

    def __init__(self, draw, opset: int):
        self.draw = draw
        self.opset = opset
        self.state = GraphState()
        self.nodes: list = []
        self.operands: list[int] = []

    @property
    def metas(self):
        return self.state.metas

    def pick(self, predicate, *, new_ok=True):
        """A variable of the graph satisfying ``predicate``, or None (always
        None when there is none; also None at times when ``new_ok``, so the
        generator makes a new input instead). The pick becomes an operand."""
        candidates = [m for m in self.metas if predicate(m)]
        if new_ok:
            candidates.append(None)
        if not candidates:
            return None
        meta = self.draw(st.sampled_from(candidates))
        if meta is not None:
            self.operands.append(meta.index)
        return meta

    def new_input(self, dtype, shape, static=None, *, domain=None, value=None) -> Meta:
        """A new graph input (an operand of the current step). ``static``:
        PyTensor's static shape; drawn when not given (size-1 dims static 1
        mostly, others static or unknown at random)."""
        shape = tuple(int(s) for s in shape)
        if static is None:
            static = self.draw_static(shape)
        node = InputNode(dtype, shape, tuple(static), domain, value)
        self.nodes.append(node)
        meta = self.state.add_input(node)
        self.operands.append(meta.index)
        return meta

    def draw_static(self, shape) -> tuple:
        return tuple(
            s if self.draw(st.booleans()) or (s == 1 and self.draw(st.booleans())) else None for s in shape
        )

    def apply(self, gen, primary) -> Meta:
        self.operands = [m.index for m in primary]
        params = gen.draw(self, *primary)
        node = StepNode(gen.name, list(self.operands), params)
        try:
            meta = self.state.apply(node)
        except (TypeError, ValueError, NotImplementedError) as exc:
            # PyTensor refused the expression (a dtype or shape the generator
            # did not foresee): drop the example; statistics show how often.
            event(f"rejected {gen.name}: {type(exc).__name__}: {str(exc)[:80]}")
            reject()
        self.nodes.append(node)
        return meta


DTYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8", "bool"]

#: Dtypes of fresh inputs: float64 and int64 most often, every dtype at times.
input_dtypes = st.one_of(st.sampled_from(["float64", "float64", "float32", "int64", "bool"]), st.sampled_from(DTYPES))


def shapes(min_dims=0, max_dims=3, max_side=4):
    """Concrete shapes; sizes 0 and 1 come often."""
    side = st.one_of(st.sampled_from([0, 1, 1, 2, 3]), st.integers(0, max_side))
    return st.lists(side, min_size=min_dims, max_size=max_dims).map(tuple)


def weighted(generators):
    """Generators repeated by weight, for ``st.sampled_from``."""
    pool = []
    for gen in generators:
        pool.extend([gen] * max(1, round(gen.weight * 2)))
    return pool


@st.composite
def cases(draw, opsets, families=None, max_steps=6, focus_weight=4):
    """A random ``Case``: ``families`` (names) get ``focus_weight`` times
    the weight of the others; ``None`` weighs all alike."""
    registry = load_families()
    gens = sorted(registry.values(), key=lambda g: g.name)
    pool = []
    for gen in gens:
        factor = focus_weight if families and gen.family in families else 1
        pool.extend(weighted([gen]) * factor)
    ctx = DrawContext(draw, draw(st.sampled_from(opsets)))
    for _ in range(draw(st.integers(1, 2))):
        ctx.operands = []
        ctx.new_input(draw(input_dtypes), draw(shapes()))
    for _ in range(draw(st.integers(1, max_steps))):
        feasible = [g for g in pool if g.source or any(g.accepts(m) for m in ctx.metas)]
        gen = draw(st.sampled_from(feasible))
        primary = []
        if not gen.source:
            last = ctx.metas[-1]
            if gen.accepts(last) and draw(st.booleans()):
                primary = [last]  # chain: deeper graphs
            else:
                primary = [draw(st.sampled_from([m for m in ctx.metas if gen.accepts(m)]))]
        ctx.apply(gen, primary)
    last = len(ctx.nodes) - 1
    others = [k for k in range(last) if draw(st.integers(0, 3)) == 0]
    outputs = [*others, last]
    case = Case(opset=ctx.opset, nodes=ctx.nodes, outputs=outputs, export_function=draw(st.integers(0, 3)) == 0)
    case.values = [draw(fuzz_values.values_for(node)) for node in case.input_nodes]
    return case
