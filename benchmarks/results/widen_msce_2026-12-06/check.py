"""The msce widening's learner on normal forecasts, over seeds 8-12 (the figures in
``tests/evaluation/test_widening.py``'s docstring).

Forecasts N(0, 1) of points that truly spread 2, 1,000 curves of 3 points at the last fitted
D: the expected per-curve MSCE is least at k = 2.484 (computed here on a fine grid); the
learned scale of ``criterion="msce"`` and of the log density are printed as their relative
distance from it, and that of ``criterion="coverage"`` (added 2026-12-06, later) as its
distance from the true spread, 2.
Run: ``python benchmarks/results/widen_msce_2026-12-06/check.py``.
"""

import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root
from bayeslaw.evaluation import metrics  # noqa: E402
from bayeslaw.evaluation import widen as W  # noqa: E402
from tests.evaluation.test_widening import _normal_forecasts  # noqa: E402  (the tests' forecasts)

m = 3
grid = np.linspace(1.0, 8.0, 7001)
z = stats.norm.ppf((1 + np.asarray(metrics.MSCE_LEVELS)) / 2)
p = 2 * stats.norm.cdf(grid[:, None] * z / 2) - 1
best = grid[np.argmin(np.mean((p - metrics.MSCE_LEVELS) ** 2 + p * (1 - p) / m, axis=1))]
print(f"least expected MSCE at k = {best:.3f}")
for seed in range(8, 13):
    fit, terms, points = _normal_forecasts(seed, m=m)
    W._Terms.of = classmethod(lambda cls, *_, t=terms: t)
    msce = W.Widening.learn(fit, points, criterion="msce").scale
    lpd = W.Widening.learn(fit, points).scale
    cov = W.Widening.learn(fit, points, criterion="coverage").scale
    print(f"seed {seed}: msce {msce:.3f} ({msce / best - 1:+.1%}), "
          f"log density {lpd:.3f} ({lpd / best - 1:+.1%}), "
          f"coverage {cov:.3f} ({cov / 2.0 - 1:+.1%} from the true spread 2)")
