"""Backtest benchmark: held-out scores of bayeslaw and the least-squares baseline.

Run: ``python benchmarks/bench_backtest.py [--quick] [--only "DATA/SPLIT,..."]``.  Splits:
the bundled synthetic sweep (prefix:0.25 / 0.5 / 0.75, level:T_m=8, largest-N, kfold:5) and,
when ``../shared/data`` is present, the Chinchilla final losses (largest-N, kfold:5) and the
misfitting curves (12 checkpoints per run, spec ``chinchilla_curves``: prefix:0.25 / 0.5 /
0.75, largest-N, kfold:5).  Prints one table: per data set and split, MAPE of bayeslaw and of
the baseline, and bayeslaw's 50% / 90% coverage with the 95% binomial interval of the 90%
coverage.  ``--quick`` uses short chains.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd

import bayeslaw as bl
from bayeslaw.backtest import backtest
from bayeslaw.simulate import bundled_path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", help="comma-separated 'data set/split' names to run, e.g. "
                                   "'bundled sweep/level:T_m=8'")
    ap.add_argument("--csv", type=Path, help="append each row to this CSV as it is measured")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    kw = dict(draws=300, tune=600, chains=2) if args.quick else {}
    jobs = [("bundled sweep", bl.load(bundled_path()), "looped_total", s)
            for s in ("prefix:0.25", "prefix:0.5", "prefix:0.75", "level:T_m=8", "largest-N",
                      "kfold:5")]
    chin = SHARED / "chinchilla_epoch" / "svg_extracted_data.csv"
    if chin.exists():
        from bayeslaw.public_data import load_chinchilla

        jobs += [("chinchilla_epoch", load_chinchilla(chin), "chinchilla", s)
                 for s in ("largest-N", "kfold:5")]
    mis = SHARED / "misfitting" / "scaling_results.csv"
    if mis.exists():
        from bayeslaw.public_data import load_misfitting

        # whole curves after warm-up (>= 10% of each run), 12 checkpoints per run
        # (log-spaced, last kept); horizon and peak learning rate as groups
        curves = load_misfitting(mis, min_portion=0.1).thin(12)
        jobs += [("misfitting", curves, "chinchilla_curves", s)
                 for s in ("prefix:0.25", "prefix:0.5", "prefix:0.75", "largest-N", "kfold:5")]
    if args.only:
        keep = set(args.only.split(","))
        jobs = [j for j in jobs if f"{j[0]}/{j[3]}" in keep]
    rows = []
    for name, data, law, split in jobs:
        t = time.perf_counter()
        n_before = len(rows)
        spec = bl.load_spec(law) if law == "chinchilla_curves" else bl.load_spec(law=law)
        res = backtest(data, spec, split, seed=1, **kw)
        table = res.table
        for part in table["split"].unique():
            b = table[(table["split"] == part) & (table["method"] == "bayeslaw")].iloc[0]
            base = table[(table["split"] == part) & (table["method"] == "baseline")].iloc[0]
            rows.append({"data": name, "split": part, "n_test": int(b["n_test"]),
                         "mape_bayeslaw": b["mape"], "mape_baseline": base["mape"],
                         "r2_bayeslaw": b["r2"], "r2_baseline": base["r2"],
                         "cov50": b["coverage_50"], "cov90": b["coverage_90"],
                         "cov90_ci": f"[{b['coverage_90_low']:.2f}, {b['coverage_90_high']:.2f}]",
                         "cov90_baseline": base["coverage_90"],
                         "max_rhat": b["max_rhat"], "div": int(b["divergences"])})
        new = rows[n_before:]
        print(f"{name} {split}: {time.perf_counter() - t:.0f} s", flush=True)
        print(pd.DataFrame(new).to_string(index=False), flush=True)
        if args.csv:
            pd.DataFrame(new).to_csv(args.csv, mode="a", index=False,
                                     header=not args.csv.exists())
    out = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(out.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
