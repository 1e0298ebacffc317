"""Figures of a :class:`~bayeslaw.fit.Fit`: grid with bands, residuals, group effects.

The sweep grid shows every curve beside its credible bands; the residual plot shows
observed minus posterior median against tokens; the forest plot shows the group effects
and their shrinkage towards the population.

Functions take keyword-only options and return the matplotlib figure; the model code
never imports matplotlib.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import constants as C
from ._io import atomic_write
from .data import run_label, size_label
from .errors import SpecError
from .model import level_dim
from .predict import band_tag, predict, residuals

if TYPE_CHECKING:  # pragma: no cover
    from .fit import Fit

#: Band colours, from the widest band to the narrowest.
_BAND_ALPHA = {0.9: 0.18, 0.5: 0.35}


def _panel_points(runs: pd.DataFrame, frame: pd.DataFrame, extend_to: float | None,
                  n_grid: int) -> pd.DataFrame:
    """Dense D grids over each run's own range (and up to ``extend_to``)."""
    parts = []
    for run, row in runs.iterrows():
        d = frame.loc[frame[C.RUN] == run, C.D]
        d_min = float(d.min()) if len(d) else float(frame[C.D].min())
        d_max = max(float(d.max()) if len(d) else float(frame[C.D].max()), extend_to or 0.0)
        part = pd.DataFrame({C.D: np.geomspace(d_min, d_max, n_grid)})
        for col, value in row.items():
            part[col] = value
        part[C.RUN] = run
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def plot_grid(fit: Fit, *, probs: Sequence[float] = C.BAND_PROBS, kind: str = "predictive",
              extend_to: float | None = None, add_N: Sequence[float] = (),
              xscale: str = "log", ylim: tuple[float, float] | None = None, n_grid: int = 120,
              panel_size: tuple[float, float] = (3.2, 2.6), seed: int = 0) -> Any:
    """Grid of loss curves: rows ``T_m``, columns ``N``, x tokens (billions), y loss.

    Each panel shows the observed curve(s), the posterior median (dashed) and shaded central
    credible bands (50% and 90% by default) of a new observation (``kind="predictive"``) or
    of the law (``kind="epistemic"``).

    Parameters
    ----------
    fit : Fit
    probs : sequence of float
        Band probabilities.
    kind : {"predictive", "epistemic"}
    extend_to : float, optional
        Forecast every curve up to this many tokens, past the data.
    add_N : sequence of float
        Extra columns of new model sizes (population forecasts, no data).
    xscale : {"log", "linear"}
    ylim : (float, float), optional
        Loss range shown (default: the observed range); zoom in to see the bands, e.g.
        ``ylim=(2.4, 3.6)`` for the bundled sweep's plateau.
    n_grid : int
        Points per drawn band.
    panel_size : (float, float)
        Width and height of one panel, inches.
    seed : int
        Seed of the predictive draws.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    frame = fit.data.frame
    runs = fit.data.run_table().drop(columns=[C.D, C.LOSS], errors="ignore")
    has_T = C.T_M in runs.columns
    t_levels = sorted(runs[C.T_M].unique()) if has_T else [None]
    n_levels = sorted(set(runs[C.N].unique()) | {float(n) for n in add_N})
    points = _panel_points(runs, frame, extend_to, n_grid)
    new_rows = []
    for n in (float(n) for n in add_N):
        for t in t_levels:
            row = {C.N: n, C.RUN: "new_" + run_label(n, t if has_T else None)}
            if has_T:
                row[C.T_M] = t
            d_hi = max(float(frame[C.D].max()), extend_to or 0.0)
            new_rows.append(pd.DataFrame({C.D: np.geomspace(float(frame[C.D].min()), d_hi,
                                                            n_grid), **row}))
    if new_rows:
        points = pd.concat([points, *new_rows], ignore_index=True)
    pred = predict(fit, points, kind=kind, probs=probs, seed=seed).table
    nrow, ncol = len(t_levels), len(n_levels)
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow),
                             sharex=True, sharey=True, squeeze=False)
    y_lo, y_hi = float(frame[C.LOSS].min()), float(frame[C.LOSS].max())
    for i, t in enumerate(t_levels):
        for j, n in enumerate(n_levels):
            ax = axes[i, j]
            sel = pred[C.N] == n
            if has_T:
                sel &= pred[C.T_M] == t
            for run in pd.unique(pred.loc[sel, C.RUN]):
                p = pred[sel & (pred[C.RUN] == run)]
                x = p[C.D].to_numpy() / 1e9
                for prob in sorted(probs, reverse=True):
                    tag = f"{prob * 100:g}"
                    ax.fill_between(x, p[f"lower_{tag}"], p[f"upper_{tag}"], color="C0",
                                    alpha=_BAND_ALPHA.get(prob, 0.25), lw=0,
                                    label=f"{tag}% band")
                ax.plot(x, p["median"], "--", color="C3", lw=1.2, label="posterior median")
                obs = frame[frame[C.RUN] == run]
                if len(obs):
                    ax.plot(obs[C.D] / 1e9, obs[C.LOSS], "-", color="k", lw=0.8,
                            label="observed")
            title = f"N = {size_label(n)}"
            ax.set_title((f"T_m = {t:g}, " if has_T else "") + title, fontsize=9)
            ax.set_xscale(xscale)
            ax.grid(alpha=0.3, lw=0.5)
            if i == nrow - 1:
                ax.set_xlabel("tokens (billions)")
            if j == 0:
                ax.set_ylabel("total loss")
    axes[0, 0].set_ylim(ylim or (y_lo - 0.05 * (y_hi - y_lo), y_hi + 0.05 * (y_hi - y_lo)))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    uniq = dict(zip(labels, handles, strict=False))
    fig.suptitle(f"{fit.spec.law}: observed curves, posterior median and {kind} bands",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.06 / nrow, 1, 1))
    fig.legend(uniq.values(), uniq.keys(), loc="lower center", ncol=len(uniq), frameon=False,
               fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return fig


def save_figure(fig: Any, path: str | Path) -> Path:
    """Save a figure atomically; the format follows the suffix (``.png``, ``.svg``)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120,
                                                      bbox_inches="tight"))


def plot_backtest(data: Any, forecast: pd.DataFrame, *, title: str = "", max_runs: int = 12,
                  prob: float = 0.9) -> Any:
    """Held-out forecasts: one panel per held-out run (up to ``max_runs``).

    Training points in grey, held-out truth in black, the forecast median dashed with its
    central ``prob`` band shaded.
    """
    import matplotlib.pyplot as plt

    runs = list(pd.unique(forecast[C.RUN]))[:max_runs]
    ncol = min(4, len(runs))
    nrow = int(np.ceil(len(runs) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
    tag = f"{prob * 100:g}"
    frame = data.frame
    for ax, run in zip(axes.flat, runs, strict=False):
        f = forecast[forecast[C.RUN] == run].sort_values(C.D)
        seen = frame[(frame[C.RUN] == run) & ~frame[C.D].isin(f[C.D])]
        x = f[C.D].to_numpy() / 1e9
        ax.fill_between(x, f[f"lower_{tag}"], f[f"upper_{tag}"], color="C0", alpha=0.25,
                        lw=0, label=f"{tag}% band")
        ax.plot(x, f["median"], "--", color="C3", lw=1.2, label="forecast median")
        ax.plot(x, f[C.LOSS], ".", color="k", ms=3, label="held-out truth")
        if len(seen):
            ax.plot(seen[C.D] / 1e9, seen[C.LOSS], ".", color="0.6", ms=3, label="training")
        ax.set_xscale("log")
        ax.set_title(str(run), fontsize=8)
        ax.grid(alpha=0.3, lw=0.5)
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.06 / nrow, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False, fontsize=8)
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
        Column whose levels get one colour each (default ``T_m`` when present, else ``N``).
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
    color_by = color_by or (C.T_M if C.T_M in frame.columns else C.N)
    if color_by not in frame.columns:
        raise SpecError(f"color_by={color_by!r} is not a column of the fit's data")
    resid = residuals(fit, seed=seed)
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    x_col = C.D if C.D in frame.columns else C.N  # final losses without D: against N
    for i, level in enumerate(sorted(pd.unique(frame[color_by]))):
        sel = (frame[color_by] == level).to_numpy()
        ax.plot(frame.loc[sel, x_col] / 1e9, resid[sel], ".", ms=3 if x_col == C.D else 6,
                color=f"C{i % 10}",
                label=_level_label(color_by, level) if color_by in (C.N, C.T_M)
                else f"{color_by} = {level:g}" if isinstance(level, float)
                else f"{color_by} = {level}")
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("tokens (billions)" if x_col == C.D else "parameters N (billions)")
    ax.set_ylabel("observed - posterior median")
    ax.grid(alpha=0.3, lw=0.5)
    ax.legend(fontsize=8, frameon=False, markerscale=2)
    ax.set_title(f"{fit.spec.law}: residuals against "
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
        Band probabilities.
    kind : {"predictive", "epistemic"}
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
    # a decade or less of N: label 1-2-5 steps in plain numbers, not 10^x
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("parameters N (billions)")
    ax.set_ylabel("final loss")
    ax.grid(alpha=0.3, lw=0.5)
    ax.legend(fontsize=8, frameon=False)
    bands = " / ".join(f"{p:.0%}" for p in sorted(probs))
    ax.set_title(f"{fit.spec.law}: observed (dots), median (dashed), {bands} {kind} bands",
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
        Width and height of one panel, inches.

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
    fig, axes = plt.subplots(nrow, ncol, figsize=(panel_size[0] * ncol, panel_size[1] * nrow),
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
        ax.set_xlabel(f"effect on {'log ' if link == 'log' else ''}{e.param}", fontsize=8)
        ax.set_title(f"{e.name} (sd median {np.median(sd):.3g})", fontsize=9)
        ax.grid(alpha=0.3, lw=0.5, axis="x")
    for ax in list(axes.flat)[len(effects):]:
        ax.set_visible(False)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(f"{fit.spec.law}: group effects and their shrinkage", fontsize=10)
    fig.tight_layout(rect=(0, 0.08 / nrow, 1, 1))
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False,
               fontsize=8)
    return fig
