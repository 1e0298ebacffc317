"""What the grid figures do to be fast, and that the figure stays whole (issue 34, item 3).

Three changes cut the time of a fit folder's figures: the grid is laid out in one pass from
the measured sizes of its texts (:func:`bayeslaw.plots.panels.lay_out_grid`) instead of
``tight_layout`` and ``bbox_inches="tight"`` measuring every tick of every panel, and the
plateau zoom draws the full figure's prediction again instead of predicting anew; and the
panels' limits are fitted once, not after every artist (:func:`bayeslaw.plots.panels.limits_once`,
checked pixel for pixel against rescaling after each).  The tests
check what those changes could break: no text of a grid falls outside the figure or on
another text or panel (for a sweep, a wrapped sweep, a table of curves with a loss range per
panel, one narrow panel under a long title), and the zoom's bands are the full figure's.  The
figures are drawn from prior draws (``conftest.prior_fit``: no sampling).
"""

from __future__ import annotations

import numpy as np
import pytest

import bayeslaw as bl
import bayeslaw.plots.panels
from bayeslaw.errors import ArgumentError
from bayeslaw.plots.sweep import grid_zoom, plot_grid, zoom_options
from bayeslaw.report.folders import write_grid_figures
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate
from bayeslaw.spec.catalog import load_spec

from ..conftest import curve_table, prior_fit


@pytest.fixture(autouse=True)
def _close_figures():
    """Each test draws several grids: closed after it (matplotlib warns past 20 open)."""
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def _sweep(n_sizes, t_levels, seed):
    spec = load_spec(law="looped_total" if t_levels else "chinchilla").with_pooling("complete")
    frame = design(np.geomspace(1e8, 1e10, n_sizes), t_levels, np.geomspace(3e8, 2e10, 4))
    truth = {k: v for k, v in DEFAULT_TRUTH.items() if k in spec.free_params}
    frame, _ = simulate(spec, frame, truth, sigma=0.01, seed=seed)
    return prior_fit(spec, bl.load(frame), seed=seed)


def _curves(n_curves, seed, **table):
    return prior_fit(load_spec(law="curve_power"),
                     bl.load(curve_table(n_curves, seed=seed, **table)), seed=seed)


def layout_faults(fig) -> list[str]:
    """Texts of a drawn figure outside it, or on another text or another panel.

    The texts are the figure's title and legend, and each visible panel's title, axis
    labels and shown tick labels; a text may touch its own panel (tick labels sit beside
    it) but no other.  One pixel of slack.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    whole = fig.bbox
    texts, panels = [], []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        panels.append((k, ax.get_window_extent(renderer)))
        shown = [ax.title, ax.xaxis.label, ax.yaxis.label]
        for axis in (ax.xaxis, ax.yaxis):
            shown += [t for t in axis.get_ticklabels(which="both")]
        texts += [(k, f"panel {k} {t.get_text()!r}", t.get_window_extent(renderer))
                  for t in shown if t.get_visible() and t.get_text()]
    texts.append((-1, "figure title", fig._suptitle.get_window_extent(renderer)))
    texts += [(-1, "legend", legend.get_window_extent(renderer)) for legend in fig.legends]
    faults = []
    for _, name, box in texts:
        if (box.x0 < whole.x0 - 1 or box.y0 < whole.y0 - 1 or box.x1 > whole.x1 + 1
                or box.y1 > whole.y1 + 1):
            faults.append(f"{name} outside the figure")
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            (ka, na, ba), (kb, nb, bb) = texts[a], texts[b]
            if ka != kb and ba.shrunk(0.98, 0.9).overlaps(bb.shrunk(0.98, 0.9)):
                faults.append(f"{na} on {nb}")
    for owner, name, box in texts:
        for k, panel in panels:
            if k != owner and box.shrunk(0.98, 0.9).overlaps(panel.shrunk(0.99, 0.99)):
                faults.append(f"{name} on panel {k}")
    return faults


def test_the_fault_finder_finds_a_crowded_grid():
    """The check below can fail: panels pushed together put titles on tick labels."""
    fig = plot_grid(_sweep(3, (2, 4, 8), seed=3), n_grid=16)
    assert layout_faults(fig) == []
    fig.subplots_adjust(hspace=0.0, wspace=0.0, left=0.0, bottom=0.0, top=1.0)
    faults = layout_faults(fig)
    assert any("outside the figure" in f for f in faults), faults
    assert any("on panel" in f for f in faults), faults


@pytest.mark.parametrize("case", ["sweep", "wrapped sweep", "curves", "one curve"])
def test_every_text_of_a_grid_is_inside_and_clear(case):
    if case == "sweep":  # rows T_m x columns N; tick labels of the first column only
        fit = _sweep(3, (2, 4, 8), seed=3)
    elif case == "wrapped sweep":  # 41 panels over 7 rows: a column's lowest panel above
        fit = _sweep(40, None, seed=1)  # a hidden one shows its x tick labels and label
    elif case == "curves":  # each panel its own loss range: tick labels on every panel
        fit = _curves(8, seed=4, d_max=(2e9, 4e9))
    else:  # one panel, narrower than its title and legend: the figure widens
        fit = _curves(1, seed=5)
    fig = plot_grid(fit, n_grid=16)
    assert layout_faults(fig) == []
    if case == "one curve":
        assert fig.get_figwidth() > 3.2  # one panel's width, before widening
    zoom = plot_grid(fit, n_grid=16, prediction=fig.bayeslaw_prediction,
                     **zoom_options(fit, grid_zoom(fit.data.frame), {}))
    assert layout_faults(zoom) == []


@pytest.mark.parametrize("case", ["sweep", "sweep, linear tokens", "wrapped sweep", "curves",
                                  "curves, one loss range"])
def test_a_grid_drawn_with_its_limits_fitted_once_is_the_same_picture(case, monkeypatch):
    """``limits_once`` (no rescaling of the panels after each artist, one fit of their x range
    when drawn) leaves every pixel of the figure and every panel's limits as they are when
    each artist rescales them (the block patched to do nothing), for a sweep (log and linear
    tokens), a wrapped sweep, a table of curves each with its own loss range and one with a
    shared range."""
    import contextlib

    import bayeslaw.plots.curves
    import bayeslaw.plots.sweep

    options = {"n_grid": 16}
    if case.startswith("sweep"):
        fit = _sweep(3, (2, 4, 8), seed=3)
        if case.endswith("linear tokens"):
            options["xscale"] = "linear"
    elif case == "wrapped sweep":
        fit = _sweep(40, None, seed=1)
    else:
        fit = _curves(6, seed=4, d_max=(2e9, 4e9))
        if case.endswith("one loss range"):
            options["ylim"] = (2.0, 4.0)

    def picture():
        fig = plot_grid(fit, **options)
        fig.canvas.draw()
        limits = [ax.get_xlim() + ax.get_ylim() for ax in fig.axes if ax.get_visible()]
        return np.asarray(fig.canvas.buffer_rgba()).copy(), limits

    fast, fast_limits = picture()
    for module in (bayeslaw.plots.sweep, bayeslaw.plots.curves):
        monkeypatch.setattr(module, "limits_once", lambda axes: contextlib.nullcontext())
    slow, slow_limits = picture()
    assert fast_limits == slow_limits
    np.testing.assert_array_equal(fast, slow)


def _bands(fig):
    """Each panel's 90% band vertices and median, by panel title."""
    out = {}
    for ax in fig.axes:
        if ax.get_visible():
            (band,) = [c for c in ax.collections if c.get_label() == "Pred 90% band"]
            (median,) = [ln for ln in ax.lines if ln.get_label() == "Pred (median)"]
            out[ax.get_title()] = (band.get_paths()[0].vertices, median.get_ydata())
    return out


def test_the_zoom_draws_the_full_figures_prediction(monkeypatch, tmp_path):
    fit = _sweep(3, (2, 4, 8), seed=3)
    calls = []
    real = bayeslaw.plots.panels.predict

    def counting(*args, **kwargs):
        calls.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(bayeslaw.plots.panels, "predict", counting)
    zoom = grid_zoom(fit.data.frame)
    paths = write_grid_figures(fit, tmp_path, zoom=zoom, n_grid=16)
    assert {p.name for p in paths.values()} == {"grid.png", "grid.svg", "grid_zoom.png"}
    assert len(calls) == 1  # one prediction for both figures
    # the zoom's bands are the full figure's at the same panels (not another draw of them)
    full = plot_grid(fit, n_grid=16)
    zoomed = plot_grid(fit, n_grid=16, prediction=full.bayeslaw_prediction,
                       **zoom_options(fit, zoom, {}))
    bands_full, bands_zoom = _bands(full), _bands(zoomed)
    assert set(bands_zoom) < set(bands_full)  # the full figure has the new size's column
    for title, (band, median) in bands_zoom.items():
        np.testing.assert_array_equal(band, bands_full[title][0])
        np.testing.assert_array_equal(median, bands_full[title][1])
    # a fresh prediction (another seed) differs: the equality above is not vacuous
    other = plot_grid(fit, n_grid=16, seed=1, **zoom_options(fit, zoom, {}))
    some = next(iter(bands_zoom))
    assert not np.array_equal(_bands(other)[some][0], bands_zoom[some][0])


def test_a_prediction_that_does_not_fit_the_figure_is_refused():
    fit = _sweep(3, (2, 4, 8), seed=3)
    pred = plot_grid(fit, n_grid=16).bayeslaw_prediction
    with pytest.raises(ArgumentError, match="no point of run .* at D = "):
        plot_grid(fit, n_grid=20, prediction=pred)  # other D grids
    with pytest.raises(ArgumentError, match="made with .*kind.*pass the same options"):
        plot_grid(fit, n_grid=16, kind="epistemic", prediction=pred)
    with pytest.raises(ArgumentError, match="seed=2"):
        plot_grid(fit, n_grid=16, seed=2, prediction=pred)


def test_a_total_curve_is_drawn_with_its_own_exit_distribution_along_D():
    """A step table's total drifts from checkpoint to checkpoint: the grid's dense points take
    each D's interpolated q (and its entropy), the last one past the data."""
    import numpy as np
    import pandas as pd

    from bayeslaw import constants as C
    from bayeslaw.plots.panels import panel_points

    q = np.array([[0.5, 0.5], [0.3, 0.7], [0.1, 0.9]])
    frame = pd.DataFrame({C.RUN: "r/total", C.D: [1e9, 2e9, 4e9], C.N: 1e8, C.T_M: 2.0})
    for k, col in enumerate(C.EXIT_WEIGHTS):
        frame[col] = q[:, k] if k < 2 else 0.0
    frame[C.EXIT_ENTROPY] = -(q * np.log(q)).sum(axis=1)
    runs = frame.groupby(C.RUN).first().drop(columns=C.D)
    pts = panel_points(runs, frame, 8e9, 4)  # D = 1, 2, 4, 8 (x 1e9)
    w = pts[list(C.EXIT_WEIGHTS[:2])].to_numpy()
    np.testing.assert_allclose(w, [[0.5, 0.5], [0.3, 0.7], [0.1, 0.9], [0.1, 0.9]], atol=1e-12)
    np.testing.assert_allclose(pts[C.EXIT_ENTROPY], -(w * np.log(w)).sum(axis=1), rtol=1e-12)


def test_the_grid_draws_from_a_thinned_posterior_within_monte_carlo_error(small_fit):
    """The grid figure's median and bands come from at most FIGURE_DRAWS draws, every k-th of
    each chain, and stay within Monte Carlo error of bl.predict's from every draw.

    Tolerance: with Student-t noise (nu about 4) a 95% quantile from 1,000 draws has a
    standard error of about 0.14 scale units, 3% of the 90% band's width (4.3 units); the
    two predictions draw their noise independently, so their gap's error is about 3.4%, and
    the largest of a thousand correlated points reaches about 4 of them, 0.14 (0.12 measured
    on the bundled sweep's fit: ``benchmarks/results/figures_2026-12-05.md``).  0.2 of the
    width bounds every point; the median over points must be under 0.05.
    """
    fit = small_fit[0] if isinstance(small_fit, tuple) else small_fit
    limit = bayeslaw.plots.panels.FIGURE_DRAWS
    assert fit.n_draws >= 4 * limit  # the thinning is exercised
    thinned = bayeslaw.plots.panels.figure_posterior(fit)
    post, full_post = thinned.idata.posterior, fit.idata.posterior
    assert thinned.n_draws <= limit and thinned.n_draws > limit // 2
    assert post.sizes["chain"] == full_post.sizes["chain"]  # every chain, evenly thinned
    step = full_post.sizes["draw"] // post.sizes["draw"]
    np.testing.assert_array_equal(post["E"].values, full_post["E"].values[:, ::step])
    pred = plot_grid(fit, forecast=False, n_grid=30).bayeslaw_prediction
    assert pred.attrs["draws"] == thinned.n_draws
    full = bl.predict(fit, pred[["run", "N", "D", "T_m"]]).table
    width = (full["upper_90"] - full["lower_90"]).to_numpy()
    for column in ("median", "lower_50", "upper_50", "lower_90", "upper_90"):
        gap = np.abs(pred[column].to_numpy() - full[column].to_numpy()) / width
        assert gap.max() <= 0.2 and np.median(gap) <= 0.05, (column, gap.max(), np.median(gap))
    # not vacuous: the thinned bands are not the full ones
    assert not np.allclose(pred["lower_90"], full["lower_90"], rtol=0, atol=1e-12)


def test_a_sweeps_points_left_out_are_drawn_in_their_runs_panel():
    """The sweep grid (tables with N) draws ``left_out`` as the curve grid does: each run's
    grey dots in its own panel, at its points' D (in billions) and loss; none without it."""
    fit = _sweep(3, [2, 4, 8], seed=2)
    frame = fit.data.frame
    left = frame.groupby("run").head(1)  # any rows of the fitted runs stand in for them
    fig = plot_grid(fit, n_grid=12, left_out=left)
    drawn = 0
    for ax in [a for a in fig.axes if a.get_visible()]:
        dots = [ln for ln in ax.lines if ln.get_label() == "Real, not fitted"]
        for ln in dots:
            x, y = ln.get_xdata() * 1e9, ln.get_ydata()
            rows = left[np.isclose(left["D"], x[0]) & np.isclose(left["loss"], y[0])]
            assert len(rows) == 1 and len(x) == 1
        drawn += len(dots)
    assert drawn == frame["run"].nunique()
    assert "Real, not fitted" in [t.get_text() for t in fig.legends[0].get_texts()]
    plain = plot_grid(fit, n_grid=12)
    assert not [ln for a in plain.axes for ln in a.lines if ln.get_label() == "Real, not fitted"]
