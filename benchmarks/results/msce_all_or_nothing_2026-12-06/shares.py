"""Why a widening learned for MSCE over-covers the 50% band: per-curve coverage is nearly
all-or-nothing.

Run from the repository root::

    python benchmarks/results/msce_all_or_nothing_2026-12-06/shares.py

Reads the per-curve scores the target runs already saved (``../peers_pooled_*_curves.csv``:
each curve's share of its target points inside the 50% and 90% bands, unwidened and widened
``_w``); reads no data and chooses nothing.  Prints (1) the MSCE of a forecast that covers
every target point at every level, (2) the MSCE a curve gets when its points are all inside
or all outside a band, as a function of the chance p of "all inside", and (3) the share of
curves whose coverage is exactly 0 or 1 in the saved runs.
"""

from pathlib import Path

import numpy as np
import pandas as pd

LEVELS = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99])  # bayeslaw.evaluation.metrics.MSCE_LEVELS
HERE = Path(__file__).resolve().parent

print(f"MSCE of covering every point at every level: {np.mean((1 - LEVELS) ** 2):.4f}")
print(f"MSCE of covering no point at any level:       {np.mean(LEVELS ** 2):.4f}")
print("Expected per-curve MSCE when each band covers all of a curve's points with chance p "
      "(same p at every level), else none:")
for p in (0.5, 0.7, 0.9, 1.0):
    print(f"  p = {p:.1f}: {np.mean(p * (1 - LEVELS) ** 2 + (1 - p) * LEVELS ** 2):.4f}")
cal = np.mean(LEVELS * (1 - LEVELS))
print("A calibrated forecast of n independent target points (each inside the level-c band "
      "with chance c): expected per-curve MSCE = mean over c of c (1 - c) / n")
for n in (1, 2, 5, 39):
    print(f"  n = {n:2d}: {cal / n:.4f}")
print("Per level, the p that minimises (1 - p) c^2 + p (1 - c)^2 is 1 for every c > 0.5 (and "
      "any p at c = 0.5): with all-or-nothing coverage, MSCE at NSL-PFN's levels is least "
      "when every band covers every curve.\n")
for name in ("peers_pooled_colpret_curve_bend_msce_2026-12-06_curves.csv",
             "peers_pooled_nlp_curve_bend_msce_2026-12-06_curves.csv"):
    c = pd.read_csv(HERE.parent / name)
    print(f"{name}: {len(c)} curves, {int(c['n'].median())} target points a curve (median)")
    for col in ("in50", "in90", "in50_w", "in90_w"):
        v = c[col]
        print(f"  {col:7s} mean {v.mean():.3f}; curves at exactly 0: {(v == 0).mean():.3f}, "
              f"at exactly 1: {(v == 1).mean():.3f}")
