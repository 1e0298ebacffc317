"""The point fit users would otherwise run, as a baseline for every backtest.

Hoffmann et al. (2022, approach 3): minimise the Huber loss (delta = 1e-3) between predicted
and observed log-loss with L-BFGS from a grid of starting points, keep the best optimum;
intervals come from a bootstrap over runs (as Epoch AI's replication, Besiroglu et al. 2024).
The law is the same registered function the Bayesian model uses (``xp=numpy``), with every
positive parameter optimised on the log scale and fixed offsets taken from the spec.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize

from . import constants as C
from .data import LossData
from .errors import BayeslawError
from .priors import ModelSpec

#: Starting values per parameter (centered scale); the grid is their product.
START_GRID: dict[str, tuple[float, ...]] = {
    "E": (1.0, 2.0, 3.0),
    "a": (0.1, 0.5, 1.5), "b": (0.1, 0.5, 1.5), "c": (0.05, 0.2, 0.6),
    "alpha": (0.2, 0.5, 0.8), "beta": (0.2, 0.5, 0.8), "gamma": (0.2, 0.5, 1.0),
    "k": (0.1, 0.4, 1.0), "phi": (0.3, 0.6, 0.9),
}


def huber(r: np.ndarray, delta: float) -> np.ndarray:
    """Huber loss of residuals ``r``: quadratic inside ``delta``, linear outside."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


@dataclass(frozen=True)
class PointFit:
    """Best point estimate and (optionally) bootstrap replicates of a law's coefficients."""

    spec: ModelSpec
    params: dict[str, float]
    objective: float
    boot: np.ndarray | None = field(default=None, repr=False)  # (B, k) in params order

    def _theta(self, row: np.ndarray | None = None) -> dict[str, float]:
        values = self.params if row is None else dict(zip(self.params, row, strict=True))
        return {**self.spec.fixed, **values}

    def predict(self, points: pd.DataFrame) -> np.ndarray:
        """The law at the best estimate."""
        law = self.spec.law_obj
        cov = {c: points[c].to_numpy(float) for c in law.covariates}
        return np.asarray(law(np, cov, self._theta(), self.spec.reference), float)

    def draws(self, points: pd.DataFrame) -> np.ndarray:
        """The law at every bootstrap replicate, ``(B, n)``."""
        if self.boot is None:
            raise BayeslawError("no bootstrap replicates: call bootstrap() first")
        law = self.spec.law_obj
        cov = {c: points[c].to_numpy(float)[None, :] for c in law.covariates}
        theta = {**self.spec.fixed,
                 **{k: self.boot[:, i][:, None] for i, k in enumerate(self.params)}}
        return np.asarray(law(np, cov, theta, self.spec.reference), float)

    def bands(self, points: pd.DataFrame, probs: Sequence[float] = C.BAND_PROBS
              ) -> pd.DataFrame:
        """Best-fit ``median`` column and bootstrap percentile bands at ``points``."""
        out = points.reset_index(drop=True).copy()
        out["median"] = self.predict(out)
        d = self.draws(out)
        for p in probs:
            lo, hi = np.quantile(d, [(1 - p) / 2, (1 + p) / 2], axis=0)
            out[f"lower_{p * 100:g}"], out[f"upper_{p * 100:g}"] = lo, hi
        return out


def _objective(spec: ModelSpec, data: pd.DataFrame, names: list[str], delta: float):
    law = spec.law_obj
    cov = {c: data[c].to_numpy(float) for c in law.covariates}
    log_y = np.log(data[C.LOSS].to_numpy(float))

    def f(x: np.ndarray) -> float:
        theta = {**spec.fixed, **dict(zip(names, np.exp(x), strict=True))}
        with np.errstate(all="ignore"):
            pred = np.asarray(law(np, cov, theta, spec.reference), float)
            value = float(np.sum(huber(np.log(pred) - log_y, delta)))
        return value if np.isfinite(value) else 1e30

    return f


def point_fit(data: LossData, spec: ModelSpec, *, delta: float = 1e-3, n_starts: int = 64,
              seed: int = 0) -> PointFit:
    """Huber-on-log-loss L-BFGS fit from ``n_starts`` points of :data:`START_GRID`.

    When the full grid is larger than ``n_starts``, a seeded random subset of it is used.
    """
    names = list(spec.free_params)
    unknown = [n for n in names if n not in START_GRID]
    if unknown:
        raise BayeslawError(f"no starting grid for parameter(s) {unknown}; fix them in the "
                            "spec for the baseline")
    grid = np.log(np.array(list(itertools.product(*(START_GRID[n] for n in names)))))
    if len(grid) > n_starts:
        grid = grid[np.random.default_rng(seed).choice(len(grid), n_starts, replace=False)]
    f = _objective(spec, data.frame, names, delta)
    best = min((optimize.minimize(f, x0, method="L-BFGS-B") for x0 in grid),
               key=lambda r: r.fun)
    return PointFit(spec, dict(zip(names, np.exp(best.x).tolist(), strict=True)),
                    float(best.fun))


def bootstrap(fit: PointFit, data: LossData, *, n_boot: int = 100, delta: float = 1e-3,
              seed: int = 0) -> PointFit:
    """Refit on ``n_boot`` resamples of whole runs (from the best estimate); keep replicates."""
    rng = np.random.default_rng(seed)
    names = list(fit.params)
    x0 = np.log(np.array([fit.params[n] for n in names]))
    groups = [g for _, g in data.frame.groupby(C.RUN, sort=False)]
    reps = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(groups), len(groups))
        sample = pd.concat([groups[i] for i in pick], ignore_index=True)
        res = optimize.minimize(_objective(fit.spec, sample, names, delta), x0,
                                method="L-BFGS-B")
        reps.append(np.exp(res.x))
    return PointFit(fit.spec, fit.params, fit.objective, np.array(reps))
