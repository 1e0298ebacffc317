"""What the grid figures share: the layout of panels, one run's drawing, axes and legend.

The sweep's grid (:mod:`bayeslaw.plots.sweep`, rows ``T_m`` x columns ``N``) and the grid of a
table of curves without ``N`` (:mod:`bayeslaw.plots.curves`, one panel per curve) lay their
panels out by :func:`grid_layout`, draw each run with :func:`draw_run` over the points of
:func:`panel_points`, and finish with :func:`finish_axes` and :func:`finish_legend`, so that
they look alike; :func:`plateau_ylim` is the loss range of their zoomed figures.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import TERM_COLUMNS
from ..data.steps import exit_entropy
from ..errors import ArgumentError
from ..posterior.draws import Posterior, schedules_of
from ..posterior.prediction import band_tag, predict
from .figures import (
    PRED_MEDIAN,
    REAL,
    TITLE_OFFSET,
    legend_handles,
    log_ticks,
    pred_band_label,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

#: Legend text of the dotted line where a panel's data end and its forecast begins.
END_OF_DATA = "end of data"
#: Legend text of a run's points that its spec left out of the fit (``[data] min_portion``).
LEFT_OUT = "Real, not fitted"
#: Their colour: the points are data, drawn apart from what the posterior conditions on.
LEFT_OUT_COLOUR = "0.6"
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
        if len(d) and C.EXIT_WEIGHTS[0] in frame.columns:
            _exit_along(part, frame.loc[frame[C.RUN] == run])
        part[C.RUN] = run
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _exit_along(part: pd.DataFrame, rows: pd.DataFrame) -> None:
    """A step table's exit weights along a dense grid: the curve's own, interpolated in log D.

    A total's logged q may change from checkpoint to checkpoint; past the data it stays at
    the last one.  The entropy is that of the interpolated weights.
    """
    x, at = np.log(rows[C.D].to_numpy(float)), np.log(part[C.D].to_numpy(float))
    w = np.stack([np.interp(at, x, rows[c].to_numpy(float)) for c in C.EXIT_WEIGHTS], axis=1)
    for k, col in enumerate(C.EXIT_WEIGHTS):
        part[col] = w[:, k]
    if C.EXIT_ENTROPY in part.columns:
        part[C.EXIT_ENTROPY] = exit_entropy(w)


#: The grid figures draw their medians and bands from at most this many posterior draws,
#: thinned evenly within each chain (``None``: every draw).  Predicting every draw over the
#: grid cost more than drawing it: on the bundled sweep's fit (4,000 draws) the three grid
#: figures took 0.38 of the time with 1,000, and a 90% band's edge moved by about 2% of the
#: band's width at a typical point, 12% at the worst of 2,160 (Monte Carlo error of a
#: quantile under Student-t noise; ``benchmarks/results/figures_2026-12-05.md``).
#: :func:`bayeslaw.predict` always uses every draw.
FIGURE_DRAWS: int | None = 1000


def figure_posterior(fit: Fit) -> Posterior:
    """``fit``'s posterior thinned to at most :data:`FIGURE_DRAWS` draws.

    Every k-th draw of each chain; ``fit`` itself when it has no more.
    """
    n = fit.n_draws
    if FIGURE_DRAWS is None or n <= FIGURE_DRAWS:
        return fit
    import arviz as az

    chains, draws = fit.idata.posterior.sizes["chain"], fit.idata.posterior.sizes["draw"]
    step = -(-draws // max(1, FIGURE_DRAWS // chains))  # at most FIGURE_DRAWS in all
    posterior = fit.idata.posterior.isel(draw=slice(None, None, step))
    return Posterior(az.InferenceData(posterior=posterior), fit.spec, fit.data)


def grid_prediction(fit: Fit, points: pd.DataFrame, prediction: pd.DataFrame | None, *,
                    kind: str, probs: Sequence[float], seed: int, schedule: Any) -> pd.DataFrame:
    """The prediction table a grid figure draws: its ``points`` predicted, or looked up.

    :func:`~bayeslaw.posterior.prediction.predict` of the ``points`` from at most
    :data:`FIGURE_DRAWS` posterior draws (how many: the table's ``attrs["draws"]``), or,
    given an earlier figure's ``prediction``, its rows of them.

    ``prediction`` (a grid figure's ``bayeslaw_prediction``) must hold every point (by run
    and D) and come from the same ``kind``, band ``probs`` and ``seed``: the plateau zoom
    draws the full figure's prediction again instead of predicting it anew.
    """
    probs = tuple(float(p) for p in probs)
    if prediction is None:
        post = figure_posterior(fit)
        table = predict(post, points, kind=kind, probs=probs, seed=seed,
                        schedule=schedule).table
        table.attrs.update(kind=kind, probs=probs, seed=seed, draws=post.n_draws)
        return table
    made = {key: prediction.attrs.get(key) for key in ("kind", "probs", "seed")}
    if made != {"kind": kind, "probs": probs, "seed": seed}:
        raise ArgumentError(f"the prediction given was made with {made}, not kind={kind!r}, "
                            f"probs={probs}, seed={seed}: pass the same options, or no "
                            "prediction")
    keys = [C.RUN, C.D]
    have = prediction.assign(**{C.RUN: prediction[C.RUN].astype(str)}).reset_index(drop=True)
    want = points[keys].assign(**{C.RUN: points[C.RUN].astype(str)})
    where = want.merge(have[keys].reset_index(), on=keys, how="left",
                       validate="many_to_one")["index"]
    if where.isna().any():
        row = want[where.isna().to_numpy()].iloc[0]
        raise ArgumentError(f"the prediction given has no point of run {row[C.RUN]!r} at "
                            f"D = {row[C.D]:g}: it must come from a figure of the same fit "
                            "over these points (the same extend_to, n_grid and schedule)")
    table = prediction.iloc[where.astype(int).to_numpy()].reset_index(drop=True)
    table.attrs = dict(prediction.attrs)
    return table


@contextmanager
def limits_once(axes: np.ndarray) -> Iterator[None]:
    """Draw into a grid's panels without rescaling them after each artist.

    Their x range is fitted once, when the figure is drawn.  In a grid of shared axes every
    band or line added rescaled its panel, and each rescale set the limits of every panel
    sharing them: about a quarter of the time of drawing a grid, under a profiler
    (``benchmarks/results/figures_2026-12-05b/README.md``).  The data limits still grow with
    each artist, so the x range fitted at the end is the one rescaling after each would give.
    The loss (y) range is not fitted at all: the grids set it themselves
    (:func:`set_loss_range`), after this block or inside it.
    """
    for ax in axes.flat:
        ax.set_autoscale_on(False)
    try:
        yield
    finally:
        for ax in axes.flat:
            ax.set_autoscalex_on(True)


def by_run(rows: pd.DataFrame | None) -> dict[str, pd.DataFrame]:
    """``rows`` split by run name as text (a fit's run names are text); ``{}`` for None."""
    if rows is None:
        return {}
    return {str(run): part for run, part in rows.groupby(rows[C.RUN].astype(str), sort=False)}


def draw_run(ax: Any, pred: pd.DataFrame, observed: pd.DataFrame, probs: Sequence[float],
             colour: Any = None, scale: float = 1e9, left_out: pd.DataFrame | None = None
             ) -> float:
    """One run's bands, median and observed curve on ``ax``; the largest ``D`` observed.

    ``pred`` is the run's rows of a prediction table, ``observed`` its rows of the data;
    ``colour`` (a run of a panel of several) draws all three in one colour, paler bands;
    ``D`` is drawn divided by ``scale``.  0 when nothing is observed (a new size).
    ``left_out``: the run's points its spec left out of the fit, drawn as grey dots (where
    they fall in the panel's loss range, which the fitted points and forecasts set).
    """
    if left_out is not None and len(left_out):
        ax.plot(left_out[C.D] / scale, left_out[C.LOSS], ".", color=LEFT_OUT_COLOUR, ms=3,
                label=LEFT_OUT)
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
                xlabel: str = "tokens (billions)", ylabel: str = "total loss") -> None:
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
            axes[i, j].set_ylabel(ylabel)
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
    """Title the grid and put one legend below it (:func:`lay_out_grid`).

    Its entries are Real, the points left out of the fit (where drawn), Pred and its bands,
    the end of data; with ``keys`` (runs coloured
    by a level: the level's colours) the same entries in grey, then ``keys``.
    """
    found = legend_handles(axes)
    order = [REAL, LEFT_OUT, PRED_MEDIAN, *(pred_band_label(p) for p in sorted(probs)),
             END_OF_DATA]
    legend = {lab: found[lab] for lab in order if lab in found}
    if keys is not None:
        legend = {**_neutral_keys(probs, END_OF_DATA in legend), **keys}
        if LEFT_OUT in found:
            legend = {REAL: legend.pop(REAL), LEFT_OUT: found[LEFT_OUT], **legend}
    lay_out_grid(fig, axes, title, list(legend.values()), list(legend.keys()))


def _text_size(renderer: Any, text: str, size: Any) -> tuple[float, float]:
    """Width and height of ``text`` at font ``size`` (points or a name), inches."""
    from matplotlib.font_manager import FontProperties

    w, h, _ = renderer.get_text_width_height_descent(
        text, FontProperties(size=size), ismath="$" in text)
    return w / renderer.dpi, h / renderer.dpi


def _tick_label_width(renderer: Any, ax: Any, size: Any) -> float:
    """Widest y tick label of ``ax`` at font ``size``, inches, without drawing its ticks.

    The labels come from the axis's own locator and formatter over its view limits, as a
    draw would make them (a draw of the whole grid is what this layout avoids).
    """
    axis = ax.yaxis
    lo, hi = sorted(ax.get_ylim())
    locs = [v for v in axis.get_major_locator().tick_values(lo, hi)
            if lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)]
    labels = axis.get_major_formatter().format_ticks(locs) if locs else []
    return max((_text_size(renderer, s, size)[0] for s in labels if s), default=0.0)


def lay_out_grid(fig: Any, axes: np.ndarray, title: str, handles: list[Any],
                 labels: list[str]) -> None:
    """Title a grid figure, place its panels and put one legend below, in one pass.

    The margins are computed from the sizes of the texts around the panels (the loss label
    and tick labels on the left, the panel titles, the token label and tick labels below each
    column's lowest panel, the title, the legend) measured once, instead of
    ``tight_layout``'s and ``bbox_inches="tight"``'s measuring of every tick of every panel:
    on the bundled sweep's 15-panel grid those passes took most of the figure's time.  The
    panels keep their size; a title or legend wider than the panels widens the figure, so
    the saved figure holds everything without ``bbox_inches="tight"``.
    """
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties

    rc = mpl.rcParams
    renderer = fig.canvas.get_renderer()
    pt = 1 / 72

    def line(size: Any) -> float:  # a line of text at font ``size``, inches
        return 1.25 * FontProperties(size=size).get_size_in_points() * pt

    nrow, ncol = axes.shape
    shown = [(i, j) for i, j in np.ndindex(nrow, ncol) if axes[i, j].get_visible()]
    tick = (rc["xtick.major.size"] + rc["xtick.major.pad"]) * pt
    label = line(rc["axes.labelsize"])
    label_gap = rc["axes.labelpad"] * pt
    # the y side: tick labels of every panel that shows them, the loss label on column 0
    y_labelled = [(i, j) for i, j in shown
                  if axes[i, j].yaxis.get_tick_params().get("labelleft", True)]
    y_ticks = max((_tick_label_width(renderer, axes[i, j], rc["ytick.labelsize"])
                   for i, j in y_labelled), default=0.0)
    gutter_y = tick + y_ticks + 2 * pt
    left = gutter_y + label_gap + label + 6 * pt
    wspace = (gutter_y if any(j > 0 for _, j in y_labelled) else 0.0) + 10 * pt
    # the x side: tick labels and the token label below each column's lowest panel
    x_labelled = {i for i, j in shown
                  if axes[i, j].xaxis.get_tick_params().get("labelbottom", True)}
    below = tick + line(rc["xtick.labelsize"]) + label_gap + label
    panel_title = line(9) + rc["axes.titlepad"] * pt
    hspace = panel_title + 10 * pt + (below if x_labelled - {nrow - 1} else 0.0)
    title_w = _text_size(renderer, title, 10)[0]
    top = TITLE_OFFSET + line(10) + 10 * pt + panel_title
    legend = fig.legend(handles, labels, loc="lower center", ncol=len(labels),
                        frameon=False, fontsize=8, bbox_to_anchor=(0.5, 0.0))
    extent = legend.get_window_extent(renderer)
    legend_w, legend_h = extent.width / fig.dpi, extent.height / fig.dpi
    bottom = below + legend_h + 8 * pt
    width, height = fig.get_size_inches()
    panel_w = (width - left - 8 * pt - (ncol - 1) * wspace) / ncol
    panel_h = (height - top - bottom - (nrow - 1) * hspace) / nrow
    wide = max(width, title_w + 16 * pt, legend_w + 16 * pt)
    if wide > width:  # a narrow grid: widen the figure around its panels
        fig.set_figwidth(wide)
        left += (wide - width) / 2
        width = wide
    right = left + ncol * panel_w + (ncol - 1) * wspace
    fig.subplots_adjust(left=left / width, right=right / width, bottom=bottom / height,
                        top=1 - top / height, wspace=wspace / panel_w,
                        hspace=hspace / panel_h)
    fig.suptitle(title, fontsize=10, y=1 - TITLE_OFFSET / height, va="top")


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
