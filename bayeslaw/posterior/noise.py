r"""The noise model on the numpy side: scales, density, draws and the walk of posterior draws.

The noise model is the spec's ``[likelihood]`` (:class:`bayeslaw.spec.parts.Likelihood`),
written once in :mod:`bayeslaw.model.noise` (which the PyMC graph and the simulator call too).
A loss ``y_i`` at point ``i`` of run ``r`` is the law's value ``mu_i`` plus noise:

* **family**: Student-t with ``nu`` degrees of freedom, normal, or a contaminated normal (a
  normal with a share ``outlier_share`` of points at ``1 + outlier_scale`` times its scale);
* **scale**: ``sigma``, or one per level of ``sigma_by`` (``run`` by default) partially
  pooled on the log scale, ``sigma_r = sigma exp(dev_r)``, ``dev_r ~ N(0, sigma_spread)``; a
  new run or level draws its deviation from the population.  With ``sigma_decay`` the scale
  falls as ``(D / D_ref)^-sigma_decay``; with ``sigma_relative`` it is a fraction of
  ``mu_i``.  This is each point's *marginal* scale ``s_i`` (:func:`noise_scale_draws`);
* **AR(1)** (``ar1``, phi): standardized residuals of consecutive points of a run follow an
  AR(1), ``y_i | y_(i-1) ~ family(mu_i + phi s_i / s_(i-1) e_(i-1), s_i sqrt(1 - phi^2))``,
  ``e = y - mu``;
* **random walk** (``walk`` tau, ``walk_start`` s0, ``walk_hurst`` h, 1/2 when absent): a
  run's residual drifts in ``x = log D``,
  ``e_i | e_(i-1) ~ family(e_(i-1), sqrt(s_i^2 + tau^2 (x_i - x_(i-1))^(2h)))``, a run's
  first point ``family(0, sqrt(s_i^2 + s0^2 + tau^2 |x_i - log D_ref|^(2h)))``; both
  variances times ``mu_i^2`` with ``sigma_relative``.

Here, per posterior draw and row of any table of points: the marginal scale
(:func:`base_scale`, :func:`noise_scale_draws`), standardized noise (:func:`noise`) and the
log density (:func:`log_density`); the walk's variance along a run
(:func:`walk_step_variance`) and a fitted run's forecast conditioned on its logged residuals
through a bridge (:func:`walk_bridge`, :func:`walk_draws`); the terms of each row given its
run's previous row (:func:`sequential_terms`, the model's own factorization) or as a
forecast sees it (:func:`forecast_terms`); and what they give with the law's draws
(:mod:`bayeslaw.posterior.draws`): the fit's pointwise log-likelihood, held-out LPD
(``bl.log_density``), residuals, the posterior predictive check's replicates, forecasts'
draws and simulated curves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special

from .. import constants as C
from ..data.steps import checkpoint_labels
from ..errors import FitFileError
from ..model.arithmetic import link_value
from ..model.noise import (
    conditional_terms,
    contaminated_parts,
    density_terms,
    draw_curves,
    noise_scale,
    previous_rows,
    relative_variance,
    standard_noise,
    walk_power,
    walk_variance,
)
from ..spec.parts import FAMILY_PARAMS
from .draws import Posterior, by_label, group_values, level_draws, mean_draws


def base_scale(post: Posterior, table: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """``sigma`` with each row's level deviation ``sigma_log_dev`` on the log scale, ``(S, n)``.

    The deviations are looked up by level label in the posterior's own coordinates (the
    model's levels, held-out runs included), never by position in the fitted data: a
    training part's runs are a subset of the model's, in another order.
    """
    lk = post.spec.likelihood
    sigma = post.draws("sigma")[:, None]
    if lk.sigma_by is None:
        return np.broadcast_to(sigma, (len(sigma), len(table)))
    values = group_values(post, table, lk.sigma_by)
    spread = post.draws("sigma_spread")
    if "sigma_log_dev" in post.idata.posterior:
        dev = level_draws(post, "sigma_log_dev", lk.sigma_by, values, spread, rng)
        return link_value(np, sigma, "log", [dev])
    # a fit saved before the deviations were stored: only per-run scales, by run label
    if lk.sigma_by != C.RUN:
        raise FitFileError("this fit file predates the per-level noise deviations "
                           "('sigma_log_dev') that a noise scale by "
                           f"{lk.sigma_by!r} needs: refit with this version of bayeslaw")
    dev = np.log(post.draws("sigma_run") / sigma)
    return link_value(np, sigma, "log", [by_label(post.model_runs.tolist(), dev, values,
                                                  spread, rng)])


def noise_scale_draws(post: Posterior, table: pd.DataFrame, rng: np.random.Generator,
                      mu: np.ndarray) -> np.ndarray:
    """Marginal noise scale per draw and row, ``(S, n)``, given the law's value ``mu``.

    New runs / levels draw theirs from the population; with ``sigma_decay`` the scale falls
    as ``(D / D_ref) ** -sigma_decay``; with ``sigma_relative`` it is a fraction of ``mu``
    (the draws of :func:`mean_draws` on the same rows).
    """
    lk = post.spec.likelihood
    log_d = decay = None
    if lk.sigma_decay is not None:
        log_d = np.log(table[C.D].to_numpy(float)[None, :] / post.spec.reference[C.D])
        decay = post.draws("sigma_decay")[:, None]
    return noise_scale(np, base_scale(post, table, rng), log_d=log_d, decay=decay,
                       mu=mu if lk.sigma_relative else None)


def shock_draws(post: Posterior, points: pd.DataFrame, rng: np.random.Generator
                ) -> np.ndarray | float:
    """Each row's checkpoint shift per draw, ``(S, n)``, or 0.0 without ``likelihood.shock``.

    A checkpoint with fitted rows takes its posterior draw (``checkpoint_shock``): a held-out
    exit step is conditioned on the steps its checkpoint logged.  Any other checkpoint (a
    later ``D``, a new run) draws one shift ``N(0, tau)`` per posterior draw, shared by its
    rows: not the model's value of a checkpoint without rows, which its run's sum to zero
    ties to the fitted ones' (:mod:`bayeslaw.model.shock`).
    """
    if post.spec.likelihood.shock is None:
        return 0.0
    labels = post.idata.posterior["checkpoint_shock"].coords["checkpoint"].values.tolist()
    seen = set(checkpoint_labels(post.data.frame).tolist())
    keep = [j for j, c in enumerate(labels) if c in seen]
    return by_label([labels[j] for j in keep], post.draws("checkpoint_shock")[:, keep],
                    checkpoint_labels(points), post.draws("shock"), rng)


def located_draws(post: Posterior, points: pd.DataFrame, rng: np.random.Generator
                  ) -> np.ndarray:
    """The law's value per draw and row with its checkpoint's shift: the noise's centre."""
    return mean_draws(post, points, rng) + shock_draws(post, points, rng)


def family_draws(post: Posterior, draw_index: np.ndarray | None = None) -> list[np.ndarray]:
    """The family's own parameters per draw, as columns ``(S, 1)``.

    ``nu`` (Student-t); ``outlier_share`` and ``outlier_scale`` (contaminated); none (normal).
    ``draw_index`` maps rows to posterior draws.
    """
    out = []
    for name in FAMILY_PARAMS[post.spec.likelihood.family]:
        value = np.asarray(post.draws(name), float)
        out.append((value if draw_index is None else value[draw_index])[:, None])
    return out


def noise(post: Posterior, scale: np.ndarray, rng: np.random.Generator,
          draw_index: np.ndarray | None = None) -> np.ndarray:
    """Observation noise with per-draw ``scale``; ``draw_index`` maps rows to posterior draws."""
    family = post.spec.likelihood.family
    return scale * standard_noise(rng, family, scale.shape, *family_draws(post, draw_index))


def log_density(post: Posterior, y: np.ndarray, mu: np.ndarray, scale: np.ndarray
                ) -> np.ndarray:
    """The likelihood's log density per draw, ``(S, n)``.

    Its terms are :func:`bayeslaw.model.noise.density_terms`'s.
    ``y`` is shared by all draws ``(n,)`` or has one row per draw ``(S, n)`` (replicated data).
    """
    y = np.asarray(y, float)
    y = y[None, :] if y.ndim == 1 else y
    constant, factor, core = density_terms(np, special.gammaln, post.spec.likelihood.family,
                                           (y - mu) / scale, *family_draws(post))
    return constant - np.log(scale) + factor * core


def walk_bridge(x_logged: np.ndarray, e_logged: np.ndarray, x: np.ndarray, tau: np.ndarray,
                hurst: np.ndarray | float = 0.5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random walk's residual at ``x`` given its values ``e_logged`` at ``x_logged``.

    ``x_logged`` is sorted ``(m,)``, ``e_logged`` is ``(S, m)``, ``tau`` is ``(S, 1)``.  Each
    row is conditioned on the nearest logged points strictly before and after it (so a row
    at a logged point is forecast from its neighbours, not from itself): between two, the
    Brownian bridge (linear mean, variance ``tau^2 (x - a)(b - x) / (b - a)``); past the
    last or before the first, that point's value and variance ``tau^2 |x - x_k|``.  With a
    Hurst exponent ``hurst`` (``(S, 1)`` or a float), each distance ``g`` enters as
    ``g^(2 hurst)`` (between two points, the bridge's ``(x - a)(b - x) / (b - a)``: exact for
    a random walk, an approximation otherwise).  Returns the mean and variance ``(S, n)``
    and a mask of rows with no logged neighbour.
    """
    m = len(x_logged)
    before = np.searchsorted(x_logged, x, "left") - 1
    after = np.searchsorted(x_logged, x, "right")
    has_b, has_a = before >= 0, after < m
    b, a = np.clip(before, 0, m - 1), np.clip(after, 0, m - 1)
    xb, xa = x_logged[b], x_logged[a]
    both = has_b & has_a
    gap = np.where(both, xa - xb, 1.0)
    w = np.where(both, (x - xb) / gap, 0.0)
    mean = np.where(has_b, e_logged[:, b], e_logged[:, a])
    mean = np.where(both, e_logged[:, b] + w * (e_logged[:, a] - e_logged[:, b]), mean)
    dist = np.where(both, (x - xb) * (xa - x) / gap, np.where(has_b, x - xb, xa - x))
    return mean, tau**2 * walk_power(dist, hurst), ~(has_b | has_a)


def hurst_draws(post: Posterior) -> np.ndarray | float:
    """The walk's Hurst exponent per draw ``(S, 1)``, or 1/2 when the spec has none."""
    if post.spec.likelihood.walk_hurst is None:
        return 0.5
    return post.draws("walk_hurst")[:, None]


def walk_draws(post: Posterior, table: pd.DataFrame, mu: np.ndarray, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """Shift and added variance of a random-walk residual per draw and row, ``(S, n)``.

    A row of a run with logged points in the fit starts from that run's residuals
    (observed loss minus the law at the run's own parameters, per draw) through
    :func:`walk_bridge`; any other row has the walk's marginal variance
    ``walk_start^2 + walk^2 |log D - log D_ref|^(2 walk_hurst)`` and no shift.  ``mu`` is
    the law's value at the rows (scales the variance with ``sigma_relative``).
    """
    tau, hurst = post.draws("walk")[:, None], hurst_draws(post)
    x = np.log(table[C.D].to_numpy(float))
    x_ref = float(np.log(post.spec.reference[C.D]))
    shift = np.zeros(mu.shape)
    marginal = walk_variance(np, x, x, 0.0, tau, post.draws("walk_start")[:, None], x_ref,
                             hurst)
    var = np.broadcast_to(marginal, mu.shape).copy()
    if C.RUN in table.columns:
        runs = table[C.RUN].astype(str).to_numpy()
        frame = post.data.frame
        logged = frame[frame[C.RUN].isin(pd.unique(runs))].reset_index(drop=True)
        e = logged[C.LOSS].to_numpy(float)[None, :] - mean_draws(post, logged, rng)
        x_logged = np.log(logged[C.D].to_numpy(float))
        for run, at in logged.groupby(C.RUN, sort=False).indices.items():
            rows = np.flatnonzero(runs == run)
            mean, v, alone = walk_bridge(x_logged[at], e[:, at], x[rows], tau, hurst)
            keep = rows[~alone]
            shift[:, keep], var[:, keep] = mean[:, ~alone], v[:, ~alone]
    return shift, relative_variance(var, mu) if post.spec.likelihood.sigma_relative else var


def walk_step_variance(post: Posterior, points: pd.DataFrame, mu: np.ndarray,
                       prev: np.ndarray, follows: np.ndarray, idx: np.ndarray | None = None
                       ) -> np.ndarray:
    """Variance the walk adds to each row given its run's previous row (the graph's).

    ``idx`` picks the posterior draws that the rows of ``mu`` stand for (default: all).
    """
    def per_draw(v: np.ndarray | float) -> np.ndarray | float:
        return v if np.ndim(v) == 0 or idx is None else v[idx]

    log_d = np.log(points[C.D].to_numpy(float))[None, :]
    return walk_variance(np, log_d, log_d[:, prev], follows,
                         per_draw(post.draws("walk")[:, None]),
                         per_draw(post.draws("walk_start")[:, None]),
                         float(np.log(post.spec.reference[C.D])), per_draw(hurst_draws(post)),
                         mu=mu if post.spec.likelihood.sigma_relative else None)


def forecast_terms(post: Posterior, points: pd.DataFrame, mu: np.ndarray, scale: np.ndarray,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of a forecast of each row, ``(S, n)`` each.

    Without a random walk: the law's value ``mu`` and the noise ``scale`` (an AR(1) model's
    marginal).  With a walk: shifted by the run's logged residuals and widened by the walk's
    variance (:func:`walk_draws`).
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

    The model's own factorization (:func:`bayeslaw.model.noise.conditional_terms`, as the PyMC
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

    The generative process of the PyMC graph (:func:`bayeslaw.model.noise.draw_curves`): noise
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
    mu = located_draws(post, points, rng)
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


def outlier_probability(post: Posterior, *, seed: int = 0) -> pd.DataFrame:
    """Each fitted point's posterior probability of lying in the contaminated normal's wide part.

    For a fit whose ``likelihood.family`` is ``"contaminated"``: per draw, the wide part's
    share of the point's density (``pi N(e; 0, (1 + k) s)`` over the mixture's, the point's
    location and scale as the model factorizes it), averaged over the draws.  Returns the
    fitted rows (``run``, ``D``, ``loss``) with ``residual`` (:func:`residuals`) and
    ``p_outlier``; a point near 1 is one the fit sets aside as an outlier.
    """
    lk = post.spec.likelihood
    if lk.family != "contaminated":
        raise ValueError(f"outlier_probability needs a fit whose likelihood.family is "
                         f"'contaminated'; this fit's is {lk.family!r}")
    frame = post.data.frame
    y = frame[C.LOSS].to_numpy(float)
    rng = np.random.default_rng(seed)
    mu = located_draws(post, frame, rng)
    loc, scale = sequential_terms(post, frame, y, mu, noise_scale_draws(post, frame, rng, mu))
    bulk, wide = contaminated_parts(np, (y[None, :] - loc) / scale, *family_draws(post))
    out = frame[[C.RUN, C.D, C.LOSS]].copy()
    out["residual"] = y - np.median(mu, axis=0)  # as residuals(): the law at its own run
    out["p_outlier"] = np.exp(wide - np.logaddexp(bulk, wide)).mean(axis=0)
    return out.reset_index(drop=True)


def predictive_draws(post: Posterior, points: pd.DataFrame, rng: np.random.Generator
                     ) -> np.ndarray:
    """New observed losses at ``points``, one per draw ``(S, n)``, as forecasts see them."""
    mu = located_draws(post, points, rng)
    loc, scale = forecast_terms(post, points, mu, noise_scale_draws(post, points, rng, mu), rng)
    return loc + noise(post, scale, rng)


def one_step_replicates(post: Posterior, rng: np.random.Generator
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Replicated observations, each given the observed previous point of its run.

    Returns ``(y_rep, loc, scale)``, each ``(S, n)`` over the fitted rows: the model's own
    factorization (with AR(1) or a walk, these one-step bands hold the walk's variance).
    """
    frame = post.data.frame
    mu = located_draws(post, frame, rng)
    loc, scale = sequential_terms(post, frame, frame[C.LOSS].to_numpy(float), mu,
                                  noise_scale_draws(post, frame, rng, mu))
    return loc + noise(post, scale, rng), loc, scale


def simulated_losses(post: Posterior, draw: int, rng: np.random.Generator) -> np.ndarray:
    """The fitted rows' losses simulated from one posterior draw, each run's curve jointly."""
    frame = post.data.frame
    mu_all = located_draws(post, frame, rng)
    scale = noise_scale_draws(post, frame, rng, mu_all)[draw]
    return simulate_curves(post, frame, mu_all[draw][None, :], scale[None, :], rng,
                           draw_index=np.array([draw]))[0]
