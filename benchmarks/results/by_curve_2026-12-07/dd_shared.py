"""DD's selection context (its first half a curve) fitted by METHOD (nuts or by_curve): the shared
values, the diagnostics, the three worst R-hats of each curve variable and its curve, the
noise's and nu's draws.

    python benchmarks/results/by_curve_2026-12-07/dd_shared.py DD by_curve
    python benchmarks/results/by_curve_2026-12-07/dd_shared.py DD nuts
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
import arviz as az  # noqa: E402
import bench_peers as bp  # noqa: E402
import numpy as np  # noqa: E402

import bayeslaw as bl  # noqa: E402

name, method = sys.argv[1], sys.argv[2]
frame = bp.prepared(ROOT.parent / "shared" / "data" / "nslpfn_bench", name,
                    argparse.Namespace(selection=True, max_context=None))
ctx = frame[frame["role"] == "context"]
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(bl.load(bp.one_row_per_point(ctx)), bp.bench_spec("curve_bend"), seed=1,
                 progress=False, method=method)
print(method, time.perf_counter() - t, fit.provenance["sampling"].get("shared"))
print(fit.diagnostics)
r = az.rhat(fit.idata)
for v in ("m_run", "f_run", "beta_run", "q_run", "sigma_run"):
    x = r[v].values
    print(v, np.round(np.sort(x)[-3:], 3), str(r[v].run.values[np.argmax(x)])[:40])
post = fit.idata.posterior
print("nu 5/50/95%", np.quantile(post["nu"].values, [0.05, 0.5, 0.95]))
print("sigma", np.quantile(post["sigma"].values, [0.05, 0.5, 0.95]),
      "sigma_spread", np.quantile(post["sigma_spread"].values, [0.05, 0.5, 0.95]))
