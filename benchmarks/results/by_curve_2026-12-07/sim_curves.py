"""The test's simulated curve_bend curves (tests/inference/test_by_curve.py, its seed) with 24
curves, fitted by method="by_curve": the shared values, the curves sampled again and the worst
curves' chains.

    python benchmarks/results/by_curve_2026-12-07/sim_curves.py
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "inference"))
import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import test_by_curve as T  # noqa: E402

import bayeslaw as bl  # noqa: E402

T.CURVES = 24  # the test fits 12
frame, truth = T.simulate(T.SEED)
data = bl.load(frame[frame["D"] <= 1.0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(data, T.SPEC, seed=T.SEED, progress=False, method="by_curve")
print(fit.provenance["sampling"]["shared"], fit.provenance["sampling"]["sampled_again"])
r = az.rhat(fit.idata)
worst = {}
for v in ("m_run", "f_run", "beta_run", "q_run", "sigma_run"):
    for run, x in zip(r[v].run.values, r[v].values, strict=True):
        worst[run] = max(worst.get(run, 0), float(x))
bad = sorted(worst.items(), key=lambda kv: -kv[1])[:5]
print(bad)
for run, _ in bad[:2]:
    print(run, truth.loc[run].round(3).to_dict())
    for v in ("f_run", "beta_run", "q_run"):
        x = fit.idata.posterior[v].sel(run=run).values
        print(" ", v, [np.round(np.quantile(x[c], [0.05, 0.5, 0.95]), 3).tolist()
                       for c in range(x.shape[0])])
