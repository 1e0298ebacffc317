"""Derived quantities on the stored small posterior, checked against the law by hand."""

import numpy as np
import pytest

from bayeslaw.errors import ArgumentError
from bayeslaw.posterior.derived import (
    Derived,
    best_T_m,
    best_T_m_at_budget,
    compute_optimal,
    largest_run_compute,
    loss_at,
)


def _level(fit, name, value):
    """Draws ``(S,)`` of effect ``name`` at a fitted level ``value``."""
    coord = fit.idata.posterior[name].dims[-1]
    levels = fit.idata.posterior[name][coord].values.tolist()
    return fit.draws(name)[:, levels.index(value)]


def _by_hand(fit, N, D, T, b, beta):
    """The looped law written out, population E, a, alpha, c, gamma; per-draw b, beta."""
    ref = fit.spec.reference
    return (fit.draws("E") + fit.draws("a") * (N / ref["N"]) ** -fit.draws("alpha")
            + b * (D / ref["D"]) ** -beta
            + fit.draws("c") * (T / ref["T_m"]) ** -fit.draws("gamma"))


def _run_params(fit, N, T):
    """b and beta draws of the fitted run at (N, T)."""
    runs = fit.data.run_table()
    run = runs[(runs["N"] == N) & (runs["T_m"] == T)].index[0]
    k = list(fit.idata.posterior["run"].values).index(run)
    return fit.draws("b_run")[:, k], fit.draws("beta_run")[:, k]


def test_loss_at_fitted_level_is_the_law_at_the_run_parameters(stored_fit):
    f = stored_fit
    b, beta = _run_params(f, 1e8, 4.0)
    # the run's parameters are the population value times the N and T_m level effects
    np.testing.assert_allclose(
        np.log(b), np.log(f.draws("b")) + _level(f, "b_by_N", 1e8) + _level(f, "b_by_T_m", 4.0),
        rtol=1e-10)
    result = loss_at(f, 1e8, 5e10, 4)
    assert isinstance(result, Derived) and result.draws.shape == (f.n_draws,)
    np.testing.assert_allclose(result.draws, _by_hand(f, 1e8, 5e10, 4.0, b, beta), rtol=1e-10)


def test_loss_at_predictive_adds_noise_and_new_levels_are_seeded(stored_fit):
    epi = loss_at(stored_fit, 1e9, 1e11, 8).summary()
    pred = loss_at(stored_fit, 1e9, 1e11, 8, kind="predictive").summary()
    assert (pred["upper_90"] - pred["lower_90"]).iloc[0] > (epi["upper_90"]
                                                            - epi["lower_90"]).iloc[0]
    new = [loss_at(stored_fit, 3e9, 1e11, 16, seed=s).draws for s in (1, 1, 2)]
    np.testing.assert_array_equal(new[0], new[1])
    assert not np.array_equal(new[0], new[2])


def test_loss_at_needs_T_m_for_looped_law(stored_fit):
    with pytest.raises(ArgumentError, match="give T_m"):
        loss_at(stored_fit, 1e9, 1e11)


def test_compute_optimal_meets_budget_and_is_grid_argmin(stored_fit):
    f, C, T = stored_fit, 4.8e21, 4.0
    grid = np.geomspace(1e7, 1e13, 301)
    result = compute_optimal(f, C, T_m=T, grid=grid)
    d = result.draws
    assert set(d) == {"N_opt", "D_opt", "loss_opt"}
    np.testing.assert_allclose(6 * d["N_opt"] * T * d["D_opt"], C, rtol=1e-12)
    assert np.isin(d["N_opt"], grid).all()
    assert result.columns["at_grid_edge"]["N_opt"] == 0.0
    # brute force for a few draws: N effects at zero, the fitted T_m = 4 level's effects
    b = np.exp(np.log(f.draws("b")) + _level(f, "b_by_T_m", T))
    beta = np.exp(np.log(f.draws("beta")) + _level(f, "beta_by_T_m", T))
    for s in (0, 57, 199):
        losses = [_by_hand(f, n, C / (6 * n * T), T, b, beta)[s] for n in grid]
        assert d["N_opt"][s] == grid[int(np.argmin(losses))]
        assert d["loss_opt"][s] == pytest.approx(min(losses), rel=1e-12)


def test_compute_optimal_scales_with_budget_and_cost(stored_fit):
    small = compute_optimal(stored_fit, 1e20, T_m=4).summary()
    big = compute_optimal(stored_fit, 1e22, T_m=4).summary()
    assert big.loc["N_opt", "median"] > small.loc["N_opt", "median"]
    assert big.loc["loss_opt", "median"] < small.loc["loss_opt", "median"]
    custom = compute_optimal(stored_fit, 1e21, T_m=4, cost_per_token=lambda n, t: 2 * n * t)
    np.testing.assert_allclose(2 * custom.draws["N_opt"] * 4 * custom.draws["D_opt"], 1e21,
                               rtol=1e-12)
    with pytest.raises(ArgumentError, match="budget"):
        compute_optimal(stored_fit, -1.0, T_m=4)


def test_best_T_m_matches_brute_force_count(stored_fit):
    f, N, D = stored_fit, 1e9, 2e10
    result = best_T_m(f, N, D, candidates=(2, 4, 8))
    hand = np.column_stack([_by_hand(f, N, D, t, *_run_params(f, N, t)) for t in (2.0, 4.0, 8.0)])
    for i, key in enumerate(("T_m=2", "T_m=4", "T_m=8")):
        np.testing.assert_allclose(result.draws[key], hand[:, i], rtol=1e-10)
    counts = np.bincount(np.argmin(hand, axis=1), minlength=3) / f.n_draws
    p = result.columns["p_best"]
    np.testing.assert_allclose([p["T_m=2"], p["T_m=4"], p["T_m=8"]], counts)
    summary = best_T_m(f, N, D).summary()
    assert list(summary.index) == ["T_m=1", "T_m=2", "T_m=4", "T_m=8", "T_m=16"]
    assert summary["p_best"].sum() == pytest.approx(1.0)


def test_best_T_m_at_budget_spends_the_budget(stored_fit):
    f, N, C = stored_fit, 1e9, 4.8e20
    result = best_T_m_at_budget(f, N, C, candidates=(2, 4, 8))
    for t in (2, 4, 8):
        expected = loss_at(f, N, C / (6 * N * t), t).draws
        np.testing.assert_allclose(result.draws[f"T_m={t}"], expected, rtol=1e-10)
    assert sum(result.columns["p_best"].values()) == pytest.approx(1.0)
    with pytest.raises(ArgumentError, match="distinct"):
        best_T_m(f, N, 1e10, candidates=(4, 4))


def test_derived_summary_repr_and_html():
    draws = np.arange(101, dtype=float)
    d = Derived("x", {"a": draws, "b": 2 * draws}, "Two quantities.", {"p": {"a": 0.25}})
    table = d.summary(prob=0.8)
    assert list(table.columns) == ["median", "lower_80", "upper_80", "p"]
    assert table.loc["b", "median"] == 100.0
    assert table.loc["a", "lower_80"] == pytest.approx(10.0)
    assert table.loc["a", "p"] == 0.25 and np.isnan(table.loc["b", "p"])
    assert repr(d).startswith("Derived('x', 101 draws)\nTwo quantities.")
    assert "<table" in d._repr_html_() and "Two quantities." in d._repr_html_()
    single = Derived("loss", draws)
    assert list(single.summary().index) == ["loss"]


def test_largest_run_compute(stored_fit):
    runs = stored_fit.data.frame.groupby("run")[["N", "D", "T_m"]].max()
    expected = (6 * runs["N"] * runs["T_m"] * runs["D"]).max()
    assert largest_run_compute(stored_fit) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(6 * 1e9 * 8 * 2e10)
    assert largest_run_compute(stored_fit, lambda n, t: n) == pytest.approx(1e9 * 2e10)
