"""The warm start: the mode and curvature of a known posterior, and the standardized
coordinates reproducing the log density and its gradient exactly (no sampling).

The models are compiled by :func:`bayeslaw.inference.compiled.compile_model`, as ``fit`` compiles
them; ``tests/test_compiled.py`` checks that its raw density is nutpie's own."""

import warnings

import numpy as np
import pytest

from bayeslaw.inference.compiled import compile_model
from bayeslaw.inference.warmstart import LogDensity, Mode, find_mode, standardized


def _conjugate_model():
    import pymc as pm

    y = np.random.default_rng(3).normal(1.5, 1.0, size=40)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.LogNormal("s", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=y)
    return model, y


def _compile(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        return compile_model(model)


@pytest.fixture(scope="module")
def conjugate():
    """y_i ~ N(mu, 1), mu ~ N(0, 10), log(s) ~ N(0, 1) (a second, independent coordinate):
    the posterior of mu is normal with known mean and variance."""
    model, y = _conjugate_model()
    density = _compile(model)
    post_var = 1.0 / (len(y) + 1.0 / 100.0)
    return density, y.sum() * post_var, post_var


def _names(compiled):
    return list(compiled.shape_info[0])


def test_mode_and_curvature_of_a_normal_posterior(conjugate):
    density, mean, var = conjugate
    density.identity()
    compiled = density.compiled
    mode = find_mode(compiled, np.array([-3.0, 2.0]))
    assert mode is not None
    i, j = _names(compiled).index("mu"), _names(compiled).index("s_log__")
    # exact for a normal posterior up to the optimizer's tolerance and the finite differences
    np.testing.assert_allclose(mode.point[i], mean, atol=1e-6)
    np.testing.assert_allclose(mode.cov[i, i], var, rtol=1e-4)
    # log(s) ~ N(0, 1) with the log-Jacobian: the density of u = log s is N(0, 1), mode 0
    np.testing.assert_allclose(mode.point[j], 0.0, atol=1e-6)
    np.testing.assert_allclose(mode.cov[j, j], 1.0, rtol=1e-4)
    assert abs(mode.cov[i, j]) < 1e-6


@pytest.mark.parametrize("dense", [True, False])
def test_standardized_coordinates_keep_the_density(conjugate, monkeypatch, dense):
    """logp(z) = logp(shift + L z), grad_z = L^T grad_x, for the dense factor and for the
    diagonal one that models above DENSE_MAX_DIM coordinates get."""
    import bayeslaw.inference.warmstart as ws

    density = conjugate[0]
    if not dense:  # the layout is chosen when compiling
        monkeypatch.setattr(ws, "DENSE_MAX_DIM", 1)
        density = _compile(_conjugate_model()[0])
    assert density.dense is dense
    compiled = density.compiled
    cov = np.array([[0.04, 0.01], [0.01, 0.09]])
    mode = Mode(np.array([0.7, -0.2]), cov, 0)
    factor = np.linalg.cholesky(cov) if dense else np.diag(np.sqrt(np.diag(cov)))
    np.testing.assert_allclose(mode.factor(), factor)
    zs = np.random.default_rng(0).normal(size=(5, 2))
    density.identity()
    plain = LogDensity(compiled)
    raw = [plain(mode.point + factor @ z) for z in zs]
    std = standardized(density, compiled, mode)
    wrapped = LogDensity(std)
    for z, (lp_x, g_x) in zip(zs, raw, strict=True):
        lp_z, g_z = wrapped(z)
        np.testing.assert_allclose(lp_z, lp_x, rtol=1e-12)
        np.testing.assert_allclose(g_z, factor.T @ g_x, rtol=1e-10, atol=1e-12)
    start = std.initial_point_func(4)
    np.testing.assert_array_equal(start, std.initial_point_func(4))  # seeded per chain
    assert not np.array_equal(start, std.initial_point_func(5))


def test_a_flat_direction_gives_no_mode():
    """A ridge (the data pin only the sum of two flat parameters) has no proper mode:
    ``find_mode`` says so instead of returning a singular curvature."""
    import pymc as pm

    with pm.Model() as model:
        a, b = pm.Flat("a"), pm.Flat("b")
        pm.Normal("y", a + b, 1.0, observed=np.zeros(3))
    assert find_mode(_compile(model).compiled, np.zeros(2)) is None
