"""The model's arithmetic, written once against a math namespace ``xp``.

The PyMC graph (``xp`` = ``pytensor.tensor``), the numpy evaluation of posterior draws
(:mod:`bayeslaw.posterior.draws`) and the simulator (:mod:`bayeslaw.simulate`) all call these: the
link-scale effects of a law parameter, the noise scale, the AR(1) / random-walk conditional
terms and the likelihood's log density; curves drawn jointly along runs (the generative
side of the conditionals).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def link_value(xp: Any, population: Any, link: str, deviations: Any = ()) -> Any:
    """A parameter's value given its population value and group deviations on the link scale.

    ``link(value) = link(population) + sum(deviations)``; ``link`` is ``"log"`` (a positive
    parameter, and every noise scale: ``population * exp(sum)``, defined at 0), ``"logit"``
    (a share in (0, 1): ``1 / (1 + (1 / population - 1) exp(-sum))``) or ``"identity"``.  The
    graph passes one deviation per group term, indexed to runs; the numpy side passes draws
    ``(S, n)``.
    """
    total = None
    for deviation in deviations:
        total = deviation if total is None else total + deviation
    if total is None:
        return population
    if link == "log":
        return population * xp.exp(total)
    if link == "logit":
        return 1.0 / (1.0 + (1.0 / population - 1.0) * xp.exp(-total))
    return population + total


def link_of(xp: Any, value: Any, link: str) -> Any:
    """A parameter's value on its link scale: ``log``, ``logit`` or ``identity``."""
    if link == "log":
        return xp.log(value)
    if link == "logit":
        return xp.log(value) - xp.log1p(-value)
    return value


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


def density_terms(xp: Any, gammaln: Any, family: str, z: Any, nu: Any = None
                  ) -> tuple[Any, Any, Any]:
    """The likelihood's log density at standardized residuals ``z``, in three parts.

    ``log p = constant - log(scale) + factor * core``: Student-t (``nu``)
    ``constant = lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi) / 2``, ``factor = -(nu+1)/2``,
    ``core = log1p(z^2 / nu)``; normal ``constant = -log(2 pi) / 2``, ``factor = -1/2``,
    ``core = z^2``.  The parts are kept apart so that the graph sums ``core`` over a run's
    points and multiplies the per-run terms once.
    """
    if family == "student_t":
        constant = gammaln((nu + 1.0) / 2.0) - gammaln(nu / 2.0) - 0.5 * xp.log(nu * np.pi)
        return constant, -(nu + 1.0) / 2.0, xp.log1p(z * z / nu)
    return -0.5 * np.log(2.0 * np.pi), -0.5, z * z


def standard_noise(rng: np.random.Generator, family: str, shape: tuple[int, ...],
                   nu: Any = None) -> np.ndarray:
    """Standardized noise of the likelihood (numpy): Student-t with ``nu``, or normal.

    ``nu`` broadcasts to ``shape``.  One implementation for prior predictive draws, posterior
    predictive draws and the simulator.
    """
    if family == "student_t":
        return rng.standard_t(np.asarray(nu), size=shape)
    return rng.standard_normal(shape)


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

    Independent noise: ``loc`` plus Student-t or normal noise of scale ``sigma``.  With AR(1)
    or a walk (``process``: ``"ar1"`` / ``"walk_var"``) ``loc`` is conditional on the
    *observed* previous point, so each run's curve is drawn jointly by
    :func:`draw_run_curves` from the inputs after ``mask`` (the law's value, the marginal
    scale, ``ar1`` or the walk's variance): the generative process, whatever the data's
    losses (the prior predictive, SBC).
    """
    t = family == "student_t"

    def random(loc: Any, sigma: Any, *rest: Any, rng: Any = None, size: Any = None) -> Any:
        loc = np.asarray(loc)
        shape = loc.shape if size is None else (*size, loc.shape[-1])
        nu = np.broadcast_to(np.asarray(rest[0])[..., None], shape) if t else None
        noise = standard_noise(rng, family, shape, nu)
        if process:
            mu, scale, carry = rest[2 if t else 1:]
            return draw_run_curves(mu, scale, noise, **{process: carry})
        sigma = np.asarray(sigma)
        scale = sigma if sigma.ndim == loc.ndim else sigma[..., None]
        return np.broadcast_to(loc, shape) + np.broadcast_to(scale, shape) * noise

    return random


def vine_shapes(k: int, eta: float) -> list[tuple[int, int, float]]:
    """The partial correlations of a ``k x k`` correlation matrix under ``LKJ(eta)``.

    ``(level, row, b)`` for each: the partial correlation of ``row`` with ``level`` given the
    levels before it (a C-vine), distributed as ``2 Beta(b, b) - 1`` with
    ``b = eta + (k - 2 - level) / 2``, all independent (Lewandowski, Kurowicka and Joe 2009,
    the vine method): the density of the matrix they build is then ``det(R)^(eta - 1)``.
    """
    return [(level, row, eta + (k - 2 - level) / 2.0)
            for level in range(k - 1) for row in range(level + 1, k)]


def correlation_cholesky(xp: Any, partials: dict[tuple[int, int], Any], k: int) -> Any:
    """The lower Cholesky factor of the correlation matrix of C-vine partial correlations.

    Row ``i``: ``L[i, 0] = z[0, i]``, ``L[i, j] = z[j, i] sqrt(1 - sum_{l<j} L[i, l]^2)`` and
    ``L[i, i] = sqrt(1 - sum_{l<i} L[i, l]^2)`` (Stan's canonical partial correlations), each
    ``z`` in (-1, 1), keyed ``(level, row)`` as :func:`vine_shapes` lists them; unit rows.
    """
    rows = []
    zero = 0.0 * partials[(0, 1)] if k > 1 else 0.0
    for i in range(k):
        entries, used = [], 0.0
        for j in range(i):
            value = partials[(j, i)] * xp.sqrt(1.0 - used) if j else partials[(0, i)]
            entries.append(value)
            used = used + value ** 2
        entries.append(xp.sqrt(1.0 - used) if i else 1.0 + zero)
        entries += [zero] * (k - 1 - i)
        rows.append(xp.stack(entries, axis=-1))
    return xp.stack(rows, axis=-2)
