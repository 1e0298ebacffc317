"""Plumbing on the stored small posterior: predictions, the grid figure, output folders."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from bayeslaw.data import run_label, size_label
from bayeslaw.fit import Fit
from bayeslaw.plots import plot_grid, save_figure
from bayeslaw.predict import predict
from bayeslaw.report import markdown_table, write_fit_outputs


def test_size_label():
    assert [size_label(n) for n in (53e6, 134e6, 1.36e9)] == ["53M", "134M", "1.36B"]
    assert run_label(53e6, 2) == "N53M_T2" and run_label(1e9) == "N1B"


def test_predict_bands_are_quantiles_of_draws(stored_fit):
    pts = stored_fit.data.frame.iloc[:5]
    pred = predict(stored_fit, pts, probs=(0.5, 0.9, 0.975), seed=1)
    t = pred.table
    assert list(t.columns[-7:]) == ["median", "lower_50", "upper_50", "lower_90", "upper_90",
                                    "lower_97.5", "upper_97.5"]
    np.testing.assert_allclose(t["median"], np.median(pred.draws, axis=0))
    np.testing.assert_allclose(t["upper_90"], np.quantile(pred.draws, 0.95, axis=0))
    assert (t["lower_90"] <= t["lower_50"]).all() and (t["upper_50"] <= t["upper_90"]).all()
    epi = predict(stored_fit, pts, kind="epistemic", seed=1).table
    assert ((epi["upper_90"] - epi["lower_90"]) < (t["upper_90"] - t["lower_90"])).all()


def test_fit_predict_and_repr(stored_fit):
    pts = stored_fit.data.frame.iloc[:3]
    np.testing.assert_array_equal(stored_fit.predict(pts, seed=4).table["median"],
                                  predict(stored_fit, pts, seed=4).table["median"])
    assert repr(stored_fit) == ("Fit(law='looped_total', runs=9, points=90, draws=2x100, "
                                "NOT converged)")


def test_epistemic_median_is_law_at_posterior_draws(stored_fit):
    """For a fitted run the epistemic draws are the law at that run's own parameters."""
    row = stored_fit.data.frame.iloc[[3]]
    run = stored_fit.data.runs.tolist().index(row["run"].iloc[0])
    f = stored_fit
    ref = f.spec.reference
    mu = (f.draws("E") + f.draws("a") * (row["N"].iloc[0] / ref["N"]) ** -f.draws("alpha")
          + f.draws("b_run")[:, run] * (row["D"].iloc[0] / ref["D"]) ** -f.draws("beta_run")[:, run]
          + f.draws("c") * (row["T_m"].iloc[0] / ref["T_m"]) ** -f.draws("gamma"))
    pred = predict(f, row, kind="epistemic")
    np.testing.assert_allclose(pred.draws[:, 0], mu, rtol=1e-10)


def test_grid_figure_layout_and_lines(stored_fit, tmp_path):
    fig = plot_grid(stored_fit)
    axes = np.array(fig.axes).reshape(3, 3)
    titles = [[ax.get_title() for ax in row] for row in axes]
    assert titles[0][0] == "T_m = 2, N = 100M" and titles[2][2] == "T_m = 8, N = 1B"
    ax = axes[1, 2]  # T_m = 4, N = 1B
    observed = [ln for ln in ax.get_lines() if ln.get_label() == "observed"][0]
    run = stored_fit.data.frame.query("T_m == 4 and N == 1e9")
    np.testing.assert_allclose(observed.get_ydata(), run["loss"])
    np.testing.assert_allclose(observed.get_xdata(), run["D"] / 1e9)
    assert len(ax.collections) == 2  # 90% and 50% bands
    assert axes[2, 0].get_xlabel() == "tokens (billions)"
    assert axes[0, 0].get_ylabel() == "total loss"
    for name in ("g.png", "g.svg"):
        path = save_figure(fig, tmp_path / name)
        head = path.read_bytes()[:200]
        if name.endswith("png"):
            assert head.startswith(b"\x89PNG")
        else:
            assert b"<?xml" in head or b"<svg" in head
    plt.close(fig)


def test_grid_extends_and_adds_new_N(stored_fit):
    fig = plot_grid(stored_fit, extend_to=1e11, add_N=(3e9,))
    axes = np.array(fig.axes).reshape(3, 4)
    assert axes[0, 3].get_title() == "T_m = 2, N = 3B"
    new_median = [ln for ln in axes[0, 3].get_lines() if ln.get_label() == "posterior median"]
    assert len(new_median) == 1 and max(new_median[0].get_xdata()) == pytest.approx(100.0)
    assert not [ln for ln in axes[0, 3].get_lines() if ln.get_label() == "observed"]
    plt.close(fig)


def test_write_fit_outputs(stored_fit, tmp_path):
    paths = write_fit_outputs(stored_fit, tmp_path / "out")
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["coefficients.csv", "coefficients.md", "diagnostics.json", "diagnostics.md",
                     "fit.nc", "grid.png", "grid.svg", "grid_zoom.png"]
    table = pd.read_csv(paths["coefficients (csv)"], index_col=0)
    expected = stored_fit.summary()
    np.testing.assert_allclose(table["mean"], expected["mean"], rtol=1e-12)
    assert list(table.index[:7]) == ["E", "a", "alpha", "b", "beta", "c", "gamma"]
    diag = json.loads(paths["diagnostics (json)"].read_text())
    assert diag["ok"] is False and any("R-hat" in f for f in diag["failures"])
    assert "NOT converged" in paths["diagnostics (markdown)"].read_text()
    back = Fit.load(paths["saved fit"])
    np.testing.assert_array_equal(back.draws("E"), stored_fit.draws("E"))


def test_markdown_table():
    md = markdown_table(pd.DataFrame({"x": [1.23456, 2.0]}, index=pd.Index(["a", "b"], name="k")))
    assert md.splitlines() == ["| k | x |", "|---|---|", "| a | 1.235 |", "| b | 2 |"]


def test_residual_plot_is_observed_minus_median(stored_fit):
    from bayeslaw.plots import plot_residuals

    fig = plot_residuals(stored_fit)
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines() if ln.get_label().startswith("T_m")}
    assert sorted(lines) == ["T_m = 2", "T_m = 4", "T_m = 8"]
    frame = stored_fit.data.frame
    sel = (frame["T_m"] == 4).to_numpy()
    median = predict(stored_fit, frame, kind="epistemic").table["median"].to_numpy()
    np.testing.assert_allclose(lines["T_m = 4"].get_ydata(), (frame["loss"] - median)[sel])
    np.testing.assert_allclose(lines["T_m = 4"].get_xdata(), frame["D"][sel] / 1e9)
    assert ax.get_xscale() == "log"
    plt.close(fig)


def test_group_effects_forest_plot(stored_fit):
    from bayeslaw.plots import plot_group_effects

    fig = plot_group_effects(stored_fit)
    titles = [ax.get_title().split(" (")[0] for ax in fig.axes if ax.get_visible()]
    assert titles == ["b_by_N", "b_by_T_m", "beta_by_N", "beta_by_T_m"]
    ax = fig.axes[1]
    medians = [ln for ln in ax.get_lines() if ln.get_label() == "posterior median"][0]
    np.testing.assert_allclose(medians.get_xdata(), np.median(stored_fit.draws("b_by_T_m"),
                                                              axis=0))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["T_m = 2", "T_m = 4", "T_m = 8"]
    segments = ax.collections[-1].get_segments()  # the 90% intervals
    lo, hi = np.quantile(stored_fit.draws("b_by_T_m"), [0.05, 0.95], axis=0)
    np.testing.assert_allclose([s[:, 0] for s in segments], np.column_stack([lo, hi]))
    plt.close(fig)
