"""The grid figure of a table of curves without N: one panel per curve, with its bands.

Before this figure, ``bayeslaw fit`` on a table ``run, D, loss`` wrote its coefficient tables
and then stopped with ``KeyError: 'N'`` in the grid (laid out as rows T_m x columns N). The
figures are drawn from prior draws (``conftest.prior_fit``: no sampling): what is under test is
where each curve goes and that its band is the prediction's, not the posterior.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import ArgumentError
from bayeslaw.plots.curves import curve_layout, short_label
from bayeslaw.plots.sweep import grid_zoom, plot_grid, zoom_options
from bayeslaw.report.folders import write_grid_figures
from bayeslaw.spec.catalog import load_spec

from ..conftest import curve_table, prior_fit

BANDS = ("Pred 50% band", "Pred 90% band")


def _fit(n_curves, seed, **table):
    data = bl.load(curve_table(n_curves, seed=seed, **table))
    return prior_fit(load_spec(law="curve_power"), data, seed=seed)


@pytest.fixture(scope="module")
def five():
    """Five curves, logged to 2e9 and 4e9 tokens in turn."""
    return _fit(5, seed=3, d_max=(2e9, 4e9))


def _visible(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def _band(ax, label):
    (band,) = [c for c in ax.collections if c.get_label() == label]
    return band.get_paths()[0].vertices


def _median(ax):
    (line,) = [ln for ln in ax.lines if ln.get_label() == "Pred (median)"]
    return line.get_xdata(), line.get_ydata()


def test_one_panel_per_curve_titled_with_its_run(five):
    fig = plot_grid(five, n_grid=20)
    axes = _visible(fig)
    assert [ax.get_title() for ax in axes] == ["c0", "c1", "c2", "c3", "c4"]
    assert axes[0].get_subplotspec().get_gridspec().get_geometry() == (1, 5)
    for ax in axes:  # the observed curve, the median, both bands; a log token axis
        assert {ln.get_label() for ln in ax.lines} >= {"Real", "Pred (median)"}
        assert {c.get_label() for c in ax.collections} == set(BANDS)
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "tokens (billions)"
    assert "each curve forecast to twice its largest D" in fig.texts[0].get_text()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Real", "Pred (median)", *BANDS, "end of data"]


def test_bands_are_the_predictions_at_the_drawn_points(five):
    """Every panel's median and bands are bl.predict's at the points it draws (same seed)."""
    fig = plot_grid(five, n_grid=20, seed=4)
    axes = _visible(fig)
    xs = [_median(ax)[0] for ax in axes]
    points = pd.concat([pd.DataFrame({"D": x * 1e9, "run": ax.get_title()})
                        for x, ax in zip(xs, axes, strict=True)], ignore_index=True)
    pred = bl.predict(five, points, seed=4).table
    for x, ax in zip(xs, axes, strict=True):
        mine = pred[pred["run"] == ax.get_title()]
        np.testing.assert_allclose(_median(ax)[1], mine["median"], rtol=1e-9)
        for label, tag in zip(BANDS, ("50", "90"), strict=True):
            verts = _band(ax, label)
            lower = [verts[np.isclose(verts[:, 0], v, rtol=1e-12), 1].min() for v in x]
            upper = [verts[np.isclose(verts[:, 0], v, rtol=1e-12), 1].max() for v in x]
            np.testing.assert_allclose(lower, mine[f"lower_{tag}"], rtol=1e-9)
            np.testing.assert_allclose(upper, mine[f"upper_{tag}"], rtol=1e-9)


def test_each_curve_is_forecast_to_twice_its_own_largest_D(five):
    fig = plot_grid(five, n_grid=20)
    largest = five.data.frame.groupby("run")["D"].max()
    for ax in _visible(fig):
        d_max = largest[ax.get_title()]
        assert d_max in (2e9, 4e9)
        x, _ = _median(ax)
        assert x.min() * 1e9 == pytest.approx(1e8) and x.max() * 1e9 == pytest.approx(2 * d_max)
        (end,) = [ln for ln in ax.lines if ln.get_label() == "end of data"]
        assert end.get_xdata()[0] * 1e9 == pytest.approx(d_max)
    # extend_to: every curve to the same D; forecast=False: the data's range, no end line
    fig = plot_grid(five, n_grid=20, extend_to=1e10)
    assert all(_median(ax)[0].max() == pytest.approx(10.0) for ax in _visible(fig))
    fig = plot_grid(five, n_grid=20, forecast=False)
    for ax in _visible(fig):
        assert _median(ax)[0].max() * 1e9 == pytest.approx(largest[ax.get_title()])
        assert "end of data" not in {ln.get_label() for ln in ax.lines}


def test_loss_ranges_own_shared_and_zoomed(five, tmp_path):
    # by default each panel spans its own curve: the panels' ranges differ
    fig = plot_grid(five, n_grid=20)
    ranges = {ax.get_title(): ax.get_ylim() for ax in _visible(fig)}
    assert len(set(ranges.values())) == 5
    for run, (lo, hi) in ranges.items():
        seen = five.data.frame.loc[five.data.frame["run"] == run, "loss"]
        assert lo < seen.min() and seen.max() < hi
    # one range given: every panel shares it
    fig = plot_grid(five, n_grid=20, ylim=(2.0, 3.0))
    assert {ax.get_ylim() for ax in _visible(fig)} == {(2.0, 3.0)}
    # the plateau zoom is each curve's own, stretched to its forecast median
    zoom = grid_zoom(five.data.frame)
    assert sorted(zoom) == ["c0", "c1", "c2", "c3", "c4"]
    fig = plot_grid(five, n_grid=20, **zoom_options(five, zoom, {}))
    largest = five.data.frame.groupby("run")["D"].max()
    for ax in _visible(fig):
        lo, hi = ax.get_ylim()
        x, median = _median(ax)
        assert lo <= zoom[ax.get_title()][0] and zoom[ax.get_title()][1] <= hi
        ahead = median[x * 1e9 > largest[ax.get_title()] * 1.001]
        assert len(ahead) and lo < ahead.min() and ahead.max() < hi
    paths = write_grid_figures(five, tmp_path, zoom=zoom, n_grid=20)
    assert {p.name for p in paths.values()} == {"grid.png", "grid.svg", "grid_zoom.png"}
    svg = (tmp_path / "grid.svg").read_text()
    assert all(f"<!-- {run} -->" in svg for run in ranges) and "N = " not in svg


def test_new_model_sizes_are_refused(five):
    with pytest.raises(ArgumentError, match="no N column"):
        plot_grid(five, add_N=(1e9,))


def test_points_left_out_of_the_fit_are_drawn_grey_beside_their_curve():
    """A spec's ``[data] min_portion`` leaves each curve's early points out of the fit; the
    figure draws them (``left_out``) as grey dots in their own curve's panel, at their D and
    loss on the panel's token scale, keyed in the legend after Real; without ``left_out``
    there are none."""
    data = bl.load(curve_table(5, seed=3, d_max=(2e9, 4e9)))
    kept = data.from_portion(0.3, 3)
    left = data.before_portion(0.3, 3)
    assert 0 < len(left) and len(left) + len(kept.frame) == len(data.frame)
    fit = prior_fit(load_spec(law="curve_power"), kept, seed=3)
    fig = plot_grid(fit, n_grid=12, left_out=left)
    for ax in _visible(fig):
        run = ax.get_title()
        (real,) = [ln for ln in ax.lines if ln.get_label() == "Real"]
        (dots,) = [ln for ln in ax.lines if ln.get_label() == "Real, not fitted"]
        fitted = kept.frame[kept.frame["run"] == run]
        scale = fitted["D"].to_numpy()[0] / real.get_xdata()[0]  # the panel's token unit
        mine = left[left["run"] == run]
        np.testing.assert_allclose(dots.get_xdata() * scale, mine["D"], rtol=1e-12)
        np.testing.assert_allclose(dots.get_ydata(), mine["loss"], rtol=1e-12)
        assert dots.get_xdata().max() * scale < fitted["D"].min()  # the early points
        assert dots.get_linestyle() == "None" and dots.get_color() == "0.6"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[:3] == ["Real", "Real, not fitted", "Pred (median)"]
    plain = plot_grid(fit, n_grid=12)
    assert not [ln for ax in _visible(plain) for ln in ax.lines
                if ln.get_label() == "Real, not fitted"]


def test_sixty_curves_share_panels_coloured_by_curve():
    """Past 48 curves neighbouring curves share a panel, as sizes do in a sweep's grid."""
    panels, rows, cols = curve_layout([f"c{k:02d}" for k in range(60)])
    assert (rows, cols) == (8, 6) and len(panels) == 48
    assert [r for *_, group in panels for r in group] == [f"c{k:02d}" for k in range(60)]
    fit = _fit(60, seed=5)
    fig = plot_grid(fit, n_grid=8)
    axes = _visible(fig)
    assert len(axes) == 48
    assert axes[0].get_title() == "c00 - c01" and axes[-1].get_title() == "c59"
    colours = {tuple(ln.get_color()) for ln in axes[0].lines if ln.get_label() == "Real"}
    assert len(colours) == 2
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend[-3:] == ["c00", "c30", "c59"]
    # points left out of the fit keep their grey key after Real in a legend of colour keys
    early = fit.data.frame.groupby("run").head(2)
    legend = [t.get_text() for t in plot_grid(fit, n_grid=8, left_out=early).legends[0]
              .get_texts()]
    assert legend[:3] == ["Real", "Real, not fitted", "Pred (median)"]
    assert legend[-3:] == ["c00", "c30", "c59"]


def test_a_few_curves_wrap_at_six_panels_a_row():
    panels, rows, cols = curve_layout([f"r{k}" for k in range(8)])
    assert (rows, cols) == (2, 6)
    assert [(i, j) for i, j, _ in panels][5:] == [(0, 5), (1, 0), (1, 1)]
    assert short_label("a" * 10) == "a" * 10
    long = "wandb/project-name/" + "x" * 40 + "-lr3e-4"
    assert len(short_label(long)) <= 36 and short_label(long).endswith("-lr3e-4")
