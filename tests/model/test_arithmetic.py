"""The model's effects arithmetic (``bayeslaw.model.arithmetic``) against closed forms.

The graph, the numpy posterior layer and the simulator all call the kernel, so comparing them
with each other cannot catch a wrong formula in it: these tests compare it with hand values and
with LKJ's marginals.  The noise model's arithmetic is tested in ``test_noise.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayeslaw.model import arithmetic as kernel


def test_link_value_adds_deviations_on_the_link_scale():
    pop, d1, d2 = 2.0, np.array([0.1, -0.3]), np.array([0.05, 0.2])
    np.testing.assert_allclose(kernel.link_value(np, pop, "log", [d1, d2]),
                               np.exp(np.log(2.0) + d1 + d2), rtol=1e-15)
    np.testing.assert_allclose(kernel.link_value(np, pop, "identity", [d1, d2]),
                               2.0 + d1 + d2, rtol=1e-15)
    assert kernel.link_value(np, pop, "log", []) == 2.0
    assert kernel.link_value(np, 0.0, "log", [d1]).tolist() == [0.0, 0.0]  # defined at 0


@pytest.mark.parametrize("k", [3, 4])
def test_vine_partial_correlations_give_lkj_marginals(k):
    """Under LKJ(eta) every correlation of a k x k matrix is 2 Beta(a, a) - 1 with
    a = eta - 1 + k / 2 (Lewandowski et al. 2009); the vine's independent partial correlations
    built into a Cholesky factor must give exactly that, also for the correlations that are
    not themselves partials (rows after the first). Seeded; KS at the 0.1% level over 50,000
    matrices (a wrong Beta shape, by 0.5, is rejected with p < 1e-10 at this size)."""

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


def test_mvn_chol_logp_against_scipy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + 0.5 * np.eye(3)
    chol = np.linalg.cholesky(cov)
    delta = rng.normal(size=(6, 3))
    np.testing.assert_allclose(kernel.mvn_chol_logp(np, delta, chol, 3),
                               stats.multivariate_normal(np.zeros(3), cov).logpdf(delta),
                               rtol=1e-12)
    # batched factors (the graph broadcasts the factor to the levels' batch shape)
    np.testing.assert_allclose(kernel.mvn_chol_logp(np, delta, chol[None], 3),
                               kernel.mvn_chol_logp(np, delta, chol, 3), rtol=1e-15)


def test_correlated_levels_prior_draws():
    """The ``[correlation]`` levels' prior draws (``levels.mvn_random``) as PyMC calls it: the
    parameters with a batch axis of 1 and ``size`` the levels; mean and covariance within
    5 standard errors of the draws' (20,000 levels: se of a covariance entry about 0.01)."""
    from bayeslaw.model.levels import mvn_random

    chol = np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.2, -0.3, 0.5]])
    mu = np.array([1.0, 2.0, 3.0])
    got = mvn_random(mu[None], chol[None], rng=np.random.default_rng(1), size=(20_000,))
    assert got.shape == (20_000, 3)
    np.testing.assert_allclose(got.mean(axis=0), mu, atol=5 * np.sqrt(1.25 / 20_000))
    np.testing.assert_allclose(np.cov(got.T), chol @ chol.T, atol=0.05)
