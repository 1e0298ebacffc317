"""Each logp reference entry's log density + gradient: JAX (tests/density.py at d2ca627)
against PyTensor's Python linker (tests/density.py now), seconds and agreement.

    python benchmarks/results/suite_pydensity_2026-12-05/per_model.py > per_model.txt

Per entry and backend: seconds to build the graph, compile it and evaluate it once at the
stored point (the first evaluation includes XLA's compile under JAX), and the differences
from the stored reference: logp relative, gradient's largest difference over its largest
entry (the reference test's tolerance is rtol 1e-9 on both).  Runs from the repository root.
"""

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import bayeslaw as bl  # noqa: E402
from bayeslaw.model.graph import LossModel  # noqa: E402
from bayeslaw.model.plan import make_plan  # noqa: E402
from bayeslaw.spec.model_spec import ModelSpec  # noqa: E402
from tests.density import compile_logp_dlogp  # noqa: E402

REFERENCE = json.loads(Path("tests/fixtures/logp_reference.json").read_text())


def jax_logp_dlogp(model):
    """d2ca627's tests/density.py for a graph JAX can trace: the same graph, mode="JAX"."""
    import jax
    from pymc.pytensorf import gradient, rewrite_pregrad

    jax.config.update("jax_enable_x64", True)
    logp = model.logp()
    grad = gradient(rewrite_pregrad(logp), model.continuous_value_vars)
    function = model.compile_fn(inputs=model.value_vars, outs=[logp, grad],
                                on_unused_input="ignore", mode="JAX")
    return lambda point: tuple(np.asarray(out) for out in function(point))


def one(entry, backend):
    ref = REFERENCE[entry]
    t0 = time.perf_counter()
    model = LossModel(make_plan(ModelSpec.from_dict(ref["spec"]),
                                bl.load(pd.DataFrame(ref["data"])))).model
    point = {k: np.asarray(v, float) for k, v in ref["point"].items()}
    t1 = time.perf_counter()
    if backend == "jax" and "walk" in {v.name for v in model.free_RVs}:
        return f"{entry:24s} {backend:6s} (JAX cannot trace the walk's gradient: C backend then)"
    f = jax_logp_dlogp(model) if backend == "jax" else compile_logp_dlogp(model)
    t2 = time.perf_counter()
    logp, grad = f(point)
    t3 = time.perf_counter()
    flat = np.concatenate([np.ravel(ref["grad"][v.name]) for v in model.value_vars])
    return (f"{entry:24s} {backend:6s} build {t1 - t0:5.2f} s  compile {t2 - t1:5.2f} s  "
            f"evaluate {t3 - t2:5.2f} s  total {t3 - t0:5.2f} s  "
            f"logp rel {abs(logp - ref['logp']) / abs(ref['logp']):.1e}  "
            f"grad {np.max(np.abs(grad - flat)) / max(1.0, np.max(np.abs(flat))):.1e}")


def main():
    warnings.simplefilter("ignore")
    for entry in sorted(REFERENCE):
        for backend in ("jax", "python"):
            print(one(entry, backend), flush=True)


if __name__ == "__main__":
    main()
