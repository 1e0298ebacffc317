import numpy as np
import pytensor.tensor as pt
import pytest

from bayeslaw.errors import SpecError
from bayeslaw.laws.registry import LAWS, evaluate, get_law, law_for_columns

REF = {"N": 3e8, "D": 1e9, "T_m": 4.0}


def test_looped_total_matches_textbook_form():
    # hand-computed: E + A/(N+t1)^alpha + B/(D+t2)^beta + C/(T+t3)^gamma with A = a*N_ref^alpha
    theta = dict(E=1.8, a=0.6, alpha=0.3, b=0.6, beta=0.55, c=0.25, gamma=0.5,
                 t1=1e6, t2=5e6, t3=1.0)
    N, D, T = 1.36e9, 2e10, 8.0
    A = 0.6 * 3e8**0.3
    B = 0.6 * 1e9**0.55
    Cc = 0.25 * 4.0**0.5
    want = 1.8 + A / (N + 1e6) ** 0.3 + B / (D + 5e6) ** 0.55 + Cc / (T + 1.0) ** 0.5
    got = evaluate(LAWS["looped_total"], {"N": N, "D": D, "T_m": T}, theta, REF)
    assert got == pytest.approx(want, rel=1e-12)
    nat = LAWS["looped_total"].natural(theta, REF)
    assert nat["A"] == pytest.approx(A) and nat["C"] == pytest.approx(Cc)


def test_law_at_reference_is_sum_of_contributions():
    theta = dict(E=1.5, a=0.4, alpha=0.2, b=0.3, beta=0.7, c=0.1, gamma=2.0, t1=0, t2=0, t3=0)
    got = evaluate(LAWS["looped_total"], REF, theta, REF)
    assert got == pytest.approx(1.5 + 0.4 + 0.3 + 0.1)


def test_chinchilla_hand_value():
    # Epoch AI's refit: E=1.82, A=482, alpha=0.35, B=2085, beta=0.37 at N=1e9, D=2e10
    ref = {"N": 1e9, "D": 2e10}
    a = 482 / 1e9**0.35
    b = 2085 / 2e10**0.37
    theta = dict(E=1.82, a=a, alpha=0.35, b=b, beta=0.37)
    want = 1.82 + 482 / 7e10**0.35 + 2085 / 1.4e12**0.37
    got = evaluate(LAWS["chinchilla"], {"N": 7e10, "D": 1.4e12}, theta, ref)
    assert got == pytest.approx(want, rel=1e-12)
    assert 1.9 < want < 2.0  # Chinchilla-70B sits near 1.94 nats under this fit


def test_same_code_builds_pytensor_graph():
    law = LAWS["looped_total"]
    theta = dict(E=1.8, a=0.6, alpha=0.3, b=0.6, beta=0.55, c=0.25, gamma=0.5, t1=0, t2=0, t3=0)
    cov = {"N": np.array([5.3e7, 1.36e9]), "D": np.array([1e8, 2e10]), "T_m": np.array([2., 8.])}
    sym = law(pt, {k: pt.as_tensor(v) for k, v in cov.items()},
              {k: pt.as_tensor(v) for k, v in theta.items()}, REF)
    np.testing.assert_allclose(sym.eval(), evaluate(law, cov, theta, REF), rtol=1e-12)


def test_registry_and_errors():
    assert get_law("chinchilla").covariates == ("N", "D")
    with pytest.raises(SpecError, match="unknown law 'nope'; choose one of"):
        get_law("nope")
    with pytest.raises(SpecError, match="has no parameter 'zeta'"):
        LAWS["chinchilla"].param("zeta")
    assert law_for_columns({"N", "D", "T_m", "loss"}) == "looped_total"
    assert law_for_columns({"N", "D", "loss"}) == "chinchilla"
    for law in LAWS.values():
        assert law.fn.__doc__ and ".. math::" in law.fn.__doc__
        assert all(p.unit and p.description for p in law.params)
