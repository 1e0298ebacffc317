"""ColPret's whole context fitted with the spec's own sampler (4 x (1,000 + 1,000)).

Run from the repository root (``SPEC``: a TOML merged over ``curve_bend``, as
``bench_peers.py --spec`` does; default the shipped spec)::

    SPEC=... python benchmarks/results/colpret_noise_scale_2026-12-06/full_length.py

Each curve's context thinned to 24 points (``../colpret_whiten_2026-12-05/common.py``), no
target row read, seed 1; prints the seconds, diagnostics, diagnosis, step sizes, leapfrog
steps and nu's median.
"""

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/
sys.path.insert(0, str(HERE.parent / "colpret_whiten_2026-12-05"))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402

import bayeslaw as bl  # noqa: E402

args, ctx, keep = common.subset("all")
spec = bp.bench_spec(os.environ.get("SPEC", "curve_bend"))
start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bl.ConvergenceWarning)
    fit = bl.fit(bl.load(bp.one_row_per_point(ctx)), spec, seed=1, progress=False)
print(f"spec's own sampler (4 x 1,000 + 1,000); seconds {time.perf_counter() - start:.1f}")
print(fit.diagnostics)
print(fit.diagnostics.diagnosis)
stats = fit.idata.sample_stats
print("step size", np.round(stats.step_size.values.mean(axis=1), 4).tolist(),
      "leapfrog steps", np.round(stats.n_steps.values.mean(axis=1), 1).tolist())
print("nu median", round(float(fit.idata.posterior["nu"].median()), 3))
