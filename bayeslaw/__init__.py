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
    "backtest": ("evaluation.backtesting", "backtest"),
    "BacktestResult": ("evaluation.backtesting", "BacktestResult"),
    "BaselineConvergenceWarning": ("errors", "BaselineConvergenceWarning"),
    "BayeslawError": ("errors", "BayeslawError"),
    "BayeslawWarning": ("errors", "BayeslawWarning"),
    "best_T_m": ("posterior.derived", "best_T_m"),
    "best_T_m_at_budget": ("posterior.derived", "best_T_m_at_budget"),
    "best_exit_distribution": ("posterior.derived", "best_exit_distribution"),
    "build_report": ("report.build", "build_report"),
    "bundled_path": ("simulate", "bundled_path"),
    "compare": ("evaluation.comparison", "compare"),
    "Comparison": ("evaluation.comparison", "Comparison"),
    "compute_optimal": ("posterior.derived", "compute_optimal"),
    "ConvergenceError": ("errors", "ConvergenceError"),
    "ConvergenceWarning": ("errors", "ConvergenceWarning"),
    "DataError": ("errors", "DataError"),
    "Derived": ("posterior.derived", "Derived"),
    "Diagnosis": ("posterior.diagnosis", "Diagnosis"),
    "Diagnostics": ("posterior.diagnostics", "Diagnostics"),
    "Fit": ("posterior.result", "Fit"),
    "fit": ("inference.sampling", "fit"),
    "fit_many": ("inference.sampling", "fit_many"),
    "Fits": ("posterior.result", "Fits"),
    "FleetWarning": ("errors", "FleetWarning"),
    "TaskFailedWarning": ("errors", "TaskFailedWarning"),
    "FitFileError": ("errors", "FitFileError"),
    "forecast_run": ("posterior.prediction", "forecast_run"),
    "get_law": ("laws.registry", "get_law"),
    "group_folds": ("evaluation.refits", "group_folds"),
    "ImportanceWeightsWarning": ("errors", "ImportanceWeightsWarning"),
    "LAWS": ("laws.registry", "LAWS"),
    "load": ("data.table", "load"),
    "load_chinchilla": ("data.public", "load_chinchilla"),
    "load_misfitting": ("data.public", "load_misfitting"),
    "load_colpret": ("data.public", "load_colpret"),
    "load_parscale": ("data.public", "load_parscale"),
    "load_spec": ("spec.catalog", "load_spec"),
    "loss_at": ("posterior.derived", "loss_at"),
    "step_gain": ("posterior.derived", "step_gain"),
    "total_loss": ("posterior.derived", "total_loss"),
    "exit_columns": ("data.steps", "exit_columns"),
    "LossData": ("data.table", "LossData"),
    "log_density": ("posterior.noise", "predictive_log_density"),
    "outlier_probability": ("posterior.noise", "outlier_probability"),
    "ModelSpec": ("spec.model_spec", "ModelSpec"),
    "ParetoKWarning": ("errors", "ParetoKWarning"),
    "parse_split": ("evaluation.splits", "parse_split"),
    "plateau_ylim": ("plots.panels", "plateau_ylim"),
    "plot_backtest": ("plots.figures", "plot_backtest"),
    "plot_final_losses": ("plots.figures", "plot_final_losses"),
    "plot_grid": ("plots.sweep", "plot_grid"),
    "plot_group_effects": ("plots.figures", "plot_group_effects"),
    "plot_residuals": ("plots.figures", "plot_residuals"),
    "predict": ("posterior.prediction", "predict"),
    "Prediction": ("posterior.prediction", "Prediction"),
    "prediction_grid": ("posterior.points", "prediction_grid"),
    "Prior": ("spec.parts", "Prior"),
    "recalibration": ("evaluation.backtesting", "recalibration"),
    "sample_prior_predictive": ("inference.sampling", "sample_prior_predictive"),
    "SamplerSettings": ("spec.settings", "SamplerSettings"),
    "simulate": ("simulate", None),
    "SpecError": ("errors", "SpecError"),
    "StaleRecordsWarning": ("errors", "StaleRecordsWarning"),
    "testing": ("testing", None),
    "Thresholds": ("posterior.diagnostics", "Thresholds"),
    "UnidentifiedSplitWarning": ("errors", "UnidentifiedSplitWarning"),
    "WarmStartWarning": ("errors", "WarmStartWarning"),
    "Widening": ("evaluation.widen", "Widening"),
    "widening": ("evaluation.widen", "widening"),
    "write_fit_outputs": ("report.folders", "write_fit_outputs"),
    "write_grid_figures": ("report.folders", "write_grid_figures"),
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
    from .data.public import load_chinchilla, load_colpret, load_misfitting, load_parscale
    from .data.steps import exit_columns
    from .data.table import LossData, load
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
    from .evaluation.backtesting import BacktestResult, backtest, recalibration
    from .evaluation.comparison import Comparison, compare
    from .evaluation.refits import group_folds
    from .evaluation.splits import parse_split
    from .evaluation.widen import Widening, widening
    from .inference.sampling import fit, fit_many, sample_prior_predictive
    from .laws.registry import LAWS, get_law
    from .plots.figures import plot_backtest, plot_final_losses, plot_group_effects, plot_residuals
    from .plots.panels import plateau_ylim
    from .plots.sweep import plot_grid
    from .posterior.derived import (
        Derived,
        best_exit_distribution,
        best_T_m,
        best_T_m_at_budget,
        compute_optimal,
        loss_at,
        step_gain,
        total_loss,
    )
    from .posterior.diagnosis import Diagnosis
    from .posterior.diagnostics import Diagnostics, Thresholds
    from .posterior.noise import outlier_probability
    from .posterior.noise import predictive_log_density as log_density
    from .posterior.points import prediction_grid
    from .posterior.prediction import Prediction, forecast_run, predict
    from .posterior.result import Fit, Fits
    from .report.build import build_report
    from .report.folders import write_fit_outputs, write_grid_figures
    from .simulate import bundled_path
    from .spec.catalog import load_spec
    from .spec.model_spec import ModelSpec
    from .spec.parts import Prior
    from .spec.settings import SamplerSettings

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
    "Diagnosis",
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
    "Widening",
    "__version__",
    "backtest",
    "best_T_m",
    "best_T_m_at_budget",
    "best_exit_distribution",
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
    "log_density",
    "loss_at",
    "exit_columns",
    "outlier_probability",
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
    "step_gain",
    "testing",
    "total_loss",
    "widening",
    "write_fit_outputs",
    "write_grid_figures",
]
