r"""Learning-rate schedules as data: read from a table's columns or a logged rate, checked.

A run's schedule comes in one of two forms:

* **per-run columns** of the curve table: ``schedule`` (:data:`KINDS`), ``warmup`` (a linear
  ramp from 0), ``horizon``, ``decay_start`` (WSD), ``decay_end`` (where a decay reaches its
  final rate; default the horizon), ``decay_shape`` (WSD: :data:`SHAPES`), ``peak_lr`` and
  ``final_lr`` or ``final_lr_ratio`` (default 0), all lengths in tokens;
* **a table of the learning rate itself**, ``run, D, lr``, as trainers log it.  It ends at
  its last row unless the run also has the columns above, which then give the planned rest.

Either becomes one :class:`~bayeslaw.laws.multi_power.RunSchedule` per run: the rate as a
share of its peak, ``eta = lr / peak``, on a grid of at most
:data:`~bayeslaw.laws.multi_power.GRID` steps.  The terms the schedule-aware laws read are
computed from it by :mod:`bayeslaw.laws.multi_power` (the arithmetic, with the multi-power
law): the forward area ``S_1`` (tokens; ``D`` at a constant peak rate), the drop so far (0 to
1), the annealing area ``S_2`` of Tissue et al. 2024 with momentum, and the forward area at
each level of the drop (the multi-power law's sum over earlier steps).  The momentum is an
exponential lag of ``w`` tokens, their ``lambda = 0.999`` per step (``w = 1000`` steps of a
run's ``batch_tokens``; without that column, 1% of the run's horizon, or of a logged table's
last ``D`` when the run has no horizon: where its schedule ends; :func:`window`).  Here:
reading and checking the schedules of a table; :func:`terms` gives the terms of a table's
rows as columns; :func:`bayeslaw.data.table.load` adds them to a table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import constants as C
from ..errors import DataError
from ..laws.multi_power import GRID, NODE_COLUMNS, RunSchedule, grid, rate

#: Schedule kinds and the decay shapes of a WSD cool-down.
KINDS = ("cosine", "linear", "constant", "wsd", "inverse_sqrt")
SHAPES = ("linear", "cosine", "1-sqrt")
#: The per-run columns describing a schedule (``schedule`` names its kind).
SCHEDULE, WARMUP, DECAY_START, DECAY_END = "schedule", "warmup", "decay_start", "decay_end"
DECAY_SHAPE, PEAK_LR, FINAL_LR, FINAL_RATIO = ("decay_shape", "peak_lr", "final_lr",
                                               "final_lr_ratio")
BATCH_TOKENS = "batch_tokens"
LENGTHS = (WARMUP, C.HORIZON, DECAY_START, DECAY_END)
#: Every per-run column of a schedule's plan.
PLAN_COLUMNS = (SCHEDULE, *LENGTHS, DECAY_SHAPE, PEAK_LR, FINAL_LR, FINAL_RATIO, BATCH_TOKENS)
#: Columns of a logged learning-rate table.
LR = "lr"
#: Steps of Tissue et al.'s momentum (lambda = 0.999), and the window without a batch size.
MOMENTUM_STEPS, MOMENTUM_SHARE = 1000, 0.01
#: The columns :func:`terms` computes: the rate, the forward area, the drop, the annealing
#: area, and per run the forward area at which the drop first reaches each level.
LR_NORM, LR_AREA, LR_DROP, ANNEAL_AREA = C.LR_NORM, C.LR_AREA, C.LR_DROP, C.ANNEAL_AREA
TERM_COLUMNS = (LR_NORM, LR_AREA, LR_DROP, ANNEAL_AREA, *NODE_COLUMNS)
#: Columns that vary along a run (the others are one value per run): the schedule's point terms
#: and a step table's exit weights (:data:`bayeslaw.constants.POINT_COLUMNS`).
POINT_COLUMNS = C.POINT_COLUMNS


def from_columns(row: Mapping[str, object], run: str, where: str) -> RunSchedule:
    """A run's schedule from its per-run columns (``row``: one value per column)."""
    kind = str(row[SCHEDULE]).strip().lower()
    if kind not in KINDS:
        raise DataError(f"run {run!r} in {where}: schedule {row[SCHEDULE]!r} is not one of "
                        f"{', '.join(KINDS)}")
    lengths = {k: _length(row, k, run, where) for k in LENGTHS}
    horizon, warmup = lengths[C.HORIZON], lengths[WARMUP] or 0.0
    if horizon is None:
        raise DataError(f"run {run!r} in {where}: a schedule needs the run's 'horizon' "
                        "(its planned tokens)")
    if warmup >= horizon:
        raise DataError(f"run {run!r} in {where}: warmup {warmup:g} is not below the horizon "
                        f"{horizon:g}")
    if kind == "inverse_sqrt" and warmup <= 0:
        raise DataError(f"run {run!r} in {where}: an inverse_sqrt schedule needs a positive "
                        "'warmup' (its rate is sqrt(warmup / D))")
    start, end = lengths[DECAY_START], lengths[DECAY_END]
    if kind == "wsd" and start is None:
        raise DataError(f"run {run!r} in {where}: a wsd schedule needs 'decay_start', where "
                        "its cool-down begins (tokens)")
    for name, value in ((DECAY_START, start), (DECAY_END, end)):
        if value is not None and not warmup <= value <= horizon:
            raise DataError(f"run {run!r} in {where}: {name} {value:g} lies outside the "
                            f"warm-up {warmup:g} .. horizon {horizon:g}")
    D = grid(horizon, [warmup, start or 0.0, end or 0.0])
    eta = rate(kind, D, warmup=warmup, horizon=horizon, decay_start=start, decay_end=end,
               decay_shape=_shape(row, kind, run, where),
               final_ratio=final_ratio(row, run, where))
    return RunSchedule(D, eta, window(row, horizon, run, where))


def _present(row: Mapping[str, object], key: str) -> bool:
    """Whether the run has a value for ``key`` (not absent, ``None``, NaN or ``pd.NA``)."""
    value = row.get(key)
    return not (value is None or (pd.api.types.is_scalar(value) and bool(pd.isna(value))))


def _length(row: Mapping[str, object], key: str, run: str, where: str) -> float | None:
    """A length column of the run, in tokens (``None`` when absent)."""
    return _number(row, key, run, where, "a finite number of tokens >= 0")


def _number(row: Mapping[str, object], key: str, run: str, where: str, what: str,
            positive: bool = False) -> float | None:
    """A numeric column of the run (``None`` if absent): finite, >= 0 (> 0 if ``positive``)."""
    if not _present(row, key):
        return None
    try:
        value = float(row[key])  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise DataError(f"run {run!r} in {where}: column {key!r} must be {what}, got "
                        f"{row[key]!r}") from None
    if not np.isfinite(value) or value < 0 or (positive and value == 0):
        raise DataError(f"run {run!r} in {where}: column {key!r} must be {what}, got "
                        f"{value:g}")
    return value


def _shape(row: Mapping[str, object], kind: str, run: str, where: str) -> str:
    if not _present(row, DECAY_SHAPE):
        return "linear"
    shape = str(row[DECAY_SHAPE]).strip().lower()
    if kind != "wsd":
        raise DataError(f"run {run!r} in {where}: decay_shape is for a wsd schedule; this "
                        f"run's is {kind!r} (drop the value)")
    if shape not in SHAPES:
        raise DataError(f"run {run!r} in {where}: decay_shape {row[DECAY_SHAPE]!r} is not one "
                        f"of {', '.join(SHAPES)}")
    return shape


def final_ratio(row: Mapping[str, object], run: str, where: str) -> float:
    """The final rate as a share of the peak: ``final_lr_ratio``, or ``final_lr / peak_lr``."""
    final = _number(row, FINAL_LR, run, where, "a learning rate >= 0")
    given = _number(row, FINAL_RATIO, run, where, "a share of the peak rate in [0, 1]")
    peak = _number(row, PEAK_LR, run, where, "a learning rate > 0", positive=True)
    if final is not None and given is not None:
        raise DataError(f"run {run!r} in {where}: give final_lr or final_lr_ratio, not both")
    if final is not None:
        if peak is None:
            raise DataError(f"run {run!r} in {where}: final_lr needs the run's peak_lr (or "
                            "give final_lr_ratio)")
        ratio = final / peak
    else:
        ratio = given if given is not None else 0.0
    if not 0.0 <= ratio <= 1.0:
        raise DataError(f"run {run!r} in {where}: the final learning rate must be between 0 "
                        f"and the peak (a ratio in [0, 1]), got {ratio:g}")
    return ratio


def window(row: Mapping[str, object], horizon: float, run: str, where: str) -> float:
    """The momentum window in tokens: :data:`MOMENTUM_STEPS` batches, else 1% of ``horizon``."""
    batch = _number(row, BATCH_TOKENS, run, where, "a number of tokens per step > 0",
                    positive=True)
    return MOMENTUM_STEPS * batch if batch is not None else MOMENTUM_SHARE * horizon


# -- the schedule of a run from a logged table ---------------------------------------------
def from_table(rows: pd.DataFrame, run: str, where: str, plan: Mapping[str, object] | None
               ) -> RunSchedule:
    """A run's schedule from its logged ``D, lr`` rows, continued by ``plan`` (its columns).

    ``rows.index`` holds each row's 0-based position in the table, for messages.
    """
    D, lr = _logged(rows, run, where)
    plan = plan or {}
    peak = _number(plan, PEAK_LR, run, where, "a learning rate > 0", positive=True)
    if peak is None:
        peak = float(lr.max())
    elif lr.max() > peak * (1 + 1e-9):
        i = int(np.argmax(lr))
        raise DataError(f"learning-rate table {where}, run {run!r}: peak_lr {peak:g} is below "
                        f"the largest logged lr {lr[i]:g} (row {rows.index[i] + 1}); peak_lr is "
                        "the schedule's highest rate: give the run's real peak, or drop "
                        "peak_lr to take the largest logged rate")
    if not peak > 0:
        raise DataError(f"learning-rate table {where}, run {run!r}: every lr is 0")
    eta = lr / peak
    horizon = _length(plan, C.HORIZON, run, where)
    win = window(plan, D[-1] if horizon is None else horizon, run, where)
    if _present(plan, SCHEDULE):
        planned = from_columns(plan, run, where)
        later = planned.D > D[-1]
        D, eta = np.concatenate([D, planned.D[later]]), np.concatenate([eta, planned.eta[later]])
    if D[0] > 0:  # the rate before the first logged step: a ramp from 0 at D = 0
        D, eta = np.concatenate([[0.0], D]), np.concatenate([[0.0], eta])
    if len(D) > GRID:  # keep GRID rows, evenly spaced: the areas are integrated on those
        keep = np.unique(np.linspace(0, len(D) - 1, GRID).round().astype(int))
        D, eta = D[keep], eta[keep]
    return RunSchedule(D, eta, win)


def _logged(rows: pd.DataFrame, run: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """A run's logged ``D`` and ``lr``, checked: finite, >= 0, D increasing."""
    number = rows.index.to_numpy() + 1
    D = rows[C.D].to_numpy(float)
    lr = rows[LR].to_numpy(float)
    for name, values in ((C.D, D), (LR, lr)):
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"learning-rate table {where}, run {run!r}, row {number[i]}: "
                            f"{name} must be a finite number >= 0, got {values[i]:g}")
    back = np.flatnonzero(np.diff(D) <= 0)
    if back.size:
        i = int(back[0]) + 1
        raise DataError(f"learning-rate table {where}, run {run!r}, row {number[i]}: D "
                        f"{D[i]:g} does not increase (previous row has {D[i - 1]:g}); sort the "
                        "table by D within each run and drop repeated steps")
    return D, lr


def terms(schedules: Mapping[str, RunSchedule], runs: np.ndarray, D: np.ndarray,
          where: str = "the points") -> pd.DataFrame:
    """The :data:`TERM_COLUMNS` of each row (``runs``, ``D``), in the rows' order.

    A run without a schedule, or a point past the end of its run's known schedule, raises a
    :class:`DataError` naming the run and the row (1-based).
    """
    runs = np.asarray(runs, dtype=object)
    D = np.asarray(D, float)
    out = pd.DataFrame(index=np.arange(len(runs)), columns=list(TERM_COLUMNS), dtype=float)
    for run in pd.unique(runs):
        rows = np.flatnonzero(runs == run)
        if run not in schedules:
            raise DataError(f"run {run!r} (row {rows[0] + 1} of {where}) has no learning-rate "
                            "schedule: add its rows to the lr table, or its schedule columns")
        known = schedules[run].known_to
        late = rows[D[rows] > known * (1 + 1e-9)]
        if late.size:
            raise DataError(
                f"run {run!r}, row {late[0] + 1} of {where}: D={D[late[0]]:.6g} lies past the "
                f"end of the run's known learning-rate schedule (D={known:.6g}); give the "
                "planned rest of the schedule (per-run columns schedule, warmup, horizon, ...) "
                "or a lr table that reaches the horizon")
        for name, value in schedules[run].terms(D[rows]).items():
            out.loc[rows, name] = value
    return out


def plans(frame: pd.DataFrame, where: str) -> dict[str, dict[str, object]]:
    """Each run's schedule columns (a plan), checked constant along the run."""
    cols = [c for c in PLAN_COLUMNS if c in frame.columns]
    changing = frame.groupby(C.RUN, sort=False)[cols].nunique(dropna=False) > 1
    if changing.to_numpy().any():
        run, col = changing.stack()[changing.stack()].index[0]
        row = int(np.flatnonzero((frame[C.RUN] == run).to_numpy())[0]) + 1
        raise DataError(f"{where}: column {col!r} changes within run {run!r} (first row "
                        f"{row}); a schedule column must be one value per run")
    first = frame.groupby(C.RUN, sort=False)[cols].first()
    return {str(run): dict(values) for run, values in first.iterrows()}


def build(frame: pd.DataFrame, table: pd.DataFrame | None, where: str, table_where: str
          ) -> tuple[pd.DataFrame, dict[str, RunSchedule] | None]:
    """The curves (with a per-run ``table``'s columns) and every run's schedule.

    ``table`` is a logged learning-rate table (columns ``run, D, lr``) or one row per run
    with schedule columns (``run, schedule, horizon, ...``); without it, a curve table whose
    ``lr`` column changes along a run is its own logged table (an ``lr`` constant along each
    run is a run's setting, an extra column).  The schedules are ``None`` when there is no
    schedule at all.
    """
    logged = None
    if table is not None:
        if LR in table.columns:
            missing = [c for c in (C.RUN, C.D) if c not in table.columns]
            if missing:
                raise DataError(f"learning-rate table {table_where} lacks column(s) {missing};"
                                " it needs run, D (tokens) and lr")
            logged = table
        elif SCHEDULE in table.columns and C.RUN in table.columns:
            frame = _with_plan(frame, table, table_where)
        else:
            raise DataError(f"schedule table {table_where} has columns {list(table.columns)}: "
                            "give a logged table (run, D, lr) or one row per run (run, "
                            "schedule, horizon, warmup, ...)")
    elif LR in frame.columns and _varies(frame, LR):
        logged, table_where = frame[[C.RUN, C.D, LR]], where
    # a logged rate reads the runs' peak_lr, horizon and batch_tokens even without a plan
    planned = SCHEDULE in frame.columns or (logged is not None and any(
        c in frame.columns for c in PLAN_COLUMNS))
    plan = plans(frame, where) if planned else {}
    if logged is None and not plan:
        return frame, None
    if logged is None:
        return frame, {run: from_columns(p, run, where) for run, p in plan.items()}
    logged = logged.reset_index(drop=True)
    logged = logged.assign(**{C.RUN: logged[C.RUN].astype(str)})
    for name in (C.D, LR):
        logged[name] = pd.to_numeric(logged[name], errors="coerce")
    return frame, {run: from_table(rows, run, table_where, plan.get(run))
                   for run, rows in logged.groupby(C.RUN, sort=False)}


def _varies(frame: pd.DataFrame, column: str) -> bool:
    """Whether ``column`` changes along some run: a logged rate, not a run's setting."""
    return bool((frame.groupby(C.RUN, sort=False)[column].nunique() > 1).any())


def _with_plan(frame: pd.DataFrame, table: pd.DataFrame, where: str) -> pd.DataFrame:
    """The curves with each run's schedule columns from ``table`` (one row per run)."""
    dup = table[C.RUN].astype(str).duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0]) + 1
        raise DataError(f"schedule table {where}, row {row}: run "
                        f"{table[C.RUN].iloc[row - 1]!r} appears twice; give one row per run")
    per_run = table.assign(**{C.RUN: table[C.RUN].astype(str)}).set_index(C.RUN)
    absent = [r for r in pd.unique(frame[C.RUN]) if r not in per_run.index]
    if absent:
        raise DataError(f"schedule table {where} has no row for run(s) {absent[:3]}; give one "
                        "row per run of the curves")
    clash = [c for c in per_run.columns if c in frame.columns]
    if clash:
        raise DataError(f"schedule table {where} and the curves both have column(s) {clash}: "
                        "keep them in one of the two")
    joined = per_run.reindex(frame[C.RUN])
    out = frame.copy()
    for col in joined.columns:
        out[col] = joined[col].to_numpy()
    return out
