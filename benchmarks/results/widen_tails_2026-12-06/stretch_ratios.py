"""How much more a tail stretch widens a normal forecast's outer bands than its 50% band (the
figures of ``TAILS``' comment in bayeslaw/evaluation/widen.py and of docs/benchmarks/peers.md).
Run from the repository root:

    python benchmarks/results/widen_tails_2026-12-06/stretch_ratios.py \\
        > benchmarks/results/widen_tails_2026-12-06/stretch_ratios.txt
"""
import numpy as np
from scipy import stats

from bayeslaw.evaluation.widen import stretch

levels = (0.7, 0.8, 0.9, 0.95, 0.99)
z = stats.norm.ppf([(1 + c) / 2 for c in levels])
s = np.full((2, len(z)), stats.norm.ppf(0.75))
print("tail | " + " | ".join(f"{c:.0%} band widened / 50% band widened" for c in levels))
for tail in (0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5):
    ratio = stretch(z, s, tail) / z  # the 50% band's edge, s, maps to itself
    print(f"{tail} | " + " | ".join(f"{r:.3f}" for r in ratio))
