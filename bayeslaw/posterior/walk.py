"""The random-walk residual on the numpy side: a fitted run's forecast starts from its curve.

With ``likelihood.walk`` a run's residual (loss minus the law) drifts as a random walk in
log D.  A forecast of a fitted run is conditioned on that run's logged residuals
(:func:`walk_bridge`); any other row has the walk's marginal variance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import constants as C
from ..model.arithmetic import relative_variance, walk_power, walk_variance
from .draws import Posterior, mean_draws


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
