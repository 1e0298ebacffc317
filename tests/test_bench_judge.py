"""The backtest benchmark's judging of saved rows (issue 4's targets), by hand values."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_backtest.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_backtest", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(split, n, curves, mape, base, cov90, cov90_curves):
    return {"data": "d", "split": split, "n_test": n, "curves": curves,
            "mape_bayeslaw": mape, "mape_baseline": base, "r2_bayeslaw": 0.9,
            "r2_baseline": 0.9, "cov50": 0.5, "cov90": cov90, "cov90_ci": "",
            "cov90_curves": cov90_curves, "cov90_curves_low": 0.0, "cov90_curves_high": 1.0,
            "cov90_baseline": 0.2, "max_rhat": 1.0, "div": 0}


def test_folds_pool_into_one_row_per_split(bench):
    rows = pd.DataFrame([
        _row("prefix:0.5", 40, 4, 0.010, 0.020, 0.9, 0.9),
        _row("kfold:2 fold 1", 30, 3, 0.010, 0.012, 0.8, 2 / 3),   # 24 of 30 inside
        _row("kfold:2 fold 2", 10, 1, 0.030, 0.020, 1.0, 1.0)])    # 10 of 10 inside
    rows.loc[1, "max_rhat"], rows.loc[2, "div"] = 1.03, 4
    out = bench.pool_folds(rows)
    assert list(out["split"]) == ["prefix:0.5", "kfold:2 (2 folds pooled)"]
    pooled = out.iloc[1]
    assert pooled["n_test"] == 40 and pooled["curves"] == 4
    # point-weighted means: (30 * 0.010 + 10 * 0.030) / 40 and (30 * 0.012 + 10 * 0.020) / 40
    assert pooled["mape_bayeslaw"] == pytest.approx(0.015)
    assert pooled["mape_baseline"] == pytest.approx(0.014)
    assert pooled["cov90"] == pytest.approx(34 / 40)
    # curves: 2 of 3 plus 1 of 1 -> 3 of 4, with its exact Clopper-Pearson interval
    assert pooled["cov90_curves"] == pytest.approx(0.75)
    assert pooled["cov90_curves_low"] == pytest.approx(stats.beta.ppf(0.025, 3, 2))
    assert pooled["cov90_curves_high"] == pytest.approx(stats.beta.ppf(0.975, 4, 1))
    assert pooled["max_rhat"] == 1.03 and pooled["div"] == 4
    judged = bench.judge(out)
    assert not judged.iloc[1]["mape_ok"]  # 1.5% > 1.4%
    assert judged.iloc[1]["cov90_p"] == pytest.approx(stats.binomtest(34, 40, 0.9).pvalue)
    # the non-fold row passes through unchanged
    assert out.iloc[0]["mape_bayeslaw"] == 0.010 and np.isnan(out["r2_bayeslaw"].iloc[1])


def test_continued_folds_pool_apart_from_plain_folds(bench):
    """kfold:K+prefix:F folds pool into their own row, not into kfold:K's."""
    rows = pd.DataFrame([
        _row("kfold:2 fold 1", 30, 3, 0.010, 0.012, 0.8, 2 / 3),
        _row("kfold:2 fold 2", 10, 1, 0.030, 0.020, 1.0, 1.0),
        _row("kfold:2+prefix:0.5 fold 1", 20, 3, 0.010, 0.020, 0.9, 1.0),
        _row("kfold:2+prefix:0.5 fold 2", 20, 1, 0.020, 0.020, 0.8, 0.0)])
    out = bench.pool_folds(rows)
    assert list(out["split"]) == ["kfold:2 (2 folds pooled)",
                                  "kfold:2+prefix:0.5 (2 folds pooled)"]
    assert list(out["n_test"]) == [40, 40]
    assert out.iloc[1]["cov90"] == pytest.approx(34 / 40)
    assert out.iloc[1]["cov90_curves"] == pytest.approx(0.75)


def test_forecasts_are_saved_per_split_and_method(bench, tmp_path):
    table = pd.DataFrame({"run": ["r1", "r2"], "D": [1e9, 2e9], "loss": [3.0, 2.9],
                          "median": [3.1, 2.8], "lower_90": [2.9, 2.85],
                          "upper_90": [3.2, 2.95], "peak_lr": [1e-3, 2e-3]})
    bench.save_forecasts({"kfold:5 fold 1 / bayeslaw": table,
                          "kfold:5 fold 1 / baseline": table.assign(median=0.0)},
                         tmp_path / "out", "misfitting")
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["misfitting_kfold_5_fold_1_baseline.csv",
                     "misfitting_kfold_5_fold_1_bayeslaw.csv"]
    back = pd.read_csv(tmp_path / "out" / files[1])
    pd.testing.assert_frame_equal(back, table)
    inside = back["loss"].between(back["lower_90"], back["upper_90"])
    assert inside.tolist() == [True, True] and back.groupby("peak_lr").size().tolist() == [1, 1]
