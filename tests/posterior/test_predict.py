"""Forecasts on the stored posterior (plumbing) and thinning of dense logs."""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import ArgumentError, DataError
from bayeslaw.posterior.prediction import forecast_run, predict


def test_new_N_between_neighbours_and_wider(stored_fit):
    pts = pd.DataFrame({"N": [1e8, 1.7e8, 3e8], "D": 2e10, "T_m": 4.0})
    t = predict(stored_fit, pts, kind="epistemic", seed=0).table
    lo, mid, hi = t["median"]
    assert hi < mid < lo  # larger N -> lower loss; 1.7e8 lies between 1e8 and 3e8
    width = (t["upper_90"] - t["lower_90"]).to_numpy()
    assert width[1] > min(width[0], width[2])  # new level: effects drawn from the population


def test_bands_widen_past_the_data(stored_fit):
    pts = pd.DataFrame({"N": 3e8, "D": [2e10, 1e11, 1e12], "T_m": 4.0, "run": "N300M_T4"})
    t = predict(stored_fit, pts, kind="epistemic").table
    width = (t["upper_90"] - t["lower_90"]).to_numpy()
    assert np.all(np.diff(width) > 0)


def test_forecast_fitted_run_uses_its_own_effects(stored_fit):
    pred = forecast_run(stored_fit, "N1B_T8", 1e11, n_grid=10, kind="epistemic")
    assert pred.table["D"].iloc[0] > 2e10 and pred.table["D"].iloc[-1] == pytest.approx(1e11)
    direct = predict(stored_fit, pred.table[["run", "N", "D", "T_m"]], kind="epistemic")
    np.testing.assert_allclose(pred.table["median"], direct.table["median"])
    with pytest.raises(DataError, match="run 'nope' is not in the fit"):
        forecast_run(stored_fit, "nope", 1e11)
    with pytest.raises(DataError, match="not past the last logged D"):
        forecast_run(stored_fit, "N1B_T8", 1e9)


def test_forecast_partial_curve_conditions_on_logged_points(stored_fit):
    """A new curve's logged points pull its forecast: shifting them shifts the forecast.

    The curve has a new N level, so its data-term effects are drawn from the population and
    reweighted by its logged points (at fitted levels the default spec has no per-run effect).
    """
    run = stored_fit.data.frame.query("run == 'N300M_T4'")
    partial = run[run["D"] < 2e9].drop(columns=["run"]).assign(N=5e8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        base = forecast_run(stored_fit, partial, 2e10, n_grid=5, seed=1)
        high = forecast_run(stored_fit, partial.assign(loss=partial["loss"] * 1.03), 2e10,
                            n_grid=5, seed=1)
    assert base.attrs["weights_ess"] > 1
    assert (high.table["median"] > base.table["median"]).all()


def test_predict_argument_errors(stored_fit):
    pts = pd.DataFrame({"N": [1e8], "D": [1e9], "T_m": [2.0]})
    with pytest.raises(ArgumentError, match="kind must be"):
        predict(stored_fit, pts, kind="both")
    with pytest.raises(ArgumentError, match=r"band probabilities must lie in \(0, 1\)"):
        predict(stored_fit, pts, probs=(0.5, 1.5))
    with pytest.raises(DataError, match=r"lack column\(s\) \['T_m'\]"):
        predict(stored_fit, pts.drop(columns="T_m"))


def test_thin_log_spaced_keeps_last_point():
    D = np.arange(1, 20001) * 1e6
    frame = pd.DataFrame({"run": "r", "N": 1e8, "D": D, "loss": 3 + 1 / np.sqrt(D)})
    data = bl.load(pd.concat([frame, frame.assign(run="s").iloc[:50]]))
    thin = data.thin(100)
    r = thin.frame[thin.frame["run"] == "r"]
    assert len(r) == 100 and r["D"].iloc[-1] == D[-1] and r["D"].iloc[0] == D[0]
    # log spacing puts about log(200)/log(20000) = 53% of the kept points below 1% of the
    # largest D, less here because the first 13 steps are integers (all kept, ~45% expected);
    # uniform thinning would keep about 1% there
    early = (r["D"] < D[-1] / 100).mean()
    assert 0.35 < early < 0.6
    assert (thin.frame["run"] == "s").sum() == 50  # short runs untouched
    assert thin.notes[-1].startswith("thinned to <= 100 points per run")
    with pytest.raises(DataError, match="at least 2 points"):
        data.thin(1)


def test_a_fit_built_from_reused_draws_computes_its_own_log_likelihood(stored_fit):
    """Fit.from_draws never keeps a log-likelihood the draws carried: the same draws with
    other losses get the log-likelihood of those losses (and the caller's idata is kept)."""
    from bayeslaw.posterior.noise import pointwise_log_likelihood

    frame = stored_fit.data.frame.copy()
    frame["loss"] = frame["loss"] * 1.01
    moved = bl.load(frame)
    other = bl.Fit.from_draws(stored_fit.idata, stored_fit.spec, moved, stored_fit.provenance)
    stored = stored_fit.idata.log_likelihood["loss"].values.reshape(stored_fit.n_draws, -1)
    new = other.idata.log_likelihood["loss"].values.reshape(other.n_draws, -1)
    np.testing.assert_allclose(new, pointwise_log_likelihood(other), rtol=1e-5)
    assert not np.allclose(new, stored)
    np.testing.assert_array_equal(  # the stored fit's own group is untouched
        stored_fit.idata.log_likelihood["loss"].values.reshape(stored_fit.n_draws, -1), stored)


def test_a_missing_level_is_a_new_level_drawn_from_the_population():
    """A row whose level is missing (NaN) gets its own population draw, in order of first
    appearance, like any level the fit has not seen."""
    from bayeslaw.posterior.draws import by_label

    eff = np.array([[1.0, 2.0], [3.0, 4.0]])
    values = np.array([2.0, np.nan, 4.0, np.nan], dtype=object)
    sd = np.array([1.0, 10.0])
    got = by_label([2.0, 4.0], eff, values, sd, np.random.default_rng(5))
    z = np.random.default_rng(5).standard_normal(2)
    np.testing.assert_allclose(got[:, 0], eff[:, 0])
    np.testing.assert_allclose(got[:, 2], eff[:, 1])
    np.testing.assert_allclose(got[:, 1], sd * z)
    np.testing.assert_allclose(got[:, 3], sd * z)


def test_a_bad_sampler_argument_of_fit_is_an_argument_error(stored_fit):
    """fit(draws=0) names the keyword (no sampling happens)."""
    with pytest.raises(ArgumentError, match=r"fit\(\): draws must be a whole number >= 1"):
        bl.fit(stored_fit.data, stored_fit.spec, draws=0)


def test_rows_that_share_a_run_share_their_parameters(stored_fit, monkeypatch):
    """Parameters are computed once per distinct (run, group levels) row and spread to the
    rows, with the same draws as row by row: a new level's draw is made once, in the order
    the levels first appear, either way (issue 34: a figure's 120 points a curve cost one)."""
    import bayeslaw.posterior.draws as draws

    pts = pd.DataFrame({"run": ["N1B_T8", "new_a", "N1B_T8", "new_b", "new_a", "new_b"],
                        "N": [1e9, 1.7e8, 1e9, 5e9, 1.7e8, 5e9],
                        "T_m": [8.0, 4.0, 8.0, 16.0, 4.0, 16.0],
                        "D": np.geomspace(1e9, 1e11, 6)})
    slow = draws._parameter_draws(stored_fit, pts, np.random.default_rng(3), None)
    sizes = []
    real = draws._parameter_draws

    def spy(post, table, rng, groups):
        sizes.append(len(table))
        return real(post, table, rng, groups)

    monkeypatch.setattr(draws, "_parameter_draws", spy)
    fast = draws.parameter_draws(stored_fit, pts, np.random.default_rng(3))
    assert sizes == [3]  # three distinct rows: a fitted run and two new ones
    assert fast.keys() == slow.keys()
    for name, value in slow.items():
        np.testing.assert_array_equal(np.broadcast_to(fast[name], np.shape(value)), value)
    assert np.shape(fast["b"]) == (stored_fit.n_draws, 6)  # varies by level: one per row
    assert not np.array_equal(fast["b"][:, 1], fast["b"][:, 3])  # two new levels differ
    # a table without runs, where run effects would give each row a new run: row by row
    sizes.clear()
    draws.parameter_draws(stored_fit, pts.drop(columns="run"), np.random.default_rng(3))
    assert sizes == [3]  # no run effect in this spec: rows of equal levels still share
