"""RandomVariable Ops -> a counter-based generator built from standard ONNX ops.

Why not ONNX's ``RandomUniform``/``RandomNormal``: their only seed is a static
attribute and ONNX Runtime's kernels keep a private engine that advances on
every run (docs/semantics.md, "Random variables"). A PyTensor random graph is *functional*: an
RV node maps an RNG state to draws and a next state, and the function
reproduces its draws when the shared RNG is re-seeded. A stateful kernel
can do neither without rebuilding the session.

So an RNG variable is, in ONNX, a ``uint64[2]`` tensor ``[seed, counter]``
and every RV node is a pure function of it: word ``i`` of a node is the
"Squares" counter-based generator (B. Widynski, "Squares: A Fast
Counter-Based RNG", 2020, arXiv:2004.06278; four rounds, 32-bit output,
passes BigCrush) at counter ``counter + i`` with a key derived from
``seed``; the node's next state is ``[seed, counter + words used]``. Squares
needs only uint64 multiply, add and shifts (its 32-bit rotation is a sum of
two shifts), which ONNX Runtime has at opset 13. Each float is built from
two words (53 random bits), then transformed (inversion, Box-Muller) in
float64 and cast to the RV's dtype.

How a NumPy ``Generator`` becomes a state and back, for mode ONNX and
export, is in ``state.rng_state`` / ``state.state_generator`` (see
docs/semantics.md); the generator's ONNX form in ``stream``; the rules, by
kind of distribution, in ``continuous``, ``discrete`` and ``multivariate``.
Distributions without a rule here fall to ``onnx_funcify``'s default:
NotImplementedError naming the Op and node.
"""

from pytensor_onnx.dispatch.random import (  # noqa: F401  (registration)
    continuous,
    discrete,
    multivariate,
    state,
    stream,
)
