"""The shipped curve_bend fitted to one peer data set's context (default Nano), as
``bench_peers.py --mode pooled`` fits it, with its diagnostics and the 15 worst R-hats.  No
target row is read.  Run from the repository root:

    python benchmarks/results/few_points_convergence_2026-12-06/nano_diag.py [DATASET]
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, "benchmarks")
import arviz as az  # noqa: E402
import bench_peers as bp  # noqa: E402

name = sys.argv[1] if len(sys.argv) > 1 else "Nano"
args = bp.parse_args(["--datasets", name, "--mode", "pooled"])
frame = bp.prepared(Path(args.data), args.names[0], args)
ctx = frame[frame["role"] == "context"]
print(ctx.groupby("run").size().describe())
t = time.time()
fit = bp.fit_context(ctx, bp.bench_spec(args.spec or "curve_bend"), args)
print("seconds", time.time() - t)
print(fit.diagnostics)
summary = az.summary(fit.idata, kind="diagnostics")
print(summary.sort_values("r_hat", ascending=False).head(15))
