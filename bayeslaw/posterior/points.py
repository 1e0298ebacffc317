"""Grids of prediction points: the rows ``bayeslaw predict`` forecasts.

:func:`prediction_grid` builds the points of a forecast from a fit's law: every combination
of the law's axes among ``N``, ``D``, ``T_m`` and ``P`` (a grid point is a run trained to
``D``: a law that needs a run's ``horizon`` gets ``horizon = D``), or a table of points taken
as given.  Error messages name the Python argument and the command-line option.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import TERM_COLUMNS
from ..data.table import read_table
from ..errors import ArgumentError
from .derived import runs_end_at_D

if TYPE_CHECKING:  # pragma: no cover
    from ..laws.registry import Law
    from .result import Fit

#: Covariates a grid takes as axes, in the order of the grid's columns; a law's other
#: covariates (``N_once``, ``N_rec``) need a table of points.
GRID_COLUMNS = (C.N, C.D, C.T_M, C.P)

Axis = float | Sequence[float] | np.ndarray | None


def _axis(name: str, values: Axis) -> list[float]:
    """The values of one axis as a list of positive finite floats (``[]`` when not given)."""
    if values is None:
        return []
    try:
        array = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        raise ArgumentError(f"{name} takes numbers, got {values!r}") from None
    if array.ndim != 1:
        raise ArgumentError(f"{name} takes one number or a flat sequence of numbers, got an "
                            f"array of shape {array.shape}")
    bad = array[~(np.isfinite(array) & (array > 0))]
    if bad.size:
        raise ArgumentError(f"{name} takes positive finite numbers (--{name} on the command "
                            f"line), got {bad.tolist()}")
    return array.tolist()


def _check_axes(law: Law, axes: dict[str, list[float]]) -> list[str]:
    """The law's grid columns, after checking ``axes`` gives each of them and nothing else."""
    if any(c in TERM_COLUMNS for c in law.covariates):
        raise ArgumentError(
            f"law {law.name!r} reads each point's learning-rate schedule, which a grid of "
            f"{', '.join(c for c in GRID_COLUMNS if c in law.covariates)} lacks: forecast a "
            "fitted run with --run NAME --D TOKENS, or give --points FILE with a 'run' column: "
            "fitted runs' names, or new runs with their schedule columns (schedule, warmup, "
            "horizon, ...) or their schedule in --schedule FILE (in Python: "
            "bl.forecast_run(fit, run, D), or points=DataFrame)")
    other = [c for c in law.covariates if c not in (*GRID_COLUMNS, C.HORIZON)]
    if other:
        raise ArgumentError(f"law {law.name!r} needs {', '.join(other)}: give the points as a "
                            "table with --points FILE (in Python: points=DataFrame or file)")
    for col in GRID_COLUMNS:
        if col in law.covariates and not axes[col]:
            unit = " (tokens)" if col == C.D else ""
            raise ArgumentError(f"law {law.name!r} needs --{col}{unit}: the grid's {col} "
                                f"values (in Python: {col}=[...])")
        if axes[col] and col not in law.covariates:
            raise ArgumentError(f"law {law.name!r} has no {col} term: drop --{col} (in "
                                f"Python: {col}=None)")
    return [c for c in GRID_COLUMNS if c in law.covariates]


def prediction_grid(fit: Fit, *, N: Axis = None, D: Axis = None, T_m: Axis = None,
                    P: Axis = None, points: str | Path | pd.DataFrame | None = None
                    ) -> pd.DataFrame:
    """The points a forecast of ``fit`` is made at: a grid over the law's axes, or a table.

    Parameters
    ----------
    fit : Fit
        The fit to forecast; its law says which axes the grid needs.
    N, D, T_m, P : float or sequence of float, optional
        The grid's values on each axis, positive numbers: exactly the axes the law has
        (``T_m`` for a looped law, ``P`` for a ParScale law, no ``D`` for a law of final
        losses).  An empty sequence counts as not given.
    points : str, Path or DataFrame, optional
        Instead of the axes, a CSV / TSV / Parquet file or a DataFrame with the law's columns
        (``N_once``, ``N_rec``, a run's ``horizon``, group columns, ...): returned as given.

    Returns
    -------
    DataFrame
        With the axes: one row per combination, columns in the order ``N, D, T_m, P`` (those
        the law has; the last varies fastest), plus ``horizon = D`` where the law needs a
        horizon (a grid point is a run trained to ``D``).  With ``points``: the table.

    Raises
    ------
    ArgumentError
        Both ``points`` and axes given; an axis the law needs missing or one it
        lacks given; a value that is not a positive finite number; a law whose covariates
        a grid cannot span (``N_once``, ``N_rec``: give ``points``).
    DataError
        ``points`` names a file that does not exist or cannot be read.

    Examples
    --------
    >>> prediction_grid(fit, N=[1e8, 3e9], D=[2e10, 1e11], T_m=4)  # doctest: +SKIP
          N             D  T_m
    0  1e+08  2.000000e+10  4.0
    ...
    """
    axes = {name: _axis(name, values)
            for name, values in zip(GRID_COLUMNS, (N, D, T_m, P), strict=True)}
    given = [name for name, values in axes.items() if values]
    if points is not None:
        if given:
            raise ArgumentError(f"give either a table of points or the grid's axes, not both: "
                                f"drop --points or {', '.join(f'--{c}' for c in given)} (in "
                                f"Python: points= or {', '.join(f'{c}=' for c in given)})")
        return points.copy() if isinstance(points, pd.DataFrame) else read_table(points)[0]
    law = fit.spec.law_obj
    cols = _check_axes(law, axes)
    table = pd.DataFrame(list(itertools.product(*(axes[c] for c in cols))), columns=cols)
    return runs_end_at_D(law, table)
