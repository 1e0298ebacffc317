"""The noise model's arithmetic (``bayeslaw.model.noise``) against closed forms and hand recursions.

The graph, the numpy posterior layer and the simulator all call it, so comparing them with each
other cannot catch a wrong formula in it: these tests compare it with scipy and with the noise
model's equations written out by hand (``bayeslaw.model.noise``'s docstring).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from bayeslaw.model import noise as kernel


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
