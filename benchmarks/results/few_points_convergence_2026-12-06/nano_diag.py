import sys, time, warnings
sys.path.insert(0, "benchmarks")
import numpy as np, bayeslaw as bl
import bench_peers as bp
from pathlib import Path
args = bp.parse_args(["--datasets", sys.argv[1] if len(sys.argv) > 1 else "Nano", "--mode", "pooled"])
name = args.names[0]
frame = bp.prepared(Path(args.data), name, args)
ctx = frame[frame["role"] == "context"]
print(ctx.groupby("run").size().describe())
spec = bp.bench_spec(args.spec or "curve_bend")
t = time.time()
fit = bp.fit_context(ctx, spec, args)
print("seconds", time.time() - t)
print(fit.diagnostics)
import arviz as az
s = az.summary(fit.idata, kind="diagnostics")
print(s.sort_values("r_hat", ascending=False).head(15))
fit.save("/work/s62/nano_fit.nc")
