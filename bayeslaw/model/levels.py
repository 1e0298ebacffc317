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


def mean_basis(k: int) -> np.ndarray:
    """An orthonormal ``k x k`` basis, its first row the mean's direction (Helmert's)."""
    basis = np.zeros((k, k))
    basis[0] = 1.0 / np.sqrt(k)
    for i in range(1, k):
        basis[i, :i] = 1.0 / np.sqrt(i * (i + 1))
        basis[i, i] = -i / np.sqrt(i * (i + 1))
    return basis


def rotated_deviations(pm: Any, pt: Any, name: str, sd: Any, dim: str, k: int
                       ) -> tuple[Any, Any]:
    """Centered level deviations ``~ N(0, sd)``, sampled in :func:`mean_basis` (``<name>_rot``).

    Coordinate 0 is their mean times ``sqrt(k)``.  The basis is orthonormal, so the
    coordinates are again independent ``N(0, sd)`` and the Jacobian is one: the same density.
    Returns the deviations (the Deterministic ``name``) and their mean.
    """
    rotated = pm.Normal(f"{name}_rot", 0.0, sd, shape=k)
    deviations = pm.Deterministic(name, pt.dot(mean_basis(k).T, rotated), dims=dim)
    return deviations, rotated[0] / np.sqrt(k)


def mean_shift(pm: Any, pt: Any, terms: list[tuple[str, Any, str, int]],
               given: dict[str, Any]) -> Any:
    """The sum of the means of ``terms``, each sampled by :func:`rotated_deviations`.

    ``terms``: ``(name, sd, dim, levels)`` each; their deviations are put in ``given``;
    ``None`` without terms.  ``sampler.centered_values = "shifted"``: the joint of a
    parameter's first term (its population value and levels' values,
    :meth:`bayeslaw.model.graph.LossModel._offset`) is shifted by this sum.  The data pin only
    the sum of a run's levels (a size's value plus a depth's deviation): as two terms sampled
    apart, the depths' mean traded with every size's value (posterior correlation -0.99, bulk
    ESS 254 in 8,000 draws: ``benchmarks/results/steps_shock_trades_2026-12-07/``); in these
    coordinates that mean is pinned by its prior and the shifted values by the data.
    """
    shift = None
    for name, sd, dim, k in terms:
        given[name], mean = rotated_deviations(pm, pt, name, sd, dim, k)
        shift = mean if shift is None else shift + mean
    return shift
