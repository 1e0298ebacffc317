"""TensorBoard logs: a folder with one subfolder per run, read event by event.

Every event of every file is read with TensorBoard's own ``RawEventFileLoader`` (no
``EventAccumulator``, whose default size guidance keeps 10,000 scalars per tag and samples
the rest), so every logged point arrives.  Nothing here imports the rest of bayeslaw: a
missing ``tensorboard`` package raises ``ImportError`` and :mod:`bayeslaw.data.training_logs` names
the extra to install.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The part of an event file's name every writer (TensorFlow, PyTorch, tensorboardX) uses.
EVENT_MARK = "tfevents"
#: TensorBoard's hparams plugin: the run's hyperparameters (its config).
HPARAMS_PLUGIN = "hparams"


def event_files(folder: Path) -> list[Path]:
    """The event files under ``folder`` (any depth), sorted by path (so by start time)."""
    return sorted(p for p in folder.rglob(f"*{EVENT_MARK}*") if p.is_file())


def _hparam_value(value: Any) -> Any:
    """A ``google.protobuf.Value`` of the hparams plugin as a Python number, str or bool."""
    kind = value.WhichOneof("kind")
    return None if kind in (None, "null_value") else getattr(value, kind)


def _scalar(value: Any, tensor_util: Any) -> float | None:
    """The number of one summary value: ``simple_value`` or a scalar tensor; else ``None``."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind == "tensor" and value.metadata.plugin_data.plugin_name in ("", "scalars"):
        array = tensor_util.make_ndarray(value.tensor)
        if array.size == 1 and np.issubdtype(array.dtype, np.number):
            return float(array.reshape(()))
    return None


def read_file(path: Path) -> tuple[list[tuple[str, int, float]], dict[str, Any]]:
    """Every scalar of one event file in log order, ``(tag, step, value)``, and its hparams."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2
    from tensorboard.util import tensor_util

    points: list[tuple[str, int, float]] = []
    hparams: dict[str, Any] = {}
    for record in RawEventFileLoader(str(path)).Load():
        event = event_pb2.Event.FromString(record)
        for value in event.summary.value:
            plugin = value.metadata.plugin_data
            if plugin.plugin_name == HPARAMS_PLUGIN:
                data = plugin_data_pb2.HParamsPluginData.FromString(plugin.content)
                if data.HasField("session_start_info"):
                    hparams.update({k: _hparam_value(v) for k, v
                                    in data.session_start_info.hparams.items()})
                continue
            number = _scalar(value, tensor_util)
            if number is not None:
                points.append((value.tag, int(event.step), number))
    return points, hparams


def read_run(folder: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One run's scalars (columns ``tag, step, value``, in log order) and hparams.

    Event files in nested folders belong to the run, their tags prefixed with the folder
    (``eval/loss``); a nested folder holding only hparams and one point per tag is the
    summary ``add_hparams`` writes (its metric values are not a curve) and is skipped.
    """
    rows: list[tuple[str, int, float]] = []
    config: dict[str, Any] = {}
    for path in event_files(folder):
        points, hparams = read_file(path)
        config.update(hparams)
        nested = path.parent.relative_to(folder).as_posix()
        if nested == ".":
            rows += points
            continue
        tags = [tag for tag, _, _ in points]
        if hparams and len(set(tags)) == len(tags):
            continue
        rows += [(f"{nested}/{tag}", step, v) for tag, step, v in points]
    frame = pd.DataFrame(rows, columns=["tag", "step", "value"])
    return frame, config


def read(folder: str | Path) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Every run of a TensorBoard log folder: ``(points, configs)``.

    ``points`` has columns ``run, tag, step, value`` (each run's points in log order);
    ``configs`` maps each run to its hparams.  A run is a subfolder of ``folder`` with event
    files at any depth; event files directly in ``folder`` make a run named after it.
    """
    folder = Path(folder)
    found = event_files(folder)
    if not found:
        raise ValueError(f"no TensorBoard event files (*{EVENT_MARK}*) under {folder}")
    tops = sorted({p.relative_to(folder).parts[0] if len(p.relative_to(folder).parts) > 1
                   else "." for p in found})
    frames, configs = [], {}
    for top in tops:
        name = folder.resolve().name if top == "." else top
        if top == ".":  # only the files directly in the folder
            points = [read_file(p) for p in found if p.parent == folder]
            frame = pd.DataFrame([r for pts, _ in points for r in pts],
                                 columns=["tag", "step", "value"])
            config = {k: v for _, h in points for k, v in h.items()}
        else:
            frame, config = read_run(folder / top)
        frames.append(frame.assign(run=name))
        configs[name] = config
    return pd.concat(frames, ignore_index=True)[["run", "tag", "step", "value"]], configs
