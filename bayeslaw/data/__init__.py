"""Tables of losses: loading, validation, schedules, training logs and public data sets.

:func:`load` turns a CSV / Parquet / DataFrame or a folder of training logs (TensorBoard, W&B,
MLflow) into the frozen :class:`LossData`; learning-rate schedules are data here, read and
checked (a run's :class:`RunSchedule` and the arithmetic of its terms are
:mod:`bayeslaw.laws.multi_power`'s, re-exported). May import :mod:`bayeslaw.laws` and the core
modules.
"""

from __future__ import annotations

from ..laws.multi_power import RunSchedule
from .public import load_chinchilla, load_colpret, load_misfitting, load_parscale
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
