"""The one entry point from a table (CSV, Parquet, DataFrame) to a validated ``LossData``.

Every problem raises :class:`~bayeslaw.errors.DataError` naming the column, the row
(1-based, as in the file, header excluded) or the value, and how to fix it.  The input
file or DataFrame is never modified.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..errors import DataError
from .schedules import LR, SCHEDULE, TERM_COLUMNS, RunSchedule, build, terms
from .steps import curves_of_steps, is_step_table
from .training_logs import read_logs
from .validation import (
    NONNEGATIVE,
    NUMERIC,
    check_columns,
    check_runs,
    check_signs,
    name_runs,
    numeric_column,
    scale_tokens,
    without_warmup,
)

#: Minimum distinct levels for a covariate whose term has its own exponent: with two
#: levels, scale, exponent and E are not jointly identified.
MIN_LEVELS = 3


@dataclass(frozen=True)
class LossData:
    """A validated, frozen table of loss observations.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per observation, sorted by run then ``D``; columns ``run`` (str), ``N``,
        ``D``, ``loss``, optionally ``T_m`` (and ``P``, ``N_once``, ``N_rec`` for the laws
        that use them), and any extra columns of the input.  ``D`` may be absent from a
        table of final losses (one row per run), for laws without a data term; ``N`` may be
        absent when ``N_once`` and ``N_rec`` are given (it is then their sum).
    source : str
        Where it came from (path or ``"<DataFrame>"``).
    sha256 : str
        Hash of the input file bytes (or of the DataFrame contents).
    has_runs : bool
        Whether the input had a ``run`` column (curves) or was one row per run.
    notes : tuple of str
        Transformations applied (column mapping, warm-up cut, thinning), for provenance.
    schedules : mapping or None
        Each run's learning-rate schedule (:class:`bayeslaw.data.schedules.RunSchedule`, runs of
        the schedule table without curves included), or ``None``.  The frame then holds its
        :data:`~bayeslaw.data.schedules.TERM_COLUMNS`.
    """

    frame: pd.DataFrame = field(repr=False)
    source: str = "<DataFrame>"
    sha256: str = ""
    has_runs: bool = True
    notes: tuple[str, ...] = ()
    schedules: Mapping[str, RunSchedule] | None = field(default=None, repr=False)

    # -- views -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.frame)

    @property
    def has_T(self) -> bool:
        """Whether the table has a ``T_m`` column."""
        return C.T_M in self.frame.columns

    @property
    def columns(self) -> frozenset[str]:
        """Column names present."""
        return frozenset(self.frame.columns)

    def values(self, column: str) -> np.ndarray:
        """A read-only float array of a numeric column."""
        arr = self.frame[column].to_numpy(dtype=float, copy=True)
        arr.flags.writeable = False
        return arr

    @property
    def runs(self) -> np.ndarray:
        """Run names in order of first appearance (the order of the run dimension)."""
        return np.asarray(pd.unique(self.frame[C.RUN]), dtype=object)

    @property
    def run_index(self) -> np.ndarray:
        """For each row, the index of its run in :attr:`runs`."""
        return pd.Categorical(self.frame[C.RUN], categories=self.runs).codes.astype("int64")

    def run_table(self) -> pd.DataFrame:
        """One row per run with its run-level columns (N, T_m and constant extras)."""
        first = self.frame.groupby(C.RUN, sort=False).first().reindex(self.runs)
        first.index.name = C.RUN
        return first

    def levels(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        """Distinct sorted levels of a run-level column and each run's level index.

        Raises
        ------
        DataError
            If the column is missing or changes within a run.
        """
        if column == C.RUN:
            return self.runs, np.arange(len(self.runs))
        if column not in self.frame.columns:
            raise DataError(f"group column {column!r} is not in the data; columns are "
                            f"{sorted(self.frame.columns)}")
        changing = self.frame.groupby(C.RUN, sort=False)[column].nunique(dropna=False) > 1
        if changing.any():
            run = changing[changing].index[0]
            raise DataError(f"column {column!r} changes within run {run!r}; a group column "
                            "must be constant along each curve")
        per_run = self.run_table()[column].to_numpy()
        levels = np.array(sorted(pd.unique(per_run)))
        codes = np.searchsorted(levels, per_run).astype("int64")
        return levels, codes

    # -- derived data --------------------------------------------------------------------
    def select(self, mask: np.ndarray | Sequence[bool], note: str) -> LossData:
        """A new ``LossData`` with the rows where ``mask`` is true (for splits)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != (len(self),):
            raise DataError(f"mask has shape {mask.shape}, expected ({len(self)},)")
        if not mask.any():
            raise DataError(f"selection {note!r} keeps no rows")
        return LossData(self.frame.loc[mask].reset_index(drop=True), self.source, self.sha256,
                        self.has_runs, (*self.notes, note), self.schedules)

    def thin(self, max_points: int) -> LossData:
        """Keep at most ``max_points`` per run, log-spaced in D, always keeping the last point.

        Dense real logs (10^4+ points a curve) cost sampling time without adding information
        a smooth law can use; log spacing keeps the early, fast-changing part of the curve.
        The choice is recorded in :attr:`notes` (and so in a fit's provenance).
        """
        if max_points < 2:
            raise DataError(f"thin to at least 2 points per run, got {max_points}")
        keep = np.zeros(len(self.frame), dtype=bool)
        for _, idx in self.frame.groupby(C.RUN, sort=False).indices.items():
            if len(idx) <= max_points:
                keep[idx] = True
                continue
            logd = np.log(self.frame[C.D].to_numpy()[idx])
            chosen, i, last = [0], 0, len(idx) - 1
            while len(chosen) < max_points - 1:
                # even log steps over what is left; integer-spaced early steps are all kept
                step = (logd[last] - logd[i]) / (max_points - len(chosen))
                j = max(i + 1, int(np.searchsorted(logd, logd[i] + step)))
                if j >= last:
                    break
                chosen.append(j)
                i = j
            chosen.append(last)
            keep[idx[sorted(chosen)]] = True
        if keep.all():
            return self
        return self.select(keep, f"thinned to <= {max_points} points per run, log-spaced in D")

    def from_portion(self, portion: float, min_kept: int) -> LossData:
        """Each run's points from ``portion`` of its last D on, and at least its last few.

        At least its last ``min_kept`` points are kept (a spec's ``data.min_portion`` and
        ``data.min_kept``).  The choice is recorded in :attr:`notes` (and so in a fit's
        provenance).
        """
        keep = late_points(self.frame, portion, min_kept)
        if keep.all():
            return self
        return self.select(keep, f"{int((~keep).sum())} point(s) before {portion:g} of their "
                                 f"run's last D left out (at least the last {min_kept} kept)")

    def before_portion(self, portion: float, min_kept: int) -> pd.DataFrame:
        """The rows :meth:`from_portion` leaves out (none when ``portion`` is 0)."""
        return self.frame.loc[~late_points(self.frame, portion, min_kept)].reset_index(
            drop=True)

    def require_levels(self, covariates: Sequence[str], law_name: str,
                       min_levels: Mapping[str | tuple[str, ...], int] | None = None,
                       fixed: Sequence[str] = ()) -> None:
        """Check the table has what a law needs: its columns and enough distinct levels.

        Parameters
        ----------
        covariates : sequence of str
            Columns the law needs.
        law_name : str
            For the messages.
        min_levels : mapping, optional
            Distinct values needed per covariate, or per tuple of covariates counted jointly
            (:attr:`bayeslaw.laws.registry.Law.min_levels`); covariates not listed need only be
            present.  Default: :data:`MIN_LEVELS` for every covariate.
        fixed : sequence of str
            The spec's fixed parameters: a covariate whose term's parameters are all fixed
            needs no levels (the term is then known, not learned).
        """
        for cov in covariates:
            if cov not in self.frame.columns:
                from ..laws.registry import LAWS

                fits = [n for n, law in LAWS.items() if set(law.covariates) <= self.columns]
                hint = (f"choose a law without it (--law {' / '.join(fits)})" if fits
                        else "no registered law fits the columns present")
                raise DataError(f"law {law_name!r} needs column {cov!r}, which the data lacks; "
                                f"add it or {hint}")
        from ..laws.registry import get_law

        needs = (dict.fromkeys(covariates, MIN_LEVELS) if min_levels is None
                 else dict(min_levels))
        for key, k in needs.items():
            cols = (key,) if isinstance(key, str) else tuple(key)
            if cols == (C.D,) and self.has_runs:
                continue  # curves vary D within runs
            rows = self.frame
            steps_only = (C.EXIT_KIND in rows.columns and set(cols) <= set(C.EXIT_WEIGHTS))
            if steps_only:  # a total's exit weights (its q) are no step of their own
                rows = rows[rows[C.EXIT_KIND] == "step"]
            n = len(rows[list(cols)].drop_duplicates())
            law = get_law(law_name)  # the parameters of the terms of these columns:
            learned = [p.name for p in law.params
                       if p.term is not None and set(law.term_covariates(p.term)) & set(cols)]
            if n >= k or (learned and set(learned) <= set(fixed)):  # all fixed: none learned
                continue
            if len(cols) == 1:
                raise DataError(
                    f"column {cols[0]!r} has {n} distinct value(s); law {law_name!r} needs at "
                    f"least {k} levels of {cols[0]} to identify its {cols[0]} term: add runs at "
                    f"other {cols[0]} values or fix that term's parameters in the spec "
                    f"([fixed] {', '.join(f'{p} = ...' for p in learned if p not in fixed)})")
            if steps_only:
                raise DataError(
                    f"the step rows have {n} distinct exit step(s) T; law {law_name!r} needs at "
                    f"least {k} to identify its T term (C, t3, gamma): add runs with a larger "
                    "T_m (more exit steps logged)")
            raise DataError(
                f"columns {list(cols)} have {n} distinct combination(s); law {law_name!r} needs "
                f"at least {k} to identify its exponent: add runs of other sizes")

    def summary(self) -> dict[str, Any]:
        """Counts and ranges, for reports and the CLI."""
        f = self.frame
        out: dict[str, Any] = {"points": len(f), "runs": int(f[C.RUN].nunique())}
        if C.N in f.columns:
            out["N_levels"] = int(f[C.N].nunique())
        for col in (c for c in (C.N, C.D, C.LOSS) if c in f.columns):
            out[f"{col}_range"] = (float(f[col].min()), float(f[col].max()))
        for col in (C.T_M, C.P):
            if col in f.columns:
                out[f"{col}_levels"] = sorted(float(x) for x in f[col].unique())
        return out


def size_label(n: float) -> str:
    """``53M``, ``1.36B``: how sweep tables name model sizes."""
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"


def run_label(n: float, t_m: float | None = None) -> str:
    """The name of a sweep run: ``N53M_T2`` (``N53M`` without T_m)."""
    return f"N{size_label(n)}" + (f"_T{t_m:g}" if t_m is not None else "")


def _hash_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_table(source: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, str, str]:
    """Read a CSV / TSV / Parquet file (or copy a DataFrame): ``(frame, where, sha256)``."""
    if isinstance(source, pd.DataFrame):
        digest = _hash_bytes(pd.util.hash_pandas_object(source, index=True).to_numpy().tobytes())
        return source.copy(deep=True), "<DataFrame>", digest
    path = Path(source)
    if not path.is_file():
        raise DataError(f"data file {str(path)!r} does not exist")
    raw = path.read_bytes()
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        elif suffix in (".csv", ".txt", ".tsv"):
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",")
        else:
            raise DataError(f"cannot read {str(path)!r}: use a .csv, .tsv or .parquet file")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError,
            OSError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"cannot parse {str(path)!r}: {exc}") from None
    return frame, str(path), _hash_bytes(raw)


def load(src: str | Path | pd.DataFrame, *, columns: Mapping[str, str] | None = None,
         tokens_per_step: float | None = None, min_D: float | None = None,
         schedule: str | Path | pd.DataFrame | None = None, source: str | None = None,
         metric: str | None = None, **logs: Any) -> LossData:
    """Load and validate a loss table, or training logs.

    Parameters
    ----------
    src : path, str or DataFrame
        CSV / TSV / Parquet file, a DataFrame (copied, never modified), or training logs.
    columns : mapping, optional
        Rename input columns to bayeslaw's names, e.g. ``{"step": "D", "model": "run"}``.
    tokens_per_step : float, optional
        Multiply ``D`` by this factor (when ``D`` was mapped from a step count).
    min_D : float, optional
        Drop rows with ``D < min_D`` (warm-up), per run.
    schedule : path or DataFrame, optional
        The runs' learning-rate schedules (:mod:`bayeslaw.data.schedules`): a logged table
        ``run, D, lr`` (D in tokens, as in the curves), or one row per run with schedule
        columns (``run, schedule, warmup, horizon, ...``).  The curves may carry the
        per-run columns themselves, or an ``lr`` column that changes along each run.
    source, metric, **logs
        Training logs (:func:`bayeslaw.data.training_logs.read_logs`: TensorBoard, W&B, MLflow):
        the kind of source, the loss scalar; ``meta``, ``config_map``, ``tokens_metric``,
        ``lr_metric``.

    Returns
    -------
    LossData

    Notes
    -----
    Columns ``N`` and ``loss`` are required, ``D`` too unless every run has one row (a
    table of final losses, fitted by a law without a data term such as
    ``parallel_streams``); a law that needs a missing column says so when it is fitted.
    ``N`` may be replaced by ``N_once`` and ``N_rec`` (it becomes their sum).  ``T_m``
    and ``P`` must be positive, ``N_once`` and ``N_rec`` zero or positive, and all of them
    constant along a run.
    """
    frame, where, digest, notes, tokens_per_step, schedule = _source(
        src, source, tokens_per_step, metric, schedule, logs)
    if columns:
        frame = _renamed(frame, columns, where, notes)
    check_columns(frame, where)
    for col in (c for c in NUMERIC if c in frame.columns):
        frame[col] = numeric_column(frame[col], col, where)
    scale_tokens(frame, where, tokens_per_step, min_D, notes)
    check_signs(frame, where)
    if set(NONNEGATIVE) <= set(frame.columns) and C.N not in frame.columns:
        frame[C.N] = frame[C.N_ONCE] + frame[C.N_REC]
        notes.append("N = N_once + N_rec (total parameters)")
    has_runs = name_runs(frame, where)
    frame = _stepwise(frame, schedule, where, notes)
    check_runs(frame, where)
    frame, schedules, digest = _scheduled(frame, schedule, where, digest, notes)
    if min_D is not None:
        frame = without_warmup(frame, min_D, notes)
    return LossData(_ordered(frame).reset_index(drop=True), where, digest, has_runs,
                    tuple(notes), schedules)


def _source(src: Any, source: str | None, tokens_per_step: float | None, metric: str | None,
            schedule: Any, logs: Mapping[str, Any]
            ) -> tuple[pd.DataFrame, str, str, list[str], float | None, Any]:
    """The table read from ``src`` (a file, a DataFrame or training logs) and its facts.

    Training logs come with their notes and their D already in tokens; a logged learning
    rate is their ``lr`` column, a schedule by the rule of a table's (one that changes along
    a run: :func:`bayeslaw.data.schedules.build`), so that ``bayeslaw import``'s CSV loads alike.
    """
    logged = read_logs(src, source=source, tokens_per_step=tokens_per_step, metric=metric,
                       **logs)
    if not logged:
        return (*read_table(src), [], tokens_per_step, schedule)
    return logged.frame, logged.where, logged.sha256, list(logged.notes), None, schedule


def _stepwise(frame: pd.DataFrame, schedule: Any, where: str, notes: list[str]
              ) -> pd.DataFrame:
    """A table of step-wise losses (a ``T`` column) laid out as curves; others as they are."""
    if not is_step_table(frame):
        return frame
    if schedule is not None or {SCHEDULE, LR} & set(frame.columns):
        raise DataError(f"{where} is a table of step-wise losses (it has a 'T' column) with a "
                        "learning-rate schedule: the step-wise laws take no schedule yet; drop "
                        "the schedule's columns (or rename 'T')")
    return curves_of_steps(frame, where, notes)


def _scheduled(frame: pd.DataFrame, schedule: str | Path | pd.DataFrame | None, where: str,
               digest: str, notes: list[str]
               ) -> tuple[pd.DataFrame, dict[str, RunSchedule] | None, str]:
    """The curves with their schedule's columns, the schedules and the hash of both inputs."""
    table, table_where = None, ""
    if schedule is not None:
        table, table_where, table_digest = read_table(schedule)
        digest = _hash_bytes((digest + table_digest).encode())
    frame, schedules = build(frame, table, where, table_where)
    if schedules is None:
        return frame, None, digest
    clash = [c for c in TERM_COLUMNS if c in frame.columns]
    if clash:
        raise DataError(f"{where} has column(s) {clash}, which bayeslaw computes from the "
                        "learning-rate schedule: rename them")
    if C.D not in frame.columns:
        raise DataError(f"{where} has no column 'D': a learning-rate schedule is read along "
                        "D (tokens)")
    values = terms(schedules, frame[C.RUN].to_numpy(), frame[C.D].to_numpy(float), where)
    notes.append("learning-rate schedule " + (f"from {table_where}" if table_where else
                                              "from the curves' columns"))
    return frame.assign(**{c: values[c].to_numpy() for c in TERM_COLUMNS}), schedules, digest


def _renamed(frame: pd.DataFrame, columns: Mapping[str, str], where: str,
             notes: list[str]) -> pd.DataFrame:
    """``frame`` with its columns renamed by ``columns`` (each of which it must have)."""
    absent = [k for k in columns if k not in frame.columns]
    if absent:
        raise DataError(f"column mapping names {absent}, not in {where}; columns are "
                        f"{list(frame.columns)}")
    notes.append(f"columns renamed {dict(columns)}")
    return frame.rename(columns=dict(columns))


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by ``D`` within each run, runs in their first appearance in the input."""
    if C.D in frame.columns:
        frame = frame.sort_values([C.RUN, C.D], kind="stable")
    order = pd.unique(frame[C.RUN])  # keep runs in first-appearance order of the input
    return frame.set_index(C.RUN).loc[order].reset_index()


def late_points(frame: pd.DataFrame, portion: float, min_kept: int) -> np.ndarray:
    """Which rows of ``frame`` a spec's ``data.min_portion`` keeps.

    Those at or past ``portion`` of their run's last D, and its last ``min_kept``; without a
    ``run`` column, ``frame`` is one run.
    """
    if not 0.0 <= portion < 1.0:
        raise DataError(f"portion must be a share of each run's last D in [0, 1), got "
                        f"{portion}")
    if min_kept < 1:
        raise DataError(f"min_kept must be at least 1 (each run keeps its last points), got "
                        f"{min_kept}")
    runs = frame[C.RUN] if C.RUN in frame.columns else pd.Series(0, index=frame.index)
    by_run = frame[C.D].groupby(runs, sort=False)
    from_last = by_run.rank(method="first", ascending=False).to_numpy()
    return ((frame[C.D] >= portion * by_run.transform("max")).to_numpy()
            | (from_last <= min_kept))
