"""The checks :func:`bayeslaw.data.table.load` makes of a loss table, each naming what is wrong.

Every problem raises :class:`~bayeslaw.errors.DataError` naming the column, the row
(1-based, as in the file, header excluded) or the value, and how to fix it.  ``where`` in
every function is the table's origin (a path or ``"<DataFrame>"``) for the messages.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import constants as C
from ..errors import DataError, plain

#: Columns converted to float (and checked finite) where present.
NUMERIC = (C.N, C.D, C.T_M, C.P, C.N_ONCE, C.N_REC, C.HORIZON, C.LOSS)
#: Columns that must be positive; the parameter counts ``N_once`` and ``N_rec`` may be 0
#: (a fully recurrent or a non-recurrent model) but not both.
POSITIVE = (C.N, C.D, C.T_M, C.P, C.HORIZON, C.LOSS)
NONNEGATIVE = (C.N_ONCE, C.N_REC)
#: The largest covariate value taken (N, D, T_m, P, N_once, N_rec, horizon; also a spec's
#: reference point).  Today's largest runs have ~1e13 parameters and ~1e14 tokens, so 1e30
#: refuses no real sweep, and below it every float64 step stays finite: log(1e30) = 69, the
#: figures' grid reaches twice the largest D, and a ratio of two values in (1, 1e30] raised
#: to a power |p| <= 10 is at most 1e300 (at D = 1e308 the grid overflowed to inf).
LARGEST = 1e30
#: The largest loss taken: a cross-entropy in nats is below log(vocabulary) ~ 12 at
#: initialization (even a perplexity stays below ~1e6); a residual below 1e6 squared over a
#: noise scale down to 1e-140 squared stays finite (at loss = 1e300 the squares overflowed
#: and the sampler crashed).
LARGEST_LOSS = 1e6
LIMIT_NOTE = {False: "tokens and parameters are counts, at most about 1e14 today",
              True: "a loss is a cross-entropy in nats, below about 20"}

#: Run-level covariates: one value per run.
RUN_LEVEL = (C.N_ONCE, C.N_REC, C.N, C.T_M, C.P, C.HORIZON)


def check_columns(frame: pd.DataFrame, where: str) -> None:
    """The required columns are there, no name is repeated and there are rows.

    ``D`` may be absent from a table of final losses (no run repeated) and ``N`` when both
    ``N_once`` and ``N_rec`` are given, or from a table of curves (``run`` and ``D``, a run
    repeated: the curve-population law needs no model size).
    """
    # a table of final losses (one row per run) needs no D: laws without a data term fit it
    final = C.RUN not in frame.columns or not frame[C.RUN].duplicated().any()
    # N, the total parameter count, follows from a split into unshared and recurrent ones
    split = {C.N_ONCE, C.N_REC} <= set(frame.columns)
    curves = not final and C.D in frame.columns
    missing = [c for c in C.REQUIRED_COLUMNS
               if c not in frame.columns and not (c == C.D and final)
               and not (c == C.N and (split or curves))]
    if missing:
        raise DataError(
            f"{where} lacks column(s) {missing}; it has {list(frame.columns)}. Rename yours "
            "with a mapping (Python: columns={'tokens': 'D'}; CLI: --column tokens=D)")
    if frame.columns.duplicated().any():
        dup = frame.columns[frame.columns.duplicated()].tolist()
        raise DataError(f"{where} has duplicate column name(s) {dup}")
    if len(frame) == 0:
        raise DataError(f"{where} has no rows")


def _booleans(col: pd.Series) -> np.ndarray:
    """Where ``col`` holds true / false (which ``pd.to_numeric`` would take as 1 / 0)."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return col.notna().to_numpy()
    if col.dtype == object:
        return col.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(dtype=bool)
    return np.zeros(len(col), dtype=bool)


def _to_numbers(col: pd.Series) -> pd.Series:
    """``col`` as numbers, nan where a value is not one (text, a list, ...)."""
    try:
        return pd.to_numeric(col, errors="coerce")
    except (TypeError, ValueError):  # an object pandas cannot even try (a list, a dict)
        return pd.to_numeric(col.map(lambda v: v if isinstance(v, str | int | float) else None),
                             errors="coerce")


def numeric_column(col: pd.Series, name: str, where: str) -> pd.Series:
    """Column ``name`` as floats; every value must be a number, finite and in range.

    ``True`` / ``False`` are refused (not read as 1 / 0), and so is a value beyond
    :func:`largest`: a law raises it to powers and squares residuals of it.
    """
    booleans = _booleans(col)
    if booleans.any():
        row = int(np.flatnonzero(booleans)[0])
        raise DataError(f"column {name!r} must be numeric; row {row + 1} of {where} has "
                        f"{plain(col.iloc[row])} (true / false is not a number)")
    values = _to_numbers(col)
    bad = values.isna() & col.notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"column {name!r} must be numeric; row {row + 1} of {where} has "
                        f"{plain(col.iloc[row])}")
    arr = values.to_numpy(dtype=float)
    nonfinite = ~np.isfinite(arr)
    if nonfinite.any():
        row = int(np.flatnonzero(nonfinite)[0])
        raise DataError(f"column {name!r} has a missing or infinite value "
                        f"({plain(col.iloc[row])}) in row {row + 1} of {where}; drop or fill "
                        "that row")
    huge = np.abs(arr) > largest(name)
    if huge.any():
        row = int(np.flatnonzero(huge)[0])
        raise DataError(f"column {name!r} has {plain(col.iloc[row])} in row {row + 1} of "
                        f"{where}, beyond the largest value taken ({largest(name):g}): check "
                        f"its units ({LIMIT_NOTE[name == C.LOSS]})")
    return values.astype(float)


def largest(name: str) -> float:
    """The largest value a numeric column may hold: :data:`LARGEST_LOSS` or :data:`LARGEST`."""
    return LARGEST_LOSS if name == C.LOSS else LARGEST


def check_signs(frame: pd.DataFrame, where: str) -> None:
    """:data:`POSITIVE` columns are positive, :data:`NONNEGATIVE` ones not negative nor both 0."""
    for col in (c for c in POSITIVE + NONNEGATIVE if c in frame.columns):
        bad = (frame[col] <= 0) if col in POSITIVE else (frame[col] < 0)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            what = "positive" if col in POSITIVE else "zero or positive"
            raise DataError(f"column {col!r} must be {what}; row {row + 1} of {where} has "
                            f"{float(frame[col].iloc[row]):g}")
    if set(NONNEGATIVE) <= set(frame.columns):
        empty = (frame[C.N_ONCE] + frame[C.N_REC] <= 0).to_numpy()
        if empty.any():
            row = int(np.flatnonzero(empty)[0])
            raise DataError(f"columns 'N_once' and 'N_rec' are both 0 in row {row + 1} of "
                            f"{where}: a model needs some parameters")


def name_runs(frame: pd.DataFrame, where: str) -> bool:
    """Make the ``run`` column strings (every run named), or name each row a run; in place.

    Returns whether the table had a ``run`` column.
    """
    if C.RUN not in frame.columns:
        frame[C.RUN] = [f"row{i + 1}" for i in range(len(frame))]
        return False
    if frame[C.RUN].isna().any():
        row = int(np.flatnonzero(frame[C.RUN].isna().to_numpy())[0])
        raise DataError(f"column 'run' is empty in row {row + 1} of {where}; name every run")
    frame[C.RUN] = frame[C.RUN].astype(str)
    return True


def check_runs(frame: pd.DataFrame, where: str) -> None:
    """One row per (run, D), one value per run of each run-level column, none past a horizon."""
    has_D = C.D in frame.columns
    dup = frame.duplicated([C.RUN, C.D], keep=False) if has_D else None  # else: run unique
    if dup is not None and dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"run {frame[C.RUN].iloc[row]!r} has several rows with D = "
                        f"{frame[C.D].iloc[row]:g} (first at row {row + 1} of {where}); "
                        "keep one row per (run, D), e.g. average repeated evaluations")
    check_run_levels(frame, where)
    if has_D and C.HORIZON in frame.columns:
        past = (frame[C.D] > frame[C.HORIZON] * (1 + 1e-9)).to_numpy()
        if past.any():
            row = int(np.flatnonzero(past)[0])
            raise DataError(f"row {row + 1} of {where} has D = {frame[C.D].iloc[row]:g} past "
                            f"its run's horizon {frame[C.HORIZON].iloc[row]:g}; 'horizon' is "
                            "the run's planned tokens (where its learning-rate schedule ends)")


def check_run_levels(frame: pd.DataFrame, where: str) -> None:
    """One value per run of each run-level column (:data:`RUN_LEVEL`), naming run and row."""
    for col in RUN_LEVEL:
        if col in frame.columns:
            changing = frame.groupby(C.RUN, sort=False)[col].nunique() > 1
            if changing.any():
                run = changing[changing].index[0]
                rows = frame[C.RUN].to_numpy() == run
                vals = [float(v) for v in sorted(frame.loc[rows, col].unique())[:4]]
                first = frame.loc[rows, col].to_numpy()
                row = int(np.flatnonzero(rows)[int(np.argmax(first != first[0]))])
                raise DataError(f"run {run!r} has several {col} values along its curve "
                                f"({vals}; row {row + 1} of {where} differs from its first); "
                                f"each run must have one {col}: split it into runs")


def scale_tokens(frame: pd.DataFrame, where: str, tokens_per_step: float | None,
                  min_D: float | None, notes: list[str]) -> None:
    """Multiply ``D`` by ``tokens_per_step`` in place; both options need a ``D`` column."""
    if C.D not in frame.columns and (tokens_per_step is not None or min_D is not None):
        raise DataError(f"{where} has no column 'D': tokens_per_step and min_D need one")
    if tokens_per_step is not None:
        if (isinstance(tokens_per_step, bool) or not isinstance(tokens_per_step, int | float)
                or not 0 < tokens_per_step < np.inf):
            raise DataError(f"tokens_per_step must be a positive number, got "
                            f"{plain(tokens_per_step)}")
        frame[C.D] = frame[C.D] * float(tokens_per_step)
        huge = (frame[C.D] > LARGEST).to_numpy()
        if huge.any():
            row = int(np.flatnonzero(huge)[0])
            raise DataError(f"D times tokens_per_step={tokens_per_step:g} is "
                            f"{frame[C.D].iloc[row]:g} in row {row + 1} of {where}, beyond the "
                            f"largest D taken ({LARGEST:g}): is D already in tokens?")
        notes.append(f"D multiplied by tokens_per_step={tokens_per_step:g}")



def without_warmup(frame: pd.DataFrame, min_D: float, notes: list[str]) -> pd.DataFrame:
    """The rows with ``D >= min_D`` (at least one must be left)."""
    keep = frame[C.D] >= float(min_D)
    if not keep.any():
        raise DataError(f"min_D={min_D:g} drops every row (largest D is "
                        f"{frame[C.D].max():g})")
    notes.append(f"rows with D < {min_D:g} dropped (warm-up)")
    return frame.loc[keep]
