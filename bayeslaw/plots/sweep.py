"""The grid figure of a fit: every curve beside its posterior median and credible bands.

One panel per (``T_m``, ``N``) cell of the sweep shows the observed curve(s) ("Real") beside
the posterior median and central bands ("Pred"), by default forecast past the data (to twice
the largest D, and a column at the sweep's next N) where the bands widen.  A table of curves
without ``N`` gets one panel per curve instead (:mod:`bayeslaw.plots.curves`); the layout, the
drawing of a run, the axes and the legend of both are :mod:`bayeslaw.plots.panels`.
:func:`grid_zoom` and :func:`zoom_options` give the zoomed grid of the plateau, where the
bands are visible; :func:`bayeslaw.report.folders.write_grid_figures` writes both to a fit's folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.table import run_label, size_label
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


def next_N(levels: Sequence[float]) -> float | None:
    """The next model size of a sweep: the largest N times its geometric step.

    The step is the *median ratio of consecutive N levels* (``100M, 300M, 1B`` -> 3.17, so
    ``3.17B``): a sweep's sizes grow by a ratio, and the median, unlike the ratio of the two
    largest levels alone, is not set by one irregular level.  ``None`` with fewer than two
    distinct levels.
    """
    n = np.unique(np.asarray(levels, float))
    if len(n) < 2:
        return None
    return float(n[-1] * np.median(n[1:] / n[:-1]))


def default_forecast(fit: Fit, schedule: Any = None) -> tuple[float, tuple[float, ...]]:
    """What :func:`plot_grid` forecasts by default: ``(extend_to, add_N)``.

    Every curve to twice the largest ``D`` of the data, and one column at :func:`next_N` of
    the data's N levels (none when the law has no ``N`` term, e.g. ``iso_depth``'s
    ``N_once`` / ``N_rec``, or the sweep has one N).  With a schedule-aware law: every
    curve to the end of its run's schedule (its horizon), and no new size (it has none).
    """
    ends = schedule_ends(fit, schedule)
    if ends:
        return max(ends.values()), ()
    frame = fit.data.frame
    new = next_N(frame[C.N].unique()) if C.N in fit.spec.law_obj.covariates else None
    return 2.0 * float(frame[C.D].max()), (() if new is None else (new,))


def _tokens_text(d: float) -> str:
    return f"{d / 1e12:.3g}T" if d >= 1e12 else f"{d / 1e9:.3g}B"


def _new_N_points(runs: pd.DataFrame, frame: pd.DataFrame, add_N: Sequence[float],
                  t_levels: list, extend_to: float | None, n_grid: int) -> list[pd.DataFrame]:
    """Curves of new model sizes, one per run of the largest N in each ``T_m`` row.

    A new size copies that run's other columns (``T_m``, ``P``, ``horizon``, group columns)
    with only ``N`` changed; its run is new, so its run effects come from the population.
    """
    d_lo = float(frame[C.D].min())
    d_hi = max(float(frame[C.D].max()), extend_to or 0.0)
    parts = []
    for t in t_levels:
        row_runs = runs if t is None else runs[runs[C.T_M] == t]
        template = row_runs[row_runs[C.N] == row_runs[C.N].max()]
        for n in add_N:
            for k, (_, row) in enumerate(template.iterrows()):
                part = pd.DataFrame({C.D: np.geomspace(d_lo, d_hi, n_grid)})
                for col, value in row.items():
                    part[col] = value
                part[C.N] = float(n)
                part[C.RUN] = ("new_" + run_label(float(n), t)
                               + (f"_{k + 1}" if len(template) > 1 else ""))
                parts.append(part)
    return parts


def plot_grid(fit: Fit, *, probs: Sequence[float] = C.BAND_PROBS, kind: str = "predictive",
              forecast: bool = True, extend_to: float | None = None,
              add_N: Sequence[float] = (), xscale: str = "log",
              ylim: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
              n_grid: int = 120,
              panel_size: tuple[float, float] = (3.2, 2.6), seed: int = 0,
              schedule: Any = None, prediction: pd.DataFrame | None = None,
              left_out: pd.DataFrame | None = None) -> Any:
    """Grid of loss curves: rows ``T_m``, columns ``N``, x tokens (billions), y loss.

    At most :data:`~bayeslaw.plots.panels.MAX_COLUMNS` panels a row: more N levels wrap onto
    further rows, and past :data:`~bayeslaw.plots.panels.MAX_PANELS` panels neighbouring N
    levels share a panel, each run coloured by its N
    (:func:`~bayeslaw.plots.panels.grid_layout`), so that a sweep of any number of sizes stays
    readable.

    A table of curves without an ``N`` column (``run``, ``D``, ``loss``: the law
    ``curve_bend``) gets one panel per curve instead, titled with its run's name, in the same
    layout (curves sharing panels past :data:`~bayeslaw.plots.panels.MAX_PANELS` of them), each
    panel with its own loss range, and by default each curve is forecast to twice its own
    largest ``D`` (:mod:`bayeslaw.plots.curves`).

    Each panel shows the observed curve(s) ("Real"), the posterior median (dashed, "Pred
    (median)") and shaded central credible bands ("Pred 50% / 90% band" by default) of a
    new observation (``kind="predictive"``) or of the law (``kind="epistemic"``), from at
    most :data:`~bayeslaw.plots.panels.FIGURE_DRAWS` posterior draws (1,000, thinned evenly
    within each chain; :func:`bayeslaw.predict` gives the bands from every draw).

    By default (``forecast=True`` with neither ``extend_to`` nor ``add_N`` given) the figure
    also shows what the posterior adds beyond the data, where its bands widen: every curve
    continues to twice the largest ``D`` (a dotted line marks the end of the data), and one
    more column forecasts the next model size of the sweep, :func:`next_N` (the largest N
    times the median ratio of consecutive N levels); see :func:`default_forecast`.  Give
    ``extend_to`` and / or ``add_N`` to choose the forecast, or ``forecast=False`` to draw
    the data's range only.

    Parameters
    ----------
    fit : Fit
    probs : sequence of float
        Band probabilities.
    kind : {"predictive", "epistemic"}
    forecast : bool
        With neither ``extend_to`` nor ``add_N``: forecast as :func:`default_forecast` says.
    extend_to : float, optional
        Forecast every curve up to this many tokens, past the data.
    add_N : sequence of float
        Extra columns of new model sizes (population forecasts, no data).  Each copies the
        other columns of its row's largest-N run(s).
    xscale : {"log", "linear"}
        Scale of the token axis (``"linear"``: from zero, as in the Ouro paper's figures).
    ylim : (float, float), optional
        Loss range shown (default: the observed range and the forecast medians); zoom in to
        see the bands, e.g. ``ylim=(2.4, 3.6)`` for the bundled sweep's plateau.  A table
        of curves may take each curve's own range, by run name (:func:`grid_zoom`); its
        panels' ranges are their own by default.
    n_grid : int
        Points per drawn band.
    panel_size : (float, float)
        Width and height of one panel, inches.
    seed : int
        Seed of the predictive draws.
    schedule : DataFrame, path or None
        A schedule-aware law's planned schedules of the runs (as :func:`bayeslaw.predict`
        takes them; default the fit's own): each curve is forecast to its schedule's end.
    prediction : DataFrame, optional
        An earlier grid figure's ``bayeslaw_prediction`` (the same fit, ``kind``, ``probs``
        and ``seed``, over these points or more): drawn again instead of predicting anew, as
        the plateau zoom redraws the full figure's.
    left_out : DataFrame, optional
        Points of the fitted runs (``run``, ``D``, ``loss``) that the fit did not use, the
        early points a spec's ``[data] min_portion`` leaves out
        (:meth:`bayeslaw.data.table.LossData.before_portion`): drawn as grey dots beside
        each run's curve, where they fall in the panel's loss range.

    Returns
    -------
    matplotlib.figure.Figure
        Its ``bayeslaw_prediction`` attribute is the prediction table drawn (the points with
        ``median``, ``lower_XX`` and ``upper_XX``).

    Raises
    ------
    ArgumentError
        If ``xscale`` is not ``"log"`` or ``"linear"``, or ``add_N`` is given for a law
        without an ``N`` term or a table without ``N``, or ``prediction`` lacks a point or
        was made with other options.
    """
    import matplotlib.pyplot as plt

    if xscale not in ("log", "linear"):
        raise ArgumentError(f"xscale must be 'log' or 'linear', got {xscale!r}")
    if C.N not in fit.data.frame.columns:  # a table of curves without model sizes
        from .curves import plot_curve_grid

        return plot_curve_grid(fit, probs=probs, kind=kind, forecast=forecast,
                               extend_to=extend_to, add_N=add_N, xscale=xscale, ylim=ylim,
                               n_grid=n_grid, panel_size=panel_size, seed=seed,
                               schedule=schedule, prediction=prediction, left_out=left_out)
    law = fit.spec.law_obj
    if add_N and C.N not in law.covariates:
        raise ArgumentError(f"law {law.name!r} has no N term (its sizes are "
                            f"{', '.join(law.covariates)}): add_N cannot set a new model size")
    ends = schedule_ends(fit, schedule)  # read once: the schedule may be a file
    if forecast and extend_to is None and not add_N:
        extend_to, add_N = (max(ends.values()), ()) if ends else default_forecast(fit)
    add_N = tuple(float(n) for n in add_N)
    frame = fit.data.frame
    runs = fit.data.run_table().drop(columns=[C.D, C.LOSS], errors="ignore")
    has_T = C.T_M in runs.columns
    t_levels = sorted(runs[C.T_M].unique()) if has_T else [None]
    n_levels = sorted(set(runs[C.N].unique()) | set(add_N))
    points = pd.concat([panel_points(runs, frame, extend_to, n_grid, ends),
                        *_new_N_points(runs, frame, add_N, t_levels, extend_to, n_grid)],
                       ignore_index=True)
    pred = grid_prediction(fit, points, prediction, kind=kind, probs=probs, seed=seed,
                           schedule=schedule)
    panels, nrow, ncol = grid_layout(t_levels, n_levels)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow),
                             sharex=True, sharey=True, squeeze=False)
    colour = _size_colours(n_levels) if any(len(ns) > 1 for *_, ns in panels) else None
    left = by_run(left_out)
    steps = C.EXIT_KIND in frame.columns  # a step table: each exit step's curve, and the total
    if steps:
        colour, keys = _step_colours(runs)
    with limits_once(axes):
        for i, j, t, ns in panels:
            ax = axes[i, j]
            sel = pred[C.N].isin(ns)
            if has_T:
                sel &= pred[C.T_M] == t
            d_seen = 0.0
            for run in pd.unique(pred.loc[sel, C.RUN]):
                p = pred[sel & (pred[C.RUN] == run)]
                c = (None if colour is None else
                     colour(p[C.T_STEP].iloc[0]) if steps else colour(float(p[C.N].iloc[0])))
                d_seen = max(d_seen, draw_run(ax, p, frame[frame[C.RUN] == run], probs, c,
                                              left_out=left.get(str(run))))
            if d_seen and extend_to and extend_to > d_seen:
                mark_end_of_data(ax, d_seen)
            title = "N = " + " - ".join(dict.fromkeys((size_label(ns[0]), size_label(ns[-1]))))
            title += " (new)" if any(n in add_N for n in ns) else ""
            ax.set_title((f"T_m = {t:g}, " if has_T else "") + title, fontsize=9,
                         y=1.0)  # placed: matplotlib would measure the ticks to place it
    finish_axes(axes, [(i, j) for i, j, *_ in panels], xscale,
                ylabel="loss" if steps else "total loss")
    set_loss_range(axes[0, 0], frame, pred, ylim)
    if not steps:
        keys = None if colour is None else colour_keys(
            colour, n_levels, lambda n: f"N = {size_label(n)}")
    title = bands_title(fit, probs, kind)
    if extend_to and extend_to > float(frame[C.D].max()):
        title += f"; forecast to {_tokens_text(extend_to)} tokens"
    if add_N:
        title += (" and " if "forecast" in title else "; forecast ") + "N = " + ", ".join(
            size_label(n) for n in add_N)
    finish_legend(fig, axes, probs, title, keys)
    fig.bayeslaw_prediction = pred
    return fig


def _step_colours(runs: pd.DataFrame) -> tuple[Any, dict[str, Any]]:
    """Each exit step's colour (plasma over T; the total black) and their legend keys."""
    import matplotlib as mpl
    from matplotlib.lines import Line2D

    cmap = mpl.colormaps["plasma"]
    top = max(float(runs[C.T_STEP].max()), 2.0)

    def colour(T: float) -> Any:
        return "k" if not np.isfinite(T) else cmap(0.85 * (T - 1.0) / (top - 1.0))

    levels = sorted(float(t) for t in runs[C.T_STEP].dropna().unique())
    keys = {f"T = {t:g}": Line2D([], [], color=colour(t), lw=2.5) for t in levels}
    if runs[C.T_STEP].isna().any():
        keys["total"] = Line2D([], [], color="k", lw=2.5)
    return colour, keys


def _size_colours(n_levels: Sequence[float]) -> Any:
    """The colour of a run of size N in a panel of several sizes (viridis over log N)."""
    import matplotlib as mpl

    lo, hi = np.log(min(n_levels)), np.log(max(n_levels))
    cmap = mpl.colormaps["viridis"]
    return lambda n: cmap(0.9 * (np.log(n) - lo) / (hi - lo or 1.0))


def zoom_options(fit: Fit, zoom: Any, options: dict[str, Any]) -> dict[str, Any]:
    """:func:`plot_grid` options of the zoomed grid: ``options`` with ``ylim=zoom``.

    Under the default forecast the zoom continues the curves past the data but draws no
    new-size column: a larger model's curve runs below the plateau's loss range.
    """
    zoomed = {**options, "ylim": zoom}
    if C.N not in fit.data.frame.columns:  # a table of curves: no new size to leave out
        return zoomed
    if (zoomed.get("forecast", True) and zoomed.get("extend_to") is None
            and not zoomed.get("add_N")):
        zoomed["extend_to"] = default_forecast(fit)[0]
    return zoomed


def grid_zoom(frame: pd.DataFrame) -> Any:
    """The plateau zoom of a fit's grid figure: its ``ylim``, or ``None`` for no zoom.

    One loss range for a sweep (:func:`plateau_ylim`); each curve's own, by run name, for a
    table of curves without ``N``, whose panels' loss levels may differ widely.
    """
    if C.N in frame.columns:
        return plateau_ylim(frame)
    from .curves import plateau_ylims

    return plateau_ylims(frame)


