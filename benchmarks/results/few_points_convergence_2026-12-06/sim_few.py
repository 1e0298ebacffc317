"""Nano-like simulated curves: 24 curves, 6 points at D = 2^-5..1, shapes from curve_bend's
prior, Student-t noise with a per-curve scale; fitted with curve_bend (reference D = 1) or an
override TOML; prints the diagnostics.  Run from the repository root:

    python benchmarks/results/few_points_convergence_2026-12-06/sim_few.py SEED [OVERRIDE|-] [TUNE]
"""
import sys
import time
import warnings

sys.path.insert(0, "benchmarks")
import bench_peers as bp  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import bayeslaw as bl  # noqa: E402

seed = int(sys.argv[1])
over = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
tune = int(sys.argv[3]) if len(sys.argv) > 3 else None
n_pts = int(sys.argv[4]) if len(sys.argv) > 4 else 6
rng = np.random.default_rng(seed)
rows = []
D = 2.0 ** np.arange(-(n_pts - 1), 1)
for r in range(24):
    f = 1 / (1 + np.exp(-rng.normal(0, 1.1)))
    beta = np.exp(rng.normal(np.log(.4), .7))
    q = 1 / (1 + np.exp(-rng.normal(1.46, 1.4)))
    m = np.exp(rng.normal(np.log(.8), .2))
    sig = 0.004 * np.exp(rng.normal(0, .8))
    mu = m * ((1 - f) + f / ((1 - q) + q * D ** (beta / q)))
    y = mu * (1 + sig * rng.standard_t(10, size=D.size))
    rows += [dict(run=f"c{r}", D=d, loss=v) for d, v in zip(D, y, strict=True)]
spec = bp.bench_spec(over or "curve_bend")
t = time.time()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bl.ConvergenceWarning)
    fit = bl.fit(bl.load(pd.DataFrame(rows)), spec, seed=1, progress=False,
                 **({"tune": tune} if tune else {}))
print(f"seed {seed} over {over} tune {tune} pts {n_pts}: {time.time() - t:.0f} s | "
      f"{fit.diagnostics}", flush=True)
