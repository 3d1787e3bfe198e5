"""Deploy a PyTensor MLP classifier as a standalone ONNX model.

The bundled example (``make example`` / ``python examples/mlp_classifier.py``):

1. builds a small MLP classifier in PyTensor (two ReLU hidden layers, softmax
   output) whose weights are shared variables drawn from a fixed NumPy seed;
2. exports it with ``pytensor_onnx.export_onnx`` to ``examples/mlp_classifier.onnx``
   with the weights baked in as initializers;
3. loads that file with ONNX Runtime alone (no PyTensor involved) and checks
   its predictions against PyTensor's own on a batch;
4. runs the same graph with ``mode="ONNX"``;
5. prints parity, model size and per-batch timings of ONNX Runtime vs
   PyTensor's default mode.

Exits with status 1 if any result disagrees with PyTensor's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

N_FEATURES = 32
HIDDEN = (64, 64)
N_CLASSES = 10
SEED = 1234
DTYPE = "float32"
#: float32 probabilities from the same weights, computed by different kernels
ATOL = 1e-5

DEFAULT_OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mlp_classifier.onnx")


def init_weights(seed: int = SEED) -> list[tuple[np.ndarray, np.ndarray]]:
    """(W, b) per layer, Glorot-uniform weights and small biases from a fixed seed."""
    rng = np.random.default_rng(seed)
    sizes = (N_FEATURES, *HIDDEN, N_CLASSES)
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (n_in + n_out))
        W = rng.uniform(-limit, limit, size=(n_in, n_out)).astype(DTYPE)
        b = rng.normal(0.0, 0.1, size=n_out).astype(DTYPE)
        layers.append((W, b))
    return layers


def build_classifier(seed: int = SEED):
    """The symbolic MLP: returns ``(x, probabilities, shared weights)``.

    ``x`` is a ``(batch, N_FEATURES)`` matrix with an unknown batch size, so
    the exported model accepts any batch.
    """
    import pytensor
    import pytensor.tensor as pt

    x = pt.tensor("x", shape=(None, N_FEATURES), dtype=DTYPE)
    params = []
    h = x
    layers = init_weights(seed)
    for i, (W_value, b_value) in enumerate(layers):
        W = pytensor.shared(W_value, name=f"W{i}")
        b = pytensor.shared(b_value, name=f"b{i}")
        params += [W, b]
        h = pt.dot(h, W) + b
        if i < len(layers) - 1:
            h = pt.maximum(h, 0)  # ReLU
    probabilities = pt.special.softmax(h, axis=-1)
    probabilities.name = "probabilities"
    return x, probabilities, params


def make_batch(batch_size: int, seed: int = SEED + 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(batch_size, N_FEATURES)).astype(DTYPE)


def predict_with_onnxruntime(path: str, batch: np.ndarray) -> tuple[np.ndarray, object]:
    """What a deployment does: ONNX Runtime and NumPy only."""
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    input_name = session.get_inputs()[0].name
    (probabilities,) = session.run(None, {input_name: batch})
    return probabilities, session


def time_per_call(call, repeat: int) -> float:
    """Median wall time of ``call()`` over ``repeat`` runs, after one warm-up run."""
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def parity(name: str, got: np.ndarray, want: np.ndarray) -> tuple[bool, str]:
    """Max abs difference and argmax agreement of ``got`` against PyTensor's ``want``.

    An argmax may legitimately differ only where PyTensor's two most likely
    classes are within ATOL of each other.
    """
    max_diff = float(np.max(np.abs(got - want))) if got.size else 0.0
    agree = got.argmax(axis=1) == want.argmax(axis=1)
    top2 = np.sort(want, axis=1)[:, -2:]
    near_tie = (top2[:, 1] - top2[:, 0]) <= ATOL
    ok = got.shape == want.shape and got.dtype == want.dtype and max_diff <= ATOL and bool(np.all(agree | near_tie))
    line = (
        f"  {name:<28} max |diff| {max_diff:.2e}  argmax agreement {agree.sum()}/{agree.size}"
        f"  {'OK' if ok else 'MISMATCH'}"
    )
    return ok, line


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="where to write the .onnx file")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per backend")
    args = parser.parse_args(argv)

    import onnx
    import pytensor

    import pytensor_onnx

    x, probabilities, params = build_classifier()
    batch = make_batch(args.batch_size)

    # PyTensor's own result, in its default mode (the reference and the baseline timing).
    reference_fn = pytensor.function([x], probabilities)
    expected = reference_fn(batch)

    # Export: the weights' current values become initializers.
    model = pytensor_onnx.export_onnx(
        [x], [probabilities], filename=args.output, model_name="mlp_classifier",
        doc_string="MLP classifier exported by examples/mlp_classifier.py",
    )
    onnx.checker.check_model(model, full_check=True)

    # Deployment side: the file and ONNX Runtime, nothing else.
    from_file, session = predict_with_onnxruntime(args.output, batch)

    # Execution mode: the same graph as a PyTensor function running on ONNX Runtime.
    onnx_fn = pytensor.function([x], probabilities, mode="ONNX")
    from_mode = onnx_fn(batch)

    ok_file, line_file = parity("ONNX Runtime (exported file)", from_file, expected)
    ok_mode, line_mode = parity('mode="ONNX"', from_mode, expected)

    input_name = session.get_inputs()[0].name
    t_ort = time_per_call(lambda: session.run(None, {input_name: batch}), args.repeat)
    t_onnx_mode = time_per_call(lambda: onnx_fn(batch), args.repeat)
    t_pytensor = time_per_call(lambda: reference_fn(batch), args.repeat)

    n_params = sum(p.get_value(borrow=True).size for p in params)
    node_types = sorted({node.op_type for node in model.graph.node})
    default_linker = type(reference_fn.maker.linker).__name__
    print(f"MLP classifier {N_FEATURES}-{'-'.join(map(str, HIDDEN))}-{N_CLASSES} ({DTYPE}, seed {SEED})")
    print(f"model: {args.output}")
    print(f"  {os.path.getsize(args.output)} bytes, opset {model.opset_import[0].version}, "
          f"{len(model.graph.node)} nodes ({', '.join(node_types)}), "
          f"{len(model.graph.initializer)} initializers holding the {n_params} parameters")
    print(f"parity on a batch of {args.batch_size} (tolerance {ATOL:g}):")
    print(line_file)
    print(line_mode)
    print(f"time per batch (median of {args.repeat}):")
    timings = [
        ("ONNX Runtime session.run", t_ort),
        ('PyTensor mode="ONNX"', t_onnx_mode),
        (f"PyTensor default mode ({default_linker})", t_pytensor),
    ]
    for label, seconds in timings:
        print(f"  {label:<40} {seconds * 1e6:9.1f} us  ({seconds / t_pytensor:.2f}x PyTensor default)")
    if not (ok_file and ok_mode):
        print("FAILED: ONNX results differ from PyTensor's", file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
