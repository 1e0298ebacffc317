"""Which context points the shipped fit reads as outliers, curve by curve (issue 35).

Run from the repository root::

    python benchmarks/results/colpret_whiten_2026-12-05/outliers.py 7     # outliers_r7.txt

``SUBSET`` as in ``common.py``; the shipped ``curve_bend`` (seed 1), each curve's context
thinned to 24 points, no target row read.  Per curve: its points, the posterior median of
its noise scale, and the standardized residuals ``(loss - law) / sigma`` (the law's
posterior median at each point, ``bayeslaw.predict(kind="epistemic")``): how many exceed 5
and 20 in size, the largest, and where along the curve it lies (its point's rank in D, 1 =
the first).  Under a normal noise of that scale a residual above 5 has probability 6e-7.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
sys.path.insert(0, str(Path(__file__).resolve().parent))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402

args, ctx, keep = common.subset(sys.argv[1])
fit = bp.fit_context(ctx, bp.bench_spec("curve_bend"), args)
print(fit.diagnostics)
rows = bp.one_row_per_point(ctx)[["run", "D", "loss"]].reset_index(drop=True)
law = bp.bl.predict(fit, rows[["run", "D"]], kind="epistemic").table["median"].to_numpy()
sigma = fit.idata.posterior["sigma_run"].median(("chain", "draw")).to_series()
print("nu median", round(float(fit.idata.posterior["nu"].median()), 2))
print(f"{'curve':45s} {'n':>3s} {'sigma':>9s} {'|z|>5':>6s} {'|z|>20':>6s} {'max |z|':>8s} "
      "at rank")
for run, part in rows.assign(law=law).groupby("run", sort=True):
    part = part.sort_values("D")
    z = (part["loss"].to_numpy() - part["law"].to_numpy()) / sigma[run]
    worst = int(np.argmax(np.abs(z)))
    print(f"{run.split('|')[-1]:45s} {len(z):3d} {sigma[run]:9.5f} {np.sum(np.abs(z) > 5):6d} "
          f"{np.sum(np.abs(z) > 20):6d} {abs(z[worst]):8.1f} {worst + 1:3d} of {len(z)}")
