"""The files ``bayeslaw backtest`` writes, from a hand-made result (no sampling)."""

import pandas as pd

from bayeslaw.evaluation.backtesting import BacktestResult
from bayeslaw.posterior.prediction import predict
from bayeslaw.report.folders import (
    BACKTEST_MD_INTRO,
    forecast_slug,
    score_summary,
    unconverged,
    write_backtest_outputs,
)


def _result(fit):
    frame = fit.data.frame
    held = frame[frame.groupby("run")["D"].rank(pct=True) > 0.7]
    forecast = predict(fit, held, probs=(0.5, 0.9), seed=2).table
    table = pd.DataFrame({"split": ["prefix:0.5", "prefix:0.5", "level:T_m=8"],
                          "method": ["bayeslaw", "baseline", "bayeslaw"],
                          "mape": [1.5, 2.5, 3.0], "lpd": [0.1, 0.2, 0.3],
                          "converged": [False, True, True], "failures": ["R-hat 1.2", "", ""]})
    return BacktestResult(table, {"prefix:0.5 / bayeslaw": forecast,
                                  "prefix:0.5 / baseline": forecast,
                                  "level:T_m=8 / bayeslaw": forecast}, ["a note"])


def test_backtest_files(stored_fit, tmp_path):
    result = _result(stored_fit)
    paths = write_backtest_outputs(stored_fit.data, result, tmp_path / "bt")
    out = tmp_path / "bt"
    assert sorted(p.name for p in out.iterdir()) == [
        "backtest.csv", "backtest.md", "forecast_level_T_m_8.png", "forecast_prefix_0.5.png"]
    assert set(paths.values()) == set(out.iterdir())
    pd.testing.assert_frame_equal(pd.read_csv(out / "backtest.csv", keep_default_na=False),
                                  result.table, check_dtype=False)
    md = (out / "backtest.md").read_text()
    assert md.startswith(BACKTEST_MD_INTRO) and "| prefix:0.5 | bayeslaw |" in md
    assert md.endswith("\n\nNotes:\n- a note\n")
    assert (out / "forecast_prefix_0.5.png").read_bytes()[:4] == b"\x89PNG"


def test_slug_summary_and_unconverged():
    assert forecast_slug("kfold:5+prefix:0.5, fold 1 / bayeslaw") == "kfold_5+prefix_0.5_fold_1"
    assert forecast_slug("prefix:0.5 / bayeslaw, recalibrated") == "prefix_0.5_recalibrated"
    table = pd.DataFrame({"method": ["bayeslaw", "baseline", "bayeslaw"], "extra": [1, 2, 3],
                          "split": ["a", "a", "b"], "converged": [False, False, True]})
    assert list(score_summary(table).columns) == ["split", "method", "converged"]
    assert unconverged(table)["split"].tolist() == ["a"]  # the baseline is not a fit
    assert unconverged(table.drop(columns="converged")).empty
