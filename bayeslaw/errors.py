"""Errors and warnings that users can catch and filter.

Every failure bayeslaw raises on purpose is a ``BayeslawError``; every warning it issues is a
``BayeslawWarning`` (``warnings.simplefilter("ignore", bl.BayeslawWarning)`` silences them all).
"""

from __future__ import annotations

from typing import Any


def plain(value: Any) -> str:
    """A value as a user wrote it, for messages: ``nan``, ``1e+300``, ``'abc'``.

    A numpy scalar is printed as its Python value (never ``np.float64(nan)``).
    """
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        value = item()
    return repr(value) if isinstance(value, str) else str(value)


class BayeslawError(Exception):
    """Base class of every error bayeslaw raises on purpose."""


class DataError(BayeslawError, ValueError):
    """The input table is unusable; the message names the column/row and the fix."""


class SpecError(BayeslawError, ValueError):
    """A law / prior / hierarchy specification is invalid or inconsistent with the data."""


class ConvergenceError(BayeslawError, RuntimeError):
    """Sampling diagnostics failed and the caller asked for strictness."""


class FitFileError(BayeslawError, OSError):
    """A saved fit cannot be read (wrong file, wrong format version)."""


class ArgumentError(BayeslawError, ValueError):
    """A function was called with an argument it cannot use; the message names it and the fix."""


class BayeslawWarning(UserWarning):
    """Base class of every warning bayeslaw issues on purpose (filter them all with this)."""


class ConvergenceWarning(BayeslawWarning):
    """A fit's diagnostics failed their thresholds (R-hat, ESS, divergences, BFMI)."""


class ApproximationWarning(BayeslawWarning):
    """A fit's draws come from an approximation (Laplace, pathfinder), not from NUTS."""


class WarmStartWarning(BayeslawWarning):
    """The warm start found no usable mode: the chains start from the prior's centre."""


class ParetoKWarning(BayeslawWarning):
    """PSIS-LOO is unreliable for some points (Pareto k > 0.7)."""


class UnidentifiedSplitWarning(BayeslawWarning):
    """A backtest's training part is short of the levels the law needs: fitted on priors."""


class ImportanceWeightsWarning(BayeslawWarning):
    """A partial curve's forecast rests on few effective draws of importance resampling."""


class BaselineConvergenceWarning(BayeslawWarning):
    """The baseline's optimizer did not report convergence (point_fit, bootstrap)."""


class StaleRecordsWarning(BayeslawWarning):
    """A resumable file (SBC) holds records made with other settings: ignored and kept."""


class TaskFailedWarning(BayeslawWarning):
    """A task of a fleet (a fold, refit, simulation or fit) raised: named, the rest kept."""


class FleetWarning(BayeslawWarning):
    """A fleet asked for Dask workers runs serially: ``dask.distributed`` is not installed."""
