"""Training logs (TensorBoard, W&B, MLflow) -> the tidy table :func:`bayeslaw.load` reads.

Each source module reads every logged point, as ``run, tag, step, value`` rows, and each
run's config (TensorBoard hparams, W&B config, MLflow params).  This module does the rest,
the same for every source: which scalar is the loss (:func:`pick_metric`), the run-level
columns (config keys mapped to columns, overridden by a per-run table), steps to tokens, a
logged learning rate as the ``lr`` column (the logged learning-rate table of
:mod:`bayeslaw.data.schedules`), and the checks, each :class:`~bayeslaw.errors.DataError` naming
the run and the fix.  Sources are told apart by :func:`detect`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..errors import ArgumentError, DataError
from . import from_mlflow as mlflow_logs
from . import from_tensorboard as tensorboard_logs
from . import from_wandb as wandb_logs

#: What ``source=`` (``--source``) may force; ``"table"`` is a CSV / TSV / Parquet table.
SOURCES = ("tensorboard", "wandb", "mlflow", "table")
#: The optional extra each source needs (``pip install "bayeslaw[EXTRA]"``; W&B's CSV: none).
EXTRAS = {"tensorboard": "tensorboard", "wandb": "wandb", "mlflow": "mlflow"}
#: A schedule's per-run columns (:data:`bayeslaw.data.schedules.PLAN_COLUMNS`, a module of the same
#: layer: ``tests/test_logs.py`` checks that the two lists agree).
SCHEDULE_COLUMNS = ("schedule", "warmup", C.HORIZON, "decay_start", "decay_end",
                    "decay_shape", "peak_lr", "final_lr", "final_lr_ratio", "batch_tokens")
#: Run-level columns taken from a run's config under their own name: the laws' covariates and
#: the schedule's columns (other keys, a spec's own group among them, need ``config_map``).
CONFIG_COLUMNS = (C.N, C.T_M, C.P, C.N_ONCE, C.N_REC, *SCHEDULE_COLUMNS)
#: The learning-rate column of the tidy table, and the scalar names taken as one.
LR, LR_NAMES = "lr", ("lr", "learning_rate")
#: The columns the logs give point by point: a meta table or ``config_map`` may not name them.
LOGGED_COLUMNS = (C.RUN, "step", C.D, C.LOSS, LR)
#: Options of :func:`read_logs` that only training logs take.
OPTIONS = ("metric", "meta", "config_map", "tokens_metric", "lr_metric")


@dataclass(frozen=True)
class LoggedTable:
    """A tidy table read from training logs: the frame, its origin, its hash, the notes."""

    frame: pd.DataFrame
    where: str
    sha256: str
    notes: tuple[str, ...]


def detect(src: Any, source: str | None = None) -> str | None:
    """Which source ``src`` is: ``"tensorboard"``, ``"wandb"``, ``"mlflow"`` or ``None``.

    ``None`` is a table; ``source`` forces the answer (one of :data:`SOURCES`).
    """
    if source is not None:
        if source not in SOURCES:
            raise ArgumentError(f"source={source!r}: choose one of {list(SOURCES)}")
        return None if source == "table" else source
    if isinstance(src, pd.DataFrame):
        return None
    if str(src).startswith(wandb_logs.PREFIX):
        return "wandb"
    path = Path(src)
    if path.is_dir():
        if mlflow_logs.is_store(path):
            return "mlflow"
        if tensorboard_logs.event_files(path):
            return "tensorboard"
        raise DataError(f"folder {str(path)!r} holds no TensorBoard event files (*tfevents*) "
                        "and is not an MLflow store (mlruns/); give a log folder, a store or "
                        "a table file")
    if path.is_file() and mlflow_logs.is_store(path):
        return "mlflow"
    if path.is_file() and path.suffix.lower() == ".csv":
        try:
            header = pd.read_csv(path, nrows=0).columns
        except ValueError:  # unreadable: read_table says why
            return None
        return "wandb" if wandb_logs.is_export(header) else None
    return None


def _digest(src: Any, points: pd.DataFrame) -> str:
    """SHA-256 of a file's bytes, a folder's files (paths, bytes) or the points read (live)."""
    path = Path(str(src))
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
    elif path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f.relative_to(path).as_posix().encode())
            h.update(f.read_bytes())
    else:
        h.update(pd.util.hash_pandas_object(points, index=False).to_numpy().tobytes())
    return h.hexdigest()


def read_points(src: Any, kind: str) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """The source module's ``(points, configs)``; a missing package names its extra."""
    try:
        if kind == "tensorboard":
            return tensorboard_logs.read(src)
        if kind == "mlflow":
            return mlflow_logs.read(src)
        if str(src).startswith(wandb_logs.PREFIX):
            return wandb_logs.read_api(str(src))
        return wandb_logs.read_export(src)
    except ImportError as exc:
        raise DataError(f"reading {kind} logs needs an optional package ({exc}): "
                        f'pip install "bayeslaw[{EXTRAS[kind]}]"') from None
    except (ValueError, OSError) as exc:
        raise DataError(f"cannot read {kind} logs {str(src)!r}: {exc}") from None


def pick_metric(tags: list[str], metric: str | None, where: str, what: str = "loss") -> str:
    """The scalar to read: ``metric``, else the one logged scalar whose name has ``what``.

    Several such scalars, or none, raise an error listing them.
    """
    if metric is not None:
        if metric not in tags:
            raise DataError(f"{where} has no scalar {metric!r}; its scalars are {tags}")
        return metric
    found = [t for t in tags if what in t.lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise DataError(f"{where} has no scalar whose name contains {what!r}; its scalars "
                        f"are {tags}: name the loss with metric= (--metric NAME)")
    raise DataError(f"{where} has several scalars whose name contains {what!r}: {found}; "
                    "choose one with metric= (--metric NAME)")


def _flat(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested config as one level, keys joined with dots (``model.n_params``)."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def _read_meta(meta: Any) -> tuple[pd.DataFrame, str]:
    """The per-run table as given (a path or a DataFrame) and how to name it."""
    if isinstance(meta, pd.DataFrame):
        return meta.copy(), "the meta table"
    where = f"meta table {str(meta)!r}"
    if not Path(meta).is_file():
        raise DataError(f"{where} does not exist")
    try:
        return pd.read_csv(meta, sep="\t" if str(meta).endswith(".tsv") else ","), where
    except pd.errors.EmptyDataError:
        raise DataError(f"{where} is empty: give a CSV with a 'run' column and one row per "
                        "run") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {where} as a CSV ({' '.join(str(exc).split())}): give "
                        "a CSV with a 'run' column and one row per run") from None


def _meta_table(meta: Any, runs: list[str]) -> pd.DataFrame:
    """The per-run table (path or DataFrame with a ``run`` column), indexed by run.

    Every run of the logs must have a row; it adds run-level columns only, none of
    :data:`LOGGED_COLUMNS` but ``run``.
    """
    table, where = _read_meta(meta)
    if C.RUN not in table.columns:
        raise DataError(f"{where} needs a 'run' column naming each run; it has "
                        f"{list(table.columns)}")
    logged = [c for c in table.columns if c in LOGGED_COLUMNS and c != C.RUN]
    if logged:
        raise DataError(f"{where} has column(s) {logged}, which the logs give point by point; "
                        "a meta table adds run-level columns only (N, T_m, a group, ...): "
                        "drop them")
    table[C.RUN] = table[C.RUN].astype(str)
    if table[C.RUN].duplicated().any():
        raise DataError(f"{where} has several rows for run "
                        f"{table[C.RUN][table[C.RUN].duplicated()].iloc[0]!r}: keep one")
    absent = [r for r in runs if r not in set(table[C.RUN])]
    if absent:
        raise DataError(f"run {absent[0]!r} of the logs is missing from {where} (runs "
                        f"missing: {absent[:5]}); add a row for each run")
    return table.set_index(C.RUN)


def _mapping(config_map: Mapping[str, str] | None) -> dict[str, str]:
    """Config key -> column: :data:`CONFIG_COLUMNS` as they are, then ``config_map``."""
    given = dict(config_map or {})
    logged = {k: v for k, v in given.items() if v in LOGGED_COLUMNS}
    if logged:
        key, col = next(iter(logged.items()))
        raise ArgumentError(f"config_map maps {key!r} to {col!r}, a column the logs give point "
                            f"by point ({list(LOGGED_COLUMNS)}): map config keys to run-level "
                            "columns only")
    return {c: c for c in CONFIG_COLUMNS} | given


def run_columns(configs: Mapping[str, Mapping[str, Any]], runs: list[str],
                config_map: Mapping[str, str] | None, meta: Any, where: str) -> pd.DataFrame:
    """One row per run: the run-level columns of its config, overridden by ``meta``.

    Config keys named as :data:`CONFIG_COLUMNS` and ``config_map``'s keys (mapped to their
    columns) are taken as they are (:func:`bayeslaw.data.table.load` checks the values); every run
    needs ``N``.
    """
    mapping = _mapping(config_map)
    rows = {}
    for run in runs:
        flat = _flat(configs.get(run, {}))
        rows[run] = {col: flat[key] for key, col in mapping.items() if key in flat}
    table = pd.DataFrame.from_dict(rows, orient="index").reindex(runs)
    if meta is not None:
        extra = _meta_table(meta, runs).reindex(runs)
        table = extra.combine_first(table) if len(table.columns) else extra
    lacking = [r for r in runs if C.N not in table.columns or pd.isna(table.at[r, C.N])]
    if lacking:
        raise DataError(f"run {lacking[0]!r} of {where} has no N (parameter count): map its "
                        "config key (config_map={'model.n_params': 'N'}; CLI: --map "
                        "model.n_params=N) or give it in a meta table (meta=runs.csv)")
    return table


def _series(points: pd.DataFrame, tag: str, run: str, where: str) -> pd.DataFrame:
    """One scalar of one run, ``step, value``, checked: steps strictly increasing."""
    rows = points.loc[points["tag"] == tag, ["step", "value"]]
    steps = rows["step"].to_numpy()
    back = np.flatnonzero(np.diff(steps) <= 0)
    if len(back):
        i = int(back[0])
        raise DataError(f"run {run!r} of {where}: scalar {tag!r} logs step {steps[i + 1]} "
                        f"after step {steps[i]} (steps must increase; a resumed run that "
                        "re-logged steps?): keep one point per step")
    return rows.reset_index(drop=True)


def _tokens(curve: pd.DataFrame, counter: pd.DataFrame | None, per_step: float | None,
            run: str, where: str) -> np.ndarray:
    """``D`` of each point: step x ``per_step``, or the logged tokens counter at that step.

    The counter is interpolated between the steps it was logged at; step 0 is ``D = 0``
    either way (:func:`tidy` leaves it out with a note).
    """
    steps = curve["step"].to_numpy(float)
    if counter is None:
        return steps * float(per_step)
    known = counter["step"].to_numpy(float)
    start = steps == 0  # before training: no tokens seen, as step x tokens_per_step
    outside = ~start & ((steps < known[0]) | (steps > known[-1]))
    if outside.any():
        raise DataError(f"run {run!r} of {where}: step {steps[outside][0]:g} is outside the "
                        f"steps of the tokens counter ({known[0]:g} to {known[-1]:g})")
    return np.where(start, 0.0, np.interp(steps, known, counter["value"].to_numpy(float)))


def _counter_tag(tags: list[str], per_step: float | None, tokens_metric: str | None,
                 where: str) -> tuple[str | None, str]:
    """The tokens counter's scalar (``None``: steps times ``per_step``) and a note."""
    if per_step is not None and tokens_metric is not None:
        raise ArgumentError("give tokens_per_step (--tokens-per-step) or tokens_metric "
                            "(--tokens-metric), not both")
    if per_step is not None:
        if not per_step > 0:
            raise ArgumentError(f"tokens_per_step must be positive, got {per_step}")
        return None, f"D = step x tokens_per_step={per_step:g}"
    if tokens_metric is not None:
        tag = pick_metric(tags, tokens_metric, where)
        return tag, f"D from the logged tokens counter {tag!r}"
    found = [t for t in tags if "tokens" in t.lower()]
    if len(found) == 1:
        return found[0], f"D from the logged tokens counter {found[0]!r}"
    listed = f"; it logs several token counters {found}" if found else ""
    raise DataError(f"the logs {where!r} count steps and D is in tokens{listed}: give "
                    "tokens_per_step=K (--tokens-per-step K) or tokens_metric=NAME "
                    "(--tokens-metric NAME)")


def _lr_tag(tags: list[str], lr_metric: str | None, where: str) -> str | None:
    """The logged learning rate's scalar, or ``None``.

    ``lr_metric``, or the one scalar named as :data:`LR_NAMES` (its last path part, as in
    ``train/lr``).
    """
    if lr_metric is not None:
        return pick_metric(tags, lr_metric, where)
    found = [t for t in tags if t.rsplit("/", 1)[-1].lower() in LR_NAMES]
    if len(found) > 1:
        raise DataError(f"{where} logs several learning rates {found}: choose one with "
                        "lr_metric= (--lr-metric NAME)")
    return found[0] if found else None


def _curve(group: pd.DataFrame, run: str, tags: tuple[str, str | None, str | None],
           per_step: float | None, where: str) -> pd.DataFrame:
    """One run's rows: ``run, step, D, loss``, and ``lr``: a logged rate at the nearest step."""
    loss_tag, token_tag, lr_tag = tags
    curve = _series(group, loss_tag, run, where)
    counter = _series(group, token_tag, run, where) if token_tag else None
    if counter is not None and counter.empty:
        raise DataError(f"run {run!r} of {where} logs no tokens counter {token_tag!r}")
    part = pd.DataFrame({C.RUN: run, "step": curve["step"].to_numpy(),
                         C.D: _tokens(curve, counter, per_step, run, where),
                         C.LOSS: curve["value"].to_numpy()})
    if lr_tag is not None:
        rate = _series(group, lr_tag, run, where)
        if rate.empty:
            raise DataError(f"run {run!r} of {where} logs no learning rate {lr_tag!r}, which "
                            "other runs log: log it in every run, or name another scalar "
                            "with lr_metric=")
        part[LR] = pd.merge_asof(part[["step"]].astype(float),
                                 rate.astype(float).rename(columns={"value": LR}),
                                 on="step", direction="nearest")[LR].to_numpy()
    return part


def tidy(points: pd.DataFrame, configs: Mapping[str, Mapping[str, Any]], where: str, *,
         metric: str | None = None, meta: Any = None, config_map: Mapping[str, str] | None = None,
         tokens_per_step: float | None = None, tokens_metric: str | None = None,
         lr_metric: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The tidy table of a source's points and configs, and what was done (notes)."""
    if points.empty:
        raise DataError(f"{where} holds no logged scalars")
    tags = list(pd.unique(points["tag"]))
    loss_tag = pick_metric(tags, metric, where)
    token_tag, note = _counter_tag(tags, tokens_per_step, tokens_metric, where)
    lr_tag = _lr_tag(tags, lr_metric, where)
    with_loss = set(points.loc[points["tag"] == loss_tag, "run"])
    runs = [r for r in pd.unique(points["run"]) if r in with_loss]
    notes = [f"loss from scalar {loss_tag!r}", note]
    skipped = [r for r in pd.unique(points["run"]) if r not in with_loss]
    if skipped:
        notes.append(f"runs without {loss_tag!r} left out: {skipped}")
    table = run_columns(configs, runs, config_map, meta, where)
    left = sorted({k for r in runs for k in _flat(configs.get(r, {}))} - set(_mapping(config_map)))
    if left:  # a group of the user's own spec among them: load cannot know it
        notes.append("config keys not taken (config_map= / --map KEY=COLUMN takes one): "
                     + ", ".join(left[:12]) + (" ..." if len(left) > 12 else ""))
    parts = []
    for run, group in points.groupby("run", sort=False):
        if run in with_loss:
            part = _curve(group, run, (loss_tag, token_tag, lr_tag), tokens_per_step, where)
            parts.append(part.assign(**{c: table.at[run, c] for c in table.columns}))
    frame = pd.concat(parts, ignore_index=True)
    start = (frame[C.D] <= 0).to_numpy()
    if start.any():  # the loss before training (step 0): no law is defined at D = 0
        frame = frame.loc[~start].reset_index(drop=True)
        notes.append(f"{int(start.sum())} point(s) at D = 0 (step 0) left out")
    if lr_tag is not None:  # a schedule when it changes along a run (schedules.build)
        varies = bool((frame.groupby(C.RUN)[LR].nunique() > 1).any())
        notes.append(f"learning rate from scalar {lr_tag!r} (column 'lr'" + (
            ")" if varies else ", constant along every run: a run's setting, no schedule)"))
    return frame, notes


def read_logs(src: Any, *, source: str | None = None, tokens_per_step: float | None = None,
              **options: Any) -> LoggedTable | None:
    """The tidy table of training logs, or ``None`` when ``src`` is a table.

    A table is a CSV / TSV / Parquet file or a DataFrame: :func:`bayeslaw.data.table.read_table`.

    Parameters
    ----------
    src : path, str or DataFrame
        A TensorBoard log folder (one subfolder per run), a W&B line plot CSV export or live
        runs (``wandb:ENTITY/PROJECT[/RUN_ID]``), an MLflow tracking folder (``mlruns/``)
        or SQLite store (``.db``).
    source : {"tensorboard", "wandb", "mlflow", "table"}, optional
        Force the kind of source (default: :func:`detect`).
    tokens_per_step : float, optional
        ``D = step x tokens_per_step``; without it, a logged tokens counter.
    **options
        ``metric`` (the loss scalar), ``meta`` (a per-run table, path or DataFrame with a
        ``run`` column: it overrides the configs), ``config_map`` (config key -> column,
        ``{"model.n_params": "N"}``), ``tokens_metric`` (the tokens counter), ``lr_metric``
        (the learning rate; default a scalar named ``lr`` or ``learning_rate``).
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ArgumentError(f"unknown option(s) {unknown}; training logs take {list(OPTIONS)}")
    kind = detect(src, source)
    if kind is None:
        given = sorted(k for k, v in options.items() if v is not None)
        if given:
            label = "the DataFrame" if isinstance(src, pd.DataFrame) else repr(str(src))
            raise ArgumentError(f"{given} apply to training logs, and {label} is read as a "
                                "table (force the source with source=...)")
        return None
    points, configs = read_points(src, kind)
    where = str(src)
    frame, notes = tidy(points, configs, where, tokens_per_step=tokens_per_step, **options)
    return LoggedTable(frame, where, _digest(src, points),
                       (f"read from {kind} logs {where}", *notes))
