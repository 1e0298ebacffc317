"""``fit(..., method="by_curve")``: the shared values' estimators against exact answers, and one
fit of simulated curves (each curve's coefficients inside its intervals, its second half's
forecast calibrated over curves, the assembled draws consistent with the joint model's).

The curves are simulated here in numpy, independently of the model's code, from the shipped
``curve_bend`` spec's own population (shapes from its fixed priors, a level and a noise scale
per curve around shared values, Student-t noise): the model the method fits is the one that
made the data, so its intervals and bands should hold what they claim.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.evaluation.metrics import clopper_pearson
from bayeslaw.inference import by_curve

from ..calibration import assert_band_shares

CURVES, SEED = 12, 3
#: shapes from curve_bend's fixed priors (link scale): logit f ~ N(0, 1.1), log beta ~
#: N(log 0.4, 0.7), logit q ~ N(1.46, 1.4); levels log m ~ N(0, 0.15); noise scales
#: 0.01 exp(0.3 z); Student-t noise with NU degrees of freedom
NU = 5.0
SPEC = {"law": "curve_bend", "reference": {"D": 1.0}}


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def simulate(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Curves of 16 points from D = 0.05 to 8 (the fit sees D <= 1) and their coefficients."""
    rng = np.random.default_rng(seed)
    truth = pd.DataFrame({
        "run": [f"c{r:02d}" for r in range(CURVES)],
        "m": np.exp(0.15 * rng.standard_normal(CURVES)),
        "f": _expit(1.1 * rng.standard_normal(CURVES)),
        "beta": 0.4 * np.exp(0.7 * rng.standard_normal(CURVES)),
        "q": _expit(1.46 + 1.4 * rng.standard_normal(CURVES)),
        "sigma": 0.01 * np.exp(0.3 * rng.standard_normal(CURVES))})
    D = np.geomspace(0.05, 8.0, 16)
    rows = []
    for t in truth.itertuples():
        law = t.m * ((1 - t.f) + t.f / ((1 - t.q) + t.q * D ** (t.beta / t.q)))
        loss = law + t.sigma * rng.standard_t(NU, len(D))
        rows += [{"run": t.run, "D": d, "loss": y} for d, y in zip(D, loss, strict=True)]
    return pd.DataFrame(rows), truth.set_index("run")


@pytest.fixture(scope="module")
def curves_fit():
    frame, truth = simulate(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bl.ConvergenceWarning)  # judged by the test below
        # 4 x 500 draws (the test's time; a curve that fails is sampled four times longer)
        fit = bl.fit(bl.load(frame[frame["D"] <= 1.0]), SPEC, seed=SEED, progress=False,
                     method="by_curve", draws=500, tune=500)
    return fit, frame[frame["D"] > 1.0], truth


# ---------------------------------------------------------------------------------------------
# the shared values' estimators against exact answers


def test_population_mode_matches_the_exact_marginal_likelihoods_mode():
    """Curves whose data say ``y_r ~ N(u_r, tau)`` about ``u_r``, drawn from their exact
    posteriors under the first pass's prior: the importance-weighted mode of ``(mu, s)``
    equals the mode of the exact marginal likelihood ``prod N(y_r; mu, sqrt(s^2 + tau^2))``
    times the same hyperpriors (computed here in closed form), with curves at the centre
    itself read through kernel densities of their draws."""
    rng = np.random.default_rng(0)
    n, tau, first = 60, 0.1, (0.0, 2.0)
    y = 0.3 + 0.4 * rng.standard_normal(n) + tau * rng.standard_normal(n)
    post_var = 1 / (1 / first[1] ** 2 + 1 / tau ** 2)
    post_mean = post_var * (first[0] / first[1] ** 2 + y / tau ** 2)
    draws = [m + np.sqrt(post_var) * rng.standard_normal(4000) for m in post_mean]
    # and 20 curves at the centre itself (too few points for a scale of their own), whose data
    # say z_r ~ N(mu, tau): their first-pass posteriors are normal too
    z = 0.3 + tau * rng.standard_normal(20)
    z_mean = post_var * (first[0] / first[1] ** 2 + z / tau ** 2)
    at_centre = [m + np.sqrt(post_var) * rng.standard_normal(4000) for m in z_mean]
    centre, spread = (0.0, 2.0), stats.halfnorm(scale=1.0)
    mu, s = by_curve.population_mode(draws, first, centre, spread, at_centre)

    def minus(theta):
        m, sd = theta[0], np.exp(theta[1])
        return -(stats.norm.logpdf(y, m, np.hypot(sd, tau)).sum()
                 + stats.norm.logpdf(z, m, tau).sum() + stats.norm.logpdf(m, *centre)
                 + spread.logpdf(sd) + np.log(sd))

    exact = optimize.minimize(minus, [0.0, np.log(0.3)], method="Nelder-Mead",
                              options={"xatol": 1e-6, "fatol": 1e-9}).x
    # Monte Carlo error of the importance weights with 4,000 draws a curve, and the kernels'
    # widening of the 20 centre curves' spread (about 5%): well under 0.01
    assert mu == pytest.approx(exact[0], abs=0.01)
    assert s == pytest.approx(np.exp(exact[1]), abs=0.01)


def test_shared_nu_is_the_mode_of_the_product_of_the_curves_likelihoods():
    """Curves whose data say ``l_r ~ N(log nu, tau)``, drawn from their exact posteriors in
    ``log nu`` under the first pass's prior: the kernel estimate's mode equals the exact
    mode of ``prod N(l_r; log nu, tau)`` times the spec's Gamma prior, within the grid's step
    and the kernel's widening (each curve's spread grows by its bandwidth, about 5%)."""
    rng = np.random.default_rng(1)
    n, tau = 30, 0.6
    a, b = by_curve.FIRST_NU
    ell = np.log(3.0) + tau * rng.standard_normal(n)
    post_var = 1 / (1 / b ** 2 + 1 / tau ** 2)
    post_mean = post_var * (a / b ** 2 + ell / tau ** 2)
    draws = [m + np.sqrt(post_var) * rng.standard_normal(4000) for m in post_mean]
    hyper = stats.gamma(4.0, scale=1 / 0.4)
    nu = by_curve.shared_nu(draws, hyper)
    grid = np.log(by_curve.NU_GRID)
    exact = (stats.norm.logpdf(ell[:, None], grid[None, :], tau).sum(axis=0)
             + hyper.logpdf(by_curve.NU_GRID) + grid)
    assert nu == pytest.approx(by_curve.NU_GRID[np.argmax(exact)], rel=0.05)


# ---------------------------------------------------------------------------------------------
# one fit of simulated curves


@pytest.mark.slow
def test_the_shared_values_are_near_the_truth_and_a_curve_that_did_not_mix_is_named(curves_fit):
    """Not every curve mixes: with seven points, a curve's shape can be fitted two ways (on
    the same simulation with 24 curves one chain of curve c15 held q near 0.29, the others
    near 0.79), which NUTS does not cross, jointly or alone; the fit then says so, naming the
    curve's variable, after sampling the curve again."""
    fit, _, _ = curves_fit
    assert fit.method == "by_curve" and not fit.approximate
    if not fit.diagnostics.ok:
        assert fit.diagnostics.worst_rhat_var.endswith("_run"), fit.diagnostics
        assert fit.provenance["sampling"]["sampled_again"], "a failing curve is sampled again"
    shared = fit.provenance["sampling"]["shared"]
    # the curves pin the shared values to about their standard errors: the level's centre to
    # 0.15 / sqrt(12) = 0.04 and the noise's log centre to 0.3 / sqrt(12) = 0.09 (four each,
    # and 0.1 more for the noise: each curve's scale is itself estimated from seven points)
    assert abs(shared["effects"]["m"][0] - 0.0) < 4 * 0.15 / np.sqrt(CURVES)
    assert abs(shared["sigma"][0] - np.log(0.01)) < 4 * 0.3 / np.sqrt(CURVES) + 0.1
    # nu from 12 short curves: within a factor of 3 (its posterior in log nu is wide)
    assert NU / 3 < shared["nu"] < 3 * NU


@pytest.mark.slow
def test_the_draws_hold_the_joint_models_relations(curves_fit):
    fit, _, _ = curves_fit
    m, m_dev, m_run = fit.draws("m"), fit.draws("m_by_run"), fit.draws("m_run")
    np.testing.assert_allclose(m_run, m[:, None] * np.exp(m_dev), rtol=1e-10)
    f, f_dev, f_run = fit.draws("f"), fit.draws("f_by_run"), fit.draws("f_run")
    np.testing.assert_allclose(np.log(f_run / (1 - f_run)),
                               np.log(f / (1 - f))[:, None] + f_dev, rtol=1e-8, atol=1e-10)
    sigma, dev = fit.draws("sigma"), fit.draws("sigma_log_dev")
    np.testing.assert_allclose(fit.draws("sigma_run"), sigma[:, None] * np.exp(dev), rtol=1e-10)
    assert np.ptp(fit.draws("nu")) == 0 and np.ptp(sigma) == 0  # the shared values: constant
    assert np.isfinite(fit.idata.log_likelihood["loss"].values).all()


@pytest.mark.slow
def test_each_curves_coefficients_inside_their_intervals(curves_fit):
    """The truth of each coefficient inside its curve's 90% interval for a share of the 12
    curves whose 95% Clopper-Pearson interval holds 90% (the curves are independent)."""
    fit, _, truth = curves_fit
    runs = list(fit.idata.posterior["run"].values)
    for name in ("m", "f", "beta", "q"):
        lo, hi = np.quantile(fit.draws(f"{name}_run"), [0.05, 0.95], axis=0)
        t = truth.loc[runs, name].to_numpy()
        k = int(((lo <= t) & (t <= hi)).sum())
        low, high = clopper_pearson(k, len(runs))
        assert low <= 0.9 <= high, f"{name}: {k} of {len(runs)} curves inside the 90% interval"


@pytest.mark.slow
def test_second_half_forecasts_calibrated_per_curve(curves_fit):
    """Each curve's last point (8x its last fitted D) inside the 50% and 90% predictive bands
    for a share of the curves whose 95% Clopper-Pearson interval holds the level."""
    fit, later, _ = curves_fit
    last = later[later["D"] == later["D"].max()]
    table = bl.predict(fit, last, probs=(0.5, 0.9), seed=SEED).table
    assert_band_shares(table)


@pytest.mark.slow
def test_saved_and_loaded_with_its_per_curve_diagnostics_and_reported(curves_fit, tmp_path):
    """The stacked draws survive the fit file (each curve's energy and divergences with them:
    the loaded fit's diagnostics are the same), forecast the same, and make a report."""
    from bayeslaw.posterior.result import Fit
    from bayeslaw.report.build import build_report

    fit, later, _ = curves_fit
    back = Fit.load(fit.save(tmp_path / "fit.nc"))
    assert back.method == "by_curve" and not back.approximate
    assert back.diagnostics.to_dict() == fit.diagnostics.to_dict()
    assert np.isfinite(back.diagnostics.min_bfmi)  # per curve and chain, not NaN
    np.testing.assert_array_equal(bl.predict(back, later, seed=1).draws,
                                  bl.predict(fit, later, seed=1).draws)
    assert "Diagnostics" in build_report(back).to_markdown()


def test_specs_it_cannot_split_by_curve_are_refused():
    frame, _ = simulate(SEED)
    data = bl.load(frame[frame["D"] <= 1.0])
    with pytest.raises(SpecError, match=r"\[correlation\]"):
        bl.fit(data, "curve_bend_population", method="by_curve", progress=False)
    one = bl.load(frame[(frame["D"] <= 1.0) & (frame["run"] == "c00")])
    with pytest.raises(SpecError, match="one run"):
        bl.fit(one, SPEC, method="by_curve", progress=False)
