"""The point fit users would otherwise run, as a baseline for every backtest.

Hoffmann et al. (2022, approach 3): minimise the Huber loss (delta = 1e-3) between predicted
and observed log-loss with L-BFGS from a grid of starting points, keep the best optimum;
intervals come from a bootstrap over runs (as Epoch AI's replication, Besiroglu et al. 2024).
The law is the same registered function the Bayesian model uses (``xp=numpy``), with every
positive parameter optimised on the log scale and fixed offsets taken from the spec.

Two kinds of band, as :func:`bayeslaw.predict` makes:

* ``epistemic`` - the law at each bootstrap replicate's coefficients: the uncertainty of the
  fit alone, no noise (what the bootstrap of Epoch's replication gives);
* ``predictive`` (the default) - a new observed loss. The noise is bootstrapped with the
  coefficients, on the scale the fit works on: each replicate's draws are its law times
  ``exp(e)``, ``e`` drawn (with replacement, independently per point) from the log-loss
  residuals ``log y - log law`` of that same replicate's fit on its own resample of runs.
  No noise family is assumed (the Huber fit assumes none) and heavy tails stay in.
  In-sample residuals understate a forecast's error by what the fit adapts to its own data
  and are pooled over all points, so the band does not grow with the distance from the data.

The optimizer's outcome is not taken on trust: a best start that does not report convergence
is warned about (:class:`BaselineConvergenceWarning`, and ``PointFit.converged``), and so are
bootstrap refits that do not (``PointFit.boot_unconverged``).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize

from .. import constants as C
from ..data.table import LossData
from ..errors import BaselineConvergenceWarning, BayeslawError
from ..laws.registry import CURVE_LAWS
from ..spec.model_spec import ModelSpec

#: Starting values per parameter (centered scale); the grid is their product.
START_GRID: dict[str, tuple[float, ...]] = {
    "E": (1.0, 2.0, 3.0),
    "a": (0.1, 0.5, 1.5), "b": (0.1, 0.5, 1.5), "c": (0.05, 0.2, 0.6),
    "alpha": (0.2, 0.5, 0.8), "beta": (0.2, 0.5, 0.8), "gamma": (0.2, 0.5, 1.0),
    "k": (0.1, 0.4, 1.0), "phi": (0.3, 0.6, 0.9),
    # the schedule laws' anneal: loss removed, saturation rate and exponents
    "d": (0.03, 0.1, 0.3), "kappa": (1.0, 10.0, 100.0), "zeta": (0.3, 0.6),
    "omega": (0.3, 0.6),
}
#: L-BFGS-B's tolerance on the objective, scipy's default (``factr = 1e7`` times machine
#: epsilon) passed explicitly: it stops once a step lowers the objective ``f`` by less than
#: ``FTOL * max(|f|, 1)``. That bounds the last step, not the distance to the optimum.
FTOL = 1e7 * float(np.finfo(float).eps)
#: L-BFGS-B's iteration limit (scipy's default).
MAXITER = 15000
#: Stands in for a non-finite objective value (see ``_objective``).
PENALTY = 1e30
#: Predictive draws per bootstrap replicate (:meth:`PointFit.draws`).
N_NOISE = 20

KINDS = ("predictive", "epistemic")


def huber(r: np.ndarray, delta: float) -> np.ndarray:
    """Huber loss of residuals ``r``: quadratic inside ``delta``, linear outside."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise BayeslawError(f"kind must be 'predictive' or 'epistemic', got {kind!r}")


@dataclass(frozen=True)
class PointFit:
    """Best point estimate and (optionally) bootstrap replicates of a law's coefficients.

    Attributes
    ----------
    spec : ModelSpec
    params : dict
        Best estimate of the free parameters.
    objective : float
        The Huber objective there.
    boot : ndarray, optional
        Bootstrap replicates ``(B, k)``, in ``params`` order.
    resid : tuple of ndarray, optional
        Each replicate's log-loss residuals on its own resample (the predictive noise).
    converged : bool
        Whether the best start reported convergence.
    boot_unconverged : int
        Bootstrap refits that did not report convergence (kept in ``boot``).
    """

    spec: ModelSpec
    params: dict[str, float]
    objective: float
    boot: np.ndarray | None = field(default=None, repr=False)
    resid: tuple[np.ndarray, ...] | None = field(default=None, repr=False)
    converged: bool = True
    boot_unconverged: int = 0

    def _theta(self, row: np.ndarray | None = None) -> dict[str, float]:
        values = self.params if row is None else dict(zip(self.params, row, strict=True))
        return {**self.spec.fixed, **values}

    def predict(self, points: pd.DataFrame) -> np.ndarray:
        """The law at the best estimate."""
        law = self.spec.law_obj
        cov = {c: points[c].to_numpy(float) for c in law.covariates}
        return np.asarray(law(np, cov, self._theta(), self.spec.reference), float)

    def draws(self, points: pd.DataFrame, kind: str = "predictive", *, seed: int = 0,
              n_noise: int = N_NOISE) -> np.ndarray:
        """Bootstrap draws of the loss at ``points``.

        ``epistemic``: the law at every replicate, ``(B, n)``. ``predictive``: ``n_noise``
        draws per replicate, its law times ``exp`` of its own residuals resampled (module
        docstring), ``(B * n_noise, n)``, seeded by ``seed``.
        """
        _check_kind(kind)
        if self.boot is None:
            raise BayeslawError("no bootstrap replicates: call bootstrap() first")
        law = self.spec.law_obj
        cov = {c: points[c].to_numpy(float)[None, :] for c in law.covariates}
        theta = {**self.spec.fixed,
                 **{k: self.boot[:, i][:, None] for i, k in enumerate(self.params)}}
        mu = np.broadcast_to(np.asarray(law(np, cov, theta, self.spec.reference), float),
                             (len(self.boot), len(points)))
        if kind == "epistemic":
            return np.array(mu)
        if self.resid is None:
            raise BayeslawError("no bootstrap residuals for a predictive band: make the "
                                "replicates with bootstrap(), or ask for kind='epistemic'")
        if n_noise < 1:
            raise BayeslawError(f"n_noise must be >= 1, got {n_noise}")
        rng = np.random.default_rng(seed)
        out = np.empty((len(mu) * n_noise, len(points)))
        for b, r in enumerate(self.resid):
            e = rng.choice(r, size=(n_noise, len(points)), replace=True)
            out[b * n_noise:(b + 1) * n_noise] = mu[b] * np.exp(e)
        return out

    def bands(self, points: pd.DataFrame, probs: Sequence[float] = C.BAND_PROBS,
              kind: str = "predictive", *, seed: int = 0) -> pd.DataFrame:
        """Best-fit ``median`` column and bootstrap percentile bands of ``kind`` at ``points``."""
        probs = tuple(float(p) for p in probs)
        if not all(0 < p < 1 for p in probs):
            raise BayeslawError(f"band probabilities must lie in (0, 1), got {probs}")
        out = points.reset_index(drop=True).copy()
        out["median"] = self.predict(out)
        d = self.draws(out, kind, seed=seed)
        for p in probs:
            lo, hi = np.quantile(d, [(1 - p) / 2, (1 + p) / 2], axis=0)
            out[f"lower_{p * 100:g}"], out[f"upper_{p * 100:g}"] = lo, hi
        return out


def _residuals(spec: ModelSpec, data: pd.DataFrame, names: list[str]
               ) -> Callable[[np.ndarray], np.ndarray]:
    """``x -> log y - log law`` at log-scale parameters ``x`` (non-finite where the law is)."""
    law = spec.law_obj
    cov = {c: data[c].to_numpy(float) for c in law.covariates}
    log_y = np.log(data[C.LOSS].to_numpy(float))

    def r(x: np.ndarray) -> np.ndarray:
        theta = {**spec.fixed, **dict(zip(names, np.exp(x), strict=True))}
        with np.errstate(all="ignore"):  # the caller handles non-finite values (below)
            pred = np.asarray(law(np, cov, theta, spec.reference), float)
            return log_y - np.log(pred)

    return r


def _objective(spec: ModelSpec, data: pd.DataFrame, names: list[str], delta: float
               ) -> Callable[[np.ndarray], float]:
    resid = _residuals(spec, data, names)

    def f(x: np.ndarray) -> float:
        with np.errstate(all="ignore"):
            value = float(np.sum(huber(resid(x), delta)))
        # Far from the data the law can overflow or fall to <= 0 (no log): L-BFGS-B cannot
        # step back from inf or NaN (its line search ends abnormally), so a large finite value
        # sends the line search back. Not silent where it matters: an optimum there is refused
        # (point_fit) or its replicate dropped with a warning (bootstrap).
        return value if np.isfinite(value) else PENALTY

    return f


def huber_objective(spec: ModelSpec, data: LossData, params: dict[str, float], *,
                    delta: float = 1e-3) -> float:
    """The baseline's objective (Huber loss of log-loss residuals, summed) at ``params``.

    ``params`` gives every free parameter of ``spec`` (fixed ones come from the spec), e.g.
    the truth of a simulated table, to compare with :attr:`PointFit.objective`. NaN or inf
    where the law is not finite, as it is.
    """
    names = list(spec.free_params)
    missing = [n for n in names if n not in params]
    if missing:
        raise BayeslawError(f"params lack free parameter(s) {missing} of law {spec.law!r}")
    x = np.log(np.array([params[n] for n in names], float))
    with np.errstate(all="ignore"):
        return float(np.sum(huber(_residuals(spec, data.frame, names)(x), delta)))


def left_out(spec: ModelSpec) -> str | None:
    """Why a backtest of ``spec`` has no baseline rows (a note for its table), or None.

    The baseline fits one set of coefficients to every run.  A population of curves
    (:data:`~bayeslaw.laws.registry.CURVE_LAWS`) has none: each curve has its own ``m``, ``f``
    and ``beta``, and one curve through all of them is not the fit a user would run (that
    would be a point fit of each curve on its own, which this module does not make).
    """
    if spec.law not in CURVE_LAWS:
        return None
    return (f"no baseline rows: the least-squares baseline fits one set of coefficients to "
            f"every run, and law {spec.law!r} gives each curve its own coefficients (m, f "
            "and beta by curve); one curve through all of them is not a baseline worth "
            "scoring, so it is left out for this law")


def _minimize(f: Callable[[np.ndarray], float], x0: np.ndarray, maxiter: int
              ) -> optimize.OptimizeResult:
    return optimize.minimize(f, x0, method="L-BFGS-B",
                             options={"ftol": FTOL, "maxiter": maxiter})


def point_fit(data: LossData, spec: ModelSpec, *, delta: float = 1e-3, n_starts: int = 64,
              seed: int = 0, maxiter: int = MAXITER) -> PointFit:
    """Huber-on-log-loss L-BFGS fit from ``n_starts`` points of :data:`START_GRID`.

    When the full grid is larger than ``n_starts``, a seeded random subset of it is used.
    The lowest optimum is kept; when it did not report convergence (e.g. ``maxiter``
    reached), a :class:`BaselineConvergenceWarning` says so and ``converged`` is False.
    Starts that end at a non-finite objective are passed over; if all do, the fit is
    refused.
    """
    names = list(spec.free_params)
    unknown = [n for n in names if n not in START_GRID]
    if unknown:
        raise BayeslawError(f"no starting grid for parameter(s) {unknown}; fix them in the "
                            "spec for the baseline")
    if n_starts < 1 or maxiter < 1:
        raise BayeslawError(f"n_starts and maxiter must be >= 1, got n_starts={n_starts}, "
                            f"maxiter={maxiter}")
    grid = np.log(np.array(list(itertools.product(*(START_GRID[n] for n in names)))))
    if len(grid) > n_starts:
        grid = grid[np.random.default_rng(seed).choice(len(grid), n_starts, replace=False)]
    f = _objective(spec, data.frame, names, delta)
    results = [_minimize(f, x0, maxiter) for x0 in grid]
    finite = [r for r in results if r.fun < PENALTY]
    if not finite:
        raise BayeslawError(f"the baseline's objective is not finite at the optimum of any of "
                            f"its {len(grid)} starts: law {spec.law!r} overflows or gives a "
                            "loss <= 0 there; check the table's units (N in parameters, D in "
                            "tokens) and the spec's fixed values")
    best = min(finite, key=lambda r: r.fun)
    if not best.success:
        done = [r.fun for r in finite if r.success]
        others = (f"{len(done)} of {len(grid)} starts did, the best of them at objective "
                  f"{min(done):.6g}" if done else f"none of the {len(grid)} starts did")
        warnings.warn(f"the baseline's best L-BFGS-B start (objective {best.fun:.6g}) did not "
                      f"report convergence ({best.message}); {others}: its coefficients may "
                      f"not be at an optimum. Raise maxiter (now {maxiter}) or check the data",
                      BaselineConvergenceWarning, stacklevel=2)
    return PointFit(spec, dict(zip(names, np.exp(best.x).tolist(), strict=True)),
                    float(best.fun), converged=bool(best.success))


def bootstrap(fit: PointFit, data: LossData, *, n_boot: int = 100, delta: float = 1e-3,
              seed: int = 0, maxiter: int = MAXITER) -> PointFit:
    """Refit on ``n_boot`` resamples of whole runs (from the best estimate); keep replicates.

    Each replicate keeps its coefficients and its log-loss residuals on its own resample
    (the predictive band's noise). Refits that do not report convergence are kept and
    counted (``boot_unconverged``); refits that end at a non-finite objective are dropped.
    Either is warned about (:class:`BaselineConvergenceWarning`).
    """
    if n_boot < 1 or maxiter < 1:
        raise BayeslawError(f"n_boot and maxiter must be >= 1, got n_boot={n_boot}, "
                            f"maxiter={maxiter}")
    rng = np.random.default_rng(seed)
    names = list(fit.params)
    x0 = np.log(np.array([fit.params[n] for n in names]))
    groups = [g for _, g in data.frame.groupby(C.RUN, sort=False)]
    reps, resid, unconverged, dropped = [], [], 0, 0
    for _ in range(n_boot):
        pick = rng.integers(0, len(groups), len(groups))
        sample = pd.concat([groups[i] for i in pick], ignore_index=True)
        res = _minimize(_objective(fit.spec, sample, names, delta), x0, maxiter)
        if res.fun >= PENALTY:
            dropped += 1
            continue
        unconverged += not res.success
        reps.append(np.exp(res.x))
        resid.append(_residuals(fit.spec, sample, names)(res.x))
    if not reps:
        raise BayeslawError(f"none of the {n_boot} bootstrap refits of the baseline reached a "
                            "finite objective: check the table's units and the spec's fixed "
                            "values")
    if unconverged or dropped:
        said = [f"{unconverged} of {n_boot} baseline bootstrap refits did not report "
                "convergence (kept)"] if unconverged else []
        said += [f"{dropped} of {n_boot} ended at a non-finite objective (dropped)"] if dropped \
            else []
        warnings.warn(f"{'; '.join(said)}: the bands rest on {len(reps)} replicates, some "
                      f"perhaps not at an optimum. Raise maxiter (now {maxiter}) or n_boot",
                      BaselineConvergenceWarning, stacklevel=2)
    return PointFit(fit.spec, fit.params, fit.objective, np.array(reps), tuple(resid),
                    converged=fit.converged, boot_unconverged=unconverged)
