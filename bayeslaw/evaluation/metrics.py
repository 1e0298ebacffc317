"""Forecast scores on held-out points: R^2, MAE, MAPE, band coverage, CRPS, log density.

Pure numpy / scipy; every function takes observed values and either point forecasts,
band bounds or predictive draws ``(S, n)``.  NSL-PFN's three scores of one forecast curve
(RMSLE, LL, MSCE; Lee et al. 2025) are :func:`rmsle`, :func:`msce` and :func:`curve_scores`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import ArgumentError
from ..posterior.noise import pointwise_lpd

#: The central levels of NSL-PFN's calibration error (MSCE): its ``bardist_calibration``.
MSCE_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


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


def log_predictive_density(loglik: np.ndarray) -> float:
    """Mean over points of ``log mean_s p(y_i | theta_s)`` from a ``(S, n)`` log-likelihood."""
    return float(np.mean(pointwise_lpd(loglik)))


# ---------------------------------------------------------------------------------------------
# NSL-PFN's scores of one forecast curve (Lee et al. 2025, its inference.py)


def _targets(name: str, values: object, n: int | None = None, *, positive: bool = False
             ) -> np.ndarray:
    """``values`` as a 1-d float array of length ``n``, refused with a message naming it."""
    arr = np.asarray(values, float)
    if arr.ndim != 1 or (n is not None and len(arr) != n):
        want = "a 1-d array" if n is None else f"one value per target ({n})"
        raise ArgumentError(f"{name} has shape {arr.shape}; expected {want}")
    if np.isnan(arr).any():
        raise ArgumentError(f"{name} holds NaN at positions {np.flatnonzero(np.isnan(arr))}")
    if positive and not (arr > 0).all():
        bad = np.flatnonzero(~(arr > 0))
        raise ArgumentError(f"{name} must be positive (its log is taken); got "
                            f"{arr[bad].tolist()} at positions {bad.tolist()}")
    return arr


def _draws(draws: object, n: int) -> np.ndarray:
    """Predictive draws ``(S, n)`` of ``n`` targets, refused with a message naming them."""
    arr = np.asarray(draws, float)
    if arr.ndim != 2 or arr.shape[1] != n or arr.shape[0] == 0:
        raise ArgumentError(f"draws has shape {arr.shape}; expected (draws, targets) with "
                            f"{n} targets, one column per value of y")
    if not np.isfinite(arr).all():
        raise ArgumentError("draws holds non-finite values")
    return arr


def _levels(levels: Sequence[float]) -> tuple[float, ...]:
    levels = tuple(float(c) for c in levels)
    if not levels or not all(0 < c < 1 for c in levels):
        raise ArgumentError(f"levels must be central probabilities in (0, 1), got {levels}")
    return levels


def rmsle(median: np.ndarray, y: np.ndarray) -> float:
    """Root mean squared log error of a point forecast: ``sqrt(mean((log m_i - log y_i)^2))``.

    Natural logarithm, as NSL-PFN's ``get_metric``; ``median`` (the predictive median) and
    ``y`` must be positive and of the same length.
    """
    y = _targets("y", y, positive=True)
    median = _targets("median", median, len(y), positive=True)
    return float(np.sqrt(np.mean((np.log(median) - np.log(y)) ** 2)))


def central_bounds(draws: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of the central ``level`` interval of draws ``(S, n)``, per column.

    The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles by numpy's default method
    (``"linear"``: the quantile ``q`` of sorted draws ``v_0 <= ... <= v_{S-1}`` interpolates
    at index ``q (S - 1)``), as :func:`bayeslaw.posterior.prediction.summarise` makes bands.
    """
    (level,) = _levels((level,))
    lower, upper = np.quantile(np.asarray(draws, float), [(1 - level) / 2, (1 + level) / 2],
                               axis=0)
    return lower, upper


def msce_of_bands(y: np.ndarray, bands: Mapping[float, tuple[np.ndarray, np.ndarray]]) -> float:
    """Mean squared calibration error from central bands ``{level: (lower, upper)}``.

    ``mean over c of (coverage_c - c)^2``, ``coverage_c`` the share of ``y`` inside
    ``[lower, upper]`` (bounds included).
    """
    y = _targets("y", y)
    errors = []
    for level in _levels(tuple(bands)):
        lower, upper = bands[level]
        lower = _targets(f"bands[{level}] lower", lower, len(y))
        upper = _targets(f"bands[{level}] upper", upper, len(y))
        errors.append((np.mean((y >= lower) & (y <= upper)) - level) ** 2)
    return float(np.mean(errors))


def msce(draws: np.ndarray, y: np.ndarray, levels: Sequence[float] = MSCE_LEVELS) -> float:
    """Mean squared calibration error of predictive draws ``(S, n)`` at central ``levels``.

    ``mean over c in levels of (coverage_c - c)^2``, ``coverage_c`` the share of ``y`` inside
    the central ``c`` interval of its column's draws, bounds included; the bounds are
    :func:`central_bounds`' (numpy's default linear quantiles).  NSL-PFN's levels by default.
    """
    y = _targets("y", y)
    draws = _draws(draws, len(y))
    return msce_of_bands(y, {c: central_bounds(draws, c) for c in _levels(levels)})


@dataclass(frozen=True)
class CurveScores:
    """NSL-PFN's three scores of one curve's forecast of its ``n`` targets.

    ``ll`` is on the scale ``y / y_scale`` (:func:`curve_scores`).
    """

    rmsle: float
    ll: float
    msce: float
    n: int


def curve_scores(y: np.ndarray, log_density: np.ndarray, *, draws: np.ndarray | None = None,
                 median: np.ndarray | None = None,
                 bands: Mapping[float, tuple[np.ndarray, np.ndarray]] | None = None,
                 y_scale: float = 1.0, levels: Sequence[float] = MSCE_LEVELS) -> CurveScores:
    """RMSLE, LL and MSCE of one curve's forecast, following NSL-PFN's protocol.

    Parameters
    ----------
    y : array
        The curve's observed targets (positive), on the scale of ``log_density``.
    log_density : array
        The log predictive density of each target, on that same scale.
    draws : array (S, n), optional
        Predictive draws: the median and the central bands at ``levels`` come from them.
    median, bands : optional
        Instead of ``draws``: the predictive median and ``{level: (lower, upper)}``.
    y_scale : float
        The protocol's divisor of ``y`` (NSL-PFN's; ``curves.csv`` of its benchmark): the LL
        is the mean log density of ``y / y_scale``, ``mean(log_density) + log(y_scale)``.
        Pass 1 when ``y`` and ``log_density`` are already on that scale.
    levels : sequence of float
        The MSCE's central levels when computed from ``draws``.

    Returns
    -------
    CurveScores
        RMSLE of the median and MSCE are the same on either scale.
    """
    y = _targets("y", y, positive=True)
    log_density = _targets("log_density", log_density, len(y))
    if not (np.isfinite(y_scale) and y_scale > 0):
        raise ArgumentError(f"y_scale must be a positive number, got {y_scale!r}")
    if (draws is None) == (median is None and bands is None) or (
            draws is None and (median is None or bands is None)):
        raise ArgumentError("give either draws, or both median and bands: got "
                            f"draws={draws is not None}, median={median is not None}, "
                            f"bands={bands is not None}")
    if draws is not None:
        draws = _draws(draws, len(y))
        median = np.median(draws, axis=0)
        bands = {c: central_bounds(draws, c) for c in _levels(levels)}
    ll = float(np.mean(log_density)) + float(np.log(y_scale))
    return CurveScores(rmsle(median, y), ll, msce_of_bands(y, bands), len(y))
