"""Figures of a :class:`~bayeslaw.fit.Fit`: the sweep grid with credible bands.

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
from .predict import predict

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
