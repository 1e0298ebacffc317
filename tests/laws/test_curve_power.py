"""The curve-population law ``curve_power``: hand values, its logit link, the table of curves
without N, the ``[correlation]`` section, and the predictive log density against scipy."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayeslaw as bl
from bayeslaw.errors import DataError, SpecError
from bayeslaw.laws.registry import evaluate, get_law, law_for_columns
from bayeslaw.model.arithmetic import link_value
from bayeslaw.posterior.noise import log_likelihood

from ..conftest import prior_fit

LAW = get_law("curve_power")
REF = {"D": 1e9}


def test_hand_values():
    # m = 2, f = 0.4, beta = 0.5 at D = 4e9 (4 D_ref): 2 (0.6 + 0.4 * 4^-0.5) = 2 * 0.8 = 1.6
    theta = {"m": 2.0, "f": 0.4, "beta": 0.5}
    assert evaluate(LAW, {"D": np.array([4e9])}, theta, REF)[0] == pytest.approx(1.6, rel=1e-12)
    # at D_ref the law is m, whatever f and beta
    assert evaluate(LAW, {"D": np.array([1e9])}, theta, REF)[0] == pytest.approx(2.0, rel=1e-12)
    # the textbook form: E = m (1 - f) = 1.2, B = m f D_ref^beta = 0.8 * 31622.78 = 25298.2,
    # and E + B / D^beta at 4e9 (63245.55) gives 1.2 + 0.4 = 1.6 again
    nat = LAW.natural(theta, REF)
    assert nat["E"] == pytest.approx(1.2) and nat["B"] == pytest.approx(0.8 * 1e9 ** 0.5)
    assert nat["E"] + nat["B"] / 4e9 ** 0.5 == pytest.approx(1.6, rel=1e-12)


def test_graph_evaluates_the_same_law():
    import pytensor.tensor as pt

    theta = {"m": 2.0, "f": 0.4, "beta": 0.5}
    D = np.array([1e8, 1e9, 4e9])
    graph = LAW(pt, {"D": pt.as_tensor(D)}, {k: pt.as_tensor(v) for k, v in theta.items()},
                REF).eval()
    np.testing.assert_allclose(graph, evaluate(LAW, {"D": D}, theta, REF), rtol=1e-12)


def test_logit_link():
    # a share p moved by d on the logit scale: 1 / (1 + (1/p - 1) e^-d)
    assert link_value(np, 0.4, "logit") == 0.4
    assert link_value(np, 0.4, "logit", [np.log(1.5)]) == pytest.approx(0.5)  # odds 2/3 -> 1
    assert link_value(np, 0.5, "logit", [np.array([-50.0, 50.0])]) == pytest.approx([0.0, 1.0])


def curves(seed: int = 0, n_runs: int = 3, points: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    D = np.geomspace(1e8, 1e10, points)
    rows = [{"run": f"c{r}", "D": d, "loss": 2.0 + 0.5 * (d / 1e9) ** -0.3
             + 0.01 * rng.standard_normal()} for r in range(n_runs) for d in D]
    return pd.DataFrame(rows)


def test_a_table_of_curves_needs_no_N():
    data = bl.load(curves())
    assert "N" not in data.frame.columns and len(data.runs) == 3
    assert law_for_columns(frozenset(data.columns)) == "curve_bend"
    assert bl.load_spec(None, law="curve_power").correlation.params == ("m", "f", "beta")
    # final losses (one row per run) still need N: there is no curve to follow
    with pytest.raises(DataError, match=r"lacks column\(s\) \['N'\]"):
        bl.load(pd.DataFrame({"run": ["a", "b"], "D": [1e9, 2e9], "loss": [3.0, 2.9]}))


@pytest.mark.parametrize(("correlation", "match"), [
    ({"group": "run", "params": ["m"]}, "two or more distinct"),
    ({"group": "run", "params": ["m", "m"]}, "two or more distinct"),
    ({"group": "run", "params": ["m", "E"]}, r"\['E'\] have no partially pooled effect by 'run'"),
    ({"group": "T_m", "params": ["m", "f"]}, "no partially pooled effect by 'T_m'"),
    ({"group": "run", "params": ["m", "f"], "eta": -1.0}, "correlation.eta must be a positive"),
    ({"group": "run", "params": ["m", "f"], "rho": 0.5}, r"unknown key\(s\) \['rho'\]"),
])
def test_correlation_errors_name_the_key(correlation, match):
    with pytest.raises(SpecError, match=match):
        bl.load_spec({"correlation": correlation}, law="curve_power")


def test_correlation_follows_the_effects():
    spec = bl.load_spec(None, law="curve_power")
    assert spec.with_pooling("complete").correlation is None  # its effects are gone
    assert bl.load_spec({"effects": []}, law="curve_power").correlation is None
    freed = bl.load_spec({"fixed": {"beta": 0.4}}, law="curve_power")
    assert freed.correlation.params == ("m", "f")  # a fixed parameter leaves the block
    again = bl.ModelSpec.from_dict(spec.to_dict())
    assert again == spec and again.correlation.eta == 2.0


def test_log_density_is_the_mixture_of_student_t_densities():
    """``bl.log_density`` against scipy: log mean over draws of the Student-t density of each
    new point, with each draw's law value, scale and degrees of freedom (fitted curves)."""
    data = bl.load(curves(seed=1))
    spec = bl.load_spec(None, law="curve_power")
    fit = prior_fit(spec, data, seed=3, draws=4)
    points = pd.DataFrame({"run": ["c0", "c2"], "D": [2e10, 3e10], "loss": [2.4, 2.3]})
    got = bl.log_density(fit, points)
    m, f, beta = (fit.draws(f"{p}_run") for p in ("m", "f", "beta"))
    sigma, nu = fit.draws("sigma_run"), fit.draws("nu")
    want = []
    for i, (run, d, y) in enumerate(points.itertuples(index=False)):
        r = int(run[1:])
        mu = m[:, r] * (1 - f[:, r] + f[:, r] * (d / 1e9) ** -beta[:, r])
        dens = stats.t.pdf(y, df=nu, loc=mu, scale=sigma[:, r])
        want.append(np.log(dens.mean()))
        # and one draw alone, through the per-draw log-likelihood
        one = log_likelihood(fit, points.iloc[[i]])[0, 0]
        assert one == pytest.approx(stats.t.logpdf(y, df=nu[0], loc=mu[0],
                                                   scale=sigma[0, r]), rel=1e-10)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_forecast_of_a_new_partial_curve():
    """``bl.forecast_run`` on a curve the fit never saw (no N): its coefficients from the
    population, weighted by its logged points; the forecast passes near its logged level and
    the band holds the median (prior draws stand in for a posterior: plumbing)."""
    data = bl.load(curves(seed=2))
    fit = prior_fit(bl.load_spec(None, law="curve_power"), data, seed=5, draws=400)
    partial = pd.DataFrame({"D": [1e8, 3e8, 1e9], "loss": [2.0 + 0.5 * x ** -0.3
                                                          for x in (0.1, 0.3, 1.0)]})
    with pytest.warns(bl.ImportanceWeightsWarning):  # 400 prior draws: few effective ones
        pred = bl.forecast_run(fit, partial, 4e9, n_grid=5, seed=1)
    table = pred.table
    assert (table["D"] > 1e9).all() and np.isfinite(table["median"]).all()
    assert (table["lower_90"] <= table["median"]).all()
    assert (table["median"] <= table["upper_90"]).all()
    # the forecast starts close to the last logged loss (2.5), not at the prior's median level
    assert abs(table["median"].iloc[0] - 2.5) < 0.5


def test_forecast_of_a_new_curve_leaves_out_its_early_points_as_the_fit_did():
    """``curve_bend`` fits each curve from 0.1 of its last D on (``[data] min_portion``): a
    new partial curve is conditioned the same way, so its forecast equals that of the curve
    without its early points, draw for draw, and ``attrs["left_out"]`` counts them."""
    data = bl.load(curves(seed=2))
    spec = bl.load_spec(None, law="curve_bend")
    assert spec.data.min_portion == 0.1
    fit = prior_fit(spec, data, seed=5, draws=200)
    D = np.array([1e7, 3e7, 1e8, 3e8, 1e9])
    partial = pd.DataFrame({"D": D, "loss": 2.0 + 0.5 * (D / 1e9) ** -0.3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bl.ImportanceWeightsWarning)  # prior draws: plumbing
        whole = bl.forecast_run(fit, partial, 4e9, n_grid=5, seed=1)
        late = bl.forecast_run(fit, partial[partial["D"] >= 1e8], 4e9, n_grid=5, seed=1)
    assert whole.attrs["left_out"] == 2 and late.attrs["left_out"] == 0
    np.testing.assert_array_equal(whole.draws, late.draws)
