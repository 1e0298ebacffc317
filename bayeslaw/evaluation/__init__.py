"""Judging forecasts and models.

Backtests and their splits, held-out scores and metrics, the least-squares baseline, refits
(exact LOO, grouped K-fold), model comparison, simulation-based calibration and the verdicts
of checks. May import :mod:`bayeslaw.inference`, :mod:`bayeslaw.plots` and below.
"""

from __future__ import annotations

from .backtesting import BacktestResult, Recalibration, backtest, recalibration
from .comparison import Comparison, compare
from .refits import group_folds
from .splits import parse_split
from .widen import Widening, widening

__all__ = [
    "BacktestResult",
    "Comparison",
    "Recalibration",
    "Widening",
    "backtest",
    "compare",
    "group_folds",
    "parse_split",
    "recalibration",
    "widening",
]
