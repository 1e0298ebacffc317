"""Checks for users' test suites: convergence, predictive checks, recovery and SBC.

Every check returns a result object with a verdict (``passed``), the figures behind it
(``values``), the failures in words (``failures``) and a ``plot()``; ``assert_ok()`` turns a
failed verdict into an ``AssertionError`` for pytest.  Statistical verdicts use a stated
error rate, so a matched model fails them only as often as that rate says:

* **posterior predictive check**: the central ``prob`` predictive band's coverage of the
  observed points, each given its run's previous point where the noise model links them
  (AR(1), random walk: the model's own factorization), with a Clopper-Pearson interval at
  level ``1 - alpha``; it fails when the interval lies wholly outside ``prob +- tolerance``
  (in-sample points within a run share their run's parameters, so a small tolerance absorbs
  what a binomial interval cannot).  Also the posterior predictive p-value of the final
  losses' deviance ``T = -sum log p(y_final | theta)``: ``p = P(T(y_rep) >= T(y))``; it
  fails below ``alpha`` (one-sided: final losses further from the forecast than the noise
  allows; a p near 1 means the noise model is conservative there, which misleads no
  forecast).
* **recovery**: a posterior draw of a fit is the truth, data are simulated from it at the
  fit's own points, and the same spec is refitted; every sampled law parameter's truth must
  lie in its central ``1 - alpha / k`` interval (Bonferroni over the ``k`` parameters).
* **simulation-based calibration** (Talts et al. 2018): truths drawn from the prior, the
  rank of each truth among ``L`` thinned posterior draws, and a chi-square test of uniform
  ranks per parameter at level ``alpha / k``.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import constants as C
from .data.table import LossData
from .errors import ArgumentError, ConvergenceWarning
from .evaluation.metrics import coverage
from .evaluation.sbc import sbc, sbc_key, sbc_verdict
from .evaluation.verdicts import CheckResult, plot_sbc
from .inference import sampling as inference
from .posterior.diagnostics import Thresholds
from .posterior.noise import log_density, one_step_replicates, simulated_losses
from .posterior.result import Fit
from .spec.model_spec import ModelSpec

__all__ = [
    "CheckResult",
    "assert_converged",
    "check_convergence",
    "plot_sbc",
    "posterior_predictive_check",
    "prior_predictive_check",
    "recovery",
    "sbc",
    "sbc_key",
    "sbc_verdict",
    "simulate_from_draw",
]


# -- convergence --------------------------------------------------------------------------
def check_convergence(fit: Fit, thresholds: Thresholds | None = None) -> CheckResult:
    """R-hat, bulk / tail ESS, divergences and BFMI of a fit against ``thresholds``."""
    import arviz as az

    diag = replace(fit.diagnostics, thresholds=thresholds or fit.thresholds)
    names = fit.coefficient_names()
    summ = az.summary(fit.idata, var_names=names, kind="diagnostics")
    details = summ[["r_hat", "ess_bulk", "ess_tail"]]
    values = {"max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
              "min_ess_tail": diag.min_ess_tail, "divergences": diag.divergences,
              "min_bfmi": diag.min_bfmi, "max_rhat_threshold": diag.thresholds.max_rhat}
    return CheckResult("convergence", diag.ok, values, diag.failures, details)


def assert_converged(fit: Fit, thresholds: Thresholds | None = None) -> None:
    """Raise ``AssertionError`` naming each failed convergence check."""
    check_convergence(fit, thresholds).assert_ok()


# -- predictive checks --------------------------------------------------------------------
def _final_rows(frame: pd.DataFrame) -> np.ndarray:
    """Row positions of each run's last point (largest D)."""
    pos = frame.reset_index(drop=True)
    return pos.groupby(C.RUN, sort=False)[C.D].idxmax().to_numpy()


def posterior_predictive_check(fit: Fit, *, prob: float = 0.9, alpha: float = 0.01,
                               tolerance: float = 0.05, seed: int = 0) -> CheckResult:
    """Coverage of the observed points and a p-value of the final losses.

    Parameters
    ----------
    fit : Fit
    prob : float
        Central predictive band whose coverage of the observed points is checked.
    alpha : float
        Error rate: level of the coverage interval and of the (one-sided) p-value.
    tolerance : float
        Coverage within ``prob +- tolerance`` is accepted even when the binomial interval
        excludes ``prob`` (points of one run are correlated).
    seed : int
        Seed of the replicated noise.
    """
    for name, value in (("prob", prob), ("alpha", alpha)):
        if not 0 < value < 1:
            raise ArgumentError(f"{name} must lie in (0, 1), got {value!r}")
    frame = fit.data.frame
    y = frame[C.LOSS].to_numpy(float)
    # each point given the observed previous point of its run (the model's own factorization:
    # with AR(1) or a random walk these one-step predictive bands hold the walk's variance)
    y_rep, loc, scale = one_step_replicates(fit, np.random.default_rng(seed))
    lo, hi = np.quantile(y_rep, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    cov = coverage(y, lo, hi, prob, confidence=1 - alpha)
    last = _final_rows(frame)
    t_obs = -log_density(fit, y[last], loc[:, last], scale[:, last]).sum(axis=1)
    t_rep = -log_density(fit, y_rep[:, last], loc[:, last], scale[:, last]).sum(axis=1)
    p = float(np.mean(t_rep >= t_obs))
    failures = []
    if cov.high < prob - tolerance or cov.low > prob + tolerance:
        failures.append(f"the {prob:.0%} predictive band holds {cov.rate:.1%} of the "
                        f"{cov.n} observed points ({1 - alpha:.0%} interval "
                        f"[{cov.low:.1%}, {cov.high:.1%}]), outside {prob:.0%} "
                        f"+- {tolerance:.0%}")
    if p < alpha:
        failures.append(f"posterior predictive p-value of the final losses' deviance is "
                        f"{p:.4f} < {alpha:g}: the final losses lie further from the forecast "
                        "than the noise model allows")
    values = {"coverage": cov.rate, "coverage_lower": cov.low, "coverage_upper": cov.high,
              "n_points": cov.n, "prob": prob, "p_value": p, "n_final": len(last)}
    details = pd.DataFrame({"T_obs": t_obs, "T_rep": t_rep})
    return CheckResult("posterior predictive", not failures, values, failures, details)


def prior_predictive_check(data: LossData, spec: ModelSpec | str | Path | None = None, *,
                           prob: float = 0.99, min_coverage: float = 0.9, draws: int = 500,
                           seed: int = C.DEFAULT_SEED) -> CheckResult:
    """Do the priors allow the observed sweep?  Coverage of the points by a wide prior band.

    Fails when the central ``prob`` prior predictive band holds fewer than ``min_coverage``
    of the observed points: the priors then rule out what the data show.  ``values`` also
    reports the band's median width relative to the data's range (how vague the prior is).
    """
    idata = inference.sample_prior_predictive(data, spec, draws=draws, seed=seed)
    sims = idata.prior_predictive["loss"].values.reshape(-1, len(data))
    y = data.values(C.LOSS)
    lo, hi = np.quantile(sims, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    inside = (y >= lo) & (y <= hi)
    rate = float(inside.mean())
    failures = []
    if rate < min_coverage:
        worst = int(np.argmin(np.minimum(y - lo, hi - y)))
        failures.append(f"the {prob:.0%} prior predictive band holds {rate:.1%} of the "
                        f"points (< {min_coverage:.0%}); e.g. row {worst + 1} loss "
                        f"{y[worst]:.4g} vs band [{lo[worst]:.4g}, {hi[worst]:.4g}]: widen "
                        "the priors")
    width = float(np.median(hi - lo) / max(np.ptp(y), 1e-12))
    values = {"coverage": rate, "prob": prob, "relative_width": width, "draws": draws}
    details = pd.DataFrame({"loss": y, "lower": lo, "upper": hi, "inside": inside})
    return CheckResult("prior predictive", not failures, values, failures, details)


# -- recovery -----------------------------------------------------------------------------
def simulate_from_draw(fit: Fit, draw: int, *, seed: int = 0) -> LossData:
    """The fit's own points with losses simulated from one posterior draw (all parameters).

    Each run's curve is drawn jointly from the model's generative process (AR(1) residuals
    or a random walk accumulating along the run,
    :func:`bayeslaw.posterior.noise.simulate_curves`), so a recovery refits the model that
    simulated the data.
    """
    sim = fit.data.frame.copy()
    sim[C.LOSS] = simulated_losses(fit, draw, np.random.default_rng(seed))
    return replace(fit.data, frame=sim, notes=(*fit.data.notes, f"simulated: draw {draw}"))


def _central(values: np.ndarray, prob: float) -> tuple[float, float]:
    lo, hi = np.quantile(values, [(1 - prob) / 2, (1 + prob) / 2])
    return float(lo), float(hi)


def recovery(fit: Fit, *, seed: int = 0, alpha: float = 0.05, **fit_kwargs: Any
             ) -> CheckResult:
    """Refit data simulated from a posterior draw of ``fit`` and look for the truth.

    The truth is a whole posterior draw (population values, group effects, per-run noise),
    so the simulated sweep is one the model believes possible.  The refit uses the fit's
    spec and the compiled model of its structure; ``fit_kwargs`` override sampler settings.
    Passes when every sampled law parameter's truth lies in its central
    ``1 - alpha / k`` interval (Bonferroni over ``k`` parameters).
    """
    rng = np.random.default_rng(seed)
    draw = int(rng.integers(fit.n_draws))
    data = simulate_from_draw(fit, draw, seed=seed)
    kwargs = {"seed": seed, **fit_kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        refit = inference.fit(data, fit.spec, **kwargs)
    names = list(fit.spec.free_params)
    prob = 1 - alpha / len(names)
    rows, failures = [], []
    for name in names:
        truth = float(fit.draws(name)[draw])
        post = refit.draws(name)
        lo, hi = _central(post, prob)
        rows.append({"param": name, "truth": truth, "median": float(np.median(post)),
                     "lower": lo, "upper": hi, "quantile": float(np.mean(post < truth))})
        if not lo <= truth <= hi:
            failures.append(f"{name}: truth {truth:.4g} outside its {prob:.1%} interval "
                            f"[{lo:.4g}, {hi:.4g}]")
    conv = refit.diagnostics
    failures += [f"refit not converged: {f}" for f in conv.failures]
    values = {"draw": draw, "prob": prob, "max_rhat": conv.max_rhat,
              "min_ess_bulk": conv.min_ess_bulk, "divergences": conv.divergences}
    return CheckResult("recovery", not failures, values, failures,
                       pd.DataFrame(rows).set_index("param"))


