"""ColPret's context (a subset) fitted pooled with a given spec: diagnostics and noise medians.

Run from the repository root::

    python benchmarks/results/colpret_outliers_2026-12-06/probe.py SPEC SUBSET

``SPEC``: a shipped spec's name or a TOML path (its reference set to ``D = 1``, as
``bench_peers.py --spec`` does).  ``SUBSET`` as in ``../colpret_whiten_2026-12-05/whiten.py``
(``worst``, a numpy seed drawing 24 curves, or ``all``); each curve's context only, thinned to
24 points, no target row read.  Prints the fit's seconds, diagnostics, step sizes and leapfrog
steps, the posterior medians of the noise's own parameters and, for a contaminated-normal fit,
the points whose posterior probability of being an outlier is above 0.5
(:func:`bayeslaw.outlier_probability`).  With ``MIN_PORTION=F`` each curve's context below
``F`` of its last context x is left out (``bench_peers.early_cut``, as ``--min-portion``).
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/
sys.path.insert(0, str(HERE.parent / "colpret_whiten_2026-12-05"))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402

spec_name, which = sys.argv[1], sys.argv[2]
args, ctx, keep = common.subset(which)
if os.environ.get("MIN_PORTION"):
    ctx = bp.early_cut(ctx, float(os.environ["MIN_PORTION"]))
    print(f"context points left: {len(ctx)} (MIN_PORTION={os.environ['MIN_PORTION']})")
spec = bp.bench_spec(spec_name)
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"spec {spec_name}; curves {len(keep)}; fit seconds {time.perf_counter() - t0:.1f}")
common.print_sampler(fit)
for name in ("nu", "outlier_share", "outlier_scale", "sigma", "sigma_spread"):
    if name in fit.idata.posterior:
        print(name, "median", round(float(fit.idata.posterior[name].median()), 4))
if spec.likelihood.family == "contaminated":
    table = bp.bl.outlier_probability(fit)
    table["first"] = table["D"] == table.groupby("run")["D"].transform("min")
    top = table[table["p_outlier"] > 0.5]
    print(f"points with p_outlier > 0.5: {len(top)} of {len(table)} on "
          f"{top['run'].nunique()} curves; first context point of its curve: "
          f"{int(top['first'].sum())}")
    print(top.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("curves by their largest p_outlier:",
          np.round(np.sort(table.groupby("run")["p_outlier"].max().to_numpy())[::-1], 3).tolist())
