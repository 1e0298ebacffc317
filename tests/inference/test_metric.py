"""The pilot run's block metric (:mod:`bayeslaw.inference.metric`): coordinates grouped by
level, the block covariance, the sparse affine map of large models, and a posterior sampled
through the metric equal to the exact one (a linear-Gaussian model with a ridge per level)."""

import warnings

import numpy as np
import pytest

import bayeslaw.inference.warmstart as ws
from bayeslaw.inference.compiled import SPARSE_WIDTH, compile_model, sparse_rows
from bayeslaw.inference.metric import (
    block_factor,
    coordinate_blocks,
    pilot_metric,
)
from bayeslaw.inference.warmstart import LogDensity

RUNS, POINTS, NOISE = 3, 10, 0.1


def _ridge_model():
    """a_r, b_r ~ N(0, 1), y_rk ~ N(a_r + b_r, 0.1), s ~ LogNormal(0, 1) (a coordinate of its
    own): the data pin a_r + b_r, so each run's (a_r, b_r) lies on a ridge (correlation about
    -0.999).  The posterior is normal with a known mean and covariance."""
    import pymc as pm

    rng = np.random.default_rng(11)
    truth = rng.normal(size=RUNS)
    y = truth[:, None] + rng.normal(0, NOISE, size=(RUNS, POINTS))
    with pm.Model(coords={"run": [f"r{i}" for i in range(RUNS)]}) as model:
        a = pm.Normal("a", 0.0, 1.0, dims="run")
        b = pm.Normal("b", 0.0, 1.0, dims="run")
        pm.LogNormal("s", 0.0, 1.0)
        pm.Normal("y", (a + b)[:, None], NOISE, observed=pm.Data("y_obs", y))
    precision = np.eye(2) + POINTS / NOISE**2 * np.ones((2, 2))
    cov = np.linalg.inv(precision)
    means = np.array([cov @ (np.full(2, row.sum() / NOISE**2)) for row in y])
    return model, means, cov


def _compile(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        return compile_model(model)


def test_sparse_rows_store_a_lower_triangular_factor():
    factor = np.array([[2.0, 0, 0], [0.5, 3.0, 0], [0, 0, 4.0]])
    body = sparse_rows(factor)
    values = body[:3 * SPARSE_WIDTH].reshape(3, SPARSE_WIDTH)
    columns = body[3 * SPARSE_WIDTH:].reshape(3, SPARSE_WIDTH).astype(int)
    rebuilt = np.zeros((3, 3))
    for i in range(3):
        for k in range(SPARSE_WIDTH):
            rebuilt[i, columns[i, k]] += values[i, k]
    np.testing.assert_array_equal(rebuilt, factor)
    np.testing.assert_array_equal(values[:, 0], np.diag(factor))  # the diagonal first
    wide = np.tril(np.ones((SPARSE_WIDTH + 1, SPARSE_WIDTH + 1)))
    with pytest.raises(ValueError, match=f"row {SPARSE_WIDTH} of the factor has"):
        sparse_rows(wide)


def test_block_factor_keeps_blocks_and_their_link_to_the_globals():
    """L L^T equals the draws' covariance within each block, between a block and the
    globals and among the globals, exactly (a sample identity of the regression); two
    blocks covary only through the globals; a row limit drops the regression first."""
    rng = np.random.default_rng(2)
    g = rng.normal(size=(5000, 2))  # two globals
    b1 = g @ [[1.0, 0.5], [0.2, 0.0]] + rng.multivariate_normal([0, 0], [[1, .9], [.9, 1]], 5000)
    b2 = g @ [[0.0, 0.3], [1.0, 0.0]] + rng.normal(size=(5000, 2))
    draws = np.column_stack([b1[:, 0], g[:, 0], b1[:, 1], b2, g[:, 1]]) + [1, 2, 3, 4, 5, 6]
    block = np.array([0, 1, 0, 2, 2, 3])  # blocks {0, 2} and {3, 4}; globals 1 and 5
    mean, factor = block_factor(draws, block)
    np.testing.assert_allclose(mean, draws.mean(axis=0), rtol=1e-12)
    kept, full = factor @ factor.T, np.cov(draws, rowvar=False)
    blocks, glob = [[0, 2], [3, 4]], [1, 5]
    for b in blocks:
        np.testing.assert_allclose(kept[np.ix_(b, b)], full[np.ix_(b, b)], rtol=1e-10)
        np.testing.assert_allclose(kept[np.ix_(b, glob)], full[np.ix_(b, glob)], rtol=1e-10)
    np.testing.assert_allclose(kept[np.ix_(glob, glob)], full[np.ix_(glob, glob)], rtol=1e-10)
    through = full[np.ix_(blocks[0], glob)] @ np.linalg.solve(
        full[np.ix_(glob, glob)], full[np.ix_(glob, blocks[1])])
    np.testing.assert_allclose(kept[np.ix_(blocks[0], blocks[1])], through, rtol=1e-10)
    assert np.max(np.count_nonzero(factor, axis=1)) == 4  # a block row: 2 own + 2 globals
    _, narrow = block_factor(draws, block, width=2)  # no room for the globals
    kept = narrow @ narrow.T
    assert np.all(kept[np.ix_(blocks[0], glob)] == 0)
    np.testing.assert_allclose(kept[np.ix_(blocks[0], blocks[0])],
                               full[np.ix_(blocks[0], blocks[0])], rtol=1e-10)
    _, diagonal = block_factor(draws, block, width=1)  # blocks wider than a row: variances
    np.testing.assert_allclose(diagonal, np.diag(draws.std(axis=0, ddof=1)), rtol=1e-12)


@pytest.mark.parametrize("dense", [True, False])
def test_a_pilot_metric_samples_the_exact_posterior(monkeypatch, dense):
    """Blocks by level; the metric learns each level's ridge (a non-triangular factor:
    the global s sits after the blocks); nutpie's draws through it have
    the exact posterior's means (within 4 Monte Carlo standard errors) and R-hat <= 1.01.
    ``dense=False``: the sparse map that models above DENSE_MAX_DIM coordinates get."""
    import arviz as az
    import nutpie

    model, means, cov = _ridge_model()
    if not dense:  # the layout is chosen when compiling
        monkeypatch.setattr(ws, "DENSE_MAX_DIM", 1)
    density = _compile(model)
    assert bool(density.dense) is dense
    raw = density.compiled
    names = list(raw.shape_info[0])
    block = coordinate_blocks(raw)
    a0, b0 = names.index("a"), names.index("b")
    level = {i: block[raw.shape_info[1][a0].start + i] for i in range(RUNS)}
    for i in range(RUNS):  # a_i and b_i share a block, one per run; s has its own
        assert block[raw.shape_info[1][b0].start + i] == level[i]
    assert len(set(level.values())) == RUNS and len(np.unique(block)) == RUNS + 1

    density.identity()
    plain = LogDensity(raw)
    compiled, pilot = pilot_metric(density, raw, seed=3, length=300, chains=2,
                                   target_accept=0.8, cores=1)
    assert pilot.largest_block == 2 and len(pilot.steps) == 2
    shift, factor = density.current()
    kept = factor @ factor.T
    a, b = raw.shape_info[1][a0].start, raw.shape_info[1][b0].start
    for i in range(RUNS):
        corr = kept[a + i, b + i] / np.sqrt(kept[a + i, a + i] * kept[b + i, b + i])
        assert corr < -0.99  # exact: about -0.9995
        # another run's b only through the global s, which the data leave independent
        assert abs(kept[a + i, b + (i + 1) % RUNS]) < 0.05 * np.sqrt(kept[a + i, a + i])
    # the map keeps the density: logp(z) = logp(shift + L z), grad_z = L^T grad_x
    z = np.random.default_rng(1).normal(size=density.n)
    lp_z, g_z = LogDensity(compiled)(z)
    density_x = shift + factor @ z
    density.identity()
    lp_x, g_x = plain(density_x)
    np.testing.assert_allclose(lp_z, lp_x, rtol=1e-12)
    np.testing.assert_allclose(g_z, factor.T @ g_x, rtol=1e-9, atol=1e-9)

    density.standardize(shift, factor)
    trace = nutpie.sample(compiled, draws=1000, tune=300, chains=2, cores=1, seed=4,
                          progress_bar=False)
    post = trace.posterior
    assert float(az.rhat(post).to_array().max()) <= 1.01
    for name, col in (("a", 0), ("b", 1)):
        got = post[name].mean(("chain", "draw")).values
        mcse = az.mcse(post[[name]])[name].values
        assert np.all(np.abs(got - means[:, col]) < 4 * mcse), (name, got, means[:, col])
        sd = post[name].std(("chain", "draw")).values
        np.testing.assert_allclose(sd, np.sqrt(cov[col, col]), rtol=0.15)
