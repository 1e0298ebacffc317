"""DD's curve dd-translation-samples-aug26-small (selection context) alone, given the shared values
dd_shared.py's by_curve fit found (rounded), under four settings and two seeds each.

    python benchmarks/results/by_curve_2026-12-07/one_dd_curve.py
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
from bayeslaw.inference import by_curve as bc  # noqa: E402

frame = bp.prepared(ROOT.parent / "shared" / "data" / "nslpfn_bench", "DD",
                    argparse.Namespace(selection=True, max_context=None))
ctx = frame[frame["role"] == "context"]
ctx = ctx[ctx["run"].str.contains("samples-aug26-small")].assign(run="curve")
spec = bp.bench_spec("curve_bend")
shared = {"effects": {"m": (np.log(1.0), 0.3)}, "sigma": (np.log(0.031), 0.71), "nu": 10.7}
cs = bc.curve_spec(spec, shared)
for lr, tune, ta in [(True, 1000, 0.9), (True, 2000, 0.9), (False, 1000, 0.9), (True, 1000, 0.99)]:
    for seed in (1, 2):
        d = cs.to_dict()
        d["sampler"]["low_rank"], d["sampler"]["target_accept"] = lr, ta
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            fit = bl.fit(bl.load(bp.one_row_per_point(ctx)), bl.ModelSpec.from_dict(d),
                         seed=seed, tune=tune, progress=False)
        st = fit.idata.sample_stats
        print("dense" if lr else "diagonal", "tune", tune, "target_accept", ta, "seed", seed,
              f"{time.perf_counter() - t:.1f} s  R-hat {fit.diagnostics.max_rhat:.3f}"
              f"  div {fit.diagnostics.divergences}  steps {float(st['n_steps'].mean()):.0f}  q",
              np.round(np.quantile(fit.idata.posterior["q_run"].values, [0.05, 0.5, 0.95]), 3))
