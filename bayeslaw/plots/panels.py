"""What the grid figures share: the layout of panels, one run's drawing, axes and legend.

The sweep's grid (:mod:`bayeslaw.plots.sweep`, rows ``T_m`` x columns ``N``) and the grid of a
table of curves without ``N`` (:mod:`bayeslaw.plots.curves`, one panel per curve) lay their
panels out by :func:`grid_layout`, draw each run with :func:`draw_run` over the points of
:func:`panel_points`, and finish with :func:`finish_axes` and :func:`finish_legend`, so that
they look alike; :func:`plateau_ylim` is the loss range of their zoomed figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import TERM_COLUMNS
from ..posterior.draws import schedules_of
from ..posterior.prediction import band_tag
from .figures import PRED_MEDIAN, REAL, finish_panels, legend_handles, log_ticks, pred_band_label

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

#: Legend text of the dotted line where a panel's data end and its forecast begins.
END_OF_DATA = "end of data"
#: Band colours, from the widest band to the narrowest.
BAND_ALPHA = {0.9: 0.18, 0.5: 0.35}
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


def schedule_ends(fit: Fit, schedule: Any = None) -> dict[str, float] | None:
    """Where each run's known learning-rate schedule ends (``None``: a law without one)."""
    if not any(c in TERM_COLUMNS for c in fit.spec.law_obj.covariates):
        return None
    return {run: s.known_to for run, s in schedules_of(fit, schedule).items()}


def panel_points(runs: pd.DataFrame, frame: pd.DataFrame,
                 extend_to: float | Mapping[str, float] | None, n_grid: int,
                 ends: dict[str, float] | None = None) -> pd.DataFrame:
    """Dense D grids over each run's own range (up to ``extend_to``, and its ``ends``).

    ``extend_to`` is one D for every run or each run's own, by run name.
    """
    parts = []
    for run, row in runs.iterrows():
        d = frame.loc[frame[C.RUN] == run, C.D]
        d_min = float(d.min()) if len(d) else float(frame[C.D].min())
        reach = (extend_to.get(str(run)) if isinstance(extend_to, Mapping) else extend_to)
        d_max = max(float(d.max()) if len(d) else float(frame[C.D].max()), reach or 0.0)
        if ends is not None and str(run) in ends:  # not past the run's known schedule
            d_max = min(d_max, ends[str(run)])
        part = pd.DataFrame({C.D: np.geomspace(d_min, d_max, n_grid)})
        for col, value in row.items():
            part[col] = value
        part[C.RUN] = run
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def draw_run(ax: Any, pred: pd.DataFrame, observed: pd.DataFrame, probs: Sequence[float],
             colour: Any = None, scale: float = 1e9) -> float:
    """One run's bands, median and observed curve on ``ax``; the largest ``D`` observed.

    ``pred`` is the run's rows of a prediction table, ``observed`` its rows of the data;
    ``colour`` (a run of a panel of several) draws all three in one colour, paler bands;
    ``D`` is drawn divided by ``scale``.  0 when nothing is observed (a new size).
    """
    x = pred[C.D].to_numpy() / scale
    for prob in sorted(probs, reverse=True):
        tag = band_tag(prob)
        ax.fill_between(x, pred[f"lower_{tag}"], pred[f"upper_{tag}"], color=colour or "C0",
                        alpha=BAND_ALPHA.get(prob, 0.25) * (0.6 if colour else 1.0),
                        lw=0, label=pred_band_label(prob))
    ax.plot(x, pred["median"], "--", color=colour or "C3", lw=1.2, label=PRED_MEDIAN)
    if not len(observed):
        return 0.0
    ax.plot(observed[C.D] / scale, observed[C.LOSS], "-", color=colour or "k", lw=0.8,
            label=REAL)
    return float(observed[C.D].max())


def mark_end_of_data(ax: Any, d_seen: float, scale: float = 1e9) -> None:
    """The dotted line at the end of a panel's data, where its forecast begins."""
    ax.axvline(d_seen / scale, color="0.4", ls=":", lw=0.9, label=END_OF_DATA)


def finish_axes(axes: np.ndarray, used: Sequence[tuple[int, int]], xscale: str,
                xlabel: str = "tokens (billions)") -> None:
    """Scales, grids and labels of a grid's ``used`` panels (row, column); the rest hidden.

    The loss label on the first column, ``xlabel`` and tick labels on each column's lowest
    panel, readable log ticks (:func:`~bayeslaw.plots.figures.log_ticks`) or a linear axis
    from zero.
    """
    bottom_row: dict[int, int] = {}
    for i, j in used:
        bottom_row[j] = max(bottom_row.get(j, 0), i)
        axes[i, j].set_xscale(xscale)
        axes[i, j].grid(alpha=0.3, lw=0.5)
        if j == 0:
            axes[i, j].set_ylabel("total loss")
    for j, i in bottom_row.items():
        axes[i, j].set_xlabel(xlabel)
        axes[i, j].xaxis.set_tick_params(labelbottom=True)
    for i, j in set(np.ndindex(*axes.shape)) - set(used):
        axes[i, j].set_visible(False)
    for ax in axes.flat:
        if xscale == "log":
            log_ticks(ax.xaxis)
    if xscale == "linear":
        axes[0, 0].set_xlim(left=0.0)


def set_loss_range(ax: Any, frame: pd.DataFrame, pred: pd.DataFrame,
                   ylim: tuple[float, float] | None) -> None:
    """``ylim``, or the observed losses and forecast medians with a 5% margin (shared y)."""
    y = np.concatenate([frame[C.LOSS].to_numpy(float), pred["median"].to_numpy(float)])
    y_lo, y_hi = float(np.nanmin(y)), float(np.nanmax(y))
    ax.set_ylim(ylim or (y_lo - 0.05 * (y_hi - y_lo), y_hi + 0.05 * (y_hi - y_lo)))


def bands_title(fit: Fit, probs: Sequence[float], kind: str) -> str:
    """The head of a grid figure's title: what Real and Pred are."""
    bands = " / ".join(f"{band_tag(p)}%" for p in sorted(probs))
    return f"{fit.label}: Real = observed, Pred = posterior median and {bands} {kind} bands"


def finish_legend(fig: Any, axes: np.ndarray, probs: Sequence[float], title: str,
                  keys: dict[str, Any] | None = None) -> None:
    """Title the grid and put one legend below it (:func:`~bayeslaw.plots.figures.finish_panels`).

    Its entries are Real, Pred and its bands, the end of data; with ``keys`` (runs coloured
    by a level: the level's colours) the same entries in grey, then ``keys``.
    """
    found = legend_handles(axes)
    order = [REAL, PRED_MEDIAN, *(pred_band_label(p) for p in sorted(probs)), END_OF_DATA]
    legend = {lab: found[lab] for lab in order if lab in found}
    if keys is not None:
        legend = {**_neutral_keys(probs, END_OF_DATA in legend), **keys}
    finish_panels(fig, title, legend.values(), legend.keys(), 0.06 / axes.shape[0],
                  bbox_to_anchor=(0.5, 0.0))


def _neutral_keys(probs: Sequence[float], end: bool) -> dict[str, Any]:
    """Legend keys in grey for a figure whose runs are coloured by N."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    keys = {REAL: Line2D([], [], color="0.3", lw=0.8),
            PRED_MEDIAN: Line2D([], [], color="0.3", ls="--", lw=1.2)}
    keys.update({pred_band_label(p): Patch(color="0.3", alpha=BAND_ALPHA.get(p, 0.25), lw=0)
                 for p in sorted(probs)})
    if end:
        keys[END_OF_DATA] = Line2D([], [], color="0.4", ls=":", lw=0.9)
    return keys


def colour_keys(colour: Any, levels: Sequence[Any], label: Any) -> dict[str, Any]:
    """Legend keys of the colours of the first, a middle and the last of ``levels``.

    ``colour(level)`` is a level's colour, ``label(level)`` its text in the legend.
    """
    from matplotlib.lines import Line2D

    shown = dict.fromkeys(levels[k] for k in (0, len(levels) // 2, -1))
    return {label(v): Line2D([], [], color=colour(v), lw=2.5) for v in shown}


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
