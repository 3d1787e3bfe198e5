"""The ``ONNX`` Mode and the registration of linker ``"onnx"``."""

from pytensor.compile import optdb
from pytensor.compile.mode import Mode, predefined_linkers, predefined_modes, register_linker, register_mode
from pytensor.graph.rewriting.basic import dfs_rewriter
from pytensor.graph.rewriting.db import RewriteDatabaseQuery

from pytensor_onnx.compat import SCAN_SAVE_MEM_WITHOUT_PREALLOC
from pytensor_onnx import rewriting  # noqa: F401  (registers the "onnx" rewrites)
from pytensor_onnx.linker import ONNXLinker

#: PyTensor rewrites left out of the ONNX rewrite set: their cost is far
#: above their worth for an ONNX model (bench/conversion.py).
#: - The algebraic canonizers rebuild every Mul/Add/Neg they reach into a flat
#:   canonical form (neg(x) -> mul(-1, x) -> neg(x) round trips included),
#:   each application a full graph replacement: 85-90% of the rewrite time of
#:   deep element-wise chains (1,000 steps: 9.6 s with them, 1.2 s without).
#:   What they save at run time (x*2*3 -> x*6, x*y/y -> x) did not show on
#:   bench/backends.py's workloads (bench/results.md).
#: - The constant upcast only helps PyTensor merge (1 - x) with (1.0 - x);
#:   each application imports a new node, and importing a node copies the
#:   graph's whole variable set (PyTensor 3.3's toposort blockers): quadratic
#:   on deep chains. The builder casts mixed-dtype inputs itself, and ONNX
#:   Runtime folds a Cast of an initializer when it loads the model.
#: Same names in PyTensor 2.38 and 3.3.
EXPENSIVE_REWRITES = (
    "local_mul_canonizer",
    "local_add_canonizer",
    "local_neg_to_mul",
    "local_upcast_elemwise_constant_inputs",
)

#: Rewrites whose result is worse for ONNX: a batched matmul flattened into a
#: Dot by Reshape(x, (-1, k)). ONNX's MatMul broadcasts batch dims itself, and
#: that Reshape cannot infer its -1 for an empty x (NumPy and ONNX refuse;
#: PyTensor's C Reshape reads 0). And the folding of an Add's or Mul's
#: constant inputs in their own dtype, not the node's (float32 0.1 + 0.2 in a
#: float64 sum, int8 100 * 100 = 16): rewriting.local_onnx_fold_constant_operands
#: takes its place. Same names in PyTensor 2.38 and 3.3.
UNSUITABLE_REWRITES = ("local_batched_matmul_to_core_matmul_with_reshape", "constant_fold_branches_of_add_mul")

#: Rewrites the ONNX mode (and export) runs: PyTensor's fast_run set, minus
#: EXPENSIVE_REWRITES and the ones that introduce C-only, BLAS-only, in-place
#: or fused (Composite) ops (``ONNXLinker.incompatible_rewrites``).
ONNX_REWRITES = RewriteDatabaseQuery(include=["fast_run", "onnx"], exclude=[*EXPENSIVE_REWRITES, *UNSUITABLE_REWRITES])

# Scan buffers shrunk to what the graph reads, without the extra slot that
# preallocating backends write into (as for JAX and Numba): the Loop then
# carries only the values a recurrence reads (dispatch/scan.py). Same place
# as PyTensor's own scan-save-mem rewrite.
if "onnx_scan_save_mem" not in optdb:
    optdb.register(
        "onnx_scan_save_mem",
        dfs_rewriter(SCAN_SAVE_MEM_WITHOUT_PREALLOC, ignore_newtrees=True),
        "onnx",
        position=1.612,
    )

# Constants folded (DimShuffles of constants above all) before merge1 merges
# equal ones. Folded later, in canonicalize, a merged DimShuffle of a constant
# is replaced in each of its many clients, and PyTensor's ShapeFeature scans
# all the clients of the replaced variable on each such change: quadratic in
# graphs that reuse a constant (canonicalize of a 4,000-step chain: 6 s, of
# an 8,000-step one: 28 s). Here each constant still has its one client and
# ShapeFeature is not attached yet (ShapeOpt, position 0.1). The same
# rewrite as canonicalize's, run earlier; canonicalize still folds what later
# rewrites create. The same walk computes constant operands of a sum or
# product in its dtype, as PyTensor's canonizers do (rewriting.py).
if "onnx_fold_constants_early" not in optdb:
    optdb.register(
        "onnx_fold_constants_early",
        rewriting.early_constant_folding,
        "onnx",
        position=-0.005,
    )


def onnx_mode(opset_version=None, session_options=None, providers=None, optimize=True, kernels=None) -> Mode:
    """A Mode that runs functions on ONNX Runtime with the given settings.

    With ``optimize=False`` PyTensor's graph rewrites are skipped (only the
    minimal compile rewrites run), so the graph is converted as built.
    ``kernels=False`` runs the portable graph (standard ONNX only) instead of
    the kernel library's nodes (``ONNXLinker``).
    """
    if not isinstance(optimize, bool):
        raise TypeError(f"optimize must be a bool, got {type(optimize).__name__}")
    linker = ONNXLinker(
        opset_version=opset_version, session_options=session_options, providers=providers, kernels=kernels
    )
    return Mode(linker, ONNX_REWRITES if optimize else None)


ONNX = onnx_mode()
#: The rewrites and conversion of exported files: standard ONNX only (no
#: kernel-library nodes, so no element-wise fusion either).
PORTABLE_ONNX = onnx_mode(kernels=False)


def register():
    if "onnx" not in predefined_linkers:
        register_linker("onnx", ONNXLinker())
    if "ONNX" not in predefined_modes:
        register_mode("ONNX", ONNX)
