"""The model's arithmetic (``bayeslaw.model.arithmetic``) against closed forms and hand recursions.

The graph, the numpy posterior layer and the simulator all call the kernel, so comparing them
with each other cannot catch a wrong formula in it: these tests compare it with scipy and with
the model's equations written out by hand (``bayeslaw.spec.parts.Likelihood``'s docstring).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from bayeslaw.model import arithmetic as kernel


def test_link_value_adds_deviations_on_the_link_scale():
    pop, d1, d2 = 2.0, np.array([0.1, -0.3]), np.array([0.05, 0.2])
    np.testing.assert_allclose(kernel.link_value(np, pop, "log", [d1, d2]),
                               np.exp(np.log(2.0) + d1 + d2), rtol=1e-15)
    np.testing.assert_allclose(kernel.link_value(np, pop, "identity", [d1, d2]),
                               2.0 + d1 + d2, rtol=1e-15)
    assert kernel.link_value(np, pop, "log", []) == 2.0
    assert kernel.link_value(np, 0.0, "log", [d1]).tolist() == [0.0, 0.0]  # defined at 0


def test_noise_scale_falls_with_D_and_follows_the_law():
    sigma, decay, log_d, mu = 0.02, 0.3, np.log(np.array([0.5, 1.0, 4.0])), np.array([3, 2, 1.])
    np.testing.assert_allclose(kernel.noise_scale(np, sigma, log_d=log_d, decay=decay, mu=mu),
                               sigma * np.exp(log_d) ** -decay * mu, rtol=1e-14)
    assert kernel.noise_scale(np, sigma) == sigma


@pytest.mark.parametrize("family", ["student_t", "normal"])
def test_density_terms_reassemble_the_log_density(family):
    rng = np.random.default_rng(0)
    y, loc, scale, nu = rng.normal(size=50), rng.normal(size=50), rng.uniform(0.1, 2, 50), 4.5
    z = (y - loc) / scale
    constant, factor, core = kernel.density_terms(np, special.gammaln, family, z, nu)
    got = constant - np.log(scale) + factor * core
    want = (stats.t.logpdf(y, nu, loc, scale) if family == "student_t"
            else stats.norm.logpdf(y, loc, scale))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_conditional_terms_are_the_ar1_and_walk_equations():
    mu, scale, resid_prev, phi = np.array([2.0, 1.9]), np.array([0.1, 0.2]), 0.05, 0.6
    follows = np.array([0.0, 1.0])  # a run's first point, then one that follows it
    loc, s = kernel.conditional_terms(np, mu, scale, resid_prev, follows, ar1=phi, ratio=2.0)
    np.testing.assert_allclose(loc, [2.0, 1.9 + phi * 2.0 * 0.05])
    np.testing.assert_allclose(s, [0.1, 0.2 * np.sqrt(1 - phi**2)])
    loc, s = kernel.conditional_terms(np, mu, scale, resid_prev, follows, walk_var=0.09)
    np.testing.assert_allclose(loc, [2.0, 1.95])
    np.testing.assert_allclose(s, np.sqrt(scale**2 + 0.09))


def test_walk_variance_of_a_first_point_and_a_step():
    log_d, prev = np.array([1.0, 3.0]), np.array([1.0, 1.0])
    var = kernel.walk_variance(np, log_d, prev, np.array([0.0, 1.0]), 0.2, 0.1, 0.5, 0.5)
    np.testing.assert_allclose(var, [0.1**2 + 0.2**2 * 0.5, 0.2**2 * 2.0], rtol=1e-9)
    rel = kernel.walk_variance(np, log_d, prev, 1.0, 0.2, 0.1, 0.5, 0.5, mu=np.array([2, 3.]))
    np.testing.assert_allclose(rel, 0.2**2 * np.array([0.0, 2.0]) * np.array([4.0, 9.0]),
                               atol=1e-12)


def test_draw_curves_is_the_ar1_recursion_along_each_run():
    """Two runs of three points: standardized residuals e_i = phi e_(i-1) + sqrt(1-phi^2) z_i
    within a run, restarting at each run's first point; the loss is mu + scale * e."""
    rng = np.random.default_rng(1)
    runs = np.array(["a", "a", "a", "b", "b", "b"])
    prev, first = kernel.previous_rows(runs)
    mu, scale, z = rng.normal(size=(1, 6)), rng.uniform(0.1, 1, (1, 6)), rng.normal(size=(1, 6))
    phi = 0.7
    e = np.empty(6)
    for i in range(6):
        e[i] = z[0, i] if first[i] else phi * e[i - 1] + np.sqrt(1 - phi**2) * z[0, i]
    got = kernel.draw_curves(mu, scale, z, prev, first, ar1=phi)
    np.testing.assert_allclose(got[0], mu[0] + scale[0] * e, rtol=1e-12)
    walk = kernel.draw_curves(mu, scale, z, prev, first, walk_var=np.full((1, 6), 0.04))
    steps = np.sqrt(scale[0] ** 2 + 0.04) * z[0]
    want = np.concatenate([np.cumsum(steps[:3]), np.cumsum(steps[3:])])
    np.testing.assert_allclose(walk[0], mu[0] + want, rtol=1e-12)


@pytest.mark.parametrize("k", [3, 4])
def test_vine_partial_correlations_give_lkj_marginals(k):
    """Under LKJ(eta) every correlation of a k x k matrix is 2 Beta(a, a) - 1 with
    a = eta - 1 + k / 2 (Lewandowski et al. 2009); the vine's independent partial correlations
    built into a Cholesky factor must give exactly that, also for the correlations that are
    not themselves partials (rows after the first). Seeded; KS at the 0.1% level over 50,000
    matrices (a wrong Beta shape, by 0.5, is rejected with p < 1e-10 at this size)."""
    from scipy import stats

    from bayeslaw.model.arithmetic import correlation_cholesky, vine_shapes

    eta, n = 2.0, 50_000
    rng = np.random.default_rng(11)
    partials = {(level, row): 2 * rng.beta(b, b, size=n) - 1
                for level, row, b in vine_shapes(k, eta)}
    chol = correlation_cholesky(np, partials, k)
    corr = chol @ np.swapaxes(chol, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=1, axis2=2), 1.0, rtol=1e-12)
    a = eta - 1 + k / 2
    for i in range(k):
        for j in range(i + 1, k):
            assert stats.kstest((corr[:, i, j] + 1) / 2, stats.beta(a, a).cdf).pvalue > 1e-3
    wrong = stats.kstest((corr[:, k - 2, k - 1] + 1) / 2, stats.beta(a + 0.5, a + 0.5).cdf)
    assert wrong.pvalue < 1e-10
