"""bayeslaw: Bayesian forecasting of language-model training loss.

Everything a user calls is here: ``import bayeslaw as bl``, then ``bl.load``, ``bl.fit``,
``bl.predict``, ``bl.compare``, ``bl.backtest``, ``bl.build_report``, ``bl.plot_grid``, ...
``bl.testing`` (checks for CI) and ``bl.simulate`` (synthetic sweeps) stay modules.
"""

from __future__ import annotations

from . import simulate, testing
from .backtesting import BacktestResult, backtest, recalibration
from .catalog import load_spec
from .comparison import Comparison, compare, group_folds
from .constants import VERSION as __version__
from .data import LossData, load
from .derived import Derived, best_T_m, best_T_m_at_budget, compute_optimal, loss_at
from .diagnostics import Diagnostics, Thresholds
from .errors import (
    ApproximationWarning,
    ArgumentError,
    BaselineConvergenceWarning,
    BayeslawError,
    BayeslawWarning,
    ConvergenceError,
    ConvergenceWarning,
    DataError,
    FitFileError,
    ImportanceWeightsWarning,
    ParetoKWarning,
    SpecError,
    StaleRecordsWarning,
    UnidentifiedSplitWarning,
    WarmStartWarning,
)
from .grid_figure import plateau_ylim, plot_grid
from .grids import prediction_grid
from .inference import fit, sample_prior_predictive
from .laws import LAWS, get_law
from .outputs import write_fit_outputs, write_grid_figures
from .plots import plot_backtest, plot_final_losses, plot_group_effects, plot_residuals
from .prediction import Prediction, forecast_run, predict
from .priors import Prior
from .public_data import load_chinchilla, load_misfitting, load_parscale
from .report import build_report
from .result import Fit
from .settings import SamplerSettings
from .simulate import bundled_path
from .spec import ModelSpec
from .splits import parse_split

__all__ = [
    "SamplerSettings",
    "plateau_ylim",
    "load_parscale",
    "load_misfitting",
    "load_chinchilla",
    "prediction_grid",
    "LAWS",
    "ApproximationWarning",
    "ArgumentError",
    "BacktestResult",
    "BaselineConvergenceWarning",
    "BayeslawError",
    "BayeslawWarning",
    "Comparison",
    "ConvergenceError",
    "ConvergenceWarning",
    "DataError",
    "Derived",
    "Diagnostics",
    "Fit",
    "FitFileError",
    "ImportanceWeightsWarning",
    "LossData",
    "ModelSpec",
    "ParetoKWarning",
    "Prediction",
    "Prior",
    "SpecError",
    "StaleRecordsWarning",
    "Thresholds",
    "UnidentifiedSplitWarning",
    "WarmStartWarning",
    "__version__",
    "backtest",
    "best_T_m",
    "best_T_m_at_budget",
    "build_report",
    "bundled_path",
    "compare",
    "compute_optimal",
    "fit",
    "forecast_run",
    "get_law",
    "group_folds",
    "load",
    "load_spec",
    "loss_at",
    "parse_split",
    "plot_backtest",
    "plot_final_losses",
    "plot_grid",
    "plot_group_effects",
    "plot_residuals",
    "predict",
    "recalibration",
    "sample_prior_predictive",
    "simulate",
    "testing",
    "write_fit_outputs",
    "write_grid_figures",
]
