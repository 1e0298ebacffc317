"""Per-curve coverage of the misfitting prefix:0.5 forecasts of curve_bend, split by whether a
curve had any point in its fitted first half (from the forecasts bench_backtest saved).

    python benchmarks/results/backtest_misfitting_curve_bend_2026-12-04_by_context.py \
        /tmp/mis_fc/misfitting_prefix_0.5_bayeslaw.csv
"""
import sys
from pathlib import Path

import pandas as pd

from bayeslaw.data.public import load_misfitting
from bayeslaw.evaluation.metrics import coverage_by_curve

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "misfitting"
curves = load_misfitting(SHARED / "scaling_results.csv", min_portion=0.1,
                         min_tokens=1e9).thin(12)
f = curves.frame
fitted = (f["D"] <= 0.5 * f.groupby("run")["D"].transform("max")).groupby(f["run"]).sum()
print(f"{len(f)} points, {int(fitted.sum())} fitted; {len(fitted)} curves, "
      f"{int((fitted == 0).sum())} with no fitted point; fitted points a curve: median "
      f"{fitted.median():g}, mean {fitted.mean():.2f}")
forecasts = pd.read_csv(sys.argv[1])
empty = set(fitted[fitted == 0].index)
for label, part in (("all", forecasts), ("no fitted point", forecasts[forecasts.run.isin(empty)]),
                    ("some fitted points", forecasts[~forecasts.run.isin(empty)])):
    cells = []
    for p in (50, 90):
        c = coverage_by_curve(part["loss"].to_numpy(), part[f"lower_{p}"].to_numpy(),
                              part[f"upper_{p}"].to_numpy(), part["run"].to_numpy(), p / 100)
        cells.append(f"{p}%: {c.inside:.2f} of {c.n} = {c.inside / c.n:.0%} "
                     f"[{c.low:.0%}, {c.high:.0%}]")
    print(f"{label}: " + "; ".join(cells))
