"""The session fit of `tests/conftest.py` (`small_fit`) with 1000 draws a chain, on its own
seed and four more: what its tests assert, seed by seed (issue 34: the suite's longest setup).

For each seed: worst R-hat, least bulk / tail ESS, divergences (the recovery test asserts
R-hat <= 1.01, ESS >= 200, none), whether every true coefficient lies in its 94% interval, the
second half's 90% band coverage and MAPE (`test_second_half_forecast_90_band_calibrated`:
0.80-0.97 and < 0.02), the fit's seconds.

    python benchmarks/results/small_fit_draws_2026-12-07/margin.py --draws 1000 \
        --seeds 8,101,102,103,104
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seeds", default="8,101,102,103,104")
    args = ap.parse_args()
    import tests.conftest as cf
    from bayeslaw import constants as C
    from bayeslaw.posterior.prediction import predict
    from bayeslaw.simulate import DEFAULT_TRUTH

    cf.SMALL_FIT_SAMPLER = {**cf.SAMPLER, "draws": args.draws}
    print(f"draws {args.draws} a chain, {cf.SMALL_FIT_SAMPLER}")
    print("| seed | worst R-hat | least bulk / tail ESS | divergences | truths in 94% | "
          "90% coverage of the second half | MAPE | fit s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |", flush=True)
    data, half, _ = cf.first_half_split()
    held = data.frame.loc[~half].reset_index(drop=True)
    for seed in [int(s) for s in args.seeds.split(",")]:
        start = time.perf_counter()
        fit = cf.fit_first_half(seed)
        secs = time.perf_counter() - start
        table = fit.summary()
        inside = sum(table.loc[n, "lower_94%"] <= t <= table.loc[n, "upper_94%"]
                     for n, t in DEFAULT_TRUTH.items())
        pred = predict(fit, held, seed=0).table
        y = held[C.LOSS].to_numpy()
        cover = np.mean((y >= pred["lower_90"]) & (y <= pred["upper_90"]))
        mape = np.mean(np.abs(pred["median"].to_numpy() - y) / y)
        d = fit.diagnostics
        print(f"| {seed} | {d.max_rhat:.4f} | {d.min_ess_bulk:.0f} / {d.min_ess_tail:.0f} | "
              f"{d.divergences} | {inside} of {len(DEFAULT_TRUTH)} | {cover:.3f} | {mape:.4f} | "
              f"{secs:.0f} |", flush=True)


if __name__ == "__main__":
    main()
