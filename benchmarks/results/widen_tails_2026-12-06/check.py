"""Margins of tests/evaluation/test_widening.py::test_tails_learned_are_the_truths over seeds
8-12: forecasts N(0, 1) of 600 runs x 3 points that truly are 1.3 T(z), T the stretch with
tail 0 or 0.6.  Run from the repository root:
    python benchmarks/results/widen_tails_2026-12-06/check.py \
        > benchmarks/results/widen_tails_2026-12-06/output.txt
"""
import sys

sys.path.insert(0, ".")
from bayeslaw.evaluation import widen as W  # noqa: E402
from tests.evaluation.test_widening import _tailed_forecasts  # noqa: E402

print("truth seed | lpd: scale rate tail | coverage: scale rate tail | coverage, no tails: scale")
for truth in (0.0, 0.6):
    for seed in range(8, 13):
        fit, terms, points = _tailed_forecasts(seed, truth)
        W._Terms.of = classmethod(lambda cls, *_, t=terms: t)
        lpd = W.Widening.learn(fit, points, tails=True)
        cov = W.Widening.learn(fit, points, criterion="coverage", tails=True)
        flat = W.Widening.learn(fit, points, criterion="coverage")
        print(f"{truth} {seed} | {lpd.scale:.3f} {lpd.rate:.3f} {lpd.tail:.3f} | {cov.scale:.3f} "
              f"{cov.rate:.3f} {cov.tail:.3f} | {flat.scale:.3f}", flush=True)
