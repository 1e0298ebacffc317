"""Does the widening calibrate misfitting's curves cut at half (issue 35)?

The split, spec and seed of ``bench_backtest.py --only "misfitting/prefix:0.5" --curves-spec
curve_bend`` (its report seed, 2): every curve's first half (by D) fitted, its second half
forecast.  A widening is learned on the training part alone (its own ``prefix:0.5``: one
inner fit, as ``bl.widening`` does), for three criteria from the same inner fit, and applied to
the forecasts of curves that have a fitted point (a widening grows from a curve's last fitted
point; the 69 curves with none are forecast from the population, unwidened).  Distances in
e-folds of D (``per_span`` needs two fitted points a curve).  Prints the 50% / 90% band per
curve with Clopper-Pearson intervals over curves.  Run from the repository root:

    python benchmarks/results/misfitting_widen_2026-12-06/widen.py > .../output.txt
"""
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.data.public import load_misfitting
from bayeslaw.evaluation.backtesting import fold_fit
from bayeslaw.evaluation.metrics import coverage_by_curve
from bayeslaw.evaluation.splits import inner_split, parse_split

SEED = 2  # bench_backtest.py's REPORT_SEED
SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "misfitting"
warnings.simplefilter("ignore", bl.ConvergenceWarning)


def bands(name: str, table, pred) -> None:
    """One line: the 50% and 90% bands' per-curve coverage of ``table``'s losses."""
    cells = []
    for p in (0.5, 0.9):
        lo, hi = pred.band(p)
        c = coverage_by_curve(table[C.LOSS].to_numpy(float), np.asarray(lo), np.asarray(hi),
                              table[C.RUN].to_numpy(), p)
        cells.append(f"{p:.0%}: {c.inside / c.n:.0%} [{c.low:.0%}, {c.high:.0%}] of {c.n}")
    print(f"{name}: " + "; ".join(cells), flush=True)


data = load_misfitting(SHARED / "scaling_results.csv", min_portion=0.1, min_tokens=1e9).thin(12)
spec = bl.load_spec("curve_bend")
part = parse_split(data, "prefix:0.5", seed=SEED)[0]
train = data.select(part.train, "first half of each curve")
test = data.frame.loc[part.test].reset_index(drop=True)
start = time.perf_counter()
outer = fold_fit(train, spec, part.name, seed=SEED, like=data)
print(f"outer fit {time.perf_counter() - start:.0f} s: {outer.diagnostics}", flush=True)
fitted = test[C.RUN].astype(str).isin(set(train.frame[C.RUN].astype(str)))
seen, unseen = test[fitted].reset_index(drop=True), test[~fitted].reset_index(drop=True)
print(f"{len(test)} held-out points; {seen[C.RUN].nunique()} curves with a fitted point, "
      f"{unseen[C.RUN].nunique()} without")
pred_seen = bl.predict(outer, seen, seed=SEED)
bands("own forecast, curves with a fitted point", seen, pred_seen)
bands("own forecast, curves with none", unseen, bl.predict(outer, unseen, seed=SEED))

inner = inner_split(train, "prefix:0.5", seed=SEED)
inner_train = train.select(inner.train, "train of the inner prefix:0.5")
inner_test = train.frame.loc[inner.test].reset_index(drop=True)
inner_test = inner_test[inner_test[C.RUN].astype(str).isin(
    set(inner_train.frame[C.RUN].astype(str)))].reset_index(drop=True)
start = time.perf_counter()
inner_fit = fold_fit(inner_train, spec, "inner prefix:0.5", seed=SEED, like=data)
print(f"inner fit {time.perf_counter() - start:.0f} s: {inner_fit.diagnostics}; "
      f"{len(inner_test)} inner held-out points of {inner_test[C.RUN].nunique()} curves",
      flush=True)
for criterion, tails in (("lpd", False), ("coverage", False), ("coverage", True),
                         ("msce", False)):
    w = bl.Widening.learn(inner_fit, inner_test, seed=SEED, source="inner prefix:0.5",
                          criterion=criterion, tails=tails)
    label = f"{criterion}{' + tails' if tails else ''}"
    print(f"widening ({label}): scale {w.scale:.4g}, rate {w.rate:.4g} per e-fold, tail "
          f"{w.tail:.3g}; inner mean log density {w.lpd_before:.3f} -> {w.lpd_after:.3f}")
    bands(f"widened ({label}), curves with a fitted point", seen, w.apply(outer, pred_seen))
sys.exit(0)
