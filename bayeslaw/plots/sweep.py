"""The grid figure of a fit: every curve beside its posterior median and credible bands.

One panel per (``T_m``, ``N``) cell of the sweep shows the observed curve(s) ("Real") beside
the posterior median and central bands ("Pred"), by default forecast past the data (to twice
the largest D, and a column at the sweep's next N) where the bands widen.
:func:`plateau_ylim` and :func:`zoom_options` give the zoomed grid of the plateau, where the
bands are visible; :func:`bayeslaw.report.folders.write_grid_figures` writes both to a fit's folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import TERM_COLUMNS
from ..data.table import run_label, size_label
from ..errors import ArgumentError
from ..posterior.draws import schedules_of
from ..posterior.prediction import band_tag, predict
from .figures import PRED_MEDIAN, REAL, finish_panels, legend_handles, log_ticks, pred_band_label

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

#: Band colours, from the widest band to the narrowest.
_BAND_ALPHA = {0.9: 0.18, 0.5: 0.35}
#: Most panels in a row of the grid figure: more N levels wrap onto further rows.
MAX_COLUMNS = 6
#: Most panels of one N level each; a sweep with more (T_m levels x N levels) draws
#: neighbouring N levels in one panel, each run coloured by its N.
MAX_PANELS = 48


def grid_layout(t_levels: Sequence[Any], n_levels: Sequence[float]
                ) -> tuple[list[tuple[int, int, Any, tuple[float, ...]]], int, int]:
    """Where each panel of the grid figure goes: ``(row, column, T_m, N levels)``, rows, columns.

    Each ``T_m`` level's panels run along rows of at most :data:`MAX_COLUMNS` (wrapping onto
    further rows), one N level per panel while ``T_m levels x N levels`` stays within
    :data:`MAX_PANELS`; beyond it, each ``T_m`` level gets a whole number of rows of panels
    (at least one) over neighbouring N levels, split as evenly as they go.  A sweep of a few
    sizes keeps its grid of rows ``T_m``, columns ``N``.
    """
    n, t = len(n_levels), len(t_levels)
    groups = n if t * n <= MAX_PANELS else min(
        n, max(MAX_COLUMNS, MAX_PANELS // t // MAX_COLUMNS * MAX_COLUMNS))
    columns = max(1, min(groups, MAX_COLUMNS))
    rows_per_t = -(-groups // columns)
    split = np.array_split(np.arange(n), groups)
    panels = [(i * rows_per_t + g // columns, g % columns, level,
               tuple(float(n_levels[k]) for k in idx))
              for i, level in enumerate(t_levels) for g, idx in enumerate(split)]
    return panels, t * rows_per_t, columns


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


def schedule_ends(fit: Fit, schedule: Any = None) -> dict[str, float] | None:
    """Where each run's known learning-rate schedule ends (``None``: a law without one)."""
    if not any(c in TERM_COLUMNS for c in fit.spec.law_obj.covariates):
        return None
    return {run: s.known_to for run, s in schedules_of(fit, schedule).items()}


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


def _panel_points(runs: pd.DataFrame, frame: pd.DataFrame, extend_to: float | None,
                  n_grid: int, ends: dict[str, float] | None = None) -> pd.DataFrame:
    """Dense D grids over each run's own range (up to ``extend_to``, and its ``ends``)."""
    parts = []
    for run, row in runs.iterrows():
        d = frame.loc[frame[C.RUN] == run, C.D]
        d_min = float(d.min()) if len(d) else float(frame[C.D].min())
        d_max = max(float(d.max()) if len(d) else float(frame[C.D].max()), extend_to or 0.0)
        if ends is not None and str(run) in ends:  # not past the run's known schedule
            d_max = min(d_max, ends[str(run)])
        part = pd.DataFrame({C.D: np.geomspace(d_min, d_max, n_grid)})
        for col, value in row.items():
            part[col] = value
        part[C.RUN] = run
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


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
              ylim: tuple[float, float] | None = None, n_grid: int = 120,
              panel_size: tuple[float, float] = (3.2, 2.6), seed: int = 0,
              schedule: Any = None) -> Any:
    """Grid of loss curves: rows ``T_m``, columns ``N``, x tokens (billions), y loss.

    At most :data:`MAX_COLUMNS` panels a row: more N levels wrap onto further rows, and past
    :data:`MAX_PANELS` panels neighbouring N levels share a panel, each run coloured by its N
    (:func:`grid_layout`), so that a sweep of any number of sizes stays readable.

    Each panel shows the observed curve(s) ("Real"), the posterior median (dashed, "Pred
    (median)") and shaded central credible bands ("Pred 50% / 90% band" by default) of a
    new observation (``kind="predictive"``) or of the law (``kind="epistemic"``).

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
        see the bands, e.g. ``ylim=(2.4, 3.6)`` for the bundled sweep's plateau.
    n_grid : int
        Points per drawn band.
    panel_size : (float, float)
        Width and height of one panel, inches.
    seed : int
        Seed of the predictive draws.
    schedule : DataFrame, path or None
        A schedule-aware law's planned schedules of the runs (as :func:`bayeslaw.predict`
        takes them; default the fit's own): each curve is forecast to its schedule's end.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ArgumentError
        If ``xscale`` is not ``"log"`` or ``"linear"``, or ``add_N`` is given for a law
        without an ``N`` term.
    """
    import matplotlib.pyplot as plt

    if xscale not in ("log", "linear"):
        raise ArgumentError(f"xscale must be 'log' or 'linear', got {xscale!r}")
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
    points = pd.concat([_panel_points(runs, frame, extend_to, n_grid, ends),
                        *_new_N_points(runs, frame, add_N, t_levels, extend_to, n_grid)],
                       ignore_index=True)
    pred = predict(fit, points, kind=kind, probs=probs, seed=seed, schedule=schedule).table
    panels, nrow, ncol = grid_layout(t_levels, n_levels)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow),
                             sharex=True, sharey=True, squeeze=False)
    colour = _size_colours(n_levels) if any(len(ns) > 1 for *_, ns in panels) else None
    bottom_row = {}
    for i, j, t, ns in panels:
        bottom_row[j] = max(bottom_row.get(j, 0), i)
        ax = axes[i, j]
        sel = pred[C.N].isin(ns)
        if has_T:
            sel &= pred[C.T_M] == t
        d_seen = 0.0
        for run in pd.unique(pred.loc[sel, C.RUN]):
            p = pred[sel & (pred[C.RUN] == run)]
            c = None if colour is None else colour(float(p[C.N].iloc[0]))
            x = p[C.D].to_numpy() / 1e9
            for prob in sorted(probs, reverse=True):
                tag = band_tag(prob)
                ax.fill_between(x, p[f"lower_{tag}"], p[f"upper_{tag}"], color=c or "C0",
                                alpha=_BAND_ALPHA.get(prob, 0.25) * (0.6 if c else 1.0),
                                lw=0, label=pred_band_label(prob))
            ax.plot(x, p["median"], "--", color=c or "C3", lw=1.2, label=PRED_MEDIAN)
            obs = frame[frame[C.RUN] == run]
            if len(obs):
                ax.plot(obs[C.D] / 1e9, obs[C.LOSS], "-", color=c or "k", lw=0.8, label=REAL)
                d_seen = max(d_seen, float(obs[C.D].max()))
        if d_seen and extend_to and extend_to > d_seen:
            ax.axvline(d_seen / 1e9, color="0.4", ls=":", lw=0.9, label="end of data")
        title = "N = " + " - ".join(dict.fromkeys((size_label(ns[0]), size_label(ns[-1]))))
        title += " (new)" if any(n in add_N for n in ns) else ""
        ax.set_title((f"T_m = {t:g}, " if has_T else "") + title, fontsize=9)
        ax.set_xscale(xscale)
        ax.grid(alpha=0.3, lw=0.5)
        if j == 0:
            ax.set_ylabel("total loss")
    for j, i in bottom_row.items():
        axes[i, j].set_xlabel("tokens (billions)")
        axes[i, j].xaxis.set_tick_params(labelbottom=True)
    used = {(i, j) for i, j, *_ in panels}
    for i, j in np.ndindex(nrow, ncol):
        if (i, j) not in used:
            axes[i, j].set_visible(False)
    for ax in axes.flat:
        if xscale == "log":
            log_ticks(ax.xaxis)
    if xscale == "linear":
        axes[0, 0].set_xlim(left=0.0)
    y = np.concatenate([frame[C.LOSS].to_numpy(float), pred["median"].to_numpy(float)])
    y_lo, y_hi = float(np.nanmin(y)), float(np.nanmax(y))
    axes[0, 0].set_ylim(ylim or (y_lo - 0.05 * (y_hi - y_lo), y_hi + 0.05 * (y_hi - y_lo)))
    found = legend_handles(axes)
    order = [REAL, PRED_MEDIAN, *(pred_band_label(p) for p in sorted(probs)), "end of data"]
    legend = {lab: found[lab] for lab in order if lab in found}
    if colour is not None:  # runs coloured by N: neutral keys, and the colours of a few N
        legend = {**_neutral_keys(probs, "end of data" in legend), **_size_keys(colour,
                                                                                n_levels)}
    bands = " / ".join(f"{band_tag(p)}%" for p in sorted(probs))
    title = f"{fit.label}: Real = observed, Pred = posterior median and {bands} {kind} bands"
    if extend_to and extend_to > float(frame[C.D].max()):
        title += f"; forecast to {_tokens_text(extend_to)} tokens"
    if add_N:
        title += (" and " if "forecast" in title else "; forecast ") + "N = " + ", ".join(
            size_label(n) for n in add_N)
    finish_panels(fig, title, legend.values(), legend.keys(), 0.06 / nrow,
                  bbox_to_anchor=(0.5, 0.0))
    return fig


def _size_colours(n_levels: Sequence[float]) -> Any:
    """The colour of a run of size N in a panel of several sizes (viridis over log N)."""
    import matplotlib as mpl

    lo, hi = np.log(min(n_levels)), np.log(max(n_levels))
    cmap = mpl.colormaps["viridis"]
    return lambda n: cmap(0.9 * (np.log(n) - lo) / (hi - lo or 1.0))


def _neutral_keys(probs: Sequence[float], end: bool) -> dict[str, Any]:
    """Legend keys in grey for a figure whose runs are coloured by N."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    keys = {REAL: Line2D([], [], color="0.3", lw=0.8),
            PRED_MEDIAN: Line2D([], [], color="0.3", ls="--", lw=1.2)}
    keys.update({pred_band_label(p): Patch(color="0.3", alpha=_BAND_ALPHA.get(p, 0.25), lw=0)
                 for p in sorted(probs)})
    if end:
        keys["end of data"] = Line2D([], [], color="0.4", ls=":", lw=0.9)
    return keys


def _size_keys(colour: Any, n_levels: Sequence[float]) -> dict[str, Any]:
    """Legend keys of the colours of the smallest, a middle and the largest N."""
    from matplotlib.lines import Line2D

    shown = dict.fromkeys(n_levels[k] for k in (0, len(n_levels) // 2, -1))
    return {f"N = {size_label(n)}": Line2D([], [], color=colour(n), lw=2.5) for n in shown}


def zoom_options(fit: Fit, zoom: tuple[float, float], options: dict[str, Any]
                 ) -> dict[str, Any]:
    """:func:`plot_grid` options of the zoomed grid: ``options`` with ``ylim=zoom``.

    Under the default forecast the zoom continues the curves past the data but draws no
    new-size column: a larger model's curve runs below the plateau's loss range.
    """
    zoomed = {**options, "ylim": zoom}
    if (zoomed.get("forecast", True) and zoomed.get("extend_to") is None
            and not zoomed.get("add_N")):
        zoomed["extend_to"] = default_forecast(fit)[0]
    return zoomed


def plateau_ylim(frame: pd.DataFrame) -> tuple[float, float] | None:
    """Loss range of the second half (in log D) of every curve, where the bands are visible."""
    if frame[C.RUN].nunique() == len(frame):
        return None
    upper = []
    for _, g in frame.groupby(C.RUN):
        logd = np.log(g[C.D].to_numpy())
        upper.append(g[C.LOSS].to_numpy()[logd >= logd.min() + 0.5 * np.ptp(logd)].max())
    lo, hi = float(frame[C.LOSS].min()), float(max(upper))
    # 10% below: room for the curves' continuation past the data
    return lo - 0.1 * (hi - lo), hi + 0.05 * (hi - lo)
