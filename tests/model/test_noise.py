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


#: Each family's own parameters and its density at y (scipy): the contaminated normal is
#: 1 - share of N(loc, scale) and share of N(loc, (1 + excess) scale).
FAMILIES = {
    "student_t": ((4.5,), lambda y, loc, s: stats.t.logpdf(y, 4.5, loc, s)),
    "normal": ((), lambda y, loc, s: stats.norm.logpdf(y, loc, s)),
    "contaminated": ((0.07, 11.0), lambda y, loc, s: np.log(
        0.93 * stats.norm.pdf(y, loc, s) + 0.07 * stats.norm.pdf(y, loc, 12.0 * s))),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_density_terms_reassemble_the_log_density(family):
    rng = np.random.default_rng(0)
    # residuals out to 40 scales, where the contaminated normal's outlier part dominates
    y, loc, scale = rng.normal(size=50) * 8, rng.normal(size=50), rng.uniform(0.1, 2, 50)
    own, density = FAMILIES[family]
    constant, factor, core = kernel.density_terms(np, special.gammaln, family,
                                                  (y - loc) / scale, *own)
    got = constant - np.log(scale) + factor * core
    np.testing.assert_allclose(got, density(y, loc, scale), rtol=1e-12)


def test_contaminated_draws_have_the_mixture_distribution():
    """200,000 draws with share 0.07 and scale 12: the share beyond 5 sds of the bulk (where
    only the outlier part reaches, P = 0.07 * P(|N| > 5/12) = 0.0474) and the variance
    (0.93 + 0.07 * 144 = 11.01) match, each within about 4 of its standard errors."""
    z = kernel.standard_noise(np.random.default_rng(3), "contaminated", (200_000,), 0.07, 11.0)
    tail = 0.07 * 2 * stats.norm.sf(5 / 12) + 0.93 * 2 * stats.norm.sf(5)
    assert abs(np.mean(np.abs(z) > 5) - tail) < 4 * np.sqrt(tail * (1 - tail) / 200_000)
    var = 0.93 + 0.07 * 144
    # the variance of z^2: E z^4 - var^2 with E z^4 = 3 (0.93 + 0.07 * 12^4)
    se = np.sqrt((3 * (0.93 + 0.07 * 12**4) - var**2) / 200_000)
    assert abs(np.mean(z**2) - var) < 4 * se


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
