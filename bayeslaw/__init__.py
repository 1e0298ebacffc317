"""bayeslaw: Bayesian forecasting of language-model training loss."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("bayeslaw")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

from .data import LossData, load
from .errors import BayeslawError, ConvergenceError, DataError, FitFileError, SpecError
from .laws import LAWS, get_law
from .priors import ModelSpec, Prior, load_spec

__all__ = [
    "LAWS",
    "BayeslawError",
    "ConvergenceError",
    "DataError",
    "FitFileError",
    "LossData",
    "ModelSpec",
    "Prior",
    "SpecError",
    "__version__",
    "get_law",
    "load",
    "load_spec",
]
