"""A step law's derived quantities (step gain, total loss, best T_m) against the draws by hand.

The fits are prior draws of the step laws' default specs without effects (no sampling), so
every draw's coefficients are the law's own and the quantities follow in closed form.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import ArgumentError, SpecError
from bayeslaw.simulate import looped_step_sweep

from ..conftest import prior_fit

N, D = 2e9, 3e10


@pytest.fixture(scope="module")
def fits():
    out = {}
    for law, logged in (("looped_steps", True), ("looped_steps_latent", False)):
        frame, _ = looped_step_sweep(q_logged=logged, N=(1e8, 3e8, 1e9), T_m=(2, 4),
                                     D=tuple(np.geomspace(1e8, 2e10, 5)), seed=2)
        spec = bl.load_spec({"effects": []}, law=law)
        out[law] = prior_fit(spec, bl.load(frame), seed=3, draws=20)
    return out


def step_by_hand(fit, T):
    """Every draw's step loss at (N, D, T): Ouro's law from the draws' coefficients."""
    d = {k: fit.draws(k) for k in ("E", "a", "alpha", "b", "beta", "c", "gamma")}
    ref = fit.spec.reference
    return (d["E"] + d["a"] * (N / ref["N"]) ** -d["alpha"] + d["b"] * (D / ref["D"]) ** -d["beta"]
            + d["c"] * (T / ref["T"]) ** -d["gamma"])


@pytest.mark.parametrize("law", ["looped_steps", "looped_steps_latent"])
def test_step_gain_is_the_difference_of_two_steps(fits, law):
    fit = fits[law]
    gain = bl.step_gain(fit, N, D, 8, 3).draws
    np.testing.assert_allclose(gain, step_by_hand(fit, 3) - step_by_hand(fit, 4), rtol=1e-10)
    with pytest.raises(ArgumentError, match="exit step T must be one of 1..4"):
        bl.step_gain(fit, N, D, 4, 4)  # T + 1 = 5 is past T_m


def test_total_loss_under_a_given_q_and_under_the_latent_q(fits):
    q = np.array([0.1, 0.2, 0.3, 0.4])
    H = -np.sum(q * np.log(q))
    for _law, fit in fits.items():
        beta_H = fit.draws("beta_H")
        hand = sum(qk * step_by_hand(fit, k + 1) for k, qk in enumerate(q)) - beta_H * H
        np.testing.assert_allclose(bl.total_loss(fit, N, D, 4, q=q).draws, hand, rtol=1e-10)
    latent = fits["looped_steps_latent"]
    lam = latent.draws("lambda_q")
    w = np.arange(1, 7, dtype=float)[None, :] ** lam[:, None]  # a new depth, T_m = 6
    qd = w / w.sum(axis=1, keepdims=True)
    hand = (sum(qd[:, k] * step_by_hand(latent, k + 1) for k in range(6))
            + latent.draws("beta_H") * np.sum(qd * np.log(qd), axis=1))
    np.testing.assert_allclose(bl.total_loss(latent, N, D, 6).draws, hand, rtol=1e-10)
    with pytest.raises(ArgumentError, match="needs its exit distribution: give q"):
        bl.total_loss(fits["looped_steps"], N, D, 4)
    with pytest.raises(ArgumentError, match="q must be 4 exit probabilities"):
        bl.total_loss(fits["looped_steps"], N, D, 4, q=[0.5, 0.5])


def test_the_latent_total_at_a_depth_uses_that_depths_exponent():
    """``looped_steps_latent_depths``: the total at a fitted depth is the latent law's total
    with the draw's exponent for that depth (``lambda_q`` plus its ``T_m`` level)."""
    frame, _ = looped_step_sweep(q_logged=False, N=(1e8, 3e8, 1e9), T_m=(2, 4),
                                 D=tuple(np.geomspace(1e8, 2e10, 5)), seed=2)
    spec = bl.load_spec({"effects": [{"param": "lambda_q", "group": "T_m", "scale": {
        "dist": "HalfNormal", "sigma": 1.0}}]}, law="looped_steps_latent")
    fit = prior_fit(spec, bl.load(frame), seed=4, draws=20)
    by_depth = fit.idata.posterior["lambda_q_by_T_m"].stack(s=("chain", "draw"))
    for T_m in (2, 4):
        lam = fit.draws("lambda_q") + by_depth.sel(T_m_level=float(T_m)).to_numpy()
        w = np.arange(1, T_m + 1, dtype=float)[None, :] ** lam[:, None]
        q = w / w.sum(axis=1, keepdims=True)
        hand = (sum(q[:, k] * step_by_hand(fit, k + 1) for k in range(T_m))
                + fit.draws("beta_H") * np.sum(q * np.log(q), axis=1))
        np.testing.assert_allclose(bl.total_loss(fit, N, D, T_m).draws, hand, rtol=1e-10)
    assert np.ptp(by_depth.to_numpy()) > 0.1  # the depths' exponents differ in the draws


def test_best_T_m_compares_the_totals(fits):
    fit = fits["looped_steps"]
    q = {2: [0.5, 0.5], 4: [0.25] * 4, 8: [0.125] * 8}
    best = bl.best_T_m(fit, N, D, candidates=(2, 4, 8), q=q)
    totals = np.stack([bl.total_loss(fit, N, D, t, q=q[t]).draws for t in (2, 4, 8)], axis=1)
    for i, t in enumerate((2, 4, 8)):
        np.testing.assert_allclose(best.draws[f"T_m={t}"], totals[:, i], rtol=1e-10)
    p = best.columns["p_best"]
    assert sum(p.values()) == pytest.approx(1.0)
    assert p["T_m=8"] == pytest.approx(np.mean(totals.argmin(axis=1) == 2))
    with pytest.raises(ArgumentError, match="q gives no exit distribution for T_m = 16"):
        bl.best_T_m(fit, N, D, candidates=(8, 16), q=q)
    # at a budget: each depth at its own D = budget / (6 N T_m), under its q
    budget = 6 * N * 4 * D
    at_budget = bl.best_T_m_at_budget(fit, N, budget, candidates=(2, 4, 8), q=q)
    for t in (2, 4, 8):
        np.testing.assert_allclose(at_budget.draws[f"T_m={t}"],
                                   bl.total_loss(fit, N, budget / (6 * N * t), t, q=q[t]).draws,
                                   rtol=1e-10)
    assert sum(at_budget.columns["p_best"].values()) == pytest.approx(1.0)
    with pytest.raises(SpecError, match="step_gain needs a step law"):
        bl.step_gain(prior_fit(bl.load_spec(law="chinchilla"),
                               bl.load(bl.simulate.looped_sweep(points=4, T_m=(2,))[0]
                                       .drop(columns="T_m")), seed=1, draws=2), N, D, 4, 1)


def test_exit_columns_the_law_would_misread_are_refused(fits):
    latent, logged = fits["looped_steps_latent"], fits["looped_steps"]
    q = [0.1, 0.2, 0.3, 0.4]
    with pytest.raises(ArgumentError, match="takes a total's exit distribution from its own"):
        bl.loss_at(latent, N, D, 4, columns=bl.exit_columns(4, q=q))
    with pytest.raises(ArgumentError, match="reads a point's exit weights as its exit"):
        bl.predict(logged, pd.DataFrame([{"N": N, "D": D, "T_m": 4.0,
                                          **bl.exit_columns(4, latent=True)}]))
    # the right columns pass: one step's loss of each law is the step law
    for fit in (latent, logged):
        one = bl.loss_at(fit, N, D, 4, columns=bl.exit_columns(4, T=2)).draws
        np.testing.assert_allclose(one, step_by_hand(fit, 2), rtol=1e-10)
    with pytest.raises(ArgumentError, match="q must be 4 exit probabilities"):
        bl.exit_columns(4, q=[np.nan, 0.5, 0.25, 0.25])
    with pytest.raises(ArgumentError, match="not both"):
        bl.exit_columns(4, T=2, q=q)


def test_optimal_exit_is_the_gibbs_distribution_and_beats_every_other():
    from bayeslaw.data.steps import optimal_exit

    steps = np.array([[2.0, 1.5, 1.4, 1.45], [3.0, 2.0, 2.0, 2.5]])
    # no entropy weight: all mass on the lowest step, shared among ties
    q, loss = optimal_exit(steps, 0.0)
    np.testing.assert_array_equal(q, [[0, 0, 1, 0], [0, 0.5, 0.5, 0]])
    np.testing.assert_array_equal(loss, [1.4, 2.0])
    # with one: q ~ exp(-L / beta_H), and no distribution on the simplex does better
    beta_H = np.array([0.05, 0.3])
    q, loss = optimal_exit(steps, beta_H)
    hand = np.exp(-steps / beta_H[:, None])
    np.testing.assert_allclose(q, hand / hand.sum(axis=1, keepdims=True), rtol=1e-12)

    def objective(w, i):
        return w @ steps[i] + beta_H[i] * np.sum(w * np.log(np.where(w > 0, w, 1.0)), axis=-1)

    others = np.random.default_rng(0).dirichlet(np.ones(4), size=2000)
    for i in range(2):
        np.testing.assert_allclose(loss[i], objective(q[i], i), rtol=1e-12)
        assert (objective(others, i) > loss[i]).all()
    # a tiny weight is the limit of no weight (the hand formula above would underflow)
    q_small, loss_small = optimal_exit(steps, 1e-6)
    np.testing.assert_allclose(q_small, [[0, 0, 1, 0], [0, 0.5, 0.5, 0]], atol=1e-12)
    np.testing.assert_allclose(loss_small, [1.4, 2.0 - 1e-6 * np.log(2)], rtol=1e-12)
    for bad in (-1.0, np.nan):
        with pytest.raises(ArgumentError, match="beta_H must be a number >= 0"):
            optimal_exit(steps, bad)


@pytest.mark.parametrize("law", ["looped_steps", "looped_steps_latent"])
def test_best_exit_distribution_per_draw(fits, law):
    from bayeslaw.data.steps import optimal_exit

    fit = fits[law]
    best = bl.best_exit_distribution(fit, N, D, 4)
    steps = np.stack([step_by_hand(fit, k) for k in range(1, 5)], axis=1)
    q, loss = optimal_exit(steps, fit.draws("beta_H"))
    for k in range(4):
        np.testing.assert_allclose(best.draws[f"q(T={k + 1})"], q[:, k], rtol=1e-9)
    np.testing.assert_allclose(best.draws["total_opt"], loss, rtol=1e-10)
    # each draw's optimum is no worse than the total under a fixed q (total_loss)
    even = bl.total_loss(fit, N, D, 4, q=[0.25] * 4).draws
    assert (best.draws["total_opt"] <= even + 1e-12).all()
    np.testing.assert_allclose(best.draws["mean_T"], q @ np.arange(1, 5), rtol=1e-12)
    # Ouro's law falls with every step: the optimum's most likely exit is always the last
    assert best.columns["p_mode"] == {"q(T=1)": 0.0, "q(T=2)": 0.0, "q(T=3)": 0.0,
                                      "q(T=4)": 1.0}
    # best_T_m and best_T_m_at_budget compare each depth under its own optimum
    compared = bl.best_T_m(fit, N, D, candidates=(2, 4, 8), q="optimal")
    for t in (2, 4, 8):
        np.testing.assert_allclose(compared.draws[f"T_m={t}"],
                                   bl.best_exit_distribution(fit, N, D, t).draws["total_opt"],
                                   rtol=1e-12)
    budget = 6 * N * 4 * D
    at_budget = bl.best_T_m_at_budget(fit, N, budget, candidates=(2, 4, 8), q="optimal")
    for t in (2, 8):
        np.testing.assert_allclose(
            at_budget.draws[f"T_m={t}"],
            bl.best_exit_distribution(fit, N, budget / (6 * N * t), t).draws["total_opt"],
            rtol=1e-12)
    assert sum(at_budget.columns["p_best"].values()) == pytest.approx(1.0)


def test_best_exit_distribution_refuses_what_it_cannot_answer(fits):
    fit = fits["looped_steps"]
    with pytest.raises(ArgumentError, match="or 'optimal', got 'best'"):
        bl.best_T_m(fit, N, D, candidates=(2, 4), q="best")
    with pytest.raises(ArgumentError, match="q='optimal' compares the law's values"):
        bl.best_T_m(fit, N, D, candidates=(2, 4), q="optimal", kind="predictive")
    with pytest.raises(ArgumentError, match="T_m must be a whole number"):
        bl.best_exit_distribution(fit, N, D, 2.5)
    chinchilla = prior_fit(bl.load_spec(law="chinchilla"),
                           bl.load(bl.simulate.looped_sweep(points=4, T_m=(2,))[0]
                                   .drop(columns="T_m")), seed=1, draws=2)
    with pytest.raises(SpecError, match="best_exit_distribution needs a step law"):
        bl.best_exit_distribution(chinchilla, N, D, 4)


def test_optimal_depths_share_a_new_size_draw():
    """At a size the fit has not seen, every depth compared under q='optimal' gets the same
    draw of the size's effects (one table), as the given-q comparison does: with no entropy
    weight the optimum is the last step, so the two comparisons are the same numbers."""
    frame, _ = looped_step_sweep(q_logged=True, N=(1e8, 3e8, 1e9), T_m=(2, 4),
                                 D=tuple(np.geomspace(1e8, 2e10, 5)), seed=2)
    spec = bl.load_spec({"fixed": {"beta_H": 0.0}}, law="looped_steps")
    assert {e.group for e in spec.effects} >= {"N", "T_m"}  # the default's effects
    fit = prior_fit(spec, bl.load(frame), seed=4, draws=50)
    last = {t: [0.0] * (t - 1) + [1.0] for t in (2, 4, 8)}
    for n in (N, 3e8):  # a new size, and a fitted one
        optimal = bl.best_T_m(fit, n, D, candidates=(2, 4, 8), q="optimal", seed=5)
        given = bl.best_T_m(fit, n, D, candidates=(2, 4, 8), q=last, seed=5)
        for key in given.draws:
            np.testing.assert_allclose(optimal.draws[key], given.draws[key], rtol=1e-12)
        assert optimal.columns == given.columns


def test_a_table_of_some_steps_fits_predicts_and_draws(tmp_path):
    """Evaluations at a few exit steps only (no q, no totals): the model, a forecast at a step
    never logged and the grid figure all work on it."""
    import matplotlib.pyplot as plt

    frame, _ = looped_step_sweep(q_logged=False, totals=False, N=(1e8, 3e8, 1e9), T_m=(2, 4),
                                 D=tuple(np.geomspace(1e8, 2e10, 5)), seed=2)
    some = frame[~((frame["T_m"] == 4) & frame["T"].isin([1, 3]))]
    data = bl.load(some)
    assert not data.frame["run"].str.endswith("_T4/T3").any()
    fit = prior_fit(bl.load_spec({"effects": []}, law="looped_steps"), data, seed=3, draws=20)
    at = bl.loss_at(fit, N, D, 4, columns=bl.exit_columns(4, T=3)).draws
    np.testing.assert_allclose(at, step_by_hand(fit, 3), rtol=1e-10)
    fig = bl.plot_grid(fit)
    fig.savefig(tmp_path / "grid.png")
    plt.close(fig)
    assert (tmp_path / "grid.png").stat().st_size > 0
