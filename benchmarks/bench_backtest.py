"""Backtest benchmark: held-out scores of bayeslaw and the least-squares baseline.

Run: ``python benchmarks/bench_backtest.py [--quick] [--only "DATA/SPLIT,..."]``.  Splits:
the bundled synthetic sweep (prefix:0.25 / 0.5 / 0.75, level:T_m=8, largest-N, kfold:5) and,
when ``../shared/data`` is present, the Chinchilla final losses (largest-N, kfold:5) and the
misfitting curves (past ``--min-tokens``, default 1e9; 12 checkpoints per run; spec
``chinchilla_curves`` or ``--curves-spec``, a name or a TOML path: prefix:0.25 / 0.5 / 0.75,
largest-N, kfold:5, and kfold:5+prefix:0.5, the held-out runs continued from their first half
with every other run whole).  Prints one table: per
data set and split, MAPE of bayeslaw and of the baseline, and bayeslaw's 50% / 90% coverage
with the 95% binomial interval of the 90% coverage.  ``--quick`` uses short chains; ``--csv F``
appends each row to F as it is measured; ``--summarize F [F ...]`` judges saved rows against
issue 4's targets without running; ``--recalibrate`` adds rows of the same fits' forecasts
recalibrated from an inner backtest on each training part (one more fit per fold).
"""

from __future__ import annotations

import argparse
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import bayeslaw as bl
from bayeslaw.backtest import backtest
from bayeslaw.metrics import clopper_pearson
from bayeslaw.simulate import bundled_path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def judge(rows: pd.DataFrame) -> pd.DataFrame:
    """Issue 4's targets per row: MAPE no worse than the baseline's; 90% coverage consistent
    with 90% (two-sided exact binomial test at 5%) and, with >= 50 held-out points, within
    [0.85, 0.95]."""
    out = rows.copy()
    inside = (out["cov90"] * out["n_test"]).round().astype(int)
    out["cov90_p"] = [stats.binomtest(k, n, 0.9).pvalue
                      for k, n in zip(inside, out["n_test"], strict=True)]
    out["mape_ok"] = out["mape_bayeslaw"] <= out["mape_baseline"]
    band = (out["n_test"] < 50) | out["cov90"].between(0.85, 0.95)
    out["cov_ok"] = (out["cov90_p"] >= 0.05) & band
    out = _with_curve_columns(out)
    out["cov_ok_curves"] = out["cov90_curves_low"].le(0.9) & out["cov90_curves_high"].ge(0.9)
    return out


def _with_curve_columns(rows: pd.DataFrame) -> pd.DataFrame:
    """Coverage with each curve counted once (see metrics.coverage_by_curve); rows saved
    before that column existed get it from the pooled rate, as if every curve held that share
    of its points."""
    out = rows.copy()
    for col in ("cov90_curves", "cov90_curves_low", "cov90_curves_high"):
        if col not in out:
            out[col] = np.nan
    for i in np.flatnonzero(out["cov90_curves_low"].isna()):
        row = out.iloc[i]
        low, high = clopper_pearson(row["cov90"] * row["curves"], int(row["curves"]))
        out.loc[out.index[i], ["cov90_curves", "cov90_curves_low", "cov90_curves_high"]] = (
            row["cov90"], low, high)
    return out


def pool_folds(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per data set and split: the folds of a K-fold split pooled into one row.

    The folds hold out disjoint runs, so the pooled row is exact arithmetic on the fold rows:
    point counts and curve counts add, MAPE and coverage are point-weighted means (each fold's
    figure is a mean over its points), the number of points inside the 90% band is the sum of
    the folds', and the curve-level share is the sum of per-curve shares over all curves.
    R-hat and divergences are the worst fold's and the sum.  Rows of other splits pass as is.
    """
    rows = _with_curve_columns(rows)
    fold = rows["split"].str.extract(r"^(kfold:\d+(?:\+prefix:[\d.]+)?) fold \d+$")[0]
    key = fold.fillna(rows["split"])
    out = []
    for (name, split), part in rows.groupby([rows["data"], key], sort=False):
        if len(part) == 1 and fold.loc[part.index].isna().all():
            out.append(part.iloc[0].to_dict())
            continue
        n, curves = part["n_test"], part["curves"]
        inside = float((part["cov90_curves"] * curves).sum())
        low, high = clopper_pearson(inside, int(curves.sum()))
        lo90, hi90 = clopper_pearson(float((part["cov90"] * n).sum()), int(n.sum()))
        out.append({
            "data": name, "split": f"{split} ({len(part)} folds pooled)",
            "n_test": int(n.sum()), "curves": int(curves.sum()),
            **{col: float((part[col] * n).sum() / n.sum())
               for col in ("mape_bayeslaw", "mape_baseline", "cov50", "cov90", "cov90_baseline")},
            "r2_bayeslaw": np.nan, "r2_baseline": np.nan,  # not a mean over folds
            "cov90_ci": f"[{lo90:.2f}, {hi90:.2f}]",
            "cov90_curves": inside / curves.sum(), "cov90_curves_low": low,
            "cov90_curves_high": high, "max_rhat": part["max_rhat"].max(),
            "div": int(part["div"].sum()),
            **({"identified": bool(part["identified"].all())} if "identified" in part else {})})
    return pd.DataFrame(out)[[c for c in rows.columns if c in out[0]]]


def _print_judged(out: pd.DataFrame, what: str) -> None:
    print(out.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"{what}: MAPE <= baseline on {out['mape_ok'].sum()}/{len(out)} rows "
          f"({out['mape_ok'].mean():.0%}; target 80%); 90% coverage on target on "
          f"{out['cov_ok'].sum()}/{len(out)} rows (target: all); with each held-out curve "
          f"counted once, consistent with 90% on {out['cov_ok_curves'].sum()}/{len(out)}")


def report(rows: pd.DataFrame) -> None:
    """Print the judged table twice: one row per data set and split (issue 4's table, the
    folds of a K-fold split pooled), then every fold as its own row."""
    pd.set_option("display.width", 250)
    _print_judged(judge(pool_folds(rows)), "per data set and split")
    print()
    _print_judged(judge(rows), "every fold a row")


def save_forecasts(forecasts: dict[str, pd.DataFrame], folder: Path, data_name: str) -> None:
    """Write each held-out forecast table to ``folder`` (atomically, one CSV per split and
    method), so that misses can be grouped by any column of the table afterwards, e.g.
    ``t.assign(inside=t.loss.between(t.lower_90, t.upper_90)).groupby("peak_lr").inside.mean()``.
    """
    from bayeslaw._io import atomic_write_text

    folder.mkdir(parents=True, exist_ok=True)
    for key, table in forecasts.items():
        stem = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{data_name} {key}").strip("_")
        atomic_write_text(folder / f"{stem}.csv", table.to_csv(index=False))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", help="comma-separated 'data set/split' names to run, e.g. "
                                   "'bundled sweep/level:T_m=8'")
    ap.add_argument("--curves-spec", default="chinchilla_curves",
                    help="spec (name or TOML path) for the misfitting curves")
    ap.add_argument("--chinchilla-spec", default="chinchilla",
                    help="spec (name or TOML path) for the Chinchilla final losses")
    ap.add_argument("--csv", type=Path, help="append each row to this CSV as it is measured")
    ap.add_argument("--min-tokens", type=float, default=1e9, metavar="D",
                    help="misfitting: drop checkpoints before D tokens (default 1e9; 0 keeps "
                         "the early transient)")
    ap.add_argument("--forecasts", type=Path, metavar="DIR",
                    help="write each split's held-out forecasts (median, bands, truth and the "
                         "table's other columns) to DIR as CSV")
    ap.add_argument("--recalibrate", action="store_true",
                    help="also score bayeslaw's bands recalibrated from an inner backtest on "
                         "each training part (rows under the data set's name + ', "
                         "recalibrated'): prefix:0.5 for the prefix splits, the same split "
                         "for the others; level: splits skip it")
    ap.add_argument("--summarize", type=Path, nargs="+", metavar="CSV",
                    help="judge rows saved by earlier --csv runs instead of running")
    args = ap.parse_args()
    if args.summarize:
        report(pd.concat([pd.read_csv(p) for p in args.summarize], ignore_index=True))
        return
    warnings.filterwarnings("ignore")
    kw = dict(draws=300, tune=600, chains=2) if args.quick else {}
    jobs = [("bundled sweep", bl.load(bundled_path()), "looped_total", s)
            for s in ("prefix:0.25", "prefix:0.5", "prefix:0.75", "level:T_m=8", "largest-N",
                      "kfold:5")]
    chin = SHARED / "chinchilla_epoch" / "svg_extracted_data.csv"
    if chin.exists():
        from bayeslaw.public_data import load_chinchilla

        jobs += [("chinchilla_epoch", load_chinchilla(chin), args.chinchilla_spec, s)
                 for s in ("largest-N", "kfold:5")]
    mis = SHARED / "misfitting" / "scaling_results.csv"
    if mis.exists():
        from bayeslaw.public_data import load_misfitting

        # whole curves after warm-up (>= 10% of each run) and past the early transient
        # (--min-tokens, default 1e9: see load_misfitting), 12 checkpoints per run
        # (log-spaced, last kept)
        curves = load_misfitting(mis, min_portion=0.1, min_tokens=args.min_tokens).thin(12)
        jobs += [("misfitting", curves, args.curves_spec, s)
                 for s in ("prefix:0.25", "prefix:0.5", "prefix:0.75", "largest-N", "kfold:5",
                           "kfold:5+prefix:0.5")]
    if args.only:
        keep = set(args.only.split(","))
        jobs = [j for j in jobs if f"{j[0]}/{j[3]}" in keep]
    rows = []
    for name, data, law, split in jobs:
        t = time.perf_counter()
        n_before = len(rows)
        spec = bl.load_spec(law)
        recal = args.recalibrate and not split.startswith("level:")
        if recal and split.startswith("prefix:"):
            recal = "prefix:0.5"
        res = backtest(data, spec, split, seed=1, recalibrate=recal, **kw)
        table = res.table
        methods = ["bayeslaw"] + (["bayeslaw, recalibrated"] if recal else [])
        for part, method in ((p, m) for p in table["split"].unique() for m in methods):
            b = table[(table["split"] == part) & (table["method"] == method)].iloc[0]
            base = table[(table["split"] == part) & (table["method"] == "baseline")].iloc[0]
            label = name if method == "bayeslaw" else f"{name}, recalibrated"
            rows.append({"data": label, "split": part, "n_test": int(b["n_test"]),
                         "curves": int(b["n_curves"]),
                         "mape_bayeslaw": b["mape"], "mape_baseline": base["mape"],
                         "r2_bayeslaw": b["r2"], "r2_baseline": base["r2"],
                         "cov50": b["coverage_50"], "cov90": b["coverage_90"],
                         "cov90_ci": f"[{b['coverage_90_low']:.2f}, {b['coverage_90_high']:.2f}]",
                         "cov90_curves": b["coverage_90_curves"],
                         "cov90_curves_low": b["coverage_90_curves_low"],
                         "cov90_curves_high": b["coverage_90_curves_high"],
                         "cov90_baseline": base["coverage_90"],
                         "max_rhat": b["max_rhat"], "div": int(b["divergences"]),
                         "identified": bool(b["identified"])})
        new = rows[n_before:]
        print(f"{name} {split}: {time.perf_counter() - t:.0f} s", flush=True)
        print(pd.DataFrame(new).to_string(index=False), flush=True)
        if args.csv:
            pd.DataFrame(new).to_csv(args.csv, mode="a", index=False,
                                     header=not args.csv.exists())
        if args.forecasts:
            save_forecasts(res.forecasts, args.forecasts, name)
    report(pd.DataFrame(rows))


if __name__ == "__main__":
    main()
