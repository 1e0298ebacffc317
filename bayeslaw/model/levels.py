"""A group term's level deviations on its link scale, in the coordinates they are sampled in.

:func:`group_deviations` (centered, non-centered or mixed, as the plan's mask says),
:func:`product_deviations` (an exponent's levels sampled through the log of its product with
a share or coefficient of the same levels: ``sampler.product_levels``), :func:`effect_sd` and
:func:`mvn_random` (a ``[correlation]`` block's prior draws).  :mod:`bayeslaw.model.graph`
builds the model from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arithmetic import link_of
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


def product_deviations(pm: Any, pt: Any, name: str, sd: Any, dim: str, first: Any,
                       first_link: str, first_deviations: Any) -> Any:
    """An exponent's level deviations, sampled through the log of its product with ``first``.

    ``sampler.product_levels = [a, b]``: ``b``'s levels (log link, non-centered) beside ``a``'s
    levels of the same group.  The model is unchanged: ``log b_l = log b + d_l``, ``d_l ~
    Normal(0, sd)``.  The free variable is ``name_z``: ``y_l = z_l + h_l``, ``z_l = d_l / sd``
    the usual standard normal and ``h_l = (log a_l - log a) / sd`` (``a`` the population value,
    ``a_l`` level ``l``'s), so ``log a_l + log b_l = log a + log b + sd y_l``: what a curve's
    points pin (``curve_bend``'s ``f beta``, the loss's log-slope at ``D_ref``) is one
    coordinate, and ``a``, ``b`` no longer trade along a curved ridge.  ``y_l ~ Normal(h_l, 1)``
    is ``z_l``'s density, and the map ``(a's coordinates, z) -> (a's coordinates, y)`` is a
    shear (triangular, unit diagonal), so the density needs no Jacobian term.
    """
    centre = link_of(pt, first, first_link)
    shift = (_log_of(pt, centre + first_deviations, first_link)
             - _log_of(pt, centre, first_link)) / sd
    y = pm.Normal(f"{name}_z", shift, 1.0, dims=dim)
    return pm.Deterministic(name, sd * (y - shift), dims=dim)


def _log_of(pt: Any, value: Any, link: str) -> Any:
    """``log a`` from ``a`` on its link scale (``log`` or ``logit``)."""
    return value if link == "log" else -pt.softplus(-value)
