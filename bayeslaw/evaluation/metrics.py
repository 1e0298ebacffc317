"""Forecast scores on held-out points: R^2, MAE, MAPE, band coverage, CRPS, log density.

Pure numpy / scipy; every function takes observed values and either point forecasts,
band bounds or predictive draws ``(S, n)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats


def r2(y: np.ndarray, pred: np.ndarray) -> float:
    """Coefficient of determination ``1 - SS_res / SS_tot``.

    Not defined when the observations have no spread (``SS_tot = 0``: one point, or all
    equal): NaN then, without numpy's divide-by-zero warning (a backtest says so in its
    notes, :func:`bayeslaw.evaluation.scoring.table_notes`).
    """
    y, pred = np.asarray(y, float), np.asarray(pred, float)
    ss_tot = float(np.sum((y - y.mean()) ** 2)) if len(y) else 0.0
    if ss_tot == 0.0:
        return float("nan")
    return float(1.0 - np.sum((y - pred) ** 2) / ss_tot)


def mae(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean absolute error."""
    return float(np.mean(np.abs(np.asarray(y, float) - np.asarray(pred, float))))


def mape(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean absolute percentage error, as a fraction (0.01 = 1%)."""
    y = np.asarray(y, float)
    return float(np.mean(np.abs(y - np.asarray(pred, float)) / np.abs(y)))


@dataclass(frozen=True)
class Coverage:
    """Empirical coverage of a band with its Clopper-Pearson interval (95% by default).

    ``inside`` counts points (:func:`coverage`) or sums each curve's share of points inside
    (:func:`coverage_by_curve`, where ``n`` counts curves).
    """

    nominal: float
    inside: float
    n: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        """Fraction of points inside the band."""
        return self.inside / self.n

    @property
    def consistent(self) -> bool:
        """Whether the nominal rate lies in the interval of the empirical one."""
        return self.low <= self.nominal <= self.high


def clopper_pearson(k: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson interval of a proportion ``k / n`` through its beta quantiles.

    Exact for whole ``k``; a fractional ``k`` (a sum of per-curve shares) interpolates.
    """
    tail = (1 - confidence) / 2
    low = 0.0 if k <= 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k >= n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return low, high


def coverage(y: np.ndarray, lower: np.ndarray, upper: np.ndarray, nominal: float, *,
             confidence: float = 0.95) -> Coverage:
    """How many observations fall inside ``[lower, upper]``, with a binomial interval.

    The interval is Clopper-Pearson's exact one at level ``confidence``.
    """
    y = np.asarray(y, float)
    inside = int(np.sum((y >= lower) & (y <= upper)))
    return Coverage(nominal, inside, len(y), *clopper_pearson(inside, len(y), confidence))


def coverage_by_curve(y: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                      curves: np.ndarray, nominal: float, *, confidence: float = 0.95
                      ) -> Coverage:
    """Coverage with each curve counted once: the interval if a curve were one observation.

    Points of one curve are correlated (a forecast that misses one point tends to miss its
    neighbours), so the binomial interval of :func:`coverage` overstates the evidence when
    few curves are held out. Here each curve contributes the share of its points inside the
    band, ``inside`` is the sum of the shares, ``n`` the number of curves, and the interval is
    :func:`clopper_pearson`'s on those.
    That is exact when a curve is wholly inside or outside the band, and conservative
    otherwise.
    """
    y = np.asarray(y, float)
    hit = (y >= lower) & (y <= upper)
    _, codes = np.unique(np.asarray(curves), return_inverse=True)
    shares = np.bincount(codes, weights=hit) / np.bincount(codes)
    k, n = float(shares.sum()), len(shares)
    return Coverage(nominal, k, n, *clopper_pearson(k, n, confidence))


def crps(y: np.ndarray, draws: np.ndarray) -> float:
    """Mean continuous ranked probability score of predictive draws ``(S, n)``.

    Uses ``CRPS = E|X - y| - E|X - X'| / 2`` with the sorted-sample identity for the second
    term (exact for the empirical distribution of the draws).
    """
    y = np.asarray(y, float)
    x = np.sort(np.asarray(draws, float), axis=0)
    s = x.shape[0]
    term1 = np.mean(np.abs(x - y[None, :]), axis=0)
    weights = (2 * np.arange(1, s + 1) - s - 1) / (s * s)
    term2 = np.sum(weights[:, None] * x, axis=0)  # = E|X - X'| / 2
    return float(np.mean(term1 - term2))


def pit(y: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Probability integral transform of each observation under its predictive draws ``(S, n)``.

    ``P(X < y) + P(X = y) / 2`` under the empirical distribution of the draws: uniform on
    (0, 1) when the observations come from the predictive distribution.
    """
    y = np.asarray(y, float)[None, :]
    draws = np.asarray(draws, float)
    return np.mean(draws < y, axis=0) + 0.5 * np.mean(draws == y, axis=0)


def pointwise_lpd(loglik: np.ndarray) -> np.ndarray:
    """``log mean_s p(y_i | theta_s)`` per point from a ``(S, n)`` log-likelihood."""
    loglik = np.asarray(loglik, float)
    return special.logsumexp(loglik, axis=0) - np.log(loglik.shape[0])


def log_predictive_density(loglik: np.ndarray) -> float:
    """Mean over points of ``log mean_s p(y_i | theta_s)`` from a ``(S, n)`` log-likelihood."""
    return float(np.mean(pointwise_lpd(loglik)))
