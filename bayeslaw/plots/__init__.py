"""The figures: the sweep grid and the rest.

The grid of a sweep (rows T_m, columns N; one panel per curve for a table of curves without
N) with its bands and zoom, and the residual, final loss, group-effect and backtest figures.
May import :mod:`bayeslaw.posterior` and below; never samples.
"""

from __future__ import annotations

from .figures import plot_backtest, plot_final_losses, plot_group_effects, plot_residuals
from .panels import plateau_ylim
from .sweep import grid_zoom, plot_grid

__all__ = [
    "grid_zoom",
    "plateau_ylim",
    "plot_backtest",
    "plot_final_losses",
    "plot_grid",
    "plot_group_effects",
    "plot_residuals",
]
