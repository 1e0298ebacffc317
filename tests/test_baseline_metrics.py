"""The least-squares baseline and the forecast metrics, against known values."""

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw import metrics
from bayeslaw.baseline import bootstrap, huber, point_fit
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


@pytest.mark.parametrize("law", ["looped_total", "chinchilla"])
def test_baseline_recovers_noiseless_coefficients(law):
    spec = bl.load_spec(law=law).replace_effects(())
    T = (2, 4, 8) if law == "looped_total" else None
    table = design((5e7, 1.5e8, 4.5e8, 1.4e9), T, np.geomspace(1e8, 2e10, 12))
    truth = {k: v for k, v in DEFAULT_TRUTH.items() if k in spec.free_params}
    frame, _ = simulate(spec, table, truth, sigma=1e-12, sigma_spread=0.0, seed=0)
    data = bl.load(frame)
    fit = point_fit(data, spec, n_starts=24, seed=1)
    for name, value in truth.items():
        assert fit.params[name] == pytest.approx(value, rel=1e-3), name
    boot = bootstrap(fit, data, n_boot=5, seed=2)
    bands = boot.bands(pd.DataFrame({"N": [1e9], "D": [1e10], "T_m": [4.0]}))
    assert bands["lower_90"].iloc[0] <= bands["median"].iloc[0] <= bands["upper_90"].iloc[0]
    assert bands["upper_90"].iloc[0] - bands["lower_90"].iloc[0] < 1e-3  # noiseless
