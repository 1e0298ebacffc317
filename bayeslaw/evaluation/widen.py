"""Bands widened with how far a forecast reaches past its curve's data, learned on an inner split.

A law that is wrong about how a curve ends misses its far targets by more than its near ones,
and a posterior conditioned on that law cannot know it: its bands are as narrow at twice the
logged tokens as at the last logged point.  A :class:`Widening` spreads each forecast's
predictive draws around their median by a factor that grows with the distance ``d`` past the
run's last fitted point, in e-folds of D (``d = max(0, log(D / D_last))``)::

    k(d) = scale * (1 + rate * d),      y' = m + k(d) (y - m)

(``m`` the point's predictive median).  With ``per_span=True`` the distance is measured in
units of the run's own fitted span instead, ``d = max(0, log(D / D_last)) / log(D_last /
D_first)``: a forecast that reaches one span past a curve's data widens as much whether the
curve was logged over one decade or three.  The widened forecast is an exact distribution with a
density, so a log score stays a log score: ``p'(y) = p(m + (y - m) / k) / k``, ``p`` the
model's predictive density (the mixture over posterior draws,
:func:`bayeslaw.posterior.noise.predictive_log_density`).

``scale`` and ``rate`` are learned from an inner split of the data a fit already has (for a
forecast of runs in progress, ``prefix:0.5``: each curve's first half fitted, its second half
forecast): they maximize the mean log predictive density of the inner held-out points, a
proper scoring rule, so they widen a band only as far as the inner misses ask and narrow one
that is too wide.  No held-out point of the outer forecast is read.  It calibrates the outer
forecast as far as its curves miss the law the way their own inner parts did, with the miss
growing linearly in log D; the forecast quality pages say where that was measured.  Two
calibration criteria learn the pair on a grid instead (:meth:`Widening.learn`): ``"msce"``,
NSL-PFN's per-curve calibration error, and ``"coverage"``, each level's coverage averaged over
runs.

With ``tail = a > 0`` the spread also changes the forecast's shape: each draw's distance from
the median is first mapped by ``T(u) = s sinh(a u / s) / sinh(a)`` (``s`` the distance from the
median to the point's 25% quantile below it and to its 75% quantile above it; the sinh-arcsinh
family of Jones and Pewsey 2009), which keeps the 50% band and stretches the tails, so that the
outer bands widen more than the inner ones::

    y' = m + k(d) T(y - m)

Every band maps exactly (``T`` is increasing), and the density stays exact:
``p'(y) = p(m + u) / (k T'(u))`` with ``u = T^-1((y - m) / k)``.

Beside it, :class:`~bayeslaw.evaluation.backtesting.Recalibration` (quantile recalibration)
maps levels without regard to distance and gives no density.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import optimize

from .. import constants as C
from ..errors import ArgumentError
from .metrics import MSCE_LEVELS, central_bounds

if TYPE_CHECKING:
    from ..data.table import LossData
    from ..posterior.prediction import Prediction
    from ..posterior.result import Fit
    from ..spec.model_spec import ModelSpec


@dataclass(frozen=True)
class Widening:
    """Predictive bands widened by ``scale * (1 + rate * d)`` (see the module docstring).

    Attributes
    ----------
    scale : float
        The factor at the run's last fitted point (``d = 0``).
    rate : float
        Its growth per e-fold of D past that point (``rate >= 0``).
    source : str
        What it was learned from (the inner split).
    n_points : int
        How many inner held-out points it was learned from.
    lpd_before, lpd_after : float
        Their mean log predictive density under the fit's own forecast and widened.
    max_rhat, divergences :
        Convergence of the inner fit.
    per_span : bool
        Whether ``d`` is in units of the run's fitted span in log D (else in e-folds of D).
    criterion : str
        What it was learned for: ``"lpd"``, ``"msce"`` or ``"coverage"`` (:meth:`learn`).
    tail : float
        The tails' stretch ``a >= 0`` (0: every band widened by the same factor; see the
        module docstring).
    """

    scale: float
    rate: float
    source: str = ""
    n_points: int = 0
    lpd_before: float = np.nan
    lpd_after: float = np.nan
    max_rhat: float = np.nan
    divergences: int = 0
    per_span: bool = False
    criterion: str = "lpd"
    tail: float = 0.0

    def __post_init__(self) -> None:
        if not (np.isfinite(self.tail) and self.tail >= 0):
            raise ArgumentError(f"a widening's tail must be a finite number >= 0, got "
                                f"{self.tail!r}")

    def factor(self, distance: np.ndarray) -> np.ndarray:
        """``k(d)`` at distances ``d`` (e-folds of D past the last fitted point; 0 before it)."""
        return self.scale * (1.0 + self.rate * np.maximum(np.asarray(distance, float), 0.0))

    def apply(self, fit: Fit, pred: Prediction) -> Prediction:
        """``pred`` (a predictive forecast of ``fit``'s runs) with widened draws and bands."""
        from ..posterior.prediction import band_tag, summarise

        if pred.kind != "predictive":
            raise ArgumentError(f"a widening spreads predictive forecasts; got "
                                f"kind={pred.kind!r}: predict with kind='predictive'")
        k = self.factor(distances(fit, pred.table, self.per_span))
        centre = np.median(pred.draws, axis=0)
        sides = _sides(np.array(central_bounds(pred.draws, 0.5)), centre)
        summary = {"median"} | {f"{side}_{band_tag(p)}" for p in pred.probs
                                for side in ("lower", "upper")}
        points = pred.table.drop(columns=[c for c in pred.table.columns if c in summary])
        spread = stretch(pred.draws - centre, sides, self.tail)
        return summarise(points, centre + k * spread, pred.kind, pred.probs,
                         **{**pred.attrs, "widened": (self.scale, self.rate, self.tail)})

    def log_density(self, fit: Fit, points: pd.DataFrame, *, seed: int = 0) -> np.ndarray:
        """The widened forecast's log density of each point's observed ``loss`` (exact).

        ``m`` is the median of the predictive draws :func:`bayeslaw.predict` makes with the
        same ``seed``.
        """
        terms = _Terms.of(fit, points, seed)
        return terms.lpd(self.factor(distances(fit, points, self.per_span)), self.tail)

    @classmethod
    def learn(cls, fit: Fit | Sequence[Fit], points: pd.DataFrame | Sequence[pd.DataFrame], *,
              seed: int = 0, source: str = "", per_span: bool = False,
              criterion: str = "lpd", tails: bool = False) -> Widening:
        """The widening that best forecasts ``points`` (held out of ``fit``).

        ``points`` are later points of ``fit``'s runs with their observed ``loss``.  Given
        several fits (curves fitted one at a time) and their points, in the same order, one
        widening is learned for all.  ``criterion``:

        - ``"lpd"`` (the default): the mean log predictive density over all the points, a
          proper scoring rule; the optimum over ``(log scale, log rate)`` is found by
          Nelder-Mead from ``(1, 1)``, and a rate below 1e-6 is reported as 0.
        - ``"msce"``: the mean over runs of each run's calibration error (its bands' coverage
          against their levels, :data:`~bayeslaw.evaluation.metrics.MSCE_LEVELS`), the
          calibration NSL-PFN's benchmark scores per curve.  It is a step function, so the
          optimum is searched on a grid (:data:`MSCE_SCALES` x :data:`MSCE_RATES`), ties
          broken by the mean log density.  Not a proper scoring rule: it asks for bands that
          cover each run's points at their levels, and gives up log density for that.
          With few points a run, it is least when the bands cover every point (a run's
          points all inside or all outside a band cost ``(1 - c)^2`` or ``c^2`` at level
          ``c >= 0.5``): it over-covers.
        - ``"coverage"``: the share of a run's points inside each level's band, averaged over
          runs (every run weighs the same); then the squared gap between that mean share and
          the level, summed over the levels: bands whose per-run coverage is right on average
          at each level, the calibration a coverage test over runs checks.  On the same
          grid, ties by the mean log density.  Not a proper scoring rule either.  Like msce,
          it sees a run's points at all distances together: it calibrates their mixture, and
          ``scale`` and ``rate`` are told apart only through the coverage's shape across
          levels (and the runs' different reaches), so nearby pairs may score alike.

        ``tails=True`` also learns the tails' stretch ``tail`` (the module docstring): on the
        grid criteria over :data:`TAILS`, with lpd as a third coordinate (``sqrt(tail)``,
        from 0.5).  Without it the tail is 0, every band widened alike.
        """
        fits = list(fit) if isinstance(fit, Sequence) else [fit]
        tables = list(points) if isinstance(points, Sequence) else [points]
        if not fits or len(fits) != len(tables):
            raise ArgumentError(f"a widening is learned from fits and their held-out points, "
                                f"one table per fit: got {len(fits)} fit(s) and "
                                f"{len(tables)} table(s)")
        if criterion not in CRITERIA:
            raise ArgumentError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
        terms = [_Terms.of(f, t, seed) for f, t in zip(fits, tables, strict=True)]
        d = [distances(f, t, per_span) for f, t in zip(fits, tables, strict=True)]

        def mean_lpd(scale: float, rate: float, tail: float = 0.0) -> float:
            return float(np.mean(np.concatenate([t.lpd(scale * (1.0 + rate * x), tail)
                                                 for t, x in zip(terms, d, strict=True)])))

        if criterion == "lpd":
            scale, rate, tail = _most_lpd(mean_lpd, tails)
        else:
            scale, rate, tail = _least_on_grid(terms, d, mean_lpd, criterion,
                                               TAILS if tails else (0.0,))
        diagnostics = [getattr(f, "diagnostics", None) for f in fits]
        rhats = [r for g in diagnostics if np.isfinite(r := getattr(g, "max_rhat", np.nan))]
        return cls(scale, rate, source, sum(len(t) for t in tables), mean_lpd(1.0, 0.0),
                   mean_lpd(scale, rate, tail), max(rhats) if rhats else np.nan,
                   sum(int(getattr(g, "divergences", 0)) for g in diagnostics), per_span,
                   criterion, tail)


#: What :meth:`Widening.learn` can maximize or minimize.
CRITERIA = ("lpd", "msce", "coverage")
#: The grid of ``criterion="msce"`` and ``"coverage"``: scales from 0.1 to 8 (about 4% apart)
#: and rates from 0 and 0.05 to 500 per unit of distance (about 12% apart).  Each edge was
#: moved when a selection split learned it, before any other data set used the grid: scales
#: from 0.5 at first (IC's msce split learned 0.5), rates to 50 at first (DD's coverage split
#: learned 50; the points up to 50 are unchanged).
MSCE_SCALES = np.exp(np.linspace(np.log(0.1), np.log(8.0), 111))
MSCE_RATES = np.concatenate([[0.0], np.exp(np.linspace(np.log(0.05), np.log(500.0), 81))])
#: The tails' stretches the grid criteria try with ``tails=True``.  Against its 50% band, a
#: normal forecast's 90% band widens 1.03 times as much at 0.2, 1.22 times at 0.5, twice at
#: 1 and 3.7 times at 1.5 (its 99% band 1.09, 1.66, 5.1 and 19 times;
#: benchmarks/results/widen_tails_2026-12-06/stretch_ratios.txt).
TAILS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5)


def stretch(u: np.ndarray, sides: np.ndarray, tail: float) -> np.ndarray:
    """``T(u) = s sinh(a u / s) / sinh(a)``, ``a = tail`` (``u`` itself at ``a = 0``).

    ``s`` is ``sides[0]`` where ``u < 0`` and ``sides[1]`` where not (``sides`` of shape
    ``(2, n)``, positive; ``u`` of shape ``(..., n)``): ``T(-sides[0]) = -sides[0]`` and
    ``T(sides[1]) = sides[1]``, and ``T`` is increasing with slope ``a / sinh(a)`` at 0 on
    either side.  ``T`` grows exponentially: a draw more than ``700 / a`` sides from the
    median (a heavy-tailed forecast's far draw) is stretched as one at ``700 / a`` sides, so
    that ``sinh`` does not overflow and the draws stay finite (a band up to 99% moves only if
    more than 0.5% of a point's draws are that far; the density, from ``T^-1``, is exact).
    """
    if tail == 0:
        return u
    s = np.where(u < 0, sides[0], sides[1])
    return s * np.sinh(np.clip(tail * u / s, -700.0, 700.0)) / np.sinh(tail)


def _unstretch(v: np.ndarray, sides: np.ndarray, tail: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """``u = T^-1(v)`` and ``log T'(u)`` (:func:`stretch`; ``T`` keeps the sign)."""
    if tail == 0:
        return v, np.zeros_like(v)
    s = np.where(v < 0, sides[0], sides[1])
    u = s / tail * np.arcsinh(v * np.sinh(tail) / s)
    x = tail * u / s
    log_cosh = np.logaddexp(x, -x) - np.log(2.0)
    return u, np.log(tail / np.sinh(tail)) + log_cosh


def _sides(band: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """Each point's distances from its median down to ``band[0]`` and up to ``band[1]``.

    ``(2, n)``; ``band`` is the central 50% band.  A side of length 0 (draws that do not
    spread) takes the point's other side, or else the smallest positive side of any point,
    or 1.
    """
    sides = np.array([centre - band[0], band[1] - centre], float)
    sides = np.where(sides > 0, sides, sides[::-1])
    positive = sides[sides > 0]
    return np.where(sides > 0, sides, positive.min() if positive.size else 1.0)


def _most_lpd(mean_lpd: Any, tails: bool) -> tuple[float, float, float]:
    """``(scale, rate, tail)`` with the most mean log density.

    Nelder-Mead over ``(log scale, log rate[, sqrt tail])`` from ``(0, 0[, 0.5])``; a rate
    below 1e-6 is reported as 0.
    """
    def loss(th: np.ndarray) -> float:
        return -mean_lpd(*np.exp(th[:2]), th[2] ** 2 if tails else 0.0)

    best = optimize.minimize(loss, np.array([0.0, 0.0, 0.5][:3 if tails else 2]),
                             method="Nelder-Mead",
                             options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 3000})
    scale, rate = (float(v) for v in np.exp(best.x[:2]))
    return scale, rate if rate > 1e-6 else 0.0, float(best.x[2] ** 2) if tails else 0.0


def grid_error(shares: np.ndarray, criterion: str) -> float | np.ndarray:
    """A grid criterion's error from runs' shares inside each level's band ``(runs, levels)``.

    ``"msce"``: the mean over runs of each run's MSCE (NSL-PFN's score);  ``"coverage"``: the
    squared gaps of the mean share from each level, summed over the levels.  Shares of shape
    ``(..., runs, levels)`` give one error per leading index.
    """
    levels = np.asarray(MSCE_LEVELS)
    if criterion == "msce":
        error = np.mean((shares - levels) ** 2, axis=(-2, -1))
    else:
        error = np.sum((shares.mean(axis=-2) - levels) ** 2, axis=-1)
    return float(error) if np.ndim(error) == 0 else error


def _least_on_grid(terms: list[_Terms], d: list[np.ndarray], mean_lpd: Any,
                   criterion: str, tails: Sequence[float]) -> tuple[float, float, float]:
    """``(scale, rate, tail)`` of the grid with the least ``criterion``, ties by log density.

    The criterion's error is :func:`grid_error` of every run's shares, at every scale at
    once (:meth:`_Terms.shares_by_scale`).
    """
    def errors_by_scale(rate: float, tail: float) -> np.ndarray:
        return grid_error(np.concatenate([t.shares_by_scale(1.0 + rate * x, tail)
                                          for t, x in zip(terms, d, strict=True)], axis=1),
                          criterion)

    errors = np.stack([np.stack([errors_by_scale(rate, tail) for tail in tails], axis=-1)
                       for rate in MSCE_RATES], axis=1)  # (scales, rates, tails)
    tied = np.argwhere(errors <= errors.min() + 1e-12)
    found = [(float(MSCE_SCALES[i]), float(MSCE_RATES[j]), float(tails[k])) for i, j, k in tied]
    return max(found, key=lambda triple: mean_lpd(*triple))


def distances(fit: Fit, points: pd.DataFrame, per_span: bool = False) -> np.ndarray:
    """e-folds of D from each point's run's last fitted point (negative before it).

    With ``per_span``, in units of the run's fitted span ``log(D_last / D_first)``.  Every
    point's run must be one ``fit`` saw: a new run has no last point to widen from, and with
    ``per_span`` a run fitted at one D has no span.
    """
    by_run = fit.data.frame.groupby(C.RUN)[C.D]
    last = by_run.max()
    missing = sorted(set(points[C.RUN].astype(str)) - set(last.index.astype(str)))
    if missing:
        raise ArgumentError(f"a widening applies to forecasts of fitted runs; run(s) "
                            f"{missing[:3]} are not in the fit's data: forecast them with "
                            "bl.forecast_run and use its bands as they are")
    last.index = last.index.astype(str)
    runs = points[C.RUN].astype(str)
    d = np.log(points[C.D].to_numpy(float) / runs.map(last).to_numpy())
    if not per_span:
        return d
    span = np.log(last / by_run.min().set_axis(last.index))
    flat = sorted(set(runs) & set(span.index[span <= 0]))
    if flat:
        raise ArgumentError(f"run(s) {flat[:3]} were fitted at one D: a widening per span needs "
                            "two D per run; use per_span=False")
    return d / runs.map(span).to_numpy()


@dataclass(frozen=True)
class _Terms:
    """What a widened density needs, computed once.

    A forecast's per-draw location and scale at some points, their observed values and the
    predictive median.
    """

    fit: Any
    y: np.ndarray
    loc: np.ndarray
    scale: np.ndarray
    centre: np.ndarray
    bands: np.ndarray  # (levels, 2, n): the draws' central MSCE_LEVELS bands
    runs: np.ndarray  # each point's run, as codes 0, 1, ... (np.bincount's)
    cache: dict = field(default_factory=dict, init=False, compare=False, repr=False)  # by tail

    @classmethod
    def of(cls, fit: Fit, points: pd.DataFrame, seed: int) -> _Terms:
        from ..posterior.noise import forecast_terms, located_draws, noise, noise_scale_draws

        rng = np.random.default_rng(seed)  # the draws bl.predict(fit, points, seed) makes
        mu = located_draws(fit, points, rng)
        loc, scale = forecast_terms(fit, points, mu, noise_scale_draws(fit, points, rng, mu), rng)
        draws = loc + noise(fit, scale, rng)
        bands = np.array([central_bounds(draws, c) for c in MSCE_LEVELS])
        return cls(fit, points[C.LOSS].to_numpy(float), loc, scale, np.median(draws, axis=0),
                   bands, pd.factorize(points[C.RUN].astype(str))[0])

    def shares_by_scale(self, growth: np.ndarray, tail: float) -> np.ndarray:
        """Each run's share of its points inside each widened ``MSCE_LEVELS`` band.

        ``(scales, runs, levels)``: at ``k = scale * growth`` (and ``tail``) for every scale of
        :data:`MSCE_SCALES`; a band's bounds move as its draws do.  A point is inside a band
        widened by ``k`` from the least scale on (``(y - m) / growth`` over the band's
        stretched offset on its side), so each point adds its run's weight from that scale
        up: a cumulative count.
        """
        v = (self.y - self.centre) / np.asarray(growth, float)
        offset = self.stretched(tail)  # (levels, 2, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            least = np.where(v > 0, v / offset[:, 1], np.where(v < 0, v / offset[:, 0], 0.0))
        least = np.where(np.isnan(least) | (least < 0), np.inf, least)  # never inside
        first = np.searchsorted(MSCE_SCALES, least, side="left")  # (levels, n); S: none
        n_runs, n_levels, n_scales = self.runs.max() + 1, len(MSCE_LEVELS), len(MSCE_SCALES)
        weight = np.broadcast_to(1.0 / np.bincount(self.runs)[self.runs], first.shape)
        at = (first * n_levels + np.arange(n_levels)[:, None]) * n_runs + self.runs
        counts = np.bincount(at.ravel(), weight.ravel(),
                             minlength=(n_scales + 1) * n_levels * n_runs)
        added = counts.reshape(n_scales + 1, n_levels, n_runs)[:n_scales]
        return np.cumsum(added, axis=0).transpose(0, 2, 1)

    def stretched(self, tail: float) -> np.ndarray:
        """The bands' distances from the median after :func:`stretch` (kept per ``tail``)."""
        if tail not in self.cache:
            self.cache[tail] = stretch(self.bands - self.centre, self.sides, tail)
        return self.cache[tail]

    @cached_property
    def sides(self) -> np.ndarray:
        """Each point's 50% band's sides (:func:`stretch`'s ``s``, :func:`_sides`)."""
        return _sides(self.bands[MSCE_LEVELS.index(0.5)], self.centre)

    def lpd(self, k: np.ndarray, tail: float = 0.0) -> np.ndarray:
        """Log density per point of the forecast widened by ``k`` per point (and ``tail``)."""
        from ..posterior.noise import log_density, pointwise_lpd

        k = np.asarray(k, float)
        u, log_slope = _unstretch((self.y - self.centre) / k, self.sides, tail)
        return (pointwise_lpd(log_density(self.fit, self.centre + u, self.loc, self.scale))
                - np.log(k) - log_slope)


def widening(data: LossData, spec: ModelSpec | str, split: str = "prefix:0.5", *,
             seed: int = C.DEFAULT_SEED, like: LossData | None = None, per_span: bool = False,
             criterion: str = "lpd", tails: bool = False, **fit_kwargs: Any) -> Widening:
    """Learn a :class:`Widening` from ``split``'s first fold on ``data`` (one more fit).

    ``spec`` is fitted to the fold's training part (``like`` as in :func:`bayeslaw.fit`),
    and the widening that best forecasts its held-out points by ``criterion`` is kept
    (:meth:`Widening.learn`; ``per_span``: the distance in units of each run's fitted span;
    ``tails``: the tails' stretch learned too).
    The split must hold out later points of fitted runs (``prefix:F``, or
    ``RUNS+prefix:F``'s prefix part).
    """
    from ..spec.catalog import load_spec
    from .backtesting import fold_fit
    from .splits import inner_split

    spec = load_spec(spec)
    part = inner_split(data, split, seed=seed)
    train = data.select(part.train, f"train of the inner {part.name}")
    test = data.frame.loc[part.test].reset_index(drop=True)
    fitted = set(train.frame[C.RUN].astype(str))
    test = test[test[C.RUN].astype(str).isin(fitted)].reset_index(drop=True)
    if test.empty:
        raise ArgumentError(f"split {part.name!r} holds out no later point of a fitted run; "
                            "a widening learns from those: use prefix:F")
    result = fold_fit(train, spec, f"inner {part.name}", seed=seed,
                      like=like if like is not None else data, **fit_kwargs)
    return Widening.learn(result, test, seed=seed, source=part.name, per_span=per_span,
                          criterion=criterion, tails=tails)
