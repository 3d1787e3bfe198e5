"""The differential fuzzer: random PyTensor graphs from a registry of op
generators (``fuzz.registry``, families in ``fuzz.families``), run on ONNX
Runtime and against PyTensor's pure-Python reference (``fuzz.check``).
docs/testing.md describes how to run it and how failures become regression
cases (``tests/python/fuzz_cases/``)."""
