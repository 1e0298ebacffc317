"""A looped LM's step-wise losses: one row per run, checkpoint and exit step.

A looped model that exits at recurrent step ``T <= T_m`` has a loss per exit step, and its
training objective weighs them by the exit distribution ``q`` its gate learns (Ouro, arXiv
2510.25741, appendix E)::

    L_total = sum_{T=1..T_m} q(T) L_step(T) - beta_H H(q)

The table (:func:`curves_of_steps` reads it inside :func:`bayeslaw.load`):

- ``run, N, D, T_m, T, loss``: one row per run, checkpoint ``D`` and exit step ``T = 1..T_m``
  (a checkpoint without ``q`` and without a total may log only some of its steps: nothing sums
  over them there);
- total losses are rows of the same table whose ``T`` is empty or ``total``, one per run and
  checkpoint;
- optionally ``q``: the exit probability of step ``T`` at that checkpoint, on the step rows,
  summing to 1 over ``T`` within a checkpoint; without it, a table with totals is fitted
  with a latent exit distribution (``looped_steps_latent``);
- optionally ``entropy_weight``: the training objective's ``beta_H``, one value for the whole
  table (a training setting); :func:`bayeslaw.fit` then fixes ``beta_H`` to it.

Each (run, T) becomes a curve named ``<run>/T<T>`` and each run's totals a curve
``<run>/total``, so that every curve has one row per ``D`` as elsewhere in bayeslaw; the
columns :data:`bayeslaw.constants.EXIT_WEIGHTS` carry what the step-wise laws need (a step
row's one-hot step, a total row's q or, where q is latent, the steps it may exit at), with
:data:`~bayeslaw.constants.LOOPED_RUN` (the run) and :data:`~bayeslaw.constants.EXIT_KIND`
(``step`` or ``total``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..errors import ArgumentError, DataError, plain
from .validation import check_run_levels

#: How far a checkpoint's logged q may sum from 1 (logs round to 3-4 digits).
Q_SUM_TOLERANCE = 1e-3
#: The words a total-loss row may carry in ``T`` (besides an empty cell).
TOTAL_WORDS = frozenset({"total", "all", ""})


def is_step_table(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a table of step-wise losses (it has a ``T`` column)."""
    return C.T_STEP in frame.columns


def curves_of_steps(frame: pd.DataFrame, where: str, notes: list[str]) -> pd.DataFrame:
    """Validate a step table and lay it out as curves with the exit columns.

    ``frame`` has its numeric columns converted (``N``, ``D``, ``T_m``, ``loss``) and named
    runs.  Every problem raises :class:`~bayeslaw.errors.DataError` naming the run and the row
    (1-based, as in the file).
    """
    for col in (C.T_M, C.D):
        if col not in frame.columns:
            raise DataError(f"{where} has a 'T' column (exit steps) but no {col!r} column: a "
                            f"table of step-wise losses needs run, N, D, T_m, T and loss")
    frame = frame.reset_index(drop=True)
    check_run_levels(frame, where)  # before each run becomes several curves
    total, step = _exit_steps(frame, where)
    partial = _check_steps(frame, step, total, where)
    if partial:
        notes.append(f"step table: {len(partial)} checkpoint(s) without a loss at every exit "
                     f"step (no q and no total there, so nothing sums over the steps; the "
                     f"step-wise law is fitted at the steps logged): {'; '.join(partial[:3])}"
                     + (" ..." if len(partial) > 3 else ""))
    has_q = C.Q_EXIT in frame.columns
    q = _exit_probabilities(frame, step, total, where) if has_q else None
    weight = _entropy_weight(frame, where)
    out = frame.copy()
    out[C.LOOPED_RUN] = frame[C.RUN]
    out[C.EXIT_KIND] = np.where(total, "total", "step")
    out[C.T_STEP] = np.where(total, np.nan, step)
    out[C.RUN] = [f"{r}/total" if t else f"{r}/T{int(s)}"
                  for r, t, s in zip(frame[C.RUN], total, np.nan_to_num(step), strict=True)]
    T_m = frame[C.T_M].to_numpy(float)
    ks = np.arange(1, C.MAX_EXIT_STEPS + 1)
    w = (step[:, None] == ks[None, :]).astype(float)  # one-hot on step rows
    latent = bool(total.any()) and not has_q
    if total.any():
        if has_q:
            w[total] = _checkpoint_q(frame, step, total, q, where)
        else:  # a latent q may sit on any step up to T_m
            w[total] = (ks[None, :] <= T_m[total, None]).astype(float)
    for k, col in enumerate(C.EXIT_WEIGHTS):
        out[col] = w[:, k]
    if latent:
        out[C.EXIT_LATENT] = total.astype(float)
        notes.append("step table: exit distribution not logged (no column 'q'): latent")
    else:
        out[C.EXIT_ENTROPY] = np.where(total, exit_entropy(w), 0.0)
    if weight is not None:
        notes.append(f"step table: entropy weight {weight:g} (beta_H, fixed in the fit)")
    notes.append(f"step table: {int((~total).sum())} step rows and {int(total.sum())} total "
                 "rows laid out as curves <run>/T<T> and <run>/total")
    return out


def checkpoint_labels(frame: pd.DataFrame) -> np.ndarray:
    """Each row's checkpoint ``<looped run>@<D>``: the rows a checkpoint shock is shared by.

    A looped run's step curves and its total at one ``D`` (``likelihood.shock``).  Rows
    without the looped run's column (points built by hand) are labelled by their own curve,
    so each is a checkpoint of its own.
    """
    owner = frame[C.LOOPED_RUN] if C.LOOPED_RUN in frame.columns else frame[C.RUN]
    tokens = frame[C.D].to_numpy(float)
    return np.array([f"{r}@{float(d)!r}" for r, d in zip(owner.astype(str), tokens,
                                                         strict=True)], dtype=object)


def exit_entropy(w: np.ndarray) -> np.ndarray:
    """The entropy ``-sum_k w_k ln w_k`` of exit weights over their last axis (0 ln 0 = 0)."""
    w = np.asarray(w, dtype=float)
    safe = np.where(w > 0, w, 1.0)
    return -np.sum(w * np.log(safe), axis=-1)


def optimal_exit(steps: np.ndarray, beta_H: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """The exit distribution minimising ``sum_T q(T) L(T) - beta_H H(q)``, and that minimum.

    For step losses ``L`` (draws x steps) it is ``q(T) ~ exp(-L(T) / beta_H)`` (the Gibbs
    distribution; minimise the Lagrangian over the simplex), with the minimum
    ``-beta_H ln sum_T exp(-L(T) / beta_H)``; at ``beta_H = 0``, all mass on the lowest step
    (shared evenly among ties) and the minimum is that step's loss.
    """
    steps = np.asarray(steps, dtype=float)
    beta = np.broadcast_to(np.asarray(beta_H, dtype=float), steps.shape[:1])[:, None]
    if not (np.isfinite(beta) & (beta >= 0)).all():
        bad = beta[~(np.isfinite(beta) & (beta >= 0))][0]
        raise ArgumentError(f"beta_H must be a number >= 0, got {bad:g}")
    low = steps.min(axis=1, keepdims=True)
    positive = beta > 0
    with np.errstate(divide="ignore"):
        z = np.where(positive, -(steps - low) / np.where(positive, beta, 1.0),
                     np.where(steps == low, 0.0, -np.inf))
    mass = np.exp(z)
    total = mass.sum(axis=1, keepdims=True)
    return mass / total, (low - beta * np.log(total))[:, 0]


def exit_columns(T_m: float, *, T: float | None = None, q: Any = None,
                 latent: bool = False) -> dict[str, float]:
    """The exit columns of one point of a step law: exit step ``T``, or the total.

    ``T`` gives the loss of exiting at step ``T`` (one-hot); without it the point is the
    total loss at ``T_m``: under the exit distribution ``q`` (``T_m`` probabilities summing to
    1), or, with ``latent=True`` (``looped_steps_latent``), under the fit's latent one.

    Raises
    ------
    ArgumentError
        For a ``T`` outside ``1..T_m``, a ``q`` of the wrong length or not summing to 1, or a
        total of the logged-q law without ``q``.
    """
    if not (np.isfinite(float(T_m)) and float(T_m) == int(T_m)
            and 1 <= int(T_m) <= C.MAX_EXIT_STEPS):
        raise ArgumentError(f"T_m must be a whole number of steps 1..{C.MAX_EXIT_STEPS}, "
                            f"got {T_m!r}")
    if T is not None and q is not None:
        raise ArgumentError("give T (one exit step's loss) or q (the total under q), not both")
    t_m = int(T_m)
    w = np.zeros(C.MAX_EXIT_STEPS)
    out: dict[str, float] = {}
    if T is not None:
        if not (float(T) == int(T) and 1 <= int(T) <= t_m):
            raise ArgumentError(f"exit step T must be one of 1..{t_m} (T_m = {t_m}), got {T!r}")
        w[int(T) - 1] = 1.0
        out[C.EXIT_ENTROPY] = out[C.EXIT_LATENT] = 0.0
    elif q is not None:
        q = np.asarray(q, dtype=float)
        if (q.shape != (t_m,) or not np.isfinite(q).all() or (q < 0).any()
                or abs(q.sum() - 1.0) > Q_SUM_TOLERANCE):
            raise ArgumentError(f"q must be {t_m} exit probabilities (one per step of T_m = "
                                f"{t_m}) summing to 1, got {q.tolist()}")
        w[:t_m] = q / q.sum()
        out[C.EXIT_ENTROPY], out[C.EXIT_LATENT] = float(exit_entropy(w)), 0.0
    elif latent:
        w[:t_m] = 1.0
        out[C.EXIT_ENTROPY], out[C.EXIT_LATENT] = 0.0, 1.0
    else:
        raise ArgumentError("the total loss of law 'looped_steps' needs its exit distribution: "
                            "give q (one probability per step up to T_m)")
    return {**dict(zip(C.EXIT_WEIGHTS, w.tolist(), strict=True)), **out}


def check_exit_columns(law: str, points: pd.DataFrame) -> None:
    """Refuse points whose exit columns the step law ``law`` would read wrongly.

    ``looped_steps`` reads the weights as an exit distribution (summing to 1; a total's
    entropy in ``exit_H``); ``looped_steps_latent`` reads them as the steps a point may exit
    at (0 or 1; ``exit_latent`` 1 on a total), so a given q cannot be passed to it as
    columns: :func:`bayeslaw.total_loss` takes one.
    """
    if law not in ("looped_steps", "looped_steps_latent") or not set(C.EXIT_WEIGHTS) <= set(
            points.columns):
        return
    w = points[list(C.EXIT_WEIGHTS)].to_numpy(float)
    if law == "looped_steps":
        latent = (points[C.EXIT_LATENT].to_numpy(float) != 0 if C.EXIT_LATENT in points
                  else np.zeros(len(points), bool))
        bad = latent | (np.abs(w.sum(axis=1) - 1.0) > Q_SUM_TOLERANCE)
        what = ("law 'looped_steps' reads a point's exit weights as its exit distribution "
                "(one-hot at a step, or a total's q summing to 1); build them with "
                "bayeslaw.exit_columns(T_m, T=...) or (T_m, q=...)")
    else:
        bad = ~np.isin(w, (0.0, 1.0)).all(axis=1)
        what = ("law 'looped_steps_latent' takes a total's exit distribution from its own "
                "lambda_q: a point's weights mark the steps it may exit at (0 or 1); for a "
                "total under another q use bayeslaw.total_loss(fit, ..., q=...)")
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ArgumentError(f"point {i + 1} has exit weights {np.round(w[i], 4).tolist()}: "
                            f"{what}")


#: The columns :func:`curves_of_steps` adds (``run`` it renames).
LAYOUT_COLUMNS = (C.LOOPED_RUN, C.EXIT_KIND, *C.EXIT_WEIGHTS, C.EXIT_ENTROPY, C.EXIT_LATENT)


def as_step_table(frame: pd.DataFrame) -> pd.DataFrame:
    """A laid-out step table back as it was read (``run`` the run's name, no exit columns).

    Loading the result again gives the same curves; a frame that is not a step table is
    returned as it is.
    """
    if C.LOOPED_RUN not in frame.columns:
        return frame
    return (frame.assign(**{C.RUN: frame[C.LOOPED_RUN]})
            .drop(columns=[c for c in LAYOUT_COLUMNS if c in frame.columns]))


def fixed_by_data(frame: pd.DataFrame) -> dict[str, float]:
    """Law parameters a table fixes: ``beta_H`` from a step table's ``entropy_weight``."""
    if C.ENTROPY_WEIGHT not in frame.columns or C.EXIT_KIND not in frame.columns:
        return {}
    return {"beta_H": float(frame[C.ENTROPY_WEIGHT].iloc[0])}


def _exit_steps(frame: pd.DataFrame, where: str) -> tuple[np.ndarray, np.ndarray]:
    """Which rows are totals, and each step row's ``T`` (nan on totals)."""
    raw = frame[C.T_STEP]
    booleans = raw.map(lambda v: isinstance(v, bool | np.bool_)).to_numpy(bool)
    if booleans.any():
        i = int(np.flatnonzero(booleans)[0])
        raise DataError(f"column 'T' must be an exit step 1, 2, ...; row {i + 1} of {where} has "
                        f"{plain(raw.iloc[i])} (true / false is not a step)")
    total = raw.isna().to_numpy() | raw.map(
        lambda v: isinstance(v, str) and v.strip().lower() in TOTAL_WORDS).to_numpy(bool)
    step = pd.to_numeric(raw.where(~total), errors="coerce").to_numpy(float)
    bad = ~total & ~(np.isfinite(step) & (step >= 1) & (np.round(step) == step))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column 'T' must be an exit step 1, 2, ... (or empty / 'total' on a "
                        f"total-loss row); row {i + 1} of {where} (run {frame[C.RUN].iloc[i]!r}) "
                        f"has {plain(raw.iloc[i])}")
    return total, step


def _check_steps(frame: pd.DataFrame, step: np.ndarray, total: np.ndarray,
                 where: str) -> list[str]:
    """Steps up to T_m and 8, no repeated (run, D, T), every step where the link needs it.

    Every step of a checkpoint must be there where ``q`` is logged or the checkpoint has a
    total.  Returns the checkpoints with steps missing (``run at D: steps [...]``) where neither
    holds: step rows alone are observations of the step-wise law at the steps logged (an
    evaluation at a few recurrence counts, say), and nothing sums over the steps.
    """
    T_m = frame[C.T_M].to_numpy(float)
    if (T_m > C.MAX_EXIT_STEPS).any() or (T_m != np.round(T_m)).any():
        i = int(np.flatnonzero((T_m > C.MAX_EXIT_STEPS) | (T_m != np.round(T_m)))[0])
        raise DataError(f"row {i + 1} of {where} (run {frame[C.RUN].iloc[i]!r}) has T_m = "
                        f"{T_m[i]:g}; the step-wise laws take whole T_m up to "
                        f"{C.MAX_EXIT_STEPS} (one weight column per exit step)")
    above = ~total & (step > T_m)
    if above.any():
        i = int(np.flatnonzero(above)[0])
        raise DataError(f"row {i + 1} of {where} (run {frame[C.RUN].iloc[i]!r}) has exit step "
                        f"T = {step[i]:g} above its T_m = {T_m[i]:g}: a model exits at one of "
                        "its T_m recurrent steps")
    key = pd.DataFrame({"run": frame[C.RUN], "D": frame[C.D],
                        "T": np.where(total, -1.0, step)})
    dup = key.duplicated(keep=False).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        what = "total rows" if total[i] else f"rows of exit step T = {step[i]:g}"
        raise DataError(f"run {frame[C.RUN].iloc[i]!r} has several {what} at D = "
                        f"{frame[C.D].iloc[i]:g} (first at row {i + 1} of {where}); keep one "
                        "row per (run, D, T)")
    with_total = set(zip(key["run"][total], key["D"][total], strict=True))
    has_q = C.Q_EXIT in frame.columns
    partial = []
    for (run, D), part in key[~total].groupby(["run", "D"], sort=False):
        first = int(part.index[0])
        want = set(range(1, int(T_m[first]) + 1))
        missing = sorted(want - set(part["T"].astype(int)))
        if not missing:
            continue
        if has_q or (run, D) in with_total:
            why = ("its exit probabilities q must cover every step" if has_q
                   else "its total loss sums over every step")
            raise DataError(f"run {run!r} at D = {D:g} (row {first + 1} of {where}) lacks exit "
                            f"step(s) {missing} of its T_m = {T_m[first]:g} ({why}): log every "
                            "step's loss at each checkpoint, or drop the checkpoint")
        partial.append(f"{run} at D = {D:g}: steps {missing}")
    return partial


def _exit_probabilities(frame: pd.DataFrame, step: np.ndarray, total: np.ndarray,
                        where: str) -> np.ndarray:
    """The logged ``q`` (nan on totals): in [0, 1] on steps, summing to 1 per checkpoint."""
    raw = frame[C.Q_EXIT]
    q = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad = ~total & ~(np.isfinite(q) & (q >= 0) & (q <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column 'q' must be an exit probability in [0, 1] on every step row; "
                        f"row {i + 1} of {where} (run {frame[C.RUN].iloc[i]!r}, T = "
                        f"{step[i]:g}) has {plain(raw.iloc[i])}")
    stray = total & raw.notna().to_numpy()
    if stray.any():
        i = int(np.flatnonzero(stray)[0])
        raise DataError(f"row {i + 1} of {where} is a total-loss row of run "
                        f"{frame[C.RUN].iloc[i]!r} but has q = {plain(raw.iloc[i])}: q belongs "
                        "on the step rows (the exit probability of each step); leave it empty")
    sums = (pd.DataFrame({"run": frame[C.RUN], "D": frame[C.D], "q": q})[~total]
            .groupby(["run", "D"], sort=False)["q"].agg(["sum", lambda s: int(s.index[0])]))
    sums.columns = ["sum", "row"]
    off = sums[(sums["sum"] - 1.0).abs() > Q_SUM_TOLERANCE]
    if len(off):
        (run, D), r = off.index[0], off.iloc[0]
        raise DataError(f"run {run!r} at D = {D:g} (row {int(r['row']) + 1} of {where}): its "
                        f"exit probabilities q sum to {r['sum']:.6g}, not 1 (tolerance "
                        f"{Q_SUM_TOLERANCE:g}); log the whole exit distribution of every "
                        "checkpoint")
    return q


def _checkpoint_q(frame: pd.DataFrame, step: np.ndarray, total: np.ndarray, q: np.ndarray,
                  where: str) -> np.ndarray:
    """Each total row's exit distribution: its checkpoint's logged q by step (renormalized)."""
    ks = C.MAX_EXIT_STEPS
    table: dict[tuple[str, float], np.ndarray] = {}
    runs, Ds = frame[C.RUN].to_numpy(), frame[C.D].to_numpy(float)
    for i in np.flatnonzero(~total):
        row = table.setdefault((runs[i], Ds[i]), np.zeros(ks))
        row[int(step[i]) - 1] = q[i]
    out = np.zeros((int(total.sum()), ks))
    for j, i in enumerate(np.flatnonzero(total)):
        got = table.get((runs[i], Ds[i]))
        if got is None:
            raise DataError(f"row {i + 1} of {where}: the total loss of run {runs[i]!r} at D = "
                            f"{Ds[i]:g} has no step rows at that checkpoint to take its exit "
                            "distribution q from; add them, or drop the column 'q' to fit a "
                            "latent exit distribution")
        out[j] = got / got.sum()
    return out


def _entropy_weight(frame: pd.DataFrame, where: str) -> float | None:
    """The one entropy weight of the table, checked (a number >= 0, the same on every row)."""
    if C.ENTROPY_WEIGHT not in frame.columns:
        return None
    raw = frame[C.ENTROPY_WEIGHT]
    w = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad = ~(np.isfinite(w) & (w >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"column 'entropy_weight' must be a number >= 0 (the training "
                        f"objective's beta_H); row {i + 1} of {where} has {plain(raw.iloc[i])}")
    if np.unique(w).size > 1:
        i = int(np.flatnonzero(w != w[0])[0])
        raise DataError(f"column 'entropy_weight' has {w[0]:g} in row 1 and {w[i]:g} in row "
                        f"{i + 1} of {where} (run {frame[C.RUN].iloc[i]!r}): the step-wise laws "
                        "take one entropy weight per table; fit runs trained with different "
                        "weights separately")
    frame[C.ENTROPY_WEIGHT] = w
    return float(w[0])
