"""Posterior draws evaluated in numpy: predictions, derived quantities and the result.

The draws and their evaluation at any points, the noise model's numpy side, predictions,
derived quantities, diagnostics and the frozen :class:`Fit`. Never imports pymc, pytensor or
matplotlib; may import :mod:`bayeslaw.model` (not its graph), :mod:`bayeslaw.spec`,
:mod:`bayeslaw.data`, :mod:`bayeslaw.laws` and the core modules.
"""

from __future__ import annotations

from .derived import (
    Derived,
    best_T_m,
    best_T_m_at_budget,
    compute_optimal,
    loss_at,
    step_gain,
    total_loss,
)
from .diagnosis import Diagnosis
from .diagnostics import Diagnostics, Thresholds
from .draws import Posterior
from .noise import predictive_log_density
from .points import prediction_grid
from .prediction import Prediction, forecast_run, predict
from .result import Fit, Fits

__all__ = [
    "Derived",
    "Diagnosis",
    "Diagnostics",
    "Fit",
    "Fits",
    "Posterior",
    "Prediction",
    "Thresholds",
    "best_T_m",
    "best_T_m_at_budget",
    "compute_optimal",
    "forecast_run",
    "loss_at",
    "predict",
    "predictive_log_density",
    "prediction_grid",
    "step_gain",
    "total_loss",
]
