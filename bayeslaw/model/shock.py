"""A shift shared by the rows of one checkpoint (``likelihood.shock``), in the PyMC graph.

A looped run's exit steps and its total at one ``D`` are evaluated on one batch: they move
together from checkpoint to checkpoint, beyond what each curve's own noise says.  With a
``shock`` prior ``tau`` every row of checkpoint ``c``
(:func:`bayeslaw.data.steps.checkpoint_labels`) has its law's value shifted by
``u_c = tau z_c``, ``z_c ~ N(0, 1)`` (``checkpoint_shock_z``; stored as
``checkpoint_shock``, dims ``checkpoint``, which the diagnosis leaves out as it does every
non-centered term's deviations).  A total row is the q-weighted mean of its steps, so it
takes the same shift.  Each looped run's shifts sum to zero (``z`` less its run's mean):
they are the checkpoint-to-checkpoint deviations about the run's curve, whose level is the
law's effects' (iid shifts traded their run's mean with those effects:
``benchmarks/results/steps_shock_2026-12-07/``).  The checkpoints are those of the data
the model is built from (:attr:`~bayeslaw.model.plan.Plan.like`): part of its structure,
so a training split's rows index into the same vector and a checkpoint without rows draws
its shift from the prior.  The numpy side (forecasts, log densities) is
:func:`bayeslaw.posterior.noise.shock_draws`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.steps import checkpoint_labels
from ..data.table import LossData
from ..errors import SpecError

#: The structure's key of the checkpoints (:func:`bayeslaw.model.plan.structure_of`).
CHECKPOINT = "checkpoint"
#: The shifts' standard draws (non-centered: ``checkpoint_shock = shock * checkpoint_shock_z``).
SHOCK_Z = "checkpoint_shock_z"


def checkpoint_levels(data: LossData) -> tuple[str, ...]:
    """The checkpoints of ``data``, sorted."""
    return tuple(sorted(set(checkpoint_labels(data.frame).tolist())))


def checkpoint_codes(levels: tuple[str, ...], data: LossData, rows: np.ndarray,
                     pos: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Each cell's checkpoint index in the run-major layout ``(runs, L)`` (padding: 0)."""
    index = {c: i for i, c in enumerate(levels)}
    labels = checkpoint_labels(data.frame)
    unknown = [c for c in labels if c not in index]
    if unknown:
        raise SpecError(f"checkpoint(s) {unknown[:3]} are not in the compiled model; build "
                        "the model from data that include them")
    out = np.zeros(shape, dtype="int64")
    out[rows, pos] = [index[c] for c in labels]
    return out


def owners(levels: tuple[str, ...]) -> np.ndarray:
    """Each checkpoint's looped run, as codes ``0, 1, ...`` (a label less its ``@<D>``)."""
    return pd.factorize(pd.Series([c.rsplit("@", 1)[0] for c in levels]))[0]


def run_centred(xp: Any, z: Any, owner: np.ndarray) -> Any:
    """``z`` less the mean of its looped run's entries: each run's shifts sum to zero."""
    members = (owner[None, :] == np.arange(owner.max() + 1)[:, None]).astype(float)
    means = xp.dot(members, z) / members.sum(axis=1)
    return z - means[owner]


def shock_shift(pm: Any, pt: Any, prior: Any, levels: tuple[str, ...], codes: np.ndarray,
                shape: tuple[Any, Any]) -> Any:
    """Each cell's shift ``(runs, L)``: ``tau z_c`` of its checkpoint, non-centered.

    ``z`` less its looped run's mean (:func:`run_centred`), so that a run's shifts do not
    trade their mean with the law's effects on the run's level.
    """
    tau = prior.create("shock")
    z = pm.Normal(SHOCK_Z, 0.0, 1.0, dims=CHECKPOINT)
    value = pm.Deterministic("checkpoint_shock", tau * run_centred(pt, z, owners(levels)),
                             dims=CHECKPOINT)
    code = pt.specify_shape(pm.Data("checkpoint_code", codes, dims=("run", "pos")), shape)
    return value[code]
