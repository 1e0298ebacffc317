"""Tables of losses: loading, validation, schedules, training logs and public data sets.

:func:`load` turns a CSV / Parquet / DataFrame or a folder of training logs (TensorBoard, W&B,
MLflow) into the frozen :class:`LossData`; learning-rate schedules are data here. May import
:mod:`bayeslaw.laws` and the core modules.
"""

from __future__ import annotations

from .public import load_chinchilla, load_colpret, load_misfitting, load_parscale
from .schedules import RunSchedule
from .table import LossData, load

__all__ = [
    "LossData",
    "RunSchedule",
    "load",
    "load_chinchilla",
    "load_colpret",
    "load_misfitting",
    "load_parscale",
]
