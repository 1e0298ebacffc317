"""Seven of ColPret's curves (context thinned to 24, no target row read) sampled alone under the
curve_bend spec with the level's spread fixed at 0.5 and one noise scale (scratch values, not
estimated), with nutpie's diagonal mass matrix and with its low-rank one (dense for a curve's
five coordinates): leapfrog steps a draw, R-hat, divergences.

    python benchmarks/results/by_curve_2026-12-07/probe_metric.py
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_peers as bp  # noqa: E402
import numpy as np  # noqa: E402

import bayeslaw as bl  # noqa: E402

frame = bp.prepared(ROOT.parent / "shared" / "data" / "nslpfn_bench", "ColPret",
                    argparse.Namespace(selection=False, max_context=24))
ctx = frame[frame["role"] == "context"]
d = bp.bench_spec("curve_bend").to_dict()
for e in d["effects"]:
    if e["param"] == "m":
        e["pooling"], e["scale"] = "none", 0.5
        e.pop("centered", None)
d["likelihood"]["sigma_by"] = "none"
for key in ("sigma_spread", "sigma_centered", "sigma_min_points"):
    d["likelihood"].pop(key, None)
pick = np.random.default_rng(0).choice(sorted(ctx["run"].unique()), 7, replace=False)
for low_rank in (False, True):
    d["sampler"]["low_rank"] = low_rank
    spec = bl.ModelSpec.from_dict(d)
    for r in pick:
        rows = ctx[ctx["run"] == r].assign(run="curve")
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = bl.fit(bl.load(bp.one_row_per_point(rows)), spec, seed=1, progress=False)
        steps = float(fit.idata.sample_stats["n_steps"].mean())
        print(f"{'dense' if low_rank else 'diagonal':8s} {r[:32]:32s}"
              f" {time.perf_counter() - t:5.1f} s  R-hat {fit.diagnostics.max_rhat:.3f}"
              f"  div {fit.diagnostics.divergences}  steps/draw {steps:.0f}", flush=True)
