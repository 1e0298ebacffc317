r"""The noise model (the spec's ``[likelihood]``), written once against a math namespace ``xp``.

A loss ``y_i`` at point ``i`` of run ``r`` is the law's value ``mu_i`` plus noise:

* **family**: Student-t with ``nu`` degrees of freedom (``family = "student_t"``, a prior on
  ``nu``), normal (``family = "normal"``), or a contaminated normal (``family =
  "contaminated"``): a normal of scale ``s`` with probability ``1 - pi`` and, with probability
  ``pi`` (``outlier_share``), a normal of scale ``(1 + k) s`` (``k``: ``outlier_scale``), so
  that a few outlying points sit in the wide part while the rest keep normal tails;
  :func:`density_terms` is its log density at a standardized residual, :func:`standard_noise`
  its draws, :data:`~bayeslaw.spec.parts.FAMILY_PARAMS` the parameters each family adds.
* **scale**: ``sigma``, one for the whole sweep (``sigma_by = "none"``) or one per level of
  ``sigma_by`` (``"run"`` by default), partially pooled on the log scale:
  ``sigma_r = sigma exp(dev_r)``, ``dev_r ~ N(0, sigma_spread)`` (centered or not,
  ``sigma_centered``; :func:`bayeslaw.model.arithmetic.link_value` with the ``log`` link).
  With a ``sigma_decay`` prior the scale falls with D,
  ``s_i = sigma_r (D_i / D_ref)^-sigma_decay``, and with ``sigma_relative`` it is a fraction of
  the law's value, ``s_i mu_i`` (noise on the log-loss scale): :func:`noise_scale`.  ``s_i`` is
  a point's *marginal* scale, the one forecasts far from the data use.
* **AR(1)** (an ``ar1`` prior, phi): the standardized residuals of consecutive points of a
  run follow an AR(1),
  ``y_i | y_(i-1) ~ family(mu_i + phi s_i / s_(i-1) e_(i-1), s_i sqrt(1 - phi^2))`` with
  ``e = y - mu``; a run's first point has its marginal scale ``s_i``.
* **random walk** (``walk`` prior tau and ``walk_start`` prior s0, optionally ``walk_hurst``
  h, 1/2 when absent): a run's residual drifts in ``x = log D``,
  ``e_i | e_(i-1) ~ family(e_(i-1), sqrt(s_i^2 + tau^2 (x_i - x_(i-1))^(2h)))``, a run's
  first point ``e ~ family(0, sqrt(s_i^2 + s0^2 + tau^2 |x_i - log D_ref|^(2h)))`` (the walk
  starts at the reference tokens): :func:`walk_variance`, times ``mu_i^2`` with
  ``sigma_relative`` (:func:`relative_variance`).  ``s_i`` is then the white part of a step.

Both processes are conditionals on the run's previous point (:func:`conditional_terms`), the
factorization the PyMC graph's likelihood is written in; their generative side draws each
run's curve jointly (:func:`draw_curves`, :func:`draw_run_curves`, :func:`curve_random` for
the graph's prior predictive), the rows sorted by run then D (:func:`previous_rows`).

**Where the rest lives.** The spec's keys are :class:`bayeslaw.spec.parts.Likelihood`.  The
PyMC graph's part of the likelihood stays in :mod:`bayeslaw.model.graph`
(``LossModel._noise``, ``LossModel._observation``, ``curve_logp``, ``curve_likelihood``):
it creates PyMC random variables and PyTensor ops, and that module is the only one that
imports pymc and pytensor and is not loaded with :mod:`bayeslaw.model`; every formula it
writes is a call of this module's, so the graph, the numpy side and the simulator share
them.  The numpy side (scales per row of posterior draws, the log density at any points,
predictive draws, a fitted run's walk bridge) is :mod:`bayeslaw.posterior.noise`; the
simulator is :mod:`bayeslaw.simulate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..spec.parts import FAMILY_PARAMS


def noise_scale(xp: Any, sigma: Any, *, log_d: Any = None, decay: Any = None,
                mu: Any = None) -> Any:
    """The marginal noise scale of a point.

    ``sigma`` (a run's or level's scale) falling as ``exp(-decay log(D / D_ref))`` when
    ``decay`` is given (``log_d = log(D / D_ref)``), and a fraction of the law's value ``mu``
    when ``mu`` is given (``likelihood.sigma_relative``: noise on log-loss).
    """
    if decay is not None:
        sigma = sigma * xp.exp(-decay * log_d)
    if mu is not None:
        sigma = sigma * mu
    return sigma


def conditional_terms(xp: Any, mu: Any, scale: Any, resid_prev: Any, follows: Any, *,
                      ar1: Any = None, ratio: Any = 1.0, walk_var: Any = None
                      ) -> tuple[Any, Any]:
    """Location and scale of a point given its run's previous point (the model's factorization).

    ``resid_prev`` is the previous point's residual (loss minus the law), ``follows`` 1 for a
    point that follows another of its run and 0 for a run's first point (its marginal).

    * AR(1) (``ar1`` = phi): ``mu + follows phi ratio resid_prev`` and
      ``scale sqrt(1 - follows phi^2)``, ``ratio`` = this point's scale over the previous one's;
    * random walk (``walk_var``: the variance the walk adds, :func:`walk_variance`):
      ``mu + follows resid_prev`` and ``sqrt(scale^2 + walk_var)``;
    * neither: ``mu`` and ``scale``.
    """
    if ar1 is not None:
        return (mu + follows * ar1 * ratio * resid_prev,
                scale * xp.sqrt(1.0 - follows * ar1**2))
    if walk_var is not None:
        return mu + follows * resid_prev, xp.sqrt(scale**2 + walk_var)
    return mu, scale


def density_terms(xp: Any, gammaln: Any, family: str, z: Any, *shape: Any
                  ) -> tuple[Any, Any, Any]:
    """The likelihood's log density at standardized residuals ``z``, in three parts.

    ``log p = constant - log(scale) + factor * core``, ``shape`` the family's
    :data:`~bayeslaw.spec.parts.FAMILY_PARAMS`: Student-t (``nu``)
    ``constant = lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi) / 2``, ``factor = -(nu+1)/2``,
    ``core = log1p(z^2 / nu)``; normal ``constant = -log(2 pi) / 2``, ``factor = -1/2``,
    ``core = z^2``; contaminated (``pi``, ``k``) ``constant = -log(2 pi) / 2``, ``factor = 1``,
    ``core = logaddexp(log(1 - pi) - z^2 / 2, log(pi) - log(1 + k) - z^2 / (2 (1 + k)^2))``.
    The parts are kept apart so that the graph sums ``core`` over a run's points and
    multiplies the per-run terms once.
    """
    if family == "student_t":
        (nu,) = shape
        constant = gammaln((nu + 1.0) / 2.0) - gammaln(nu / 2.0) - 0.5 * xp.log(nu * np.pi)
        return constant, -(nu + 1.0) / 2.0, xp.log1p(z * z / nu)
    if family == "contaminated":
        bulk, outlier = contaminated_parts(xp, z, *shape)
        # log(e^a + e^b), stable far in the tails (PyTensor's logaddexp is not)
        core = xp.maximum(bulk, outlier) + xp.log1p(xp.exp(-xp.abs(bulk - outlier)))
        return -0.5 * np.log(2.0 * np.pi), 1.0, core
    return -0.5 * np.log(2.0 * np.pi), -0.5, z * z


def contaminated_parts(xp: Any, z: Any, share: Any, excess: Any) -> tuple[Any, Any]:
    """The contaminated normal's two log parts at ``z``, each less ``log(2 pi) / 2``.

    ``log(1 - pi) - z^2 / 2`` (the bulk) and ``log(pi) - log(1 + k) - z^2 / (2 (1 + k)^2)``.
    """
    wide = 1.0 + excess
    return (xp.log1p(-share) - 0.5 * z * z,
            xp.log(share) - xp.log(wide) - 0.5 * (z / wide) ** 2)


def standard_noise(rng: np.random.Generator, family: str, shape: tuple[int, ...],
                   *params: Any) -> np.ndarray:
    """Standardized noise of the likelihood (numpy); ``params``: the family's own parameters.

    They broadcast to ``shape``: Student-t with ``nu``; normal; contaminated, a normal times
    ``1 + outlier_scale`` where a uniform draw falls below ``outlier_share``.  One
    implementation for prior predictive draws, posterior predictive draws and the simulator.
    """
    if family == "student_t":
        return rng.standard_t(np.asarray(params[0]), size=shape)
    z = rng.standard_normal(shape)
    if family == "contaminated":
        share, excess = (np.asarray(p, float) for p in params)
        z = z * np.where(rng.uniform(size=shape) < share, 1.0 + excess, 1.0)
    return z


def draw_curves(mu: np.ndarray, scale: np.ndarray, z: np.ndarray, prev: np.ndarray,
                first: np.ndarray, *, ar1: np.ndarray | float | None = None,
                walk_var: np.ndarray | None = None) -> np.ndarray:
    """Curves drawn jointly along each run (numpy): the generative side of the conditionals.

    ``mu``, ``scale`` and the standard noise ``z`` are ``(S, n)`` for rows sorted by run then
    D; ``prev`` / ``first`` from :func:`previous_rows`.  Each row's residual is carried from
    its run's previous row (AR(1): times ``ar1`` and the ratio of scales; a walk: as it is)
    plus the conditional scale times ``z``.
    """
    if ar1 is None and walk_var is None:
        return mu + scale * z
    follows = 1.0 - np.asarray(first, float)
    phi = None if ar1 is None else np.ravel(ar1) if np.ndim(ar1) else ar1
    resid = np.zeros_like(mu)
    for i in range(mu.shape[1]):  # sequential along each run; a run's first row: marginal
        j = prev[i]
        loc, step = conditional_terms(
            np, 0.0, scale[:, i], resid[:, j], follows[i], ar1=phi,
            ratio=scale[:, i] / scale[:, j],
            walk_var=None if walk_var is None else walk_var[:, i])
        resid[:, i] = loc + step * z[:, i]
    return mu + resid


def draw_run_curves(mu: Any, scale: Any, z: np.ndarray, *, ar1: Any = None,
                    walk_var: Any = None) -> np.ndarray:
    """Curves laid out ``(..., L)``, one run's points in order per row, by :func:`draw_curves`.

    The graph's run-major layout (the prior predictive): ``mu``, ``scale`` and ``walk_var``
    broadcast to ``z``'s shape, ``ar1`` to its leading shape (one per row).
    """
    shape = np.shape(z)
    flat = (-1, shape[-1])
    prev, first = previous_rows(np.zeros(shape[-1]))
    step = ({"ar1": np.broadcast_to(ar1, shape[:-1]).ravel()} if ar1 is not None else
            {"walk_var": np.broadcast_to(walk_var, shape).reshape(flat)})
    return draw_curves(np.broadcast_to(mu, shape).reshape(flat),
                       np.broadcast_to(scale, shape).reshape(flat), np.reshape(z, flat),
                       prev, first, **step).reshape(shape)


def previous_rows(runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows sorted by run then D: the previous row of the same run, and first-row flags.

    A run's first row points at itself (its flag is 1.0, so the AR(1) term drops out).
    """
    runs = np.asarray(runs)
    first = np.ones(len(runs), bool)
    first[1:] = runs[1:] != runs[:-1]
    prev = np.arange(len(runs)) - 1
    prev[first] = np.flatnonzero(first)
    return prev.astype("int64"), first.astype(float)


def walk_power(gap: Any, hurst: Any) -> Any:
    """``gap^(2 hurst)`` for distances ``gap >= 0`` in log D (finite gradient at 0)."""
    return (gap + 1e-12) ** (2.0 * hurst)


def walk_variance(xp: Any, log_d: Any, log_d_prev: Any, follows: Any, tau: Any, start: Any,
                  log_d_ref: float, hurst: Any = 0.5, mu: Any = None) -> Any:
    """Variance the random-walk residual adds to a point, given the run's previous point.

    A point that follows another of its run: ``tau^2 (x - x_prev)^(2h)`` (``x = log D``,
    ``h = hurst``, 1/2 for a random walk); a run's first point:
    ``start^2 + tau^2 |x - log D_ref|^(2h)`` (the walk starts at the reference).  Written once
    for numpy and PyTensor (``xp``).  With ``mu`` (``sigma_relative``) it is scaled by
    ``mu^2``, as the noise is.
    """
    var = (follows * tau**2 * walk_power(log_d - log_d_prev, hurst)
           + (1.0 - follows) * (start**2 + tau**2 * walk_power(xp.abs(log_d - log_d_ref), hurst)))
    return var if mu is None else relative_variance(var, mu)


def relative_variance(var: Any, mu: Any) -> Any:
    """A walk's variance on the loss scale when the noise is relative: ``var mu^2``."""
    return var * mu**2


def curve_random(family: str, process: str = "") -> Any:
    """The graph's draws of the curves (``pm.CustomDist``'s ``random``, numpy).

    Independent noise: ``loc`` plus the family's noise of scale ``sigma``.  With AR(1)
    or a walk (``process``: ``"ar1"`` / ``"walk_var"``) ``loc`` is conditional on the
    *observed* previous point, so each run's curve is drawn jointly by
    :func:`draw_run_curves` from the inputs after ``mask`` (the law's value, the marginal
    scale, ``ar1`` or the walk's variance): the generative process, whatever the data's
    losses (the prior predictive, SBC).
    """
    k = len(FAMILY_PARAMS[family])

    def random(loc: Any, sigma: Any, *rest: Any, rng: Any = None, size: Any = None) -> Any:
        loc = np.asarray(loc)
        shape = loc.shape if size is None else (*size, loc.shape[-1])
        params = [np.broadcast_to(np.asarray(p)[..., None], shape) for p in rest[:k]]
        noise = standard_noise(rng, family, shape, *params)
        if process:
            mu, scale, carry = rest[k + 1:]
            return draw_run_curves(mu, scale, noise, **{process: carry})
        sigma = np.asarray(sigma)
        scale = sigma if sigma.ndim == loc.ndim else sigma[..., None]
        return np.broadcast_to(loc, shape) + np.broadcast_to(scale, shape) * noise

    return random
