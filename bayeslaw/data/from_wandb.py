"""Weights & Biases logs: a line plot's CSV export, or live runs through the public API.

The CSV export of a line plot panel (``Export panel data`` -> CSV) has the x-axis first
(``Step``), then for each run and metric a column ``<run> - <metric>`` beside its
``__MIN`` and ``__MAX`` columns.  Live runs are read with ``Run.scan_history``, which pages
through every logged row; ``Run.history`` returns a sample and is never called.  Nothing
here imports the rest of bayeslaw: a missing ``wandb`` package raises ``ImportError`` and
:mod:`bayeslaw.data.training_logs` names the extra to install.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

#: How a live source is written: ``wandb:ENTITY/PROJECT`` or ``wandb:ENTITY/PROJECT/RUN_ID``.
PREFIX = "wandb:"
#: What the export puts between a run's name and the metric in a column name.
SEPARATOR = " - "
#: The export's band columns beside each ``<run> - <metric>`` column.
BANDS = ("__MIN", "__MAX")
#: Rows of ``scan_history`` fetched per request.
PAGE_SIZE = 1000


def is_export(columns: Sequence[str]) -> bool:
    """Whether a CSV header has the layout of W&B's line plot export."""
    names = [str(c) for c in columns]
    return (len(names) >= 2 and all(SEPARATOR in c for c in names[1:])
            and any(c.endswith(BANDS) for c in names[1:]))


def read_export(path: str | Path) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Every point of a line plot's CSV export: ``(points, configs)``.

    ``points`` has columns ``run, tag, step, value`` (rows in the file's order, empty cells
    dropped); the export holds no config, so ``configs`` maps each run to ``{}``.
    """
    frame = pd.read_csv(path)
    if not is_export(frame.columns):
        raise ValueError(f"{path} has not the layout of a W&B line plot export (x-axis, then "
                         f"'<run>{SEPARATOR}<metric>' columns with {BANDS[0]} / {BANDS[1]}); "
                         f"its columns are {list(frame.columns)[:6]}")
    step = pd.to_numeric(frame.iloc[:, 0], errors="coerce")
    parts = []
    for column in frame.columns[1:]:
        if column.endswith(BANDS):
            continue
        run, tag = column.rsplit(SEPARATOR, 1)
        values = pd.to_numeric(frame[column], errors="coerce")
        keep = values.notna() & step.notna()
        parts.append(pd.DataFrame({"run": run, "tag": tag, "step": step[keep].astype("int64"),
                                   "value": values[keep].astype(float)}))
    points = pd.concat(parts, ignore_index=True)
    return points, {run: {} for run in pd.unique(points["run"])}


def _rows(run: Any) -> list[tuple[str, int, float]]:
    """Every numeric value a run logged, ``(key, _step, value)``, through ``scan_history``."""
    out = []
    for row in run.scan_history(page_size=PAGE_SIZE):
        step = row.get("_step")
        if step is None:
            continue
        out += [(key, int(step), float(value)) for key, value in row.items()
                if not key.startswith("_") and isinstance(value, numbers.Real)
                and not isinstance(value, bool)]
    return out


def read_api(source: str, api: Any = None) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Every point of live W&B runs (``wandb:ENTITY/PROJECT[/RUN_ID]``): ``(points, configs)``.

    ``api`` is a ``wandb.Api()`` (made here when ``None``).  Runs are named by their display
    name, with the run id added when two share one; ``configs`` are the runs' configs.
    """
    path = source[len(PREFIX):] if source.startswith(PREFIX) else source
    if path.count("/") not in (1, 2):
        raise ValueError(f"a live W&B source is {PREFIX}ENTITY/PROJECT or "
                         f"{PREFIX}ENTITY/PROJECT/RUN_ID, got {source!r}")
    if api is None:
        import wandb

        api = wandb.Api()
    runs = list(api.runs(path)) if path.count("/") == 1 else [api.run(path)]
    names = [run.name for run in runs]
    frames, configs = [], {}
    for run, name in zip(runs, names, strict=True):
        label = name if names.count(name) == 1 else f"{name}-{run.id}"
        frames.append(pd.DataFrame(_rows(run), columns=["tag", "step", "value"])
                      .assign(run=label))
        configs[label] = dict(run.config)
    if not frames:
        raise ValueError(f"W&B project {path!r} has no runs")
    return pd.concat(frames, ignore_index=True)[["run", "tag", "step", "value"]], configs
