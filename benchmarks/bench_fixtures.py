"""Convergence margin of every MCMC test fixture: each fit rerun with 5 seeds.

A fixture that converges on one machine and not on another is a test that depends on luck.
Each fixture's fit (same data, spec and sampler settings as in ``tests/``) is run with its own
seed and four more; the worst R-hat must stay under 1.005, a margin below the 1.01 threshold
the tests assert, and the table says which fixture misses.

    python benchmarks/bench_fixtures.py --csv benchmarks/results/fixtures_<date>.csv
    python benchmarks/bench_fixtures.py --only small_fit,four_depths --seeds 5

Fits run one after another (never two MCMC jobs at once on a 2-core machine).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MARGIN = 1.005


def _small_fit(seed):
    """The session fit of ``tests/conftest.py``: the first halves of the evenly logged small
    sweep.  Until 323c1ed the suite made two such fits: this one (then named ``half_split``)
    and one of the whole log-spaced sweep, seed 11 (then ``small_fit``, seed 5); the rows of
    ``fixtures_warm_2026-12-01.csv`` carry the old names."""
    from tests.conftest import fit_first_half

    return fit_first_half(seed)


def _four_depths(seed):
    from bayeslaw.inference.sampling import fit
    from bayeslaw.posterior.diagnostics import Thresholds
    from tests.evaluation.test_compare import four_depths_data, simple_spec

    return fit(four_depths_data(), simple_spec("looped_total"),
               thresholds=Thresholds(min_ess=200), seed=seed, draws=3000, tune=1000, chains=4)


def _matched(seed):
    from bayeslaw.inference.sampling import fit
    from tests.evaluation.test_checks import MATCHED, matched_data

    return fit(matched_data(), MATCHED, seed=seed, draws=4000, tune=1000, chains=4)


def _chinchilla(seed):
    from bayeslaw.data.public import load_chinchilla
    from bayeslaw.inference.sampling import fit

    path = ROOT.parent / "shared" / "data" / "chinchilla_epoch" / "svg_extracted_data.csv"
    return fit(load_chinchilla(path), law="chinchilla", seed=seed, draws=1000, tune=1000,
               chains=4)


class _Row:
    """A backtest row's convergence columns in the shape of ``Fit.diagnostics``."""

    def __init__(self, row):
        self.max_rhat, self.min_ess_bulk = row["max_rhat"], row["min_ess_bulk"]
        self.min_ess_tail, self.divergences = row["min_ess_tail"], row["divergences"]
        self.worst_rhat_var = row["failures"] or "-"
        #: the calibration test's per-curve coverages, to show its margin too
        self.extra = {k: row[k] for k in row.index if k.startswith("coverage_")
                      and k.endswith(("_curves", "_curves_low", "_curves_high"))}


def _schedule_full(seed):
    import bayeslaw as bl
    from bayeslaw.simulate import schedule_sweep
    from tests.inference.test_schedule_fit import SEED, SWEEP, schedule_spec

    frame, _ = schedule_sweep(seed=SEED, **SWEEP)
    return bl.fit(bl.load(frame), schedule_spec(), seed=seed, progress=False)


def _schedule_prefix(seed):
    import bayeslaw as bl
    from bayeslaw.simulate import schedule_sweep
    from tests.inference.test_schedule_fit import PREFIX_SAMPLER, SEED, SWEEP, schedule_spec

    frame, _ = schedule_sweep(seed=SEED, **SWEEP)
    result = bl.backtest(bl.load(frame), schedule_spec(**PREFIX_SAMPLER), "prefix:0.5", seed=seed,
                         baseline=False, progress=False)

    class _Result:
        diagnostics = _Row(result.table.iloc[0])

    return _Result


#: name -> (the fixture's own seed, the fit)
FIXTURES = {
    "small_fit": (8, _small_fit),
    "four_depths": (1, _four_depths),
    "matched": (2, _matched),
    "chinchilla": (3, _chinchilla),
    # tests/test_schedule_fit.py: the multi-power fit and the prefix:0.5 backtest
    "schedule_full": (20251201, _schedule_full),
    "schedule_prefix": (20251201, _schedule_prefix),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(FIXTURES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--csv", type=Path)
    args = parser.parse_args(argv)
    from bayeslaw.errors import ConvergenceWarning

    rows = []
    for name in args.only.split(","):
        own, make = FIXTURES[name]
        for seed in [own, *range(101, 100 + args.seeds)]:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # judged in the table
                result = make(seed)
            d = result.diagnostics
            rows.append({"fixture": name, "seed": seed, "max_rhat": d.max_rhat,
                         "worst_rhat_var": d.worst_rhat_var, "min_ess_bulk": d.min_ess_bulk,
                         "min_ess_tail": d.min_ess_tail, "divergences": d.divergences,
                         "seconds": time.perf_counter() - start, **getattr(d, "extra", {})})
            print(pd.DataFrame(rows[-1:]).to_string(index=False, header=len(rows) == 1,
                                                    float_format=lambda v: f"{v:.4g}"),
                  flush=True)
            if args.csv:
                frame = pd.DataFrame(rows)
                frame.to_csv(args.csv, index=False)
    table = pd.DataFrame(rows)
    worst = table.groupby("fixture", sort=False).agg(
        worst_rhat=("max_rhat", "max"), min_ess=("min_ess_bulk", "min"),
        divergent_seeds=("divergences", lambda v: int(np.sum(v > 0))),
        seconds=("seconds", "mean"))
    worst["margin_ok"] = worst["worst_rhat"] < MARGIN
    print(worst.to_string(float_format=lambda v: f"{v:.4g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
