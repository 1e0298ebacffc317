"""Plumbing on the stored small posterior: predictions, the grid figure, output folders."""

import json
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from bayeslaw.data.table import run_label, size_label
from bayeslaw.plots.figures import log_ticks, plot_backtest
from bayeslaw.plots.sweep import next_N, plateau_ylim, plot_grid
from bayeslaw.posterior.prediction import predict
from bayeslaw.posterior.result import Fit
from bayeslaw.report.document import markdown_table
from bayeslaw.report.folders import save_figure, write_fit_outputs


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


def _lines(ax, label):
    return [ln for ln in ax.get_lines() if ln.get_label() == label]


def test_grid_figure_layout_and_lines(stored_fit, tmp_path):
    fig = plot_grid(stored_fit)
    axes = np.array(fig.axes).reshape(3, 4)  # the data's 3 x 3 and the forecast column
    titles = [[ax.get_title() for ax in row] for row in axes]
    assert titles[0][0] == "T_m = 2, N = 100M" and titles[2][2] == "T_m = 8, N = 1B"
    ax = axes[1, 2]  # T_m = 4, N = 1B
    observed = _lines(ax, "Real")[0]
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
    assert axes[0, 3].get_title() == "T_m = 2, N = 3B (new)"
    new_median = _lines(axes[0, 3], "Pred (median)")
    assert len(new_median) == 1 and max(new_median[0].get_xdata()) == pytest.approx(100.0)
    assert not _lines(axes[0, 3], "Real")
    # an explicit forecast replaces the default one: no second new column
    fig2 = plot_grid(stored_fit, extend_to=1e11)
    assert len(fig2.axes) == 9
    plt.close(fig)
    plt.close(fig2)


def test_next_N_is_the_median_geometric_step():
    assert next_N([1e8, 3e8, 1e9, 3e8]) == pytest.approx(1e9 * np.median([3.0, 10 / 3]))
    # one irregular step does not set it (the two largest levels alone would give 6.4e9)
    assert next_N([1e8, 2e8, 4e8, 1.6e9]) == pytest.approx(3.2e9)
    assert next_N([5e8]) is None


def _legend_texts(fig):
    return [t.get_text() for t in fig.legends[0].get_texts()]


def _grid_checks(fig, fit, xscale, new_column=True):
    """The default grid of ``fit``: forecast to 2 x max D, the next-N column (not in the zoom,
    whose loss range a larger model's curve would leave), Real / Pred."""
    frame = fit.data.frame
    d_end = 2 * frame["D"].max() / 1e9
    axes = np.array(fig.axes).reshape(3, 4 if new_column else 3)
    if new_column:
        assert [ax.get_title() for ax in axes[:, 3]] == [
            f"T_m = {t}, N = 3.17B (new)" for t in (2, 4, 8)]
        assert not _lines(axes[0, 3], "Real") and _lines(axes[0, 3], "Pred (median)")
    for ax in axes.flat:
        assert ax.get_xscale() == xscale
        assert ax.get_xlim()[1] >= d_end  # the axis reaches twice the largest D
        (median,) = _lines(ax, "Pred (median)")
        assert max(median.get_xdata()) == pytest.approx(d_end)
    for ax in axes[:, :3].flat:  # the end of the data is marked where the forecast starts
        (end,) = _lines(ax, "end of data")
        assert end.get_xdata()[0] == pytest.approx(frame["D"].max() / 1e9)
    if xscale == "linear":
        assert axes[0, 0].get_xlim()[0] == 0.0
    assert _legend_texts(fig) == ["Real", "Pred (median)", "Pred 50% band", "Pred 90% band",
                                  "end of data"]
    assert ("forecast to 40B tokens and N = 3.17B" if new_column else
            "forecast to 40B tokens") in fig._suptitle.get_text()


@pytest.fixture()
def saved_figures(monkeypatch):
    """Every figure ``save_figure`` writes, by file name (the last one written wins)."""
    import bayeslaw.report.folders

    real, figures = bayeslaw.report.folders.save_figure, {}

    def spy(fig, path, **options):
        figures[Path(path).name] = fig
        return real(fig, path, **options)

    monkeypatch.setattr(bayeslaw.report.folders, "save_figure", spy)
    return figures


@pytest.fixture()
def no_sampling_fit(monkeypatch, stored_fit):
    """``bayeslaw fit`` without MCMC: the fit step returns the stored posterior."""
    import bayeslaw.inference.sampling

    calls = []

    def fake_fit(data, *args, **kwargs):
        calls.append(data)
        return stored_fit

    monkeypatch.setattr(bayeslaw.inference.sampling, "fit", fake_fit)
    return calls


@pytest.mark.parametrize("xscale", ["log", "linear"])
def test_fit_command_grid_forecasts_by_default(xscale, no_sampling_fit, saved_figures,
                                               stored_fit, tmp_path, capsys):
    """The figures ``bayeslaw fit`` writes (cmd_fit's call path, the fit step stubbed)."""
    from bayeslaw.cli.commands import main

    out = tmp_path / "out"
    args = ["fit", "--out", str(out), "--no-progress"]
    assert main(args + (["--xscale", xscale] if xscale != "log" else [])) == 0
    assert len(no_sampling_fit) == 1
    assert {"grid.png", "grid.svg", "grid_zoom.png"} <= {p.name for p in out.iterdir()}
    for name in ("grid.png", "grid.svg", "grid_zoom.png"):
        _grid_checks(saved_figures[name], stored_fit, xscale, name != "grid_zoom.png")
    zoom = saved_figures["grid_zoom.png"].axes[0].get_ylim()
    assert zoom == pytest.approx(plateau_ylim(stored_fit.data.frame))
    assert (out / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(out / "grid.png") in capsys.readouterr().out


def test_fit_command_xscale_needs_D(no_sampling_fit, tmp_path, capsys):
    from bayeslaw.cli.commands import main

    table = tmp_path / "final.csv"
    pd.DataFrame({"run": ["a", "b", "c"], "N": [1e8, 3e8, 1e9], "P": [1, 2, 4],
                  "loss": [3.1, 2.9, 2.7]}).to_csv(table, index=False)
    assert main(["fit", str(table), "--xscale", "linear", "--out", str(tmp_path)]) == 2
    assert "no D column" in capsys.readouterr().err
    assert not no_sampling_fit  # refused before fitting


def test_plot_command_xscale_and_no_forecast(saved_figures, stored_fit, tmp_path):
    from bayeslaw.cli.commands import main

    stored = str(Path(__file__).parents[1] / "fixtures" / "small_fit.nc")
    assert main(["plot", stored, "--xscale", "linear", "--out", str(tmp_path / "a.png")]) == 0
    _grid_checks(saved_figures["a.png"], stored_fit, "linear")
    assert main(["plot", stored, "--no-forecast", "--out", str(tmp_path / "b.png")]) == 0
    fig = saved_figures["b.png"]
    assert len(fig.axes) == 9 and fig.axes[0].get_xscale() == "log"
    assert max(_lines(fig.axes[0], "Pred (median)")[0].get_xdata()) == pytest.approx(
        stored_fit.data.frame.query("run == 'N100M_T2'")["D"].max() / 1e9)
    assert "end of data" not in _legend_texts(fig)


def test_plot_grid_refuses_an_unknown_xscale(stored_fit):
    from bayeslaw.errors import ArgumentError

    with pytest.raises(ArgumentError, match="xscale must be 'log' or 'linear'"):
        plot_grid(stored_fit, xscale="symlog")


def _tick_label_problems(ax, need_labels=True):
    """What makes an axis's x tick labels unreadable, after the figure is drawn: labelled
    minor ticks, overlapping labels, fewer than two labels (``need_labels``: an axis whose
    labels are shown, not one of the inner panels of a shared axis)."""
    renderer = ax.figure.canvas.get_renderer()
    lo, hi = sorted(ax.get_xlim())

    def shown(minor):
        return [t for t in ax.xaxis.get_ticklabels(minor=minor)
                if t.get_visible() and t.get_text() and lo <= t.get_position()[0] <= hi]

    problems = [f"minor label {t.get_text()!r}" for t in shown(minor=True)]
    boxes = sorted((t.get_window_extent(renderer) for t in shown(False) + shown(True)),
                   key=lambda b: b.x0)
    problems += [f"labels overlap at x = {b.x0:.0f} px"
                 for a, b in zip(boxes, boxes[1:], strict=False) if a.x1 > b.x0]
    if need_labels and len(shown(minor=False)) < 2:
        problems.append(f"{len(shown(minor=False))} labelled tick(s) on [{lo:g}, {hi:g}]")
    return problems


def test_tick_check_catches_matplotlibs_minor_labels():
    """The check below can fail: matplotlib's own log axis on a short range labels minor
    ticks ("2x10^0 3x10^0 ..."), and in a grid panel's width the labels overlap."""
    fig, ax = plt.subplots(figsize=(3.2, 2.6))
    ax.plot([1.8, 7], [1, 2])
    ax.set_xscale("log")
    fig.canvas.draw()
    problems = _tick_label_problems(ax)
    assert any("minor label" in p for p in problems)
    assert any("overlap" in p for p in problems)
    plt.close(fig)


@pytest.mark.parametrize("lo, hi", [(20, 25), (1.8, 7), (4.5, 20), (1.5, 2.9), (0.12, 0.95),
                                    (0.9, 8), (0.03, 40), (0.01, 200), (1e-3, 1e4),
                                    (3e-5, 2e6)])
def test_log_ticks_are_readable_on_any_range(lo, hi):
    fig, ax = plt.subplots(figsize=(3.2, 2.6))
    ax.plot([lo, hi], [1, 2])
    ax.set_xscale("log")
    log_ticks(ax.xaxis)
    fig.tight_layout()
    fig.canvas.draw()
    assert _tick_label_problems(ax) == []
    plt.close(fig)


def _pixels(fig, matplotlib_minor_ticks):
    """``fig`` drawn to RGBA pixels, its log x axes' minor ticks drawn by
    :class:`MinorTickMarks` or (``matplotlib_minor_ticks``) by matplotlib's own ``Tick``s."""
    from matplotlib.ticker import LogLocator

    from bayeslaw.plots.figures import MINOR_SUBS, MinorTickMarks

    for ax in fig.axes:
        marks = [line for line in ax.lines if isinstance(line, MinorTickMarks)]
        if matplotlib_minor_ticks and marks:
            marks[0].remove()
            ax.xaxis.set_minor_locator(LogLocator(subs=MINOR_SUBS))
    fig.canvas.draw()
    out = np.asarray(fig.canvas.buffer_rgba()).copy()
    plt.close(fig)
    return out


@pytest.mark.parametrize("lo, hi, marked", [(20, 25, True), (0.03, 40, True), (1.8, 7, False),
                                            (1e-3, 1e4, False), (1e-9, 1e9, False)])
def test_minor_tick_marks_look_like_matplotlibs_minor_ticks(lo, hi, marked):
    """Pixel for pixel, on short and long ranges.  ``marked``: the range has minor ticks
    (on 1.8-7 every one is a major tick; on the long ranges the axis thins the decades and
    draws none), and there the check can fail: without them the pixels differ."""
    def figure():
        fig, ax = plt.subplots(figsize=(3.2, 2.6))
        ax.plot([lo, hi], [1, 2])
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        fig.tight_layout()
        return fig

    ours, theirs = _pixels(figure(), False), _pixels(figure(), True)
    assert ours.shape == theirs.shape and np.array_equal(ours, theirs)
    bare = figure()
    bare.axes[0].lines[-1].remove()
    assert np.array_equal(_pixels(bare, False), theirs) is not marked


@pytest.mark.parametrize("direction", ["in", "inout"])
def test_minor_tick_marks_follow_the_tick_direction(direction):
    import matplotlib as mpl

    def figure():
        fig, ax = plt.subplots(figsize=(3.2, 2.6))
        ax.plot([0.03, 40], [1, 2])
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        log_ticks(ax.xaxis)  # again: still one set of marks
        return fig

    with mpl.rc_context({"xtick.direction": direction}):
        ours, theirs = _pixels(figure(), False), _pixels(figure(), True)
    assert np.array_equal(ours, theirs)


def test_the_grid_figure_looks_as_with_matplotlibs_minor_ticks(stored_fit):
    ours = _pixels(plot_grid(stored_fit), False)
    assert np.array_equal(ours, _pixels(plot_grid(stored_fit), True))
    bare = plot_grid(stored_fit)
    for ax in bare.axes:
        for line in [line for line in ax.lines if line.get_label() == "_minor ticks"]:
            line.remove()
    assert not np.array_equal(_pixels(bare, False), ours)  # the grid has minor ticks to draw


def _fake_backtest(fit, held_share):
    """A backtest-like forecast table: the last ``held_share`` of every curve held out."""
    frame = fit.data.frame
    held = frame[frame.groupby("run")["D"].rank(pct=True) > 1 - held_share]
    return held, predict(fit, held, probs=(0.5, 0.9), seed=2).table


def test_every_log_axis_has_readable_tick_labels(stored_fit):
    from bayeslaw.plots.figures import plot_residuals

    held, forecast = _fake_backtest(stored_fit, 0.3)
    short = SimpleNamespace(frame=held)  # panels of held-out points only: under a decade
    figures = [plot_grid(stored_fit), plot_grid(stored_fit, ylim=(2.4, 3.6)),
               plot_residuals(stored_fit), plot_backtest(stored_fit.data, forecast),
               plot_backtest(short, forecast)]
    for fig in figures:
        fig.canvas.draw()
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_xscale() == "log"]
        assert axes
        for ax in axes:
            need = not ax.get_shared_x_axes().get_siblings(ax)[1:] or (
                ax.get_subplotspec().is_last_row())
            assert _tick_label_problems(ax, need) == [], ax.get_title()
        plt.close(fig)


def test_backtest_figure_real_and_pred(stored_fit):
    held, forecast = _fake_backtest(stored_fit, 0.3)
    fig = plot_backtest(stored_fit.data, forecast, title="fake")
    assert _legend_texts(fig) == ["Pred 90% band", "Pred (median)", "Real (held-out)",
                                  "Real (training)"]
    ax = fig.axes[0]
    run = ax.get_title()
    f = forecast[forecast["run"] == run].sort_values("D")
    np.testing.assert_allclose(_lines(ax, "Pred (median)")[0].get_ydata(), f["median"])
    np.testing.assert_allclose(_lines(ax, "Real (held-out)")[0].get_ydata(), f["loss"])
    seen = stored_fit.data.frame.query("run == @run and D < @f.D.min()")
    np.testing.assert_allclose(_lines(ax, "Real (training)")[0].get_ydata(), seen["loss"])
    assert [ax.get_xlabel() for ax in fig.axes if ax.get_visible()][-4:] == [
        "tokens (billions)"] * 4  # the lowest drawn panel of each column
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
    from bayeslaw.plots.figures import plot_residuals

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
    from bayeslaw.plots.figures import plot_group_effects

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
