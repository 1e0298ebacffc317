"""Posterior predictions on any (N, D, T_m) table, evaluated in numpy from posterior draws.

The law is the same function as in the PyMC graph (``xp=numpy``), so predictions need
no recompilation.  Group effects are resolved per row:

* a row whose ``run`` was fitted uses that run's own posterior parameters;
* otherwise each group effect uses the fitted level's draws when the row's level was seen,
  and a fresh draw from the population (``sd * z``, ``z ~ N(0, 1)``) for a new level, one
  per new level and posterior draw - so bands for new N or T_m widen honestly.

Two kinds of band: ``epistemic`` (the law's value, parameter uncertainty only) and
``predictive`` (a new observed loss, noise included: the default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from . import constants as C
from .errors import DataError, FitFileError
from .plan import level_dim

if TYPE_CHECKING:  # pragma: no cover
    from .result import Fit


def _model_runs(fit: Fit) -> np.ndarray:
    """Runs in the model (the posterior's ``run`` dimension; held-out runs included)."""
    post = fit.idata.posterior
    return np.asarray(post.coords["run"].values) if "run" in post.coords else fit.data.runs


def _rows_runs(fit: Fit, table: pd.DataFrame) -> np.ndarray:
    """Index of each row's run in the model, or -1 for rows of new runs."""
    runs = {r: i for i, r in enumerate(_model_runs(fit))}
    if C.RUN not in table.columns:
        return np.full(len(table), -1)
    return np.array([runs.get(str(r), -1) for r in table[C.RUN]], dtype=int)


def _level_draws(fit: Fit, name: str, group: str, values: np.ndarray, sd: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    """Effect draws ``(S, n)`` for row levels ``values``; new levels from the population."""
    fitted = np.asarray(fit.idata.posterior[name][level_dim(group)].values)
    return _by_label(fitted.tolist(), fit.draws(name), values, sd, rng)


def _by_label(labels: list, eff: np.ndarray, values: np.ndarray, sd: np.ndarray,
              rng: np.random.Generator) -> np.ndarray:
    """Draws ``(S, n)`` of each row's level, looked up by label.

    Column ``labels.index(v)`` of ``eff`` for a row of level ``v``, or ``sd * z`` (one fresh
    ``z`` per new level and draw) for a level not in ``labels``.
    """
    out = np.empty((eff.shape[0], len(values)))
    lookup = {level: i for i, level in enumerate(labels)}
    for level in pd.unique(values):
        rows = values == level
        if level in lookup:
            out[:, rows] = eff[:, lookup[level]][:, None]
        else:
            out[:, rows] = (sd * rng.standard_normal(eff.shape[0]))[:, None]
    return out


def _group_values(fit: Fit, table: pd.DataFrame, group: str) -> np.ndarray:
    if group == C.RUN:
        if C.RUN not in table.columns:
            return np.array([f"new{i}" for i in range(len(table))], dtype=object)
        return table[C.RUN].astype(str).to_numpy()
    if group not in table.columns:
        raise DataError(f"the fit's spec varies a parameter by {group!r}: add a {group!r} "
                        "column to the prediction points")
    values = table[group].to_numpy()
    fitted = fit.data.frame[group].to_numpy()
    return values.astype(float) if fitted.dtype.kind in "fiu" else values.astype(str)


def parameter_draws(fit: Fit, table: pd.DataFrame, rng: np.random.Generator
                    ) -> dict[str, Any]:
    """Law parameters per row: arrays ``(S, n)``, ``(S, 1)`` or fixed floats."""
    spec, law = fit.spec, fit.spec.law_obj
    known = _rows_runs(fit, table)
    theta: dict[str, Any] = {}
    for p in law.params:
        if p.name in spec.fixed:
            theta[p.name] = spec.fixed[p.name]
            continue
        effects = [e for e in spec.effects if e.param == p.name]
        if not effects:
            theta[p.name] = fit.draws(p.name)[:, None]
            continue
        pop = fit.draws(p.name)[:, None]
        eta = np.log(pop) if p.link == "log" else pop
        eta = np.broadcast_to(eta, (len(pop), len(table))).copy()
        for e in effects:
            sd = (fit.draws(f"{e.name}_sd") if not isinstance(e.scale, float)
                  else np.full(len(pop), e.scale))
            eta += _level_draws(fit, e.name, e.group, _group_values(fit, table, e.group), sd,
                                rng)
        value = np.exp(eta) if p.link == "log" else eta
        if (known >= 0).any():
            value[:, known >= 0] = fit.draws(f"{p.name}_run")[:, known[known >= 0]]
        theta[p.name] = value
    return theta


def noise_scale_draws(fit: Fit, table: pd.DataFrame, rng: np.random.Generator,
                      mu: np.ndarray) -> np.ndarray:
    """Marginal noise scale per draw and row, ``(S, n)``, given the law's value ``mu``.

    New runs / levels draw theirs from the population; with ``sigma_decay`` the scale falls
    as ``(D / D_ref) ** -sigma_decay``; with ``sigma_relative`` it is a fraction of ``mu``
    (the draws of :func:`mean_draws` on the same rows).
    """
    lk = fit.spec.likelihood
    scale = _base_scale(fit, table, rng)
    if lk.sigma_decay is not None:
        d = table[C.D].to_numpy(float)[None, :] / fit.spec.reference[C.D]
        scale = scale * np.exp(-fit.draws("sigma_decay")[:, None] * np.log(d))
    if lk.sigma_relative:
        scale = scale * mu
    return scale


def _base_scale(fit: Fit, table: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """``sigma`` times each row's level deviation ``exp(sigma_log_dev)``, ``(S, n)``.

    The deviations are looked up by level label in the posterior's own coordinates (the
    model's levels, held-out runs included), never by position in the fitted data: a
    training part's runs are a subset of the model's, in another order.
    """
    lk = fit.spec.likelihood
    sigma = fit.draws("sigma")[:, None]
    if lk.sigma_by is None:
        return np.broadcast_to(sigma, (len(sigma), len(table)))
    values = _group_values(fit, table, lk.sigma_by)
    spread = fit.draws("sigma_spread")
    if "sigma_log_dev" in fit.idata.posterior:
        return sigma * np.exp(_level_draws(fit, "sigma_log_dev", lk.sigma_by, values, spread,
                                           rng))
    # a fit saved before the deviations were stored: only per-run scales, by run label
    if lk.sigma_by != C.RUN:
        raise FitFileError("this fit file predates the per-level noise deviations "
                           "('sigma_log_dev') that a noise scale by "
                           f"{lk.sigma_by!r} needs: refit with this version of bayeslaw")
    dev = np.log(fit.draws("sigma_run") / sigma)
    return sigma * np.exp(_by_label(_model_runs(fit).tolist(), dev, values, spread, rng))


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
    from .kernel import walk_power

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


def hurst_draws(fit: Fit) -> np.ndarray | float:
    """The walk's Hurst exponent per draw ``(S, 1)``, or 1/2 when the spec has none."""
    return fit.draws("walk_hurst")[:, None] if fit.spec.likelihood.walk_hurst is not None else 0.5


def walk_draws(fit: Fit, table: pd.DataFrame, mu: np.ndarray, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """Shift and added variance of a random-walk residual per draw and row, ``(S, n)``.

    A row of a run with logged points in the fit starts from that run's residuals
    (observed loss minus the law at the run's own parameters, per draw) through
    :func:`walk_bridge`; any other row has the walk's marginal variance
    ``walk_start^2 + walk^2 |log D - log D_ref|^(2 walk_hurst)`` and no shift.  ``mu`` is
    the law's value at the rows (scales the variance with ``sigma_relative``).
    """
    from .kernel import walk_power

    tau, hurst = fit.draws("walk")[:, None], hurst_draws(fit)
    x = np.log(table[C.D].to_numpy(float))
    x_ref = float(np.log(fit.spec.reference[C.D]))
    shift = np.zeros(mu.shape)
    var = np.broadcast_to(fit.draws("walk_start")[:, None] ** 2
                          + tau**2 * walk_power(np.abs(x - x_ref), hurst), mu.shape).copy()
    if C.RUN in table.columns:
        runs = table[C.RUN].astype(str).to_numpy()
        frame = fit.data.frame
        logged = frame[frame[C.RUN].isin(pd.unique(runs))].reset_index(drop=True)
        e = logged[C.LOSS].to_numpy(float)[None, :] - mean_draws(fit, logged, rng)
        x_logged = np.log(logged[C.D].to_numpy(float))
        for run, at in logged.groupby(C.RUN, sort=False).indices.items():
            rows = np.flatnonzero(runs == run)
            mean, v, alone = walk_bridge(x_logged[at], e[:, at], x[rows], tau, hurst)
            keep = rows[~alone]
            shift[:, keep], var[:, keep] = mean[:, ~alone], v[:, ~alone]
    if fit.spec.likelihood.sigma_relative:
        var = var * mu**2
    return shift, var


def mean_draws(fit: Fit, table: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """The law's value per posterior draw and row, ``(S, n)``."""
    law = fit.spec.law_obj
    missing = [c for c in law.covariates if c not in table.columns]
    if missing:
        raise DataError(f"prediction points lack column(s) {missing} needed by law "
                        f"{law.name!r}")
    cov = {c: table[c].to_numpy(dtype=float)[None, :] for c in law.covariates}
    theta = parameter_draws(fit, table, rng)
    mu = np.asarray(law(np, cov, theta, fit.spec.reference), dtype=float)
    return np.broadcast_to(mu, (fit.n_draws, len(table)))


def noise(fit: Fit, scale: np.ndarray, rng: np.random.Generator,
           draw_index: np.ndarray | None = None) -> np.ndarray:
    """Observation noise with per-draw ``scale``; ``draw_index`` maps rows to posterior draws."""
    if fit.spec.likelihood.family == "student_t":
        nu = fit.draws("nu")
        nu = (nu if draw_index is None else nu[draw_index])[:, None]
        return scale * rng.standard_t(np.broadcast_to(nu, scale.shape))
    return scale * rng.standard_normal(scale.shape)


def log_density(fit: Fit, y: np.ndarray, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The likelihood's log density per draw, ``(S, n)``.

    ``y`` is shared by all draws ``(n,)`` or has one row per draw ``(S, n)`` (replicated data).
    """
    y = np.asarray(y, float)
    y = y[None, :] if y.ndim == 1 else y
    # written out rather than scipy.stats' logpdf, which evaluates both gammaln terms at
    # every point after broadcasting nu (S, n): here they are one constant per draw
    z = (y - mu) / scale
    log_scale = np.log(scale)
    if fit.spec.likelihood.family == "student_t":
        nu = np.asarray(fit.draws("nu"), float)[:, None]
        const = special.gammaln((nu + 1.0) / 2.0) - special.gammaln(nu / 2.0) \
            - 0.5 * np.log(nu * np.pi)
        return const - log_scale - (nu + 1.0) / 2.0 * np.log1p(z * z / nu)
    return -0.5 * np.log(2.0 * np.pi) - log_scale - 0.5 * z * z


def log_likelihood(fit: Fit, points: pd.DataFrame, *, seed: int = 0,
                   conditional: bool = False) -> np.ndarray:
    """Log density of the ``loss`` at ``points`` under every draw, ``(S, n)``.

    Rows of new runs or levels use population draws (seeded), as in :func:`predict`.  With
    an AR(1) noise model or a random-walk residual, ``conditional=True`` conditions each
    point on the previous row of its run in ``points`` (the model's own likelihood: rows
    sorted by run, then D; :func:`sequential_terms`); the default scores each point as
    :func:`predict` forecasts it: by its marginal density under AR(1) (conservative next to
    the logged curve), and from its run's logged residuals under a walk
    (:func:`walk_draws`).
    """
    rng = np.random.default_rng(seed)
    y = points[C.LOSS].to_numpy(float)
    mu = mean_draws(fit, points, rng)
    scale = noise_scale_draws(fit, points, rng, mu)
    if conditional:
        loc, scale = sequential_terms(fit, points, y, mu, scale)
    else:
        loc, scale = forecast_terms(fit, points, mu, scale, rng)
    return log_density(fit, y, loc, scale)


def forecast_terms(fit: Fit, points: pd.DataFrame, mu: np.ndarray, scale: np.ndarray,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of a forecast of each row, ``(S, n)`` each.

    Without a random walk: the law's value ``mu`` and the noise ``scale`` (an AR(1) model's
    marginal).  With a walk: shifted by the run's logged residuals and widened by the walk's
    variance (:func:`walk_draws`).
    """
    if fit.spec.likelihood.walk is None:
        return mu, scale
    shift, var = walk_draws(fit, points, mu, rng)
    return mu + shift, np.sqrt(scale**2 + var)


def _walk_step_variance(fit: Fit, points: pd.DataFrame, mu: np.ndarray, prev: np.ndarray,
                        follows: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """Variance the walk adds to each row given its run's previous row (the graph's).

    ``idx`` picks the posterior draws that the rows of ``mu`` stand for (default: all).
    """
    from .kernel import walk_variance

    def per_draw(v: np.ndarray | float) -> np.ndarray | float:
        return v if np.ndim(v) == 0 or idx is None else v[idx]

    log_d = np.log(points[C.D].to_numpy(float))[None, :]
    var = walk_variance(np, log_d, log_d[:, prev], follows, per_draw(fit.draws("walk")[:, None]),
                        per_draw(fit.draws("walk_start")[:, None]),
                        float(np.log(fit.spec.reference[C.D])), per_draw(hurst_draws(fit)))
    return var * mu**2 if fit.spec.likelihood.sigma_relative else var


def _previous(points: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Previous row of each row's run and the ``(1, n)`` flag of rows that follow one."""
    from .kernel import previous_rows

    runs = points[C.RUN].to_numpy() if C.RUN in points.columns else np.zeros(len(points))
    prev, first = previous_rows(runs)
    return prev, (1.0 - first)[None, :]


def sequential_terms(fit: Fit, points: pd.DataFrame, y: np.ndarray, mu: np.ndarray,
                     scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of each row given the previous row's loss ``y`` in its run.

    The model's own factorization (as the PyMC graph writes it), for ``points`` sorted by
    run then D; ``y`` is ``(n,)`` or one row per draw ``(S, n)``.  AR(1):
    ``mu_i + ar1 s_i / s_(i-1) (y_(i-1) - mu_(i-1))`` and ``s_i sqrt(1 - ar1^2)``; a walk:
    ``mu_i + (y_(i-1) - mu_(i-1))`` and ``sqrt(s_i^2 + walk variance)``; a run's first row
    its marginal.  Without either, ``mu`` and ``scale`` unchanged.
    """
    lk = fit.spec.likelihood
    if lk.ar1 is None and lk.walk is None:
        return mu, scale
    y = np.asarray(y, float)
    prev, follows = _previous(points)
    resid = y[..., prev] - mu[:, prev]
    if lk.ar1 is not None:
        phi = fit.draws("ar1")[:, None]
        return (mu + follows * phi * scale / scale[:, prev] * resid,
                scale * np.sqrt(1.0 - follows * phi**2))
    var = _walk_step_variance(fit, points, mu, prev, follows)
    return mu + follows * resid, np.sqrt(scale**2 + var)


def simulate_curves(fit: Fit, points: pd.DataFrame, mu: np.ndarray, scale: np.ndarray,
                    rng: np.random.Generator, draw_index: np.ndarray | None = None
                    ) -> np.ndarray:
    """New losses at ``points`` (sorted by run then D), each run's curve drawn jointly.

    The generative process of the PyMC graph: noise of scale ``scale`` around the law's
    value ``mu`` (``(S, n)``), whose standardised residuals follow an AR(1) along a run, or
    whose residual accumulates as a random walk from the run's previous point.  ``draw_index``
    maps rows of ``mu`` to posterior draws (default: row ``s`` is draw ``s``).
    """
    lk = fit.spec.likelihood
    idx = np.arange(len(mu)) if draw_index is None else np.asarray(draw_index)
    z = noise(fit, np.ones_like(scale), rng, draw_index=idx)
    if lk.ar1 is None and lk.walk is None:
        return mu + scale * z
    prev, follows = _previous(points)
    first = follows[0] == 0.0
    if lk.ar1 is not None:
        phi = fit.draws("ar1")[idx][:, None]
        step = scale * np.sqrt(1.0 - phi**2 * follows)
    else:
        step = np.sqrt(scale**2 + _walk_step_variance(fit, points, mu, prev, follows, idx))
    resid = np.empty_like(mu)
    for i in range(len(points)):  # sequential along each run; a run's first row: marginal
        carried = 0.0
        if not first[i]:
            carried = resid[:, prev[i]] * (phi[:, 0] * scale[:, i] / scale[:, prev[i]]
                                           if lk.ar1 is not None else 1.0)
        resid[:, i] = carried + step[:, i] * z[:, i]
    return mu + resid


def pointwise_log_likelihood(fit: Fit) -> np.ndarray:
    """Log density of every observation under every draw, ``(S, n)`` (the model's own)."""
    return log_likelihood(fit, fit.data.frame, conditional=True)


def residuals(fit: Fit, *, seed: int = 0) -> np.ndarray:
    """Observed loss minus the posterior median of the law at every observation, ``(n,)``.

    Each observation is compared with the law at its own run's parameters (epistemic).
    """
    frame = fit.data.frame
    median = np.median(mean_draws(fit, frame, np.random.default_rng(seed)), axis=0)
    return frame[C.LOSS].to_numpy(float) - median


