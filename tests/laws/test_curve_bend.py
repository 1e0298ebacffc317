"""The curve law with a bend, ``curve_bend``: hand values, its textbook form, its limit
``q -> 1`` (``curve_power``) and its graph."""

from __future__ import annotations

import numpy as np
import pytest

from bayeslaw.laws.registry import evaluate, get_law

LAW = get_law("curve_bend")
REF = {"D": 1.0}
THETA = {"m": 2.0, "f": 0.5, "beta": 0.3, "q": 0.25}


def test_hand_values():
    # c = beta / q = 1.2; at D = 3: 3^1.2 = 3.7372, 0.75 + 0.25 * 3.7372 = 1.6843,
    # 2 (0.5 + 0.5 / 1.6843) = 1.59372; at D = 0.1: 0.1^1.2 = 0.063096,
    # 0.75 + 0.015774 = 0.765774, 2 (0.5 + 0.652934) = 2.305868
    got = evaluate(LAW, {"D": np.array([3.0, 0.1, 1.0])}, THETA, REF)
    np.testing.assert_allclose(got, [1.593719, 2.305868, 2.0], rtol=2e-6)
    # far before the bend: the plateau E + m f / (1 - q) = 1 + 1 / 0.75; far after it: E
    ends = evaluate(LAW, {"D": np.array([1e-12, 1e12])}, THETA, REF)
    np.testing.assert_allclose(ends, [1.0 + 1.0 / 0.75, 1.0], rtol=1e-9)


def test_textbook_form():
    # E = 1, B = m f / (1 - q) = 4/3, c = 1.2, D0 = (0.75 / 0.25)^(1 / 1.2) = 2.49805
    nat = LAW.natural(THETA, REF)
    assert nat == pytest.approx({"E": 1.0, "B": 4.0 / 3.0, "c": 1.2, "D0": 3.0 ** (1 / 1.2)})
    D = np.array([0.1, 3.0, 40.0])
    textbook = nat["E"] + nat["B"] / (1.0 + (D / nat["D0"]) ** nat["c"])
    np.testing.assert_allclose(evaluate(LAW, {"D": D}, THETA, REF), textbook, rtol=1e-12)


def test_no_bend_is_curve_power():
    # q -> 1: the bend lies far before D_ref and the law is curve_power's
    D = np.geomspace(0.01, 10.0, 7)
    theta = {**THETA, "q": 1.0 - 1e-9}
    power = evaluate(get_law("curve_power"), {"D": D}, THETA, REF)
    np.testing.assert_allclose(evaluate(LAW, {"D": D}, theta, REF), power, rtol=1e-7)
    # and the log-slope at D_ref is -beta times the reducible share, whatever q
    h = 1e-6
    for q in (0.1, 0.5, 0.9):
        lo, hi = evaluate(LAW, {"D": np.exp([-h, h])}, {**THETA, "q": q}, REF)
        slope = (np.log(hi - 1.0) - np.log(lo - 1.0)) / (2 * h)  # log(L - E) against log D
        assert slope == pytest.approx(-THETA["beta"], rel=1e-6)


def test_graph_evaluates_the_same_law():
    import pytensor.tensor as pt

    D = np.array([0.05, 1.0, 4.0])
    graph = LAW(pt, {"D": pt.as_tensor(D)}, {k: pt.as_tensor(v) for k, v in THETA.items()},
                REF).eval()
    np.testing.assert_allclose(graph, evaluate(LAW, {"D": D}, THETA, REF), rtol=1e-12)


@pytest.mark.parametrize("law", ["curve_power", "curve_bend", "chinchilla"])
def test_backtest_baseline_left_out_for_every_curve_law(law):
    """A backtest of either curve law has no least-squares baseline rows (one set of
    coefficients for every curve), and says so; a sweep's law keeps them."""
    from bayeslaw.evaluation.baseline import left_out
    from bayeslaw.spec.catalog import load_spec

    note = left_out(load_spec(None, law=law))
    if law == "chinchilla":
        assert note is None
    else:
        assert note.startswith("no baseline rows") and repr(law) in note
