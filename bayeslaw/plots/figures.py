"""Figures of a :class:`~bayeslaw.posterior.result.Fit` besides the grid, and what they share.

The residual plot shows observed minus posterior median against tokens (or model size); the
final-loss figure shows a table without ``D`` against N; the backtest figure shows held-out
forecasts; the forest plot shows the group effects and their shrinkage towards the
population.  The grid figure is :mod:`bayeslaw.plots.sweep`; it shares the legend texts, the
log-axis ticks and the panel legend defined here.

Functions take keyword-only options and return the matplotlib figure; the model code
never imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.markers import TICKDOWN, TICKUP
from matplotlib.ticker import (
    FuncFormatter,
    Locator,
    LogLocator,
    MaxNLocator,
    NullFormatter,
    NullLocator,
)

from .. import constants as C
from ..data.table import size_label
from ..errors import ArgumentError, SpecError
from ..model.plan import level_dim
from ..posterior.noise import residuals
from ..posterior.prediction import band_tag, predict

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

#: Legend text of the grid and backtest figures: the Ouro paper's "Real" (observed) and
#: "Pred" (posterior prediction).
REAL, PRED_MEDIAN = "Real", "Pred (median)"
#: Distance of a figure's title from its top edge, inches.
TITLE_OFFSET = 0.05
#: Height of one level in a panel of the forest plot of group effects, inches.
LEVEL_HEIGHT = 0.16
#: Most levels the residual plot's legend names (one colour each).
MAX_LEGEND_LEVELS = 12


def pred_band_label(prob: float) -> str:
    """Legend text of a central band: ``Pred 90% band``."""
    return f"Pred {band_tag(prob)}% band"


class _SparseLogLocator(Locator):
    """Major ticks of a log axis that leave room for their labels.

    The sparsest of decades, 1-3, 1-2-5 or 1-9 steps that puts at least three ticks in view
    (decades thinned to at most ``max_ticks``); on a range too short for two of the 1-9
    steps, evenly spaced round numbers.  Matplotlib's own log locator labels every minor
    tick of a short range, and those labels overlap.
    """

    _STEPS = ((1.0,), (1.0, 3.0), (1.0, 2.0, 5.0), tuple(float(s) for s in range(1, 10)))

    def __init__(self, max_ticks: int = 5):
        self.max_ticks = max_ticks

    def __call__(self) -> np.ndarray:
        vmin, vmax = self.axis.get_view_interval()
        return self.tick_values(vmin, vmax)

    def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
        vmin, vmax = sorted((float(vmin), float(vmax)))
        if not (vmin > 0 and np.isfinite(vmax)):
            return np.array([])
        exps = np.arange(np.floor(np.log10(vmin)), np.ceil(np.log10(vmax)) + 1)
        lo, hi = vmin * (1 - 1e-9), vmax * (1 + 1e-9)
        for subs in self._STEPS:
            ticks = np.sort(np.outer(10.0 ** exps, subs).ravel())
            inside = ticks[(ticks >= lo) & (ticks <= hi)]
            if len(inside) >= 3 or (subs == self._STEPS[-1] and len(inside) >= 2):
                if len(inside) > self.max_ticks and len(subs) == 1:
                    step = int(np.ceil(len(inside) / self.max_ticks))
                    inside = inside[np.round(np.log10(inside)).astype(int) % step == 0]
                return inside
        return MaxNLocator(nbins=3).tick_values(vmin, vmax)


def _plain_number(value: float, _pos: Any = None) -> str:
    """``0.05``, ``20``, ``5000``; powers of ten outside 0.001 - 9999 as ``10^k``."""
    if value <= 0 or 1e-3 <= value < 1e4:
        return f"{value:g}"
    exp = int(np.floor(np.log10(value) + 1e-9))
    mant = value / 10.0**exp
    head = "" if round(mant, 6) == 1 else f"{mant:g}\\times"
    return f"${head}10^{{{exp}}}$"


#: Where a log axis has minor ticks: at 2, 3, ..., 9 times each power of ten.
MINOR_SUBS = tuple(float(s) for s in range(2, 10))


def log_ticks(axis: Any) -> None:
    """Readable tick labels on a log ``axis`` (``ax.xaxis``).

    Sparse major ticks labelled as plain numbers (``0.1``, ``2``, ``50``), minor ticks
    without labels.  On an x axis whose minor ticks are drawn at the bottom only, without
    minor grid lines (matplotlib's default style), they are one :class:`MinorTickMarks` line
    of markers instead of matplotlib's minor ticks: the same marks, at a fraction of the
    cost.  Their look follows the style when ``log_ticks`` is called; a later
    ``tick_params(which="minor", ...)`` does not reach them.
    """
    axis.set_major_locator(_SparseLogLocator())
    axis.set_major_formatter(FuncFormatter(_plain_number))
    axis.set_minor_formatter(NullFormatter())
    rc = mpl.rcParams
    for line in [x for x in axis.axes.lines if isinstance(x, MinorTickMarks)]:
        line.remove()  # called again: one set of marks
    if (axis.axis_name != "x" or not (rc["xtick.bottom"] and rc["xtick.minor.bottom"])
            or rc["xtick.top"] and rc["xtick.minor.top"]
            or rc["axes.grid"] and rc["axes.grid.which"] in ("minor", "both")):
        axis.set_minor_locator(LogLocator(subs=MINOR_SUBS))
        return
    axis.set_minor_locator(NullLocator())
    axis.axes.add_line(MinorTickMarks(axis.axes))


class MinorTickMarks(Line2D):
    """An x axis's minor log ticks as one line of tick markers, placed when drawn.

    matplotlib gives every minor tick a ``Tick`` of its own (two tick lines, a grid line
    and two labels); on a grid of 15 log panels, drawn three times, making them was about a
    quarter of the figures' time (issue 34: ``benchmarks/results/figures_2026-12-04.md``).
    This draws the same markers (matplotlib's tick marker for the style's tick direction,
    its minor size, width and colour) at the same places: :data:`MINOR_SUBS` of each decade
    in the view, less the major ticks', as the axis would.  The places are found at each
    draw, so zooming keeps them right; nothing is drawn where the axis is off or no longer
    logarithmic.
    """

    def __init__(self, ax: Any) -> None:
        rc = mpl.rcParams
        marker = {"out": TICKDOWN, "in": TICKUP}.get(rc["xtick.direction"], "|")
        super().__init__([], [], transform=ax.get_xaxis_transform(which="tick1"),
                         linestyle="none",
                         marker=marker, markersize=rc["xtick.minor.size"],
                         markeredgewidth=rc["xtick.minor.width"],
                         markeredgecolor=rc["xtick.color"], clip_on=False,
                         zorder=ax.xaxis.get_zorder(), label="_minor ticks")
        self._locator = LogLocator(subs=MINOR_SUBS)
        self._locator.set_axis(ax.xaxis)  # decades thinned by the axis's room, as its own
        self.set_in_layout(False)  # as tick marks: the layout measures the axis, not them

    def draw(self, renderer: Any) -> None:  # noqa: D102 (matplotlib's Artist.draw)
        ax = self.axes
        if not (ax.axison and ax.xaxis.get_visible()) or ax.get_xscale() != "log":
            return  # no ticks drawn there, so no marks
        lo, hi = sorted(ax.get_xlim())
        at = np.asarray(self._locator.tick_values(lo, hi), float)
        at = at[(at >= lo * (1 - 1e-10)) & (at <= hi * (1 + 1e-10))]
        major = np.asarray(ax.xaxis.get_majorticklocs(), float)
        if len(major) and len(at):  # the axis leaves out a minor tick where a major one is
            at = at[~np.isclose(at[:, None], major[None, :], rtol=1e-10, atol=0).any(axis=1)]
        self.set_data(at, np.zeros(len(at)))
        super().draw(renderer)
        self.set_data([], [])  # placed anew at each draw: never part of the data limits


def legend_handles(axes: np.ndarray) -> dict[str, Any]:
    """The first handle of each legend label drawn on any of ``axes``, by label."""
    found: dict[str, Any] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            found.setdefault(lab, h)
    return found


def finish_panels(fig: Any, title: str, handles: Iterable[Any], labels: Collection[str],
                  bottom: float, **legend_options: Any) -> None:
    """Title a figure of panels, lay them out above ``bottom`` and put one legend below.

    ``bottom`` is the share of the figure's height left for the legend, in one row of
    ``labels`` (``legend_options`` go to ``fig.legend``).  The title sits
    :data:`TITLE_OFFSET` inches below the top edge, where ``tight_layout`` leaves room for it
    (matplotlib's default place is a share of the height: in a figure of many rows of panels
    it fell on the first row's titles).
    """
    fig.suptitle(title, fontsize=10, y=1 - TITLE_OFFSET / fig.get_figheight(), va="top")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
               fontsize=8, **legend_options)


def plot_backtest(data: Any, forecast: pd.DataFrame, *, title: str = "", max_runs: int = 12,
                  prob: float = 0.9) -> Any:
    """Held-out forecasts: one panel per held-out run (up to ``max_runs``).

    Training points in grey ("Real (training)"), held-out truth in black ("Real
    (held-out)"), the forecast median dashed ("Pred (median)") with its central ``prob``
    band shaded.  ``forecast`` is a prediction table (``run``, ``D``, ``loss`` and the
    ``median`` / ``lower_XX`` / ``upper_XX`` columns of
    :func:`~bayeslaw.posterior.prediction.predict`), ``data`` anything with the full table as
    ``.frame``.
    """
    import matplotlib.pyplot as plt

    runs = list(pd.unique(forecast[C.RUN]))[:max_runs]
    ncol = min(4, len(runs))
    nrow = int(np.ceil(len(runs) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
    tag = band_tag(prob)
    frame = data.frame
    for ax, run in zip(axes.flat, runs, strict=False):
        f = forecast[forecast[C.RUN] == run].sort_values(C.D)
        seen = frame[(frame[C.RUN] == run) & ~frame[C.D].isin(f[C.D])]
        x = f[C.D].to_numpy() / 1e9
        ax.fill_between(x, f[f"lower_{tag}"], f[f"upper_{tag}"], color="C0", alpha=0.25,
                        lw=0, label=pred_band_label(prob))
        ax.plot(x, f["median"], "--", color="C3", lw=1.2, label=PRED_MEDIAN)
        ax.plot(x, f[C.LOSS], ".", color="k", ms=3, label=f"{REAL} (held-out)")
        if len(seen):
            ax.plot(seen[C.D] / 1e9, seen[C.LOSS], ".", color="0.6", ms=3,
                    label=f"{REAL} (training)")
        ax.set_xscale("log")
        log_ticks(ax.xaxis)
        ax.set_title(str(run), fontsize=8)
        ax.grid(alpha=0.3, lw=0.5)
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    for column in axes.T:  # the lowest drawn panel of each column
        drawn = [ax for ax in column if ax.get_visible()]
        if drawn:
            drawn[-1].set_xlabel("tokens (billions)", fontsize=8)
    found = legend_handles(axes)
    finish_panels(fig, title, found.values(), found.keys(), 0.06 / nrow)
    return fig


def _level_label(group: str, value: Any) -> str:
    """How a group level is named on an axis: ``100M`` for N, ``T_m = 4`` for T_m."""
    if group == C.N:
        return size_label(float(value))
    if group == C.T_M:
        return f"T_m = {float(value):g}"
    return str(value)


def plot_residuals(fit: Fit, *, color_by: str | None = None, ax: Any = None,
                   seed: int = 0) -> Any:
    """Residuals against tokens: observed loss minus the posterior median of the law.

    Each observation is compared with the epistemic median at its own run's parameters;
    a good fit scatters around zero with no trend in D.

    Parameters
    ----------
    fit : Fit
    color_by : str, optional
        Column whose levels get one colour each (default ``T_m`` when present, else ``N``,
        else ``run``: a table of curves without ``N``).  The legend names at most
        :data:`MAX_LEGEND_LEVELS` levels (more: none).
    ax : matplotlib.axes.Axes, optional
        Draw here instead of a new figure.
    seed : int
        Seed of the prediction draws.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    frame = fit.data.frame
    color_by = color_by or next((c for c in (C.T_M, C.N) if c in frame.columns), C.RUN)
    if color_by not in frame.columns:
        raise ArgumentError(f"color_by={color_by!r} is not a column of the fit's data")
    resid = residuals(fit, seed=seed)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    x_col = C.D if C.D in frame.columns else C.N  # final losses without D: against N
    levels = sorted(pd.unique(frame[color_by]))
    for i, level in enumerate(levels):
        sel = (frame[color_by] == level).to_numpy()
        ax.plot(frame.loc[sel, x_col] / 1e9, resid[sel], ".", ms=3 if x_col == C.D else 6,
                color=f"C{i % 10}",
                label=_level_label(color_by, level) if color_by in (C.N, C.T_M)
                else f"{color_by} = {level:g}" if isinstance(level, float)
                else f"{color_by} = {level}")
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xscale("log")
    log_ticks(ax.xaxis)
    ax.set_xlabel("tokens (billions)" if x_col == C.D else "parameters N (billions)")
    ax.set_ylabel("observed - posterior median")
    ax.grid(alpha=0.3, lw=0.5)
    if len(levels) <= MAX_LEGEND_LEVELS:  # many curves: colours alone, no legend to read
        ax.legend(fontsize=8, frameon=False, markerscale=2)
    ax.set_title(f"{fit.label}: residuals against "
                 f"{'tokens' if x_col == C.D else 'model size'}", fontsize=10)
    return ax.figure


def plot_final_losses(fit: Fit, *, probs: Sequence[float] = C.BAND_PROBS,
                      kind: str = "predictive", color_by: str | None = None, ax: Any = None,
                      seed: int = 0, n_grid: int = 60) -> Any:
    """Final losses against model size, one colour per level of the law's other covariate.

    The figure of a table without ``D`` (one final loss per run, e.g. ParScale's N x P
    grid): observed losses as dots, the posterior median as a line and the central bands
    shaded, over a log grid of N a little wider than the data.

    Parameters
    ----------
    fit : Fit
    probs : sequence of float
        Probabilities of the central bands drawn.
    kind : {"predictive", "epistemic"}
        Bands of a new observed loss, or of the law's value alone.
    color_by : str, optional
        Column with one curve per level (default: the law's first covariate other than N).
    ax : matplotlib.axes.Axes, optional
    seed : int
    n_grid : int
        Points of the N grid.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    frame = fit.data.frame
    others = [c for c in fit.spec.law_obj.covariates if c != C.N]
    color_by = color_by or (others[0] if others else None)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    n = frame[C.N].to_numpy(float)
    grid = np.geomspace(n.min() / 1.5, n.max() * 1.5, n_grid)
    levels = sorted(pd.unique(frame[color_by])) if color_by else [None]
    for i, level in enumerate(levels):
        sel = (frame[color_by] == level).to_numpy() if color_by else np.ones(len(frame), bool)
        points = pd.DataFrame({C.N: grid})
        for c in others:
            points[c] = level if c == color_by else float(frame[c].median())
        pred = predict(fit, points, kind=kind, probs=probs, seed=seed).table
        colour = f"C{i % 10}"
        for p in sorted(probs, reverse=True):
            ax.fill_between(grid / 1e9, pred[f"lower_{band_tag(p)}"],
                            pred[f"upper_{band_tag(p)}"], color=colour, alpha=0.15, lw=0)
        label = f"{color_by} = {level:g}" if color_by else "median"
        ax.plot(grid / 1e9, pred["median"], "--", color=colour, lw=1, label=label)
        ax.plot(n[sel] / 1e9, frame.loc[sel, C.LOSS], "o", color=colour, ms=4)
    ax.set_xscale("log")
    log_ticks(ax.xaxis)  # often a decade or less of N: 1-2-5 steps in plain numbers
    ax.set_xlabel("parameters N (billions)")
    ax.set_ylabel("final loss")
    ax.grid(alpha=0.3, lw=0.5)
    ax.legend(fontsize=8, frameon=False)
    bands = " / ".join(f"{p:.0%}" for p in sorted(probs))
    ax.set_title(f"{fit.label}: observed (dots), median (dashed), {bands} {kind} bands",
                 fontsize=10)
    return ax.figure


def plot_group_effects(fit: Fit, *, prob: float = 0.9, seed: int = 0,
                       panel_size: tuple[float, float] = (4.0, 2.4)) -> Any:
    """Forest plot of every group effect: shrinkage towards the population.

    One panel per effect (``b_by_N``, ``beta_by_T_m``, ...): per level, the posterior
    median (dot) and central ``prob`` interval (line) of the effect on the parameter's
    link scale.  The population value (zero) is the vertical line, and the shaded band is
    where a *new* level's effect falls with probability ``prob`` (``sd * z``): levels
    pulled inside it are shrunk towards the population.

    Parameters
    ----------
    fit : Fit
    prob : float
        Interval probability.
    seed : int
        Seed of the new-level draws behind the shaded band.
    panel_size : (float, float)
        Width and height of one panel, inches; taller where a group has more levels than
        the height holds at :data:`LEVEL_HEIGHT` each (effects by run of many curves).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    SpecError
        If the spec has no group effects.
    """
    import matplotlib.pyplot as plt

    effects = fit.spec.effects
    if not effects:
        raise SpecError("the fit's spec has no group effects (complete pooling)")
    ncol = min(2, len(effects))
    nrow = int(np.ceil(len(effects) / ncol))
    post = fit.idata.posterior
    most = max((int(post[e.name].sizes[level_dim(e.group)]) for e in effects if e.name in post),
               default=0)
    height = max(panel_size[1], LEVEL_HEIGHT * most + 0.8)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, height * nrow),
                             squeeze=False)
    rng = np.random.default_rng(seed)
    q = [(1 - prob) / 2, 0.5, (1 + prob) / 2]
    for ax, e in zip(axes.flat, effects, strict=False):
        draws = fit.draws(e.name)
        levels = fit.idata.posterior[e.name][level_dim(e.group)].values
        lo, med, hi = np.quantile(draws, q, axis=0)
        sd = (fit.draws(f"{e.name}_sd") if not isinstance(e.scale, float)
              else np.full(fit.n_draws, e.scale))
        new_lo, new_hi = np.quantile(sd * rng.standard_normal(len(sd)), [q[0], q[2]])
        y = np.arange(len(levels))
        ax.axvspan(new_lo, new_hi, color="C0", alpha=0.12, lw=0,
                   label=f"new level, {band_tag(prob)}%")
        ax.axvline(0.0, color="k", lw=0.8, label="population value")
        ax.hlines(y, lo, hi, color="C3", lw=1.5, label=f"{band_tag(prob)}% interval")
        ax.plot(med, y, "o", color="C3", ms=4, label="posterior median")
        ax.set_yticks(y, [_level_label(e.group, v) for v in levels], fontsize=8)
        ax.set_ylim(-0.6, len(levels) - 0.4)
        link = fit.spec.law_obj.param(e.param).link
        ax.set_xlabel(f"effect on {link + ' ' if link in ('log', 'logit') else ''}{e.param}",
                      fontsize=8)
        ax.set_title(f"{e.name} (sd median {np.median(sd):.3g})", fontsize=9)
        ax.grid(alpha=0.3, lw=0.5, axis="x")
    for ax in list(axes.flat)[len(effects):]:
        ax.set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    finish_panels(fig, f"{fit.label}: group effects and their shrinkage", handles, labels,
                  0.08 / nrow)
    return fig
