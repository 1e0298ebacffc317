"""ColPret's context fitted pooled with short chains: seconds, diagnostics and the diagnosis.

Run from the repository root::

    python benchmarks/results/colpret_noise_scale_2026-12-06/quick.py SUBSET [OVERRIDES]

``SUBSET``: ``all``, ``worst`` or a numpy seed drawing 24 curves
(``../colpret_whiten_2026-12-05/common.py``: each curve's context only, thinned to 24 points,
no target row read).  ``OVERRIDES``: JSON of ``"section.key": value`` merged over the shipped
``curve_bend`` (reference at D = 1, as ``bench_peers.py`` fits it); ``null`` drops the key.
With ``SPEC=path.toml`` the spec is that file merged over ``curve_bend`` (as ``bench_peers.py
--spec`` does) before the overrides; with ``SAVE=path.nc`` the fit is saved there.
Seed 1, 2 chains x (300 tuning + 200 draws): a look at the geometry (leapfrog steps, step
size, the diagnosis's worst elements and correlations), not a converged posterior.
"""

import json
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

which = sys.argv[1]
overrides = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
args, ctx, keep = common.subset(which)
d = bp.bench_spec(os.environ.get("SPEC", "curve_bend")).to_dict()
for k, v in overrides.items():
    section, _, key = k.partition(".")
    if v is None:
        d[section].pop(key, None)
    else:
        d[section][key] = v
spec = bl.ModelSpec.from_dict(d)
start = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore", bl.ConvergenceWarning)
    fit = bl.fit(bl.load(bp.one_row_per_point(ctx)), spec, seed=1, draws=200, tune=300,
                 chains=2, progress=False)
print(f"{which} {overrides}: curves {len(keep)}, fitted points {len(fit.data.frame)}, "
      f"seconds {time.perf_counter() - start:.1f}")
print(fit.diagnostics)
print(fit.diagnostics.diagnosis)
stats = fit.idata.sample_stats
print("step size", np.round(stats.step_size.values.mean(axis=1), 4).tolist(),
      "leapfrog steps", stats.n_steps.values.mean(axis=1).tolist())
for name in ("nu", "sigma", "sigma_spread"):
    if name in fit.idata.posterior:
        print(name, "median", round(float(fit.idata.posterior[name].median()), 4))
if os.environ.get("SAVE"):
    fit.save(os.environ["SAVE"])
