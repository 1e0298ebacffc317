"""``bayeslaw fit``, ``report`` and ``backtest`` on a table of curves without N, end to end.

Before the curve grid, ``bayeslaw fit curves.csv`` wrote the coefficient tables and then
stopped with ``KeyError: 'N'``. Short seeded chains: the plumbing is under test, not the
posterior (their convergence and warm-start warnings are expected and ignored).
"""

from __future__ import annotations

import pandas as pd
import pytest

from bayeslaw.cli.commands import main
from bayeslaw.posterior.result import Fit

from ..conftest import curve_table

SHORT = ["--draws", "300", "--tune", "300", "--chains", "2", "--seed", "1", "--no-progress"]


@pytest.fixture()
def curves_csv(tmp_path):
    path = tmp_path / "curves.csv"
    curve_table(4, seed=1).to_csv(path, index=False)
    return path


@pytest.mark.filterwarnings("ignore::bayeslaw.errors.WarmStartWarning")
def test_fit_and_report_commands_on_curves(curves_csv, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["fit", str(curves_csv), "--out", str(out), *SHORT]) == 0
    assert {"grid.png", "grid.svg", "grid_zoom.png", "coefficients.csv", "coefficients.md",
            "diagnostics.md", "diagnostics.json", "fit.nc"} <= {p.name for p in out.iterdir()}
    assert (out / "grid.png").read_bytes()[:4] == b"\x89PNG"
    svg = (out / "grid.svg").read_text()
    assert all(f"<!-- c{k} -->" in svg for k in range(4)) and "N = " not in svg
    # curve_bend leaves each curve's points before 0.1 of its last D out of the fit (4 of
    # 12 here): the figure draws them as grey dots (matplotlib's "0.6"), keyed in the legend
    assert "#999999" in svg and "Real, not fitted" in svg
    fit = Fit.load(out / "fit.nc")
    assert len(fit.data.frame) == 4 * 8
    assert fit.spec.law == "curve_bend" and "N" not in fit.data.frame.columns
    table = pd.read_csv(out / "coefficients.csv", index_col=0)
    assert {"m", "f", "beta", "q", "E", "B", "c", "D0", "m_by_run_sd"} <= set(table.index)
    assert table.loc["m", "mean"] == pytest.approx(float(fit.draws("m").mean()))
    assert "`m`: the curve's loss at D_ref" in (out / "coefficients.md").read_text()
    printed = capsys.readouterr().out
    assert "wrote grid figure (png)" in printed and "wrote saved fit" in printed
    # the report of the saved fit goes through the same figures
    assert main(["report", str(out / "fit.nc"), "--out", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "one panel per curve" in text and "| c3 | 3e+10 |" in text


@pytest.mark.filterwarnings("ignore::bayeslaw.errors.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::bayeslaw.errors.WarmStartWarning")
def test_backtest_prefix_scores_only_held_out_points(curves_csv, tmp_path, capsys):
    out = tmp_path / "bt"
    assert main(["backtest", str(curves_csv), "--split", "prefix:0.5", "--out", str(out),
                 *SHORT]) == 0
    table = pd.read_csv(out / "backtest.csv")
    frame = pd.read_csv(curves_csv)
    held_out = frame["D"] > 0.5 * frame.groupby("run")["D"].transform("max")  # by hand
    # one row: bayeslaw; the baseline cannot fit a population of curves and says so
    assert list(table["method"]) == ["bayeslaw"]
    row = table.iloc[0]
    assert row["n_test"] == held_out.sum() > 0 and row["n_train"] == (~held_out).sum()
    assert row["n_curves"] == 4 and 0 < row["mape"] < 0.05
    assert 0 <= row["coverage_90"] <= 1 and row["crps"] > 0
    note = "no baseline rows: the least-squares baseline fits one set of coefficients"
    assert note in (out / "backtest.md").read_text() and note in capsys.readouterr().out
    assert (out / "forecast_prefix_0.5.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("split", ["largest-N", "largest-N:0.3"])
def test_largest_N_of_curves_without_N_is_a_user_error(curves_csv, tmp_path, split, capsys):
    assert main(["backtest", str(curves_csv), "--split", split, "--out",
                 str(tmp_path / "bt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no N column" in err and "prefix:F" in err
