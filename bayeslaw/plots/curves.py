"""The grid figure of a table of curves without model sizes: one panel per curve.

A table of curves (``run``, ``D``, ``loss``, no ``N``: the law ``curve_bend``) has no sizes or
depths to lay its panels out by, so each curve gets a panel of its own, titled with its run's
name, in the sweep's layout (:func:`bayeslaw.plots.panels.grid_layout`: at most six panels a row;
past 48 curves, neighbouring curves in the table's order share a panel, each in its own
colour).  Each panel draws the observed curve ("Real"), the posterior median and central bands
("Pred"), by default forecast to twice that curve's own largest ``D``.  The curves' loss levels
may differ widely (curves of several tasks), so each panel has its own loss range unless one is
given; the plateau zoom (:func:`plateau_ylims`) is each curve's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import constants as C
from ..errors import ArgumentError
from .panels import (
    bands_title,
    by_run,
    colour_keys,
    draw_run,
    finish_axes,
    finish_legend,
    grid_layout,
    grid_prediction,
    limits_once,
    mark_end_of_data,
    panel_points,
    plateau_ylim,
    schedule_ends,
    set_loss_range,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

#: Longest panel title: longer run names keep their start and end around "...".
TITLE_WIDTH = 36


def curve_layout(runs: Sequence[str]) -> tuple[list[tuple[int, int, tuple[str, ...]]], int, int]:
    """Where each curve's panel goes: ``(row, column, runs)``, rows, columns.

    :func:`~bayeslaw.plots.panels.grid_layout`'s rule with one row level and the curves, in
    ``runs``' order, in place of the N levels.
    """
    panels, nrow, ncol = grid_layout([None], [float(k) for k in range(len(runs))])
    return [(i, j, tuple(runs[int(k)] for k in ks)) for i, j, _, ks in panels], nrow, ncol


def curve_forecast(fit: Fit) -> dict[str, float]:
    """The default forecast of each curve: to twice its own largest ``D``, by run name."""
    largest = fit.data.frame.groupby(C.RUN, sort=False)[C.D].max()
    return {str(run): 2.0 * float(d) for run, d in largest.items()}


def token_axis(d_max: float) -> tuple[float, str]:
    """How the D axis is drawn: the scale D is divided by, and the axis label."""
    if d_max >= 1e8:
        return 1e9, "tokens (billions)"
    if d_max >= 1e5:
        return 1e6, "tokens (millions)"
    return 1.0, "tokens"


def short_label(run: Any, width: int = TITLE_WIDTH) -> str:
    """A run's name as a panel title: its start and end around ``...`` past ``width``."""
    text = str(run)
    if len(text) <= width:
        return text
    half = (width - 3) // 2
    return f"{text[:half]}...{text[-half:]}"


def plateau_ylims(frame: pd.DataFrame) -> dict[str, tuple[float, float]] | None:
    """Each curve's plateau zoom (:func:`~bayeslaw.plots.panels.plateau_ylim` of its rows).

    ``None`` when no curve has two points.
    """
    zooms = {str(run): plateau_ylim(g) for run, g in frame.groupby(C.RUN, sort=False)
             if len(g) > 1}
    return {run: z for run, z in zooms.items() if z is not None} or None


def _panel_ylim(ylim: tuple[float, float] | Mapping[str, tuple[float, float]] | None,
                runs: Sequence[str], forecast: pd.DataFrame) -> tuple[float, float] | None:
    """A panel's loss range from one range or each curve's.

    Each curve's (a zoom on its data): the union of its curves' ranges, stretched to hold
    the ``forecast`` medians drawn past their data.
    """
    if not isinstance(ylim, Mapping):
        return ylim
    ranges = [ylim[r] for r in runs if r in ylim]
    if not ranges:
        return None
    lo, hi = min(lo for lo, _ in ranges), max(hi for _, hi in ranges)
    if len(forecast):
        margin = 0.05 * (hi - lo)
        lo = min(lo, float(forecast["median"].min()) - margin)
        hi = max(hi, float(forecast["median"].max()) + margin)
    return lo, hi


def _colours(names: Sequence[str]) -> Any:
    """The colour of each curve in a panel of several (viridis over its place in the table)."""
    import matplotlib as mpl

    place = {name: k for k, name in enumerate(names)}
    cmap = mpl.colormaps["viridis"]
    return lambda name: cmap(0.9 * place[name] / max(len(names) - 1, 1))


def plot_curve_grid(fit: Fit, *, probs: Sequence[float] = C.BAND_PROBS,
                    kind: str = "predictive", forecast: bool = True,
                    extend_to: float | None = None, add_N: Sequence[float] = (),
                    xscale: str = "log",
                    ylim: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
                    n_grid: int = 120, panel_size: tuple[float, float] = (3.2, 2.6),
                    seed: int = 0, schedule: Any = None,
                    prediction: pd.DataFrame | None = None,
                    left_out: pd.DataFrame | None = None) -> Any:
    """The grid figure of a table of curves: one panel per curve (the module docstring).

    Takes :func:`~bayeslaw.plots.sweep.plot_grid`'s options, which calls it for a table
    without ``N``.  ``forecast`` (with no ``extend_to``) continues each curve to twice its
    own largest ``D``; ``extend_to`` continues every curve to that ``D``.  ``ylim`` is one
    loss range for every panel (then shared), or each curve's own by run name (a panel of
    several curves spans theirs); by default each panel spans its own observed losses and
    forecast medians.  ``add_N`` is refused: there are no model sizes.  ``prediction``,
    ``left_out`` and the returned figure's ``bayeslaw_prediction`` are
    :func:`~bayeslaw.plots.sweep.plot_grid`'s.
    """
    import matplotlib.pyplot as plt

    if add_N:
        raise ArgumentError("the table has no N column (a population of curves without model "
                            "sizes): add_N cannot forecast a new model size")
    frame = fit.data.frame
    reach = extend_to if extend_to is not None or not forecast else curve_forecast(fit)
    runs = fit.data.run_table().drop(columns=[C.D, C.LOSS], errors="ignore")
    points = panel_points(runs, frame, reach, n_grid, schedule_ends(fit, schedule))
    pred = grid_prediction(fit, points, prediction, kind=kind, probs=probs, seed=seed,
                           schedule=schedule)
    pred[C.RUN] = pred[C.RUN].astype(str)
    names = [str(r) for r in fit.data.runs]
    panels, nrow, ncol = curve_layout(names)
    scale, xlabel = token_axis(float(pred[C.D].max()))
    shared = ylim is not None and not isinstance(ylim, Mapping)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow),
                             sharex=True, sharey=shared, squeeze=False)
    colour = _colours(names) if any(len(group) > 1 for *_, group in panels) else None
    observed = frame.assign(**{C.RUN: frame[C.RUN].astype(str)})
    left = by_run(left_out)
    with limits_once(axes):
        for i, j, group in panels:
            ax, d_seen, d_drawn = axes[i, j], 0.0, 0.0
            for run in group:
                p = pred[pred[C.RUN] == run]
                obs = observed[observed[C.RUN] == run]
                d_seen = max(d_seen, draw_run(ax, p, obs, probs, colour and colour(run), scale,
                                              left.get(run)))
                d_drawn = max(d_drawn, float(p[C.D].max()))
            if d_seen and d_drawn > d_seen * (1 + 1e-9):
                mark_end_of_data(ax, d_seen, scale)
            ends = (short_label(group[0]), short_label(group[-1]))
            ax.set_title(" - ".join(dict.fromkeys(ends)),
                         fontsize=9, y=1.0)  # placed: no measuring of the ticks
            if not shared:
                mine = pred[pred[C.RUN].isin(group)]
                set_loss_range(ax, observed[observed[C.RUN].isin(group)], mine,
                               _panel_ylim(ylim, group, mine[mine[C.D] > d_seen]))
    finish_axes(axes, [(i, j) for i, j, _ in panels], xscale, xlabel)
    if shared:
        set_loss_range(axes[0, 0], frame, pred, ylim)
    title = bands_title(fit, probs, kind)
    if isinstance(reach, Mapping):
        title += "; each curve forecast to twice its largest D"
    elif reach and reach > float(frame[C.D].max()):
        title += f"; forecast to D = {reach:.3g}"
    keys = None if colour is None else colour_keys(colour, names, short_label)
    finish_legend(fig, axes, probs, title, keys)
    fig.bayeslaw_prediction = pred
    return fig

