"""A group term's level deviations on its link scale, in the coordinates they are sampled in.

:func:`group_deviations` (centered, non-centered or mixed, as the plan's mask says),
:func:`effect_sd` and :func:`mvn_random` (a ``[correlation]`` block's prior draws).
:mod:`bayeslaw.model.graph` builds the model from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .plan import level_order


def group_deviations(pm: Any, pt: Any, name: str, z_name: str, sd: Any, dim: str,
                     centered: np.ndarray, order: str) -> Any:
    """Level deviations ``~ N(0, sd)``, centered and non-centered as the mask says.

    Centered levels are ``name`` (``name_c`` when mixed), the others ``sd * z_name``.  Mixed,
    which levels are which is data, not graph: the container ``order`` holds the centered
    levels' indices, then the others' (:func:`bayeslaw.model.plan.level_order`), so that
    fits that center different levels of the same counts (the folds of a backtest, each
    holding out other runs) share one compiled model.
    """
    if centered.all():
        return pm.Normal(name, 0.0, sd, dims=dim)
    if not centered.any():
        return pm.Deterministic(name, sd * pm.Normal(z_name, 0.0, 1.0, dims=dim), dims=dim)
    n_rich = int(centered.sum())
    where = pm.Data(order, level_order(centered))
    c = pm.Normal(f"{name}_c", 0.0, sd, shape=n_rich)
    z = pm.Normal(z_name, 0.0, 1.0, shape=len(centered) - n_rich)
    eff = pt.set_subtensor(pt.zeros(len(centered))[where], pt.concatenate([c, sd * z]))
    return pm.Deterministic(name, eff, dims=dim)


def effect_sd(pt: Any, name: str, scale: Any) -> Any:
    """A group term's sd: learned (``scale`` a prior, ``<name>_sd``) or fixed (a number)."""
    return scale.create(f"{name}_sd") if not isinstance(scale, float) else pt.as_tensor(scale)


def mvn_random(mu: Any, chol: Any, rng: np.random.Generator | None = None,
               size: Any = None) -> np.ndarray:
    """Draws of ``MvNormal(mu, chol chol^T)`` (the ``[correlation]`` levels' prior)."""
    shape = (*np.atleast_1d(size), mu.shape[-1]) if size is not None else mu.shape
    return mu + np.einsum("...ij,...j->...i", chol, rng.standard_normal(shape))

