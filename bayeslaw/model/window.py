"""``curve_bend``'s curves sampled in coordinates at the middle of each curve's fitted window.

``sampler.shape_at = "window"``: the same model as the spec's (its priors at the reference
``D_ref``), sampled in other coordinates.  A curve's points pin its level and its log-slope
near the middle of the window they span, not at its end, where the benchmark's reference sits
(``benchmarks/results/colpret_noise_scale_2026-12-06/README.md``: posterior sd 0.029 of the
log-slope at the middle, 0.089 at the end, on ColPret's context).  Each curve's coefficients
are sampled as the same curve's coefficients at its own reference ``x_1`` (the middle of its
fitted points in ``log D``): ``u_m = log m_1``, ``u_f = logit f_1``, ``u_s = log f_1 + log
beta_1`` (the log-slope there, over the level) and ``u_q = logit q_1``.

The family is closed under a change of reference, in closed form (:func:`to_reference`): with
``e = beta / q`` (the asymptotic exponent, the same at every reference) and ``log r = -log
x_1`` (``x`` is ``D / D_ref``), ``a = 1 - q_1 + q_1 r^e``, ``logit q_0 = logit q_1 + e log r``,
``logit f_0 = logit f_1 - log a``, ``m_0 = m_1 (1 - f_1 + f_1 / a)`` and ``beta_0 = e q_0``.
In ``(log m, logit f, log beta, logit q)`` the map has Jacobian 1 (triangular with unit
diagonal once ``e`` is a coordinate), and so has the slope's shear, so the density needs no
Jacobian term: the priors are evaluated at the reference coordinates (a ``pm.Potential``),
and the free variables' own Normal densities (wide, centred on the priors' centres, so that
a chain may start there) are subtracted again.  ``tests/model/test_window.py`` checks the map
against the law, its Jacobian and the density against the spec's own coordinates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec.settings import WINDOW_PARAMS as PARAMS
from .arithmetic import link_of
from .levels import effect_sd
from .plan import level_dim

#: The sd of the free coordinates' own Normal densities (subtracted again: any value gives
#: the same model; wide, so that it never matters for the start either).
WIDE = 2.0


def window_middles(log_d: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Each run's ``log x_1``: the middle of its fitted points' ``log(D / D_ref)``.

    A run without points gets 0: its coordinates are then the reference's.
    """
    fitted = np.ma.masked_array(log_d, mask=mask <= 0)
    return np.ma.filled(0.5 * (fitted.min(axis=1) + fitted.max(axis=1)), 0.0)


def to_reference(xp: Any, u: dict[str, Any], log_r: Any) -> dict[str, Any]:
    """A curve's reference coordinates ``(log m, logit f, log beta, logit q)``.

    From its window coordinates ``u`` (``m``, ``f``, ``s``, ``q``: the module's docstring)
    and ``log r = -log x_1``; written in log space with ``logaddexp`` so that a steep or far
    curve does not overflow.  ``xp`` is numpy or ``pytensor.tensor``.
    """
    log_f1 = -_softplus(xp, -u["f"])
    log_q1, log_1q1 = -_softplus(xp, -u["q"]), -_softplus(xp, u["q"])
    e = xp.exp(u["s"] - log_f1 - log_q1)
    log_a = xp.logaddexp(log_1q1, log_q1 + e * log_r)
    lq0 = u["q"] + e * log_r
    return {"m": u["m"] + xp.logaddexp(-_softplus(xp, u["f"]), log_f1 - log_a),
            "f": u["f"] - log_a,
            "beta": xp.log(e) - _softplus(xp, -lq0),
            "q": lq0}


def from_reference(xp: Any, v: dict[str, Any], log_x1: Any) -> dict[str, Any]:
    """A curve's window coordinates from its reference ones (the inverse of :func:`to_reference`).

    The same change of reference, towards ``x_1``.
    """
    u = to_reference(xp, {"m": v["m"], "f": v["f"], "s": v["beta"] - _softplus(xp, -v["f"]),
                          "q": v["q"]}, log_x1)
    return {"m": u["m"], "f": u["f"], "s": u["beta"] - _softplus(xp, -u["f"]), "q": u["q"]}


def _softplus(xp: Any, x: Any) -> Any:
    """``log(1 + exp(x))``, stable for large ``|x|``."""
    return xp.logaddexp(0.0, x)


def window_parameters(pm: Any, pt: Any, spec: Any, scalars: dict[str, Any], log_x1: Any,
                      codes: dict[str, np.ndarray]) -> dict[str, Any]:
    """``m``, ``f``, ``beta`` and ``q`` per run ``(R, 1)``, sampled at each curve's window.

    The free variables ``<p>_by_<g>_mid`` (``beta``'s holds the log-slope ``u_s``); the
    Deterministics every forecast reads, as in the spec's own coordinates: the deviations
    ``<p>_by_<g>`` on the link scale and ``<p>_run``.  ``log_x1`` is the container of each
    level's window middle (:func:`window_middles`).
    """
    effects = {p: next(e for e in spec.effects if e.param == p) for p in PARAMS}
    group = effects["m"].group
    dim = level_dim(group)
    law = spec.law_obj
    centre = {p: link_of(pt, scalars[p], law.param(p).link) for p in PARAMS}
    start = {**centre, "s": centre["beta"] - _softplus(pt, -centre["f"])}
    u = {k: pm.Normal(f"{effects[p].name}_mid", start[k], WIDE, dims=dim)
         for k, p in (("m", "m"), ("f", "f"), ("s", "beta"), ("q", "q"))}
    v = to_reference(pt, u, -log_x1)
    prior = sum(pm.logp(pm.Normal.dist(centre[p], effect_sd(pt, effects[p].name,
                                                            effects[p].scale)), v[p]).sum()
                for p in PARAMS)
    own = sum(pm.logp(pm.Normal.dist(start[k], WIDE), u[k]).sum() for k in u)
    pm.Potential("window_prior", prior - own)
    theta = {}
    inverse = {"m": pt.exp, "f": pt.sigmoid, "beta": pt.exp, "q": pt.sigmoid}
    for p in PARAMS:
        pm.Deterministic(effects[p].name, v[p] - centre[p], dims=dim)
        per_run = pm.Deterministic(f"{p}_run", inverse[p](v[p])[codes[group]], dims="run")
        theta[p] = per_run[:, None]
    return theta
