"""A subset of ColPret's context fitted pooled with the shipped ``curve_bend`` (issue 35 / 37).

Run from the repository root::

    python benchmarks/results/colpret_geometry_2026-12-05/subset.py worst|SEED [FIT_SEED] [SAVE.nc]

``worst``: the four curves with the worst R-hat in ``colpret_values_diag_seed1.txt``
(``pythia-70m``, ``pythia-2.8b-deduped``, ``GPT-3 Large``, ``pythia-1b-v0``); an integer: 24
curves drawn with that numpy seed.  Each curve's whole context, thinned to 24 points
(``bench_peers.py --max-context 24``, as the target runs fit it); no target row is read.
Prints the fit's diagnostics, the step size and leapfrog steps per chain, the worst R-hat
elements by curve and the curves with the smallest noise scale.  With
``BAYESLAW_SHEAR=1`` and ``shear_hack.patch`` applied, ``beta``'s and ``q``'s by-curve
deviations are sampled offset by ``log f`` of the curve (the shear of a783886).
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
import arviz as az  # noqa: E402
import bench_peers as bp  # noqa: E402

which = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
args = bp.parse_args(["--datasets", "ColPret", "--seed", str(seed), "--max-context", "24"])
spec = bp.bench_spec("curve_bend")
frame = bp.prepared(bp.DATA, "ColPret", args)
runs = sorted(frame.run.unique())
WORST = ("pythia-70m", "pythia-2.8b-deduped", "GPT-3 Large", "pythia-1b-v0")
if which == "worst":
    keep = [r for r in runs if r.split("|")[-1] in WORST]
else:
    keep = list(np.random.default_rng(int(which)).choice(runs, 24, replace=False))
ctx = frame[(frame.role == "context") & frame.run.isin(keep)]
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"fit seconds {time.perf_counter() - t0:.1f}; curves {len(keep)}")
print(fit.diagnostics)
stats = fit.idata.sample_stats
for k in ("step_size", "n_steps"):
    print(k, np.round(stats[k].values.astype(float).mean(axis=1), 4).tolist())
post = fit.idata.posterior
rows = []
for v in post.data_vars:
    if post[v].ndim == 3 and "run" in post[v].dims[-1]:
        rhat, ess = az.rhat(post[[v]])[v].values, az.ess(post[[v]])[v].values
        for i, lab in enumerate(str(x) for x in post[v][post[v].dims[-1]].values):
            rows.append((float(rhat[i]), float(ess[i]), v, lab))
for row in sorted(rows, reverse=True)[:12]:
    print(f"  {row[0]:.3f} {row[1]:6.0f} {row[2]:22s} {row[3]}")
sigma = post["sigma_run"].median(("chain", "draw")).to_series().sort_values()
print("smallest sigma_run:", sigma.head(6).round(5).to_dict())
if len(sys.argv) > 3:
    fit.idata.to_netcdf(sys.argv[3])
