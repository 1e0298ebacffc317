"""Predictions from posterior draws: :func:`predict` and :func:`forecast_run`.

Two kinds of band: ``epistemic`` (the law's value, parameter uncertainty only) and
``predictive`` (a new observed loss, noise included: the default).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.steps import check_exit_columns
from ..data.table import late_points
from ..errors import ArgumentError, DataError, ImportanceWeightsWarning
from ..model.noise import conditional_terms, relative_variance
from .draws import Posterior, mean_draws, scheduled_points
from .noise import (
    hurst_draws,
    located_draws,
    log_density,
    noise,
    noise_scale_draws,
    predictive_draws,
    sequential_terms,
    walk_bridge,
)


@dataclass(frozen=True)
class Prediction:
    """Predictions on a table of points.

    Attributes
    ----------
    table : DataFrame
        The input points plus ``median`` and ``lower_XX`` / ``upper_XX`` per band.
    draws : ndarray
        Every posterior draw of the predicted quantity, ``(S, n)``.
    kind : {"predictive", "epistemic"}
    probs : tuple of float
    attrs : dict
        Extra facts (e.g. ``weights_ess`` of a partial-curve forecast).
    """

    table: pd.DataFrame
    draws: np.ndarray = field(repr=False)
    kind: str = "predictive"
    probs: tuple[float, ...] = C.BAND_PROBS
    attrs: dict[str, Any] = field(default_factory=dict)

    def band(self, prob: float) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the central ``prob`` band."""
        tag = band_tag(prob)
        return self.table[f"lower_{tag}"].to_numpy(), self.table[f"upper_{tag}"].to_numpy()


def band_tag(prob: float) -> str:
    """Column suffix of a band: 0.9 -> ``"90"``, 0.975 -> ``"97.5"``."""
    return f"{prob * 100:g}"


def summarise(points: pd.DataFrame, draws: np.ndarray, kind: str,
              probs: tuple[float, ...], **attrs: Any) -> Prediction:
    """A :class:`Prediction` of ``points`` from draws ``(S, n)``: median and central bands."""
    out = points.copy()
    # one pass over the draws for every quantile (a partition each cost as much as all)
    q = np.quantile(draws, [0.5, *((1 - p) / 2 for p in probs), *((1 + p) / 2 for p in probs)],
                    axis=0)
    out["median"] = q[0]
    for k, p in enumerate(probs):
        out[f"lower_{band_tag(p)}"] = q[1 + k]
        out[f"upper_{band_tag(p)}"] = q[1 + len(probs) + k]
    return Prediction(out, np.asarray(draws), kind, probs, dict(attrs))


def band_args(kind: str, probs: Sequence[float]) -> tuple[float, ...]:
    """Check a band request: ``kind`` predictive or epistemic, each probability in (0, 1)."""
    if kind not in ("predictive", "epistemic"):
        raise ArgumentError(f"kind must be 'predictive' or 'epistemic', got {kind!r}")
    probs = tuple(float(p) for p in probs)
    if not probs or not all(0 < p < 1 for p in probs):
        raise ArgumentError(f"band probabilities must lie in (0, 1), got {probs}")
    return probs


def predict(fit: Posterior, points: pd.DataFrame, *, kind: str = "predictive",
            probs: Sequence[float] = C.BAND_PROBS, seed: int = 0,
            schedule: Any = None) -> Prediction:
    """Posterior median and central bands of the loss at ``points``.

    Parameters
    ----------
    fit : Fit
    points : DataFrame
        Columns the law needs (``N``, ``D``, ``T_m``), optionally ``run`` (a fitted run's
        own effects) and the spec's group columns.
    kind : {"predictive", "epistemic"}
        ``predictive`` includes observation noise; ``epistemic`` is the law's value.  With a
        random-walk residual (``walk``), a predictive row of a fitted run starts from that
        run's logged residuals (:func:`bayeslaw.posterior.noise.walk_draws`).
    probs : sequence of float
        Central band probabilities, each in (0, 1).
    seed : int
        Seed of the draws for new group levels and noise.
    schedule : DataFrame, path or None
        For a schedule-aware law: the learning-rate schedules of the points' runs, as
        :func:`bayeslaw.load` takes them (a logged ``run, D, lr`` table or one row per run
        with schedule columns); they replace the fit's own for those runs, so the same run
        with another cool-down is a "what if".  Without it, a fitted run's points use the
        fit's schedule (whatever ``lr`` or schedule columns they carry), a new run's its own
        schedule columns.  A point past the end of its run's known schedule is refused.

    Returns
    -------
    Prediction
        ``table``: the points with ``median``, ``lower_XX`` and ``upper_XX`` per band;
        ``draws``: the draws behind them, draws x points.
    """
    probs = band_args(kind, probs)
    rng = np.random.default_rng(seed)
    points = scheduled_points(fit, points.reset_index(drop=True), schedule)
    check_exit_columns(fit.spec.law, points)  # a step law's points: weights it reads right
    draws = (predictive_draws(fit, points, rng) if kind == "predictive"
             else mean_draws(fit, points, rng))
    return summarise(points, draws, kind, probs)


def forecast_run(fit: Posterior, run: str | pd.DataFrame, D_target: float, *, n_grid: int = 50,
                 kind: str = "predictive", probs: Sequence[float] = C.BAND_PROBS,
                 seed: int = 0, replicates: int = 20, schedule: Any = None) -> Prediction:
    """Forecast the rest of a run, from its last logged D to ``D_target``.

    Parameters
    ----------
    fit : Fit
    run : str or DataFrame
        The name of a fitted run (its own posterior curve effects are used), or the logged
        points of a new partial curve (columns ``N``, ``D``, ``loss`` and ``T_m`` / group
        columns as the spec needs).  A new curve is conditioned on its logged points by
        sampling-importance-resampling: each posterior draw is paired with ``replicates``
        draws of the new run's group effects and noise scale from the population, weighted by
        the likelihood of the logged points, and resampled.  ``attrs["weights_ess"]`` reports
        the effective sample size of those weights (warned about below 100: refit with the
        curve in the data instead).  The spec's ``data.min_portion`` leaves the curve's early
        points out, as it left the fitted runs' (``attrs["left_out"]`` counts them).
    D_target : float
        Tokens to forecast to.
    schedule : DataFrame, path or None
        The run's planned learning-rate schedule (schedule-aware laws), as :func:`predict`
        takes it; by default the fit's own (or the partial curve's schedule columns).
    """
    probs = band_args(kind, probs)
    if isinstance(run, str):
        frame = fit.data.frame
        logged = frame[frame[C.RUN] == run]
        if logged.empty:
            raise DataError(f"run {run!r} is not in the fit; fitted runs: "
                            f"{', '.join(map(str, fit.data.runs[:10]))}"
                            + (" ..." if len(fit.data.runs) > 10 else ""))
        grid = _future_grid(logged, D_target, n_grid)
        return predict(fit, grid, kind=kind, probs=probs, seed=seed, schedule=schedule)
    logged = run.sort_values(C.D, kind="stable").reset_index(drop=True)
    needed = [C.N, C.D, C.LOSS] if C.N in fit.data.frame.columns else [C.D, C.LOSS]
    missing = [c for c in needed if c not in logged.columns]
    if missing or logged.empty:
        raise DataError(f"a partial curve needs rows with columns {', '.join(needed)}; "
                        f"missing {missing}")
    keep = late_points(logged, fit.spec.data.min_portion, fit.spec.data.min_kept)  # as fitted
    logged, left_out = logged[keep].reset_index(drop=True), int((~keep).sum())
    grid = _future_grid(logged, D_target, n_grid)
    if C.RUN in logged.columns:  # its schedule's terms, looked up under its own name
        both = scheduled_points(fit, pd.concat([logged, grid], ignore_index=True), schedule)
        logged, grid = both.iloc[:len(logged)].copy(), both.iloc[len(logged):].drop(
            columns=[C.LOSS]).reset_index(drop=True)
    logged[C.RUN] = "__partial__"  # not a fitted run: its effects come from the population
    grid[C.RUN] = "__partial__"
    draws, ess = _resampled_future(fit, logged, grid, kind, np.random.default_rng(seed),
                                   replicates)
    return summarise(grid, draws, kind, probs, weights_ess=ess, left_out=left_out)


def _replicate_terms(fit: Posterior, table: pd.DataFrame, y: np.ndarray, kind: str,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One replicate of a new curve: the future's location and scale, and each draw's weight.

    ``table`` holds the ``len(y)`` logged rows, then the future grid; the log weight is the
    log-likelihood of the logged points (in sequence under a walk, the future then bridged
    from the last logged residual).
    """
    n_log = len(y)
    mu = located_draws(fit, table, rng)
    scale = noise_scale_draws(fit, table, rng, mu)
    future, spread = mu[:, n_log:], scale[:, n_log:]
    if fit.spec.likelihood.walk is None:
        ll = log_density(fit, y, mu[:, :n_log], scale[:, :n_log])
        return future, spread, ll.sum(axis=1)
    ll = log_density(fit, y, *sequential_terms(fit, table.iloc[:n_log], y, mu[:, :n_log],
                                               scale[:, :n_log]))
    if kind == "predictive":
        x = np.log(table[C.D].to_numpy(float))
        shift, var, _ = walk_bridge(x[:n_log], y - mu[:, :n_log], x[n_log:],
                                    fit.draws("walk")[:, None], hurst_draws(fit))
        if fit.spec.likelihood.sigma_relative:
            var = relative_variance(var, future)
        future, spread = conditional_terms(np, future, spread, shift, 1.0, walk_var=var)
    return future, spread, ll.sum(axis=1)


def _resampled_future(fit: Posterior, logged: pd.DataFrame, grid: pd.DataFrame, kind: str,
                      rng: np.random.Generator, replicates: int) -> tuple[np.ndarray, float]:
    """Draws of a new curve's future by sampling-importance-resampling, and the weights' ESS."""
    table = pd.concat([logged.drop(columns=[C.LOSS]), grid], ignore_index=True)
    y = logged[C.LOSS].to_numpy(float)
    parts = [_replicate_terms(fit, table, y, kind, rng) for _ in range(replicates)]
    mu_all, scale_all, logw = (np.concatenate(x) for x in zip(*parts, strict=True))
    w = np.exp(logw - np.max(logw))
    w /= w.sum()
    ess = float(1.0 / np.sum(w**2))
    if ess < 100:
        warnings.warn(f"forecast of the partial curve rests on {ess:.0f} effective draws: "
                      "refit with the curve in the data for a reliable band",
                      ImportanceWeightsWarning, stacklevel=3)
    pick = rng.choice(len(w), size=fit.n_draws, replace=True, p=w)
    draws = mu_all[pick]
    if kind == "predictive":
        draws = draws + noise(fit, scale_all[pick], rng, draw_index=pick % fit.n_draws)
    return draws, ess


def _future_grid(logged: pd.DataFrame, D_target: float, n_grid: int) -> pd.DataFrame:
    last = float(logged[C.D].max())
    if not D_target > last:
        raise DataError(f"target D = {D_target:g} is not past the last logged D = {last:g}")
    row = logged.sort_values(C.D).iloc[-1].drop(labels=[C.D, C.LOSS], errors="ignore")
    grid = pd.DataFrame({C.D: np.geomspace(last, D_target, n_grid + 1)[1:]})
    for col, value in row.items():
        grid[col] = value
    return grid
