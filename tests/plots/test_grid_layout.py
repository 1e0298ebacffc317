"""The grid figure stays readable for a sweep of any number of sizes.

At 23aba32 a sweep of about 45 sizes gave one row of 45 panels (issue 32's report; the
tests below draw such sweeps). At most ``MAX_COLUMNS`` panels a row now, wrapping; past
``MAX_PANELS`` panels neighbouring sizes share a panel, each run coloured by its N. The
figures are drawn from prior draws (``conftest.prior_fit``: no sampling): the layout, not the
posterior, is under test.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.plots import sweep as gf
from bayeslaw.report.folders import save_and_close
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate
from bayeslaw.spec.catalog import load_spec

from ..conftest import prior_fit

DPI = 120  # what bayeslaw.report.folders writes figures at


def _png_size(path):
    from PIL import Image

    with Image.open(path) as im:
        return im.size


def test_grid_layout_wraps_and_groups():
    # a few sizes: the grid of rows T_m, columns N, as before
    panels, rows, cols = gf.grid_layout([2.0, 4.0, 8.0], [1e8, 3e8, 1e9, 3e9])
    assert (rows, cols) == (3, 4)
    assert [(i, j, t, ns) for i, j, t, ns in panels][:5] == [
        (0, 0, 2.0, (1e8,)), (0, 1, 2.0, (3e8,)), (0, 2, 2.0, (1e9,)), (0, 3, 2.0, (3e9,)),
        (1, 0, 4.0, (1e8,))]
    # 45 sizes, no T_m (the IsoFLOP sweep): 45 panels of one size, 6 a row over 8 rows
    sizes = list(np.geomspace(1e8, 1e10, 45))
    panels, rows, cols = gf.grid_layout([None], sizes)
    assert (rows, cols) == (8, 6) and len(panels) == 45
    assert [ns for *_, ns in panels] == [(n,) for n in sizes]
    assert panels[6][:2] == (1, 0) and panels[-1][:2] == (7, 2)
    # 40 sizes x 3 T_m = 120 > 48: each T_m gets 2 rows of 6 panels of 3 or 4 sizes
    sizes = list(np.geomspace(1e8, 1e10, 40))
    panels, rows, cols = gf.grid_layout([2.0, 4.0, 8.0], sizes)
    assert (rows, cols) == (6, 6) and len(panels) == 36
    for t, first_row in ((2.0, 0), (4.0, 2), (8.0, 4)):
        mine = [p for p in panels if p[2] == t]
        assert {i for i, *_ in mine} == {first_row, first_row + 1}
        assert [n for *_, ns in mine for n in ns] == sizes  # every size once, in order
        assert {len(ns) for *_, ns in mine} == {3, 4}
    # 200 sizes, one T_m: 48 panels at most
    panels, rows, cols = gf.grid_layout([None], list(np.geomspace(1e8, 1e11, 200)))
    assert (rows, cols) == (8, 6) and len(panels) == 48


def _sweep(law, n_sizes, t_levels, seed):
    spec = load_spec(law=law).with_pooling("complete")
    frame = design(np.geomspace(1e8, 1e10, n_sizes), t_levels, np.geomspace(3e8, 2e10, 4))
    truth = {k: v for k, v in DEFAULT_TRUTH.items() if k in spec.free_params}
    frame, _ = simulate(spec, frame, truth, sigma=0.01, seed=seed)
    data = bl.load(frame)
    return prior_fit(spec, data, seed=seed)


@pytest.fixture(scope="module")
def iso_flop_like():
    """40 sizes, no T_m (chinchilla law): 41 panels with the next size's column."""
    return _sweep("chinchilla", 40, None, seed=1)


def _visible(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def _rows_cols(fig):
    geometry = _visible(fig)[0].get_subplotspec().get_gridspec().get_geometry()
    return geometry


def test_forty_sizes_wrap_at_six_panels_a_row(iso_flop_like, tmp_path):
    fig = gf.plot_grid(iso_flop_like, n_grid=16)
    assert _rows_cols(fig) == (7, 6)  # 41 panels: 40 sizes and the next one
    axes = _visible(fig)
    assert len(axes) == 41
    assert axes[0].get_title() == "N = 100M" and axes[-1].get_title().endswith("(new)")
    # every column's lowest panel says what the x axis is, and shows its ticks
    assert sum(ax.get_xlabel() == "tokens (billions)" for ax in axes) == 6
    path = save_and_close(fig, {"png": tmp_path / "grid.png"})["png"]
    width, height = _png_size(path)
    assert width <= 6 * 3.2 * DPI + 50 and height <= 7 * 2.6 * DPI + 50, (width, height)
    assert 0.5 <= width / height <= 2.0, (width, height)


def test_forty_sizes_at_three_depths_share_panels_coloured_by_size(tmp_path):
    fit = _sweep("looped_total", 40, (2, 4, 8), seed=2)
    fig = gf.plot_grid(fit, n_grid=16)
    assert _rows_cols(fig) == (6, 6)
    axes = _visible(fig)
    assert len(axes) == 36
    # 41 levels in 12 panels a depth: the first 5 panels hold 4 sizes (100M ... 143M)
    assert axes[0].get_title() == "T_m = 2, N = 100M - 143M"
    assert axes[6].get_title().startswith("T_m = 2, N = ")
    assert axes[12].get_title() == "T_m = 4, N = 100M - 143M"
    # a panel's runs in distinct colours, one per size
    colours = {tuple(line.get_color()) for line in axes[0].lines if line.get_linestyle() == "-"}
    assert len(colours) == 4
    # the legend: neutral keys, and the colours of the smallest, a middle and the largest N
    # (41 levels: the 40 sizes and the next one, 10B times the step 1.125)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Real", "Pred (median)", "Pred 50% band", "Pred 90% band",
                      "end of data", "N = 100M", "N = 1.06B", "N = 11.3B"], legend
    path = save_and_close(fig, {"png": tmp_path / "grid.png"})["png"]
    width, height = _png_size(path)
    assert width <= 6 * 3.2 * DPI + 50 and height <= 6 * 2.6 * DPI + 50, (width, height)


def test_three_sizes_keep_the_grid_of_rows_T_m_and_columns_N(tmp_path):
    fit = _sweep("looped_total", 3, (2, 4, 8), seed=3)
    fig = gf.plot_grid(fit, n_grid=16)
    assert _rows_cols(fig) == (3, 4)  # 3 sizes and the next one
    titles = [ax.get_title() for ax in _visible(fig)]
    assert titles[:4] == ["T_m = 2, N = 100M", "T_m = 2, N = 1B", "T_m = 2, N = 10B",
                          "T_m = 2, N = 100B (new)"]
    path = save_and_close(fig, {"png": tmp_path / "grid.png"})["png"]
    width, height = _png_size(path)
    assert width <= 4 * 3.2 * DPI + 50 and height <= 3 * 2.6 * DPI + 50, (width, height)
