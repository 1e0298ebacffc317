"""The likelihood on the numpy side: conditional terms, log-likelihood at any points, draws.

Each function composes :mod:`bayeslaw.posterior.draws` (law and noise per draw), the walk
(:mod:`bayeslaw.posterior.walk`) and :mod:`bayeslaw.model.arithmetic` (the conditional terms the
PyMC graph uses too): the fit's own pointwise log-likelihood, held-out LPD, the posterior predictive
check, forecasts and simulated curves all come from here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from .. import constants as C
from ..model.arithmetic import conditional_terms, draw_curves, previous_rows
from .draws import Posterior, log_density, mean_draws, noise, noise_scale_draws
from .walk import walk_draws, walk_step_variance


def forecast_terms(post: Posterior, points: pd.DataFrame, mu: np.ndarray, scale: np.ndarray,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of a forecast of each row, ``(S, n)`` each.

    Without a random walk: the law's value ``mu`` and the noise ``scale`` (an AR(1) model's
    marginal).  With a walk: shifted by the run's logged residuals and widened by the walk's
    variance (:func:`bayeslaw.posterior.walk.walk_draws`).
    """
    if post.spec.likelihood.walk is None:
        return mu, scale
    shift, var = walk_draws(post, points, mu, rng)
    return conditional_terms(np, mu, scale, shift, 1.0, walk_var=var)


def previous_in_run(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Previous row of each row's run and the ``(1, n)`` flag of rows that follow one."""
    runs = points[C.RUN].to_numpy() if C.RUN in points.columns else np.zeros(len(points))
    prev, first = previous_rows(runs)
    return prev, (1.0 - first)[None, :]


def sequential_terms(post: Posterior, points: pd.DataFrame, y: np.ndarray, mu: np.ndarray,
                     scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of each row given the previous row's loss ``y`` in its run.

    The model's own factorization (:func:`bayeslaw.model.arithmetic.conditional_terms`, as the PyMC
    graph writes it), for ``points`` sorted by run then D; ``y`` is ``(n,)`` or one row per
    draw ``(S, n)``.  A run's first row: its marginal.  Without AR(1) or a walk, ``mu`` and
    ``scale`` unchanged.
    """
    lk = post.spec.likelihood
    if lk.ar1 is None and lk.walk is None:
        return mu, scale
    prev, follows = previous_in_run(points)
    resid = np.asarray(y, float)[..., prev] - mu[:, prev]
    if lk.ar1 is not None:
        return conditional_terms(np, mu, scale, resid, follows,
                                 ar1=post.draws("ar1")[:, None], ratio=scale / scale[:, prev])
    var = walk_step_variance(post, points, mu, prev, follows)
    return conditional_terms(np, mu, scale, resid, follows, walk_var=var)


def simulate_curves(post: Posterior, points: pd.DataFrame, mu: np.ndarray, scale: np.ndarray,
                    rng: np.random.Generator, draw_index: np.ndarray | None = None
                    ) -> np.ndarray:
    """New losses at ``points`` (sorted by run then D), each run's curve drawn jointly.

    The generative process of the PyMC graph (:func:`bayeslaw.model.arithmetic.draw_curves`): noise
    of scale ``scale`` around the law's value ``mu`` (``(S, n)``), whose standardised residuals
    follow an AR(1) along a run, or whose residual accumulates as a random walk from the
    run's previous point.  ``draw_index`` maps rows of ``mu`` to posterior draws (default:
    row ``s`` is draw ``s``).
    """
    lk = post.spec.likelihood
    idx = np.arange(len(mu)) if draw_index is None else np.asarray(draw_index)
    z = noise(post, np.ones_like(scale), rng, draw_index=idx)
    prev, follows = previous_in_run(points)
    ar1 = post.draws("ar1")[idx][:, None] if lk.ar1 is not None else None
    walk_var = (walk_step_variance(post, points, mu, prev, follows, idx)
                if lk.walk is not None else None)
    return draw_curves(mu, scale, z, prev, follows[0] == 0.0, ar1=ar1, walk_var=walk_var)


def log_likelihood(post: Posterior, points: pd.DataFrame, *, seed: int = 0,
                   conditional: bool = False) -> np.ndarray:
    """Log density of the ``loss`` at ``points`` under every draw, ``(S, n)``.

    Rows of new runs or levels use population draws (seeded), as in :func:`bayeslaw.predict`.
    With an AR(1) noise model or a random-walk residual, ``conditional=True`` conditions each
    point on the previous row of its run in ``points`` (the model's own likelihood: rows
    sorted by run, then D; :func:`sequential_terms`); the default scores each point as
    :func:`bayeslaw.predict` forecasts it: by its marginal density under AR(1) (conservative
    next to the logged curve), and from its run's logged residuals under a walk.
    """
    rng = np.random.default_rng(seed)
    y = points[C.LOSS].to_numpy(float)
    mu = mean_draws(post, points, rng)
    scale = noise_scale_draws(post, points, rng, mu)
    if conditional:
        loc, scale = sequential_terms(post, points, y, mu, scale)
    else:
        loc, scale = forecast_terms(post, points, mu, scale, rng)
    return log_density(post, y, loc, scale)


def predictive_log_density(fit: Posterior, points: pd.DataFrame, *, seed: int = 0
                           ) -> np.ndarray:
    """The log predictive density of each point's observed ``loss``, given the fit's data.

    Parameters
    ----------
    fit : Fit
        A fitted model.
    points : DataFrame
        Rows with the law's covariates, ``run`` and the observed ``loss``: points of fitted
        curves (a later ``D`` of a run the fit saw) or of new ones (their coefficients drawn
        from the population, seeded).
    seed : int
        Seed of the draws of new curves' coefficients.

    Returns
    -------
    ndarray
        ``log p(y_i | data)`` per row: ``log mean_s p(y_i | theta_s)``, the exact mixture
        over the posterior draws of the noise model's density (Student-t or normal, as
        :func:`bayeslaw.predict` forecasts each point), never a kernel estimate.
    """
    return pointwise_lpd(log_likelihood(fit, points, seed=seed))


def pointwise_lpd(loglik: np.ndarray) -> np.ndarray:
    """``log mean_s p(y_i | theta_s)`` per point from a ``(S, n)`` log-likelihood."""
    loglik = np.asarray(loglik, float)
    return special.logsumexp(loglik, axis=0) - np.log(loglik.shape[0])


def pointwise_log_likelihood(post: Posterior) -> np.ndarray:
    """Log density of every observation under every draw, ``(S, n)`` (the model's own)."""
    return log_likelihood(post, post.data.frame, conditional=True)


def residuals(post: Posterior, *, seed: int = 0) -> np.ndarray:
    """Observed loss minus the posterior median of the law at every observation, ``(n,)``.

    Each observation is compared with the law at its own run's parameters (epistemic).
    """
    frame = post.data.frame
    median = np.median(mean_draws(post, frame, np.random.default_rng(seed)), axis=0)
    return frame[C.LOSS].to_numpy(float) - median


def predictive_draws(post: Posterior, points: pd.DataFrame, rng: np.random.Generator
                     ) -> np.ndarray:
    """New observed losses at ``points``, one per draw ``(S, n)``, as forecasts see them."""
    mu = mean_draws(post, points, rng)
    loc, scale = forecast_terms(post, points, mu, noise_scale_draws(post, points, rng, mu), rng)
    return loc + noise(post, scale, rng)


def one_step_replicates(post: Posterior, rng: np.random.Generator
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replicated observations, each given the observed previous point of its run.

    Returns ``(y_rep, loc, scale)``, each ``(S, n)`` over the fitted rows: the model's own
    factorization (with AR(1) or a walk, these one-step bands hold the walk's variance).
    """
    frame = post.data.frame
    mu = mean_draws(post, frame, rng)
    loc, scale = sequential_terms(post, frame, frame[C.LOSS].to_numpy(float), mu,
                                  noise_scale_draws(post, frame, rng, mu))
    return loc + noise(post, scale, rng), loc, scale


def simulated_losses(post: Posterior, draw: int, rng: np.random.Generator) -> np.ndarray:
    """The fitted rows' losses simulated from one posterior draw, each run's curve jointly."""
    frame = post.data.frame
    mu_all = mean_draws(post, frame, rng)
    scale = noise_scale_draws(post, frame, rng, mu_all)[draw]
    return simulate_curves(post, frame, mu_all[draw][None, :], scale[None, :], rng,
                           draw_index=np.array([draw]))[0]
