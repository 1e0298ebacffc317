"""Every shipped spec's logp and gradient at its initial point on its synthetic test table,
compiled with JAX and with PyTensor's C backend: JAX's seconds and the relative differences.

    python benchmarks/results/suite_jax_density_2026-12-04/jax_against_c.py [SPEC ...]

A spec JAX cannot compile prints its traceback and is skipped (the walk noise's gradient).
"""

import sys
import time
import traceback
import warnings
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bayeslaw.model.graph import LossModel  # noqa: E402
from bayeslaw.model.plan import make_plan  # noqa: E402
from bayeslaw.spec.catalog import load_spec  # noqa: E402
from tests.laws.test_laws_more import NEW_SPECS, synthetic  # noqa: E402

warnings.simplefilter("ignore")
jax.config.update("jax_enable_x64", True)
total = 0.0
for name in sys.argv[1:] or NEW_SPECS:
    model = LossModel(make_plan(load_spec(name), synthetic(name))).model
    point = model.initial_point()
    start = time.perf_counter()
    try:
        logp = float(model.compile_logp(mode="JAX")(point))
        grad = np.asarray(model.compile_dlogp(mode="JAX")(point))
    except Exception:  # noqa: BLE001 - reported, and the next spec goes on
        traceback.print_exc()
        continue
    seconds = time.perf_counter() - start
    total += seconds
    logp_c = float(model.compile_logp()(point))
    grad_c = np.asarray(model.compile_dlogp()(point))
    grad_rel = np.max(np.abs(grad - grad_c)) / max(1.0, np.max(np.abs(grad_c)))
    print(f"{name:28s} jax {seconds:5.1f} s  logp rel {abs(logp - logp_c) / abs(logp_c):.1e}"
          f"  grad rel {grad_rel:.1e}", flush=True)
print(f"JAX compile and first call, all specs: {total:.1f} s")
