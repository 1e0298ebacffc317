"""DD's selection context fitted once (the scored fit of ``bench_peers.py --selection --datasets
DD``, seed 1) with a spec: diagnostics, the worst R-hat's variables, the leapfrog steps, and
for the three curves whose ``q_by_run_mid`` mixes worst its quantiles, chain medians and its
values at divergent draws.

Run from the repository root: ``python benchmarks/results/window_coords_2026-12-07/dd_diag.py
SPEC`` (a TOML path or shipped name; its reference set to D = 1 as the benchmark does).
"""

import sys
import warnings
from pathlib import Path

import arviz as az
import numpy as np

sys.path.insert(0, "benchmarks")
import bench_peers as bp  # noqa: E402

import bayeslaw as bl  # noqa: E402

args = bp.parse_args(["--selection", "--datasets", "DD", "--mode", "pooled"])
frame = bp.prepared(Path("../shared/data/nslpfn_bench"), "DD", args)
context = frame[frame["role"] == "context"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(bl.load(bp.one_row_per_point(context)), bp.bench_spec(sys.argv[1]), seed=1,
                 progress=False)
print(fit.diagnostics)
post, stats = fit.idata.posterior, fit.idata.sample_stats
rhat = az.rhat(post)
print("worst R-hat:", sorted(((round(float(np.nanmax(rhat[v].values)), 4), v)
                              for v in rhat.data_vars), reverse=True)[:6])
print("leapfrog steps a draw by chain", np.round(stats["n_steps"].values.mean(axis=1), 1))
if "q_by_run_mid" in post:
    r = rhat["q_by_run_mid"].values
    runs = post["q_by_run_mid"].coords["run"].values
    diverging = stats["diverging"].values
    for j in np.argsort(r)[-3:]:
        x = post["q_by_run_mid"].values[..., j]
        print(f"{runs[j]}: R-hat {r[j]:.4f}; logit q at the window 5/50/95%",
              np.round(np.quantile(x, [0.05, 0.5, 0.95]), 2), "chain medians",
              np.round(np.median(x, axis=1), 2), "at divergences", np.round(x[diverging][:8], 2))
