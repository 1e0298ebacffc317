"""The step-wise laws and their link to the total loss, against hand values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayeslaw import constants as C
from bayeslaw.laws.functions import exit_distribution
from bayeslaw.laws.registry import evaluate, get_law, law_for_columns

REF = {"N": 3e8, "D": 1e9, "T": 4.0}
THETA = {"E": 1.8, "a": 0.6, "alpha": 0.3, "b": 0.6, "beta": 0.55, "c": 0.2, "gamma": 0.6,
         "t1": 0.0, "t2": 0.0, "t3": 0.0, "beta_H": 0.05, "lambda_q": 1.0}


def hand_step(N: float, D: float, T: float, th=THETA) -> float:
    """Ouro's step law, textbook form: E + A/N^alpha + B/D^beta + C/T^gamma."""
    A = th["a"] * REF["N"] ** th["alpha"]
    B = th["b"] * REF["D"] ** th["beta"]
    Cc = th["c"] * REF["T"] ** th["gamma"]
    return th["E"] + A / N ** th["alpha"] + B / D ** th["beta"] + Cc / T ** th["gamma"]


def covariates(N, D, weights, entropy=0.0, latent=0.0):
    w = np.zeros(C.MAX_EXIT_STEPS)
    w[:len(weights)] = weights
    cov = {"N": np.array([N]), "D": np.array([D]), C.EXIT_ENTROPY: np.array([entropy]),
           C.EXIT_LATENT: np.array([latent])}
    cov.update({c: np.array([w[k]]) for k, c in enumerate(C.EXIT_WEIGHTS)})
    return cov


@pytest.mark.parametrize("T", [1, 2, 3, 4, 8])
def test_step_rows_are_the_step_law(T):
    onehot = [0.0] * (T - 1) + [1.0]
    for name in ("looped_steps", "looped_steps_latent"):
        got = evaluate(get_law(name), covariates(2e8, 5e9, onehot), THETA, REF)[0]
        assert got == pytest.approx(hand_step(2e8, 5e9, T), rel=1e-12)


def test_total_row_is_the_q_weighted_sum_minus_the_entropy():
    q = np.array([0.0004, 0.0855, 0.3793, 0.5348])  # Ouro's T_m = 4 exit distribution
    H = -float(np.sum(q * np.log(q)))
    hand = sum(qk * hand_step(2e8, 5e9, k + 1) for k, qk in enumerate(q)) - 0.05 * H
    got = evaluate(get_law("looped_steps"), covariates(2e8, 5e9, q, entropy=H), THETA, REF)[0]
    assert got == pytest.approx(hand, rel=1e-12)
    # the entropy weight enters with its sign: a larger beta_H lowers the total
    more = evaluate(get_law("looped_steps"), covariates(2e8, 5e9, q, entropy=H),
                    {**THETA, "beta_H": 0.15}, REF)[0]
    assert more == pytest.approx(got - 0.1 * H, rel=1e-12)


@pytest.mark.parametrize(("T_m", "power"), [(2, 1.0), (4, 1.0), (4, -0.5), (8, 6.0)])
def test_latent_total_uses_q_proportional_to_T_power(T_m, power):
    q = np.arange(1, T_m + 1, dtype=float) ** power
    q /= q.sum()
    H = -float(np.sum(q * np.log(q)))
    hand = sum(qk * hand_step(1e8, 2e9, k + 1) for k, qk in enumerate(q)) - 0.05 * H
    theta = {**THETA, "lambda_q": power}
    got = evaluate(get_law("looped_steps_latent"),
                   covariates(1e8, 2e9, [1.0] * T_m, latent=1.0), theta, REF)[0]
    assert got == pytest.approx(hand, rel=1e-10)


def test_exit_distribution_is_a_masked_softmax_and_its_entropy():
    z = [0.0, 1.0, -0.5, 2.0]
    allowed = [1.0, 1.0, 1.0, 0.0]  # the fourth step is past T_m
    q, H = exit_distribution(np, allowed, z)
    e = np.exp(z[:3])
    want = e / e.sum()
    assert np.allclose(q[:3], want, rtol=1e-14) and q[3] == 0.0
    assert H == pytest.approx(-float(np.sum(want * np.log(want))), rel=1e-14)
    q1, H1 = exit_distribution(np, [0.0, 0.0, 1.0, 0.0], z)  # one allowed step: one-hot
    assert q1[2] == pytest.approx(1.0) and abs(H1) < 1e-15


def test_textbook_coefficients_and_default_laws():
    law = get_law("looped_steps")
    nat = law.natural(THETA, REF)
    assert nat["C"] == pytest.approx(0.2 * 4.0 ** 0.6)
    assert nat["A"] == pytest.approx(0.6 * 3e8 ** 0.3)
    base = {"run", "N", "D", "T_m", "loss", *C.EXIT_WEIGHTS}
    assert law_for_columns(base | {C.EXIT_ENTROPY}) == "looped_steps"
    assert law_for_columns(base | {C.EXIT_LATENT}) == "looped_steps_latent"
    assert law_for_columns({"run", "N", "D", "T_m", "loss"}) == "looped_total"
    assert math.isclose(hand_step(3e8, 1e9, 4), 1.8 + 0.6 + 0.6 + 0.2)


def _latent_total(N: float, D: float, T_m: int, power: float, beta_H: float) -> float:
    theta = {**THETA, "lambda_q": power, "beta_H": beta_H}
    return float(evaluate(get_law("looped_steps_latent"),
                          covariates(N, D, [1.0] * T_m, latent=1.0), theta, REF)[0])


def test_exponents_by_depth_and_beta_H_trade_along_a_ridge():
    """Why ``looped_steps_latent_depths`` needs the logged entropy weight (and bayeslaw warns
    without it): with an exponent per depth, a different ``beta_H`` and exponents solved so
    that each depth's total sits at the same level above the steps' law give the same total
    at every size and token count, so the totals cannot tell them apart.  With one exponent
    for every depth they can: the exponent that matches ``T_m = 2`` misses ``T_m = 8``."""
    from scipy.optimize import brentq

    truth = {2: 0.3, 4: 1.0, 8: 1.8}
    other = {}
    for T_m, power in truth.items():
        level = _latent_total(1e8, 2e9, T_m, power, 0.05)
        other[T_m] = brentq(lambda p, T_m=T_m, level=level:
                            _latent_total(1e8, 2e9, T_m, p, 0.09) - level, -3.0, 8.0, xtol=1e-14)
        assert abs(other[T_m] - power) > 0.05  # a different exit distribution ...
    for N in (5e7, 1e9):  # ... with the same totals everywhere
        for D in (1e8, 3e9, 2e10):
            for T_m, power in truth.items():
                assert _latent_total(N, D, T_m, other[T_m], 0.09) == pytest.approx(
                    _latent_total(N, D, T_m, power, 0.05), rel=1e-11)
    # one exponent for every depth (looped_steps_latent): the one that keeps T_m = 2's totals
    # with beta_H = 0.09 moves T_m = 8's by more than the sweep's noise (0.01 nats a point)
    level = _latent_total(1e8, 2e9, 2, 1.0, 0.05)
    shared = brentq(lambda p: _latent_total(1e8, 2e9, 2, p, 0.09) - level, -3.0, 8.0)
    moved = _latent_total(1e8, 2e9, 8, shared, 0.09) - _latent_total(1e8, 2e9, 8, 1.0, 0.05)
    assert abs(moved) > 0.01, moved


def test_the_depths_spec_is_the_latent_spec_with_the_exponent_by_depth():
    """``looped_steps_latent_depths`` repeats ``looped_steps_latent``'s effects (a spec's
    effects are replaced whole when merged): they stay equal, the exponent's effect added."""
    from bayeslaw.spec.catalog import load_spec

    latent, depths = load_spec("looped_steps_latent"), load_spec("looped_steps_latent_depths")
    assert depths.law == latent.law == "looped_steps_latent"
    extra = [e for e in depths.effects if e.param == "lambda_q"]
    assert [(e.group, e.pooling) for e in extra] == [("T_m", "partial")]
    assert [e for e in depths.effects if e.param != "lambda_q"] == list(latent.effects)
    assert {**depths.to_dict(), "effects": None, "description": None} == {
        **latent.to_dict(), "effects": None, "description": None}
