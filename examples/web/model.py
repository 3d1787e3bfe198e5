"""The example page's model: Bayesian linear regression on points the user places.

    python examples/web/model.py            # writes deploy/build/example/regression.onnx

exports the model's log-density and gradient (``pytensor_onnx.pymc.export_logp``,
one flat input vector ``point`` = [intercept, slope, log(sigma)]) with the data
as an input (``xy``, one row per point), so the page (``app.js``) can evaluate
the posterior over (intercept, slope) in the browser every time the user moves
the points or the noise level; and the map to the constrained scale
(``export_deterministics``: sigma = exp(log(sigma))), so the page's NUTS sampler
(``deploy/nuts``) returns draws of sigma itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

#: Where the page expects the model (served under /models/).
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "deploy" / "build" / "example"


def initial_data() -> np.ndarray:
    """The points the page starts with: x in [-1, 1], y = 0.5 + 1.2 x + noise."""
    rng = np.random.default_rng(2024)
    x = rng.uniform(-0.9, 0.9, size=8)
    y = 0.5 + 1.2 * x + rng.normal(0, 0.3, size=8)
    return np.stack([x, y], axis=1)


def build():
    import pymc as pm

    with pm.Model() as model:
        xy = pm.Data("xy", initial_data())
        intercept = pm.Normal("intercept", 0.0, 2.0)
        slope = pm.Normal("slope", 0.0, 2.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", intercept + slope * xy[:, 0], sigma, observed=xy[:, 1])
    return model


def export(out: Path = DEFAULT_OUT) -> Path:
    from pytensor_onnx.pymc import export_deterministics, export_logp

    out.mkdir(parents=True, exist_ok=True)
    path = out / "regression.onnx"
    model = build()
    export_logp(model, path, flat=True, data_inputs=["xy"], model_name="regression_logp")
    export_deterministics(model, out / "regression.det.onnx", flat=True, model_name="regression_constrained")
    (out / "data.json").write_text(json.dumps(initial_data().tolist()))  # the page's first points
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    print(f"wrote {export(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
