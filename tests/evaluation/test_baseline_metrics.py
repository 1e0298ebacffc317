"""The least-squares baseline and the forecast metrics, against known values."""

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import BaselineConvergenceWarning, BayeslawError
from bayeslaw.evaluation import metrics
from bayeslaw.evaluation.baseline import FTOL, N_NOISE, bootstrap, huber, huber_objective, point_fit
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate


def test_metrics_hand_values():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    p = np.array([1.1, 1.9, 3.3, 4.0])
    assert metrics.mae(y, p) == pytest.approx((0.1 + 0.1 + 0.3) / 4)
    assert metrics.mape(y, p) == pytest.approx((0.1 + 0.05 + 0.1 + 0) / 4)
    assert metrics.r2(y, p) == pytest.approx(1 - (0.01 + 0.01 + 0.09) / 5.0)
    cov = metrics.coverage(y, y - 0.5, y + np.array([0.5, 0.5, -0.1, 0.5]), 0.9)
    assert (cov.inside, cov.n, cov.rate) == (3, 4, 0.75)
    assert cov.low == pytest.approx(0.194120, abs=1e-5)  # Clopper-Pearson, 3 of 4
    assert cov.consistent


def test_coverage_by_curve_counts_each_curve_once():
    from scipy import stats

    y = np.zeros(7)
    curves = np.array(["a", "a", "a", "b", "b", "c", "c"])
    # a wholly inside, b wholly outside, c wholly inside: 2 of 3 curves
    upper = np.where(curves == "b", -1.0, 1.0)
    cov = metrics.coverage_by_curve(y, y - 1.0, upper, curves, 0.9)
    assert (cov.inside, cov.n) == (2.0, 3) and cov.rate == pytest.approx(2 / 3)
    exact = stats.binomtest(2, 3).proportion_ci(0.95, method="exact")  # one point per curve
    assert (cov.low, cov.high) == pytest.approx((exact.low, exact.high))
    # every curve inside: Clopper-Pearson's n of n, low = (0.025) ** (1 / n)
    full = metrics.coverage_by_curve(y, y - 1.0, y + 1.0, curves, 0.9)
    assert full.high == 1.0 and full.low == pytest.approx(0.025 ** (1 / 3))
    assert full.consistent  # 3 curves cannot tell a 90% band from a 100% one
    # a curve half inside counts one half: between 1 of 3 and 2 of 3
    upper_half = upper.copy()
    upper_half[3] = 1.0
    half = metrics.coverage_by_curve(y, y - 1.0, upper_half, curves, 0.9)
    assert half.inside == pytest.approx(2.5)
    assert cov.low < half.low < full.low and cov.high < half.high <= full.high


def test_crps_matches_closed_form_for_normal():
    from scipy import stats

    rng = np.random.default_rng(0)
    draws = rng.normal(0.0, 1.0, size=(40000, 1))
    y = np.array([0.7])
    z = 0.7
    exact = z * (2 * stats.norm.cdf(z) - 1) + 2 * stats.norm.pdf(z) - 1 / np.sqrt(np.pi)
    assert metrics.crps(y, draws) == pytest.approx(exact, abs=5e-3)
    assert metrics.crps(np.array([2.0]), np.full((10, 1), 2.0)) == pytest.approx(0.0, abs=1e-12)


def test_log_predictive_density():
    ll = np.log(np.array([[0.1, 0.5], [0.3, 0.5]]))
    assert metrics.log_predictive_density(ll) == pytest.approx((np.log(0.2) + np.log(0.5)) / 2)


def test_huber():
    r = np.array([0.0, 5e-4, -2e-3])
    np.testing.assert_allclose(huber(r, 1e-3), [0.0, 0.5 * 25e-8, 1e-3 * (2e-3 - 5e-4)])


def test_r2_is_nan_without_a_warning_when_the_losses_have_no_spread():
    """One held-out point (or all equal) leaves SS_tot = 0: R^2 is not defined."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero RuntimeWarning fails here
        assert np.isnan(metrics.r2(np.array([2.5]), np.array([2.4])))
        assert np.isnan(metrics.r2(np.full(3, 2.5), np.array([2.4, 2.5, 2.6])))
        assert np.isnan(metrics.r2(np.array([]), np.array([])))
    # defined otherwise: 1 - 0.02 / 0.5 by hand
    assert metrics.r2(np.array([1.0, 2.0]), np.array([1.1, 1.9])) == pytest.approx(0.96)


def _noiseless(law):
    spec = bl.load_spec(law=law).replace_effects(())
    T = (2, 4, 8) if law == "looped_total" else None
    table = design((5e7, 1.5e8, 4.5e8, 1.4e9), T, np.geomspace(1e8, 2e10, 12))
    truth = {k: v for k, v in DEFAULT_TRUTH.items() if k in spec.free_params}
    frame, _ = simulate(spec, table, truth, sigma=1e-12, sigma_spread=0.0, seed=0)
    return spec, bl.load(frame), truth


@pytest.mark.parametrize("law", ["looped_total", "chinchilla"])
def test_baseline_recovers_noiseless_coefficients(law):
    spec, data, truth = _noiseless(law)
    fit = point_fit(data, spec, n_starts=24, seed=1)
    assert fit.converged
    # Noiseless data: the truth is the optimum, so the fit can only sit above its objective
    # by what the optimizer leaves. L-BFGS-B stops once a step lowers f by less than
    # FTOL * max(|f|, 1) (scipy's rule), which bounds the last step, not the gap to the
    # optimum: at a linear rate r the gap is r / (1 - r) such steps, and a CI run left 115 of
    # them (6.7e-7 above the truth at f = 2.64). The allowance is 1,000 steps' worth (2.2e-6
    # here, f < 1); any one coefficient 1% off raises f by 4.0e-6 (gamma) to 7.0e-4 (E) here.
    f_truth = huber_objective(spec, data, truth)
    assert fit.objective <= f_truth + 1e3 * FTOL * max(abs(f_truth), 1.0)
    # and the coefficients themselves: measured worst relative error 1.3e-4 (c of
    # looped_total, where E and c trade off), so 1e-3 leaves a margin of 7
    for name, value in truth.items():
        assert fit.params[name] == pytest.approx(value, rel=1e-3), name
    boot = bootstrap(fit, data, n_boot=5, seed=2)
    assert boot.boot_unconverged == 0 and boot.boot.shape == (5, len(truth))
    point = pd.DataFrame({"N": [1e9], "D": [1e10], "T_m": [4.0]})
    for kind in ("predictive", "epistemic"):
        bands = boot.bands(point, kind=kind)
        assert bands["lower_90"].iloc[0] <= bands["median"].iloc[0] <= bands["upper_90"].iloc[0]
        assert bands["upper_90"].iloc[0] - bands["lower_90"].iloc[0] < 1e-3  # noiseless


def test_huber_objective_is_the_fits_objective():
    spec, data, truth = _noiseless("chinchilla")
    fit = point_fit(data, spec, n_starts=4, seed=1)
    assert huber_objective(spec, data, fit.params) == pytest.approx(fit.objective, rel=1e-12)
    # E is additive in the law: raising it by dE moves every noiseless prediction y to y + dE
    d_e = 0.01 * truth["E"]
    y = data.frame["loss"].to_numpy()
    by_hand = np.sum(huber(np.log(y) - np.log(y + d_e), 1e-3))
    off = huber_objective(spec, data, {**truth, "E": truth["E"] + d_e})
    assert off == pytest.approx(by_hand, rel=1e-6)  # y holds noise of sd 1e-12
    with pytest.raises(BayeslawError, match=r"lack free parameter\(s\) \['beta'\]"):
        huber_objective(spec, data, {k: v for k, v in truth.items() if k != "beta"})


def test_baseline_warns_when_the_optimizer_does_not_converge():
    """Two iterations cannot reach the optimum: L-BFGS-B says so, and so must the baseline."""
    spec, data, _ = _noiseless("chinchilla")
    with pytest.warns(BaselineConvergenceWarning, match=r"did not report convergence "
                      r"\(STOP: TOTAL NO\. OF ITERATIONS REACHED LIMIT\); none of the 4 "
                      r"starts did.*Raise maxiter \(now 2\)"):
        fit = point_fit(data, spec, n_starts=4, seed=1, maxiter=2)
    assert not fit.converged
    with pytest.warns(BaselineConvergenceWarning,
                      match=r"^3 of 3 baseline bootstrap refits did not report convergence"):
        boot = bootstrap(fit, data, n_boot=3, seed=2, maxiter=2)
    assert boot.boot_unconverged == 3 and not boot.converged
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged: nothing said
        good = point_fit(data, spec, n_starts=4, seed=1)
        assert bootstrap(good, data, n_boot=3, seed=2).boot_unconverged == 0


def test_baseline_refuses_an_objective_that_is_nowhere_finite(monkeypatch):
    """A non-finite objective is a large finite penalty to the line search, never a fit."""
    from bayeslaw.evaluation import baseline

    spec, data, _ = _noiseless("chinchilla")
    monkeypatch.setattr(baseline, "huber", lambda r, delta: np.full(np.shape(r), np.nan))
    with pytest.raises(BayeslawError, match="not finite at the optimum of any of its 4 starts"):
        point_fit(data, spec, n_starts=4, seed=1)


def test_baseline_predictive_band_covers_new_noise():
    """Fitted on one noisy replicate, the predictive band holds about its share of another.

    Same design, same truth, fresh Student-t noise (the spec's family, nu = 6, scale 0.02): the
    predictive 90% / 50% bands should hold 90% / 50% of the 360 new points. The count is
    binomial given the band (sd 0.016 / 0.026) and the band's quantiles come from 360
    residuals (about as much again): 3 sd of the sum is 0.07 / 0.11. The epistemic band (the
    old baseline band, parameter uncertainty alone) held 16-18% on four such pairs.
    """
    spec = bl.load_spec(law="looped_total").replace_effects(())
    table = design((5e7, 1.5e8, 4.5e8, 1.4e9), (2, 4, 8), np.geomspace(1e8, 2e10, 30))
    truth = {k: v for k, v in DEFAULT_TRUTH.items() if k in spec.free_params}
    train, _ = simulate(spec, table, truth, sigma=0.02, sigma_spread=0.0, seed=0)
    new, _ = simulate(spec, table, truth, sigma=0.02, sigma_spread=0.0, seed=1)
    data = bl.load(train)
    fit = bootstrap(point_fit(data, spec, n_starts=8, seed=1), data, n_boot=40, seed=2)
    y, points = new["loss"].to_numpy(), new.drop(columns="loss")
    pred = fit.bands(points, (0.5, 0.9))
    epi = fit.bands(points, (0.5, 0.9), "epistemic")
    assert fit.draws(points).shape == (40 * N_NOISE, len(y))
    assert fit.draws(points, "epistemic").shape == (40, len(y))
    np.testing.assert_array_equal(pred["median"], epi["median"])  # the best fit, both kinds
    cov90 = metrics.coverage(y, pred["lower_90"], pred["upper_90"], 0.9).rate
    cov50 = metrics.coverage(y, pred["lower_50"], pred["upper_50"], 0.5).rate
    assert abs(cov90 - 0.9) < 0.07 and abs(cov50 - 0.5) < 0.11, (cov90, cov50)
    assert metrics.coverage(y, epi["lower_90"], epi["upper_90"], 0.9).rate < 0.3
    assert ((pred["upper_90"] - pred["lower_90"]) > (epi["upper_90"] - epi["lower_90"])).all()
    with pytest.raises(BayeslawError, match="kind must be 'predictive' or 'epistemic', got 'x'"):
        fit.bands(points, kind="x")
    with pytest.raises(BayeslawError, match="no bootstrap residuals"):
        replace(fit, resid=None).draws(points)
