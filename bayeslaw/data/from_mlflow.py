"""MLflow logs: a tracking folder (``mlruns/``) or a SQLite store (``mlflow.db``).

Read through MLflow's own client (``MlflowClient``, from the ``mlflow-skinny`` package: the
full ``mlflow`` package pins ``pyarrow < 26``, below bayeslaw's ``parquet`` extra), with
``get_metric_history``, which returns every logged point.  A SQLite store is copied (with its
``-wal`` and ``-shm`` files) into a temporary folder and the copy is read, so the store is never
modified (MLflow may migrate the copy's schema) and nothing is written where the reader runs
(MLflow creates the parent folder of the path its SQLite URI names, and a read-only
``file:`` URI's path is relative to the working directory: opened that way, every read left an
empty ``file:/...`` folder tree there); a tracking folder is read with
``MLFLOW_ALLOW_FILE_STORE`` set for the call, since MLflow 3 refuses its file store by
default.  Nothing here imports the rest of bayeslaw: a missing client raises ``ImportError``
and :mod:`bayeslaw.data.training_logs` names the extra to install.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

#: The folder name MLflow gives a tracking folder, and a SQLite store's suffix.
FOLDER_NAME, DB_SUFFIX = "mlruns", ".db"
#: Runs fetched per ``search_runs`` page.
PAGE = 1000


def is_store(path: Path) -> bool:
    """Whether ``path`` is an MLflow store.

    A ``.db`` file, or an ``mlruns`` folder (or one whose subfolders hold a ``meta.yaml``).
    """
    if path.is_file():
        return path.suffix.lower() == DB_SUFFIX
    return path.is_dir() and (path.name == FOLDER_NAME or any(
        (sub / "meta.yaml").is_file() for sub in path.iterdir() if sub.is_dir()))


#: The warnings MLflow's client gives while reading a store, by class and message: none is
#: about the store (SQLAlchemy 2.1 deprecates the ``noload`` loader MLflow's SQL store uses).
EXPECTED = ((DeprecationWarning, r"The ``noload`` loader strategy is deprecated"),)


@contextmanager
def _quiet(folder: bool) -> Iterator[None]:
    """MLflow's known warnings and INFO lines silenced; its file store allowed.

    Only the warnings of :data:`EXPECTED` are silenced: any other one reaches the caller.
    """
    before = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    level = logging.getLogger("mlflow").level
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    if folder:
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        with warnings.catch_warnings():
            for category, message in EXPECTED:
                warnings.filterwarnings("ignore", message=message, category=category,
                                        module=r"mlflow\.")
            yield
    finally:
        logging.getLogger("mlflow").setLevel(level)
        if folder and before is None:
            os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)
        elif folder:
            os.environ["MLFLOW_ALLOW_FILE_STORE"] = before


def _param(text: str) -> Any:
    """An MLflow param (always a string) as a number where it is one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def _all_runs(client: Any) -> list[Any]:
    """Every run of every experiment, page by page."""
    ids = [e.experiment_id for e in client.search_experiments()]
    runs: list[Any] = []
    token = None
    while ids:
        page = client.search_runs(ids, max_results=PAGE, page_token=token)
        runs += list(page)
        token = getattr(page, "token", None)
        if not token:
            break
    return runs


def read(store: str | Path) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Every point of every run of an MLflow store: ``(points, configs)``.

    ``points`` has columns ``run, tag, step, value`` (each metric's points in the order they
    were logged: by timestamp); ``configs`` maps each run (its run name, with the run id added
    when two share one) to its params.
    """
    path = Path(store).resolve()
    if path.is_file():
        with tempfile.TemporaryDirectory(prefix="bayeslaw-mlflow-") as folder:
            copy = Path(folder) / path.name
            for suffix in ("", "-wal", "-shm"):
                if (source := path.with_name(path.name + suffix)).is_file():
                    shutil.copyfile(source, copy.with_name(copy.name + suffix))
            return _read(f"sqlite:///{copy}", store, folder=False)
    return _read(path.as_uri(), store, folder=True)


def _read(uri: str, store: str | Path, folder: bool
          ) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """:func:`read` on the store at tracking URI ``uri`` (``store`` names it in errors)."""
    with _quiet(folder=folder):
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=uri)
        runs = _all_runs(client)
        names = [r.info.run_name or r.info.run_id for r in runs]
        frames, configs = [], {}
        for run, name in zip(runs, names, strict=True):
            label = name if names.count(name) == 1 else f"{name}-{run.info.run_id[:8]}"
            rows = []
            for key in sorted(run.data.metrics):
                history = sorted(client.get_metric_history(run.info.run_id, key),
                                 key=lambda m: m.timestamp)
                rows += [(key, int(m.step), float(m.value)) for m in history]
            frames.append(pd.DataFrame(rows, columns=["tag", "step", "value"]).assign(run=label))
            configs[label] = {k: _param(v) for k, v in run.data.params.items()}
    if not frames:
        raise ValueError(f"MLflow store {store} has no runs")
    return pd.concat(frames, ignore_index=True)[["run", "tag", "step", "value"]], configs
