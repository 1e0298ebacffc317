"""The session fit of ``tests/conftest.py`` (``small_fit``) with 1,000 draws a chain instead of
2,000, on its own seed (8) and four more (101-104): what its tests assert, with the margin.

    python benchmarks/results/small_fit_draws_2026-12-05/margins.py 1000 > margins_1000.txt

Per seed: the diagnostics ``test_recovery_truth_inside_94_interval`` asserts (R-hat <= 1.01,
no divergence, bulk ESS >= 200) and the least tail ESS; each true coefficient's place in its
central 94% interval (the smallest distance to an end, as a share of the interval's width: 0
is on an end, 0.5 the middle); the in-sample 90% band's count of points inside against the
99% binomial acceptance region of ``test_in_sample_predictive_coverage``; and the seconds.
Fits run one after another.  Run from the repository root.
"""

import sys
import time
import warnings
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import tests.conftest as conftest  # noqa: E402
from bayeslaw import constants as C  # noqa: E402
from bayeslaw.posterior.prediction import predict  # noqa: E402
from bayeslaw.simulate import DEFAULT_TRUTH  # noqa: E402


def main(draws: int) -> None:
    warnings.simplefilter("ignore")
    conftest.SMALL_FIT_SAMPLER = {**conftest.SMALL_FIT_SAMPLER, "draws": draws}
    print(f"sampler: {conftest.SMALL_FIT_SAMPLER}")
    for seed in (8, 101, 102, 103, 104):
        start = time.perf_counter()
        fit = conftest.fit_first_half(seed)
        seconds = time.perf_counter() - start
        d = fit.diagnostics
        table = fit.summary()
        places = {}
        for name, true in DEFAULT_TRUTH.items():
            lo, hi = table.loc[name, ["lower_94%", "upper_94%"]]
            places[name] = min(true - lo, hi - true) / (hi - lo)
        worst = min(places, key=places.get)
        pred = predict(fit, fit.data.frame, seed=0)
        lo, hi = pred.band(0.9)
        y = fit.data.frame[C.LOSS].to_numpy()
        inside = int(((y >= lo) & (y <= hi)).sum())
        n = len(y)
        region = (int(stats.binom.ppf(0.005, n, 0.9)), int(stats.binom.ppf(0.995, n, 0.9)))
        print(f"seed {seed}: R-hat {d.max_rhat:.4f}  divergences {d.divergences}  "
              f"bulk ESS {d.min_ess_bulk:.0f}  tail ESS {d.min_ess_tail:.0f}  "
              f"truths inside 94%: {sum(v >= 0 for v in places.values())}/{len(places)} "
              f"(closest to an end: {worst} at {places[worst]:.3f})  "
              f"in-sample 90% band: {inside}/{n} inside, region {region}  {seconds:.1f} s",
              flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
