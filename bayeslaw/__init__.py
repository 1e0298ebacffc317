"""bayeslaw: Bayesian forecasting of language-model training loss.

Everything a user calls is here: ``import bayeslaw as bl``, then ``bl.load``, ``bl.fit``,
``bl.predict``, ``bl.compare``, ``bl.backtest``, ``bl.build_report``, ``bl.plot_grid``, ...
``bl.testing`` (checks for CI) and ``bl.simulate`` (synthetic sweeps) stay modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .constants import VERSION as __version__

#: Where each top-level name lives: (module, name in it), or (module, None) for a module.
#: Loaded on first use (PEP 562), so ``import bayeslaw`` and the ``bayeslaw`` command start
#: without importing every module.
_EXPORTS: dict[str, tuple[str, str | None]] = {
    "ApproximationWarning": ("errors", "ApproximationWarning"),
    "ArgumentError": ("errors", "ArgumentError"),
    "backtest": ("backtesting", "backtest"),
    "BacktestResult": ("backtesting", "BacktestResult"),
    "BaselineConvergenceWarning": ("errors", "BaselineConvergenceWarning"),
    "BayeslawError": ("errors", "BayeslawError"),
    "BayeslawWarning": ("errors", "BayeslawWarning"),
    "best_T_m": ("derived", "best_T_m"),
    "best_T_m_at_budget": ("derived", "best_T_m_at_budget"),
    "build_report": ("report", "build_report"),
    "bundled_path": ("simulate", "bundled_path"),
    "compare": ("comparison", "compare"),
    "Comparison": ("comparison", "Comparison"),
    "compute_optimal": ("derived", "compute_optimal"),
    "ConvergenceError": ("errors", "ConvergenceError"),
    "ConvergenceWarning": ("errors", "ConvergenceWarning"),
    "DataError": ("errors", "DataError"),
    "Derived": ("derived", "Derived"),
    "Diagnostics": ("diagnostics", "Diagnostics"),
    "Fit": ("result", "Fit"),
    "fit": ("inference", "fit"),
    "fit_many": ("inference", "fit_many"),
    "Fits": ("result", "Fits"),
    "FleetWarning": ("errors", "FleetWarning"),
    "TaskFailedWarning": ("errors", "TaskFailedWarning"),
    "FitFileError": ("errors", "FitFileError"),
    "forecast_run": ("prediction", "forecast_run"),
    "get_law": ("laws", "get_law"),
    "group_folds": ("refits", "group_folds"),
    "ImportanceWeightsWarning": ("errors", "ImportanceWeightsWarning"),
    "LAWS": ("laws", "LAWS"),
    "load": ("data", "load"),
    "load_chinchilla": ("public_data", "load_chinchilla"),
    "load_misfitting": ("public_data", "load_misfitting"),
    "load_colpret": ("public_data", "load_colpret"),
    "load_parscale": ("public_data", "load_parscale"),
    "load_spec": ("catalog", "load_spec"),
    "loss_at": ("derived", "loss_at"),
    "LossData": ("data", "LossData"),
    "ModelSpec": ("spec", "ModelSpec"),
    "ParetoKWarning": ("errors", "ParetoKWarning"),
    "parse_split": ("splits", "parse_split"),
    "plateau_ylim": ("grid_figure", "plateau_ylim"),
    "plot_backtest": ("plots", "plot_backtest"),
    "plot_final_losses": ("plots", "plot_final_losses"),
    "plot_grid": ("grid_figure", "plot_grid"),
    "plot_group_effects": ("plots", "plot_group_effects"),
    "plot_residuals": ("plots", "plot_residuals"),
    "predict": ("prediction", "predict"),
    "Prediction": ("prediction", "Prediction"),
    "prediction_grid": ("grids", "prediction_grid"),
    "Prior": ("priors", "Prior"),
    "recalibration": ("backtesting", "recalibration"),
    "sample_prior_predictive": ("inference", "sample_prior_predictive"),
    "SamplerSettings": ("settings", "SamplerSettings"),
    "simulate": ("simulate", None),
    "SpecError": ("errors", "SpecError"),
    "StaleRecordsWarning": ("errors", "StaleRecordsWarning"),
    "testing": ("testing", None),
    "Thresholds": ("diagnostics", "Thresholds"),
    "UnidentifiedSplitWarning": ("errors", "UnidentifiedSplitWarning"),
    "WarmStartWarning": ("errors", "WarmStartWarning"),
    "write_fit_outputs": ("outputs", "write_fit_outputs"),
    "write_grid_figures": ("outputs", "write_grid_figures"),
}


def __getattr__(name: str) -> Any:
    """``bl.fit`` and every other top-level name, imported from its module on first use."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'bayeslaw' has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    loaded = importlib.import_module(f".{module}", __name__)
    value = loaded if attr is None else getattr(loaded, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; loaded lazily above
    from . import simulate, testing
    from .backtesting import BacktestResult, backtest, recalibration
    from .catalog import load_spec
    from .comparison import Comparison, compare
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
        FleetWarning,
        ImportanceWeightsWarning,
        ParetoKWarning,
        SpecError,
        StaleRecordsWarning,
        TaskFailedWarning,
        UnidentifiedSplitWarning,
        WarmStartWarning,
    )
    from .grid_figure import plateau_ylim, plot_grid
    from .grids import prediction_grid
    from .inference import fit, fit_many, sample_prior_predictive
    from .laws import LAWS, get_law
    from .outputs import write_fit_outputs, write_grid_figures
    from .plots import plot_backtest, plot_final_losses, plot_group_effects, plot_residuals
    from .prediction import Prediction, forecast_run, predict
    from .priors import Prior
    from .public_data import load_chinchilla, load_colpret, load_misfitting, load_parscale
    from .refits import group_folds
    from .report import build_report
    from .result import Fit, Fits
    from .settings import SamplerSettings
    from .simulate import bundled_path
    from .spec import ModelSpec
    from .splits import parse_split

__all__ = [
    "SamplerSettings",
    "plateau_ylim",
    "load_parscale",
    "load_misfitting",
    "load_colpret",
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
    "Fits",
    "FleetWarning",
    "ImportanceWeightsWarning",
    "LossData",
    "ModelSpec",
    "ParetoKWarning",
    "Prediction",
    "Prior",
    "SpecError",
    "StaleRecordsWarning",
    "TaskFailedWarning",
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
    "fit_many",
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
