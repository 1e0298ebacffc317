"""A shift shared by the rows of one checkpoint (``likelihood.shock``) in step tables.

The graph's likelihood and the numpy side (LOO, backtest scores, forecasts) must agree draw
by draw, each row shifted by its own checkpoint's draw; a forecast at a fitted checkpoint
takes its posterior shift and a new checkpoint one shift for all its rows.  Checked on prior
draws (no sampling).  The recovery of the shock's sd from a simulated sweep is measured,
not tested here (a fit of a sweep small enough for the suite samples for about 5 minutes):
``benchmarks/results/steps_shock_pinned_2026-12-07/``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.data.steps import checkpoint_labels
from bayeslaw.errors import ArgumentError, SpecError
from bayeslaw.inference.modelcache import get_model
from bayeslaw.posterior.noise import pointwise_log_likelihood, shock_draws
from bayeslaw.posterior.result import _derived
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.catalog import load_spec
from bayeslaw.spec.model_spec import ModelSpec

from ..conftest import prior_fit
from ..density import compile_kwargs

SHOCK = {"dist": "HalfNormal", "sigma": 0.02}


def shock_spec(law: str = "looped_steps", **extra) -> ModelSpec:
    d = load_spec(law=law).to_dict()
    d["likelihood"].update({"shock": SHOCK, **extra})
    return ModelSpec.from_dict(d)


@pytest.fixture(scope="module")
def steps():
    """Three sizes x two depths, four checkpoints: 6 runs' step curves and totals."""
    frame, _ = looped_step_sweep(seed=2, shock=0.01, N=(1e8, 3e8, 1e9), T_m=(2, 4),
                                 D=tuple(np.geomspace(1e8, 1e10, 4)))
    return bl.load(frame)


def test_the_spec_refuses_a_shock_off_a_step_law_or_beside_a_process():
    with pytest.raises(SpecError, match="likelihood.shock .* not a step-wise law"):
        shock_spec(law="looped_total")
    with pytest.raises(SpecError, match="likelihood.shock .* ar1 or walk"):
        shock_spec(ar1={"dist": "Beta", "alpha": 2.0, "beta": 2.0})
    assert shock_spec().likelihood.shock.to_dict() == SHOCK
    assert shock_spec().to_dict()["likelihood"]["shock"] == SHOCK  # round trip


def test_a_laplace_first_look_at_a_shock_is_refused_before_any_search(steps):
    """The mode search has no proper mode to find with the shifts free: an error at once,
    naming the key, not minutes of search and then a failure."""
    with pytest.raises(ArgumentError, match="likelihood.shock .* Use method='nuts'"):
        bl.fit(steps, spec=shock_spec(), method="laplace", seed=1, progress=False)


def test_the_simulator_shifts_every_row_of_a_checkpoint_alike():
    kw = {"seed": 3, "N": (1e8, 1e9), "T_m": (2, 4), "D": tuple(np.geomspace(1e8, 1e10, 4))}
    plain, _ = looped_step_sweep(**kw)
    shocked, truth = looped_step_sweep(shock=0.05, **kw)
    shift = (shocked["loss"] - plain["loss"]).groupby([plain["run"], plain["D"]])
    assert shift.std().max() < 1e-12  # one shift per checkpoint, steps and total alike
    assert shift.mean().abs().min() > 0  # and a shift there is
    assert truth.params["shock"] == 0.05


@pytest.mark.parametrize("subset", ["all", "step held out"])
def test_numpy_log_likelihood_equals_the_graph(steps, subset):
    import arviz as az
    import pymc as pm

    spec = shock_spec()
    data = steps
    if subset != "all":  # a training split: the checkpoints stay the built data's
        data = steps.select((steps.frame["T"] != 4).to_numpy(), "T = 4 held out")
    fake = prior_fit(spec, steps, seed=1, draws=20)
    fake = bl.Fit.from_draws(idata=fake.idata, spec=spec, data=data, provenance={})
    model = get_model(spec, steps)
    model.set_data(data)
    shifts = fake.draws("checkpoint_shock")
    assert np.abs(shifts).min() > 0 and shifts.shape[1] == len(set(checkpoint_labels(steps.frame)))
    with model.model, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        graph = pm.compute_log_likelihood(az.InferenceData(posterior=fake.idata.posterior),
                                          progressbar=False, compile_kwargs=compile_kwargs())
    expected = graph.log_likelihood["loss"].values.reshape(20, -1)
    ours = model.run_sums(pointwise_log_likelihood(fake), data)
    np.testing.assert_allclose(ours, expected, rtol=1e-8, atol=1e-8)
    # the shift matters: without it the numpy side would not match the graph
    unshifted = bl.Fit.from_draws(idata=fake.idata, spec=load_spec(law="looped_steps"),
                                  data=data, provenance={})
    off = model.run_sums(pointwise_log_likelihood(unshifted), data)
    assert np.abs(off - expected).max() > 1.0


def test_forecasts_take_a_fitted_checkpoints_shift_and_share_a_new_ones(steps):
    spec = shock_spec()
    fake = prior_fit(spec, steps, seed=4, draws=400)
    frame = steps.frame
    fitted = frame.iloc[[0, 1, 5]]
    got = shock_draws(fake, fitted, np.random.default_rng(0))
    labels = list(fake.idata.posterior["checkpoint"].values)
    for j, label in enumerate(checkpoint_labels(fitted)):
        np.testing.assert_array_equal(got[:, j],
                                      fake.draws("checkpoint_shock")[:, labels.index(label)])
    new = frame[frame["D"] == frame["D"].max()].copy()
    new["D"] = 3e10  # a checkpoint no fit saw: one shift for all of a looped run's rows there
    got = shock_draws(fake, new, np.random.default_rng(0))
    for _, rows in new.groupby("looped_run").indices.items():
        assert np.ptp(got[:, rows], axis=1).max() == 0.0
    runs = new["looped_run"].to_numpy()
    first = [np.flatnonzero(runs == r)[0] for r in dict.fromkeys(runs)]
    assert np.corrcoef(got[:, first[0]], got[:, first[1]])[0, 1] < 0.2
    # a new shift is N(0, tau): its standardized draws have sd 1 (400 draws: se 0.035)
    z = got[:, first] / fake.draws("shock")[:, None]
    assert abs(z.std() - 1.0) < 0.12


def test_each_looped_runs_shifts_sum_to_zero_and_a_checkpoint_without_rows_draws_anew(steps):
    spec = shock_spec()
    fake = prior_fit(spec, steps, seed=5, draws=50)
    labels = fake.idata.posterior["checkpoint"].values
    shifts = fake.draws("checkpoint_shock")
    runs = np.array([c.rsplit("@", 1)[0] for c in labels])
    for run in set(runs):  # zero to rounding, while each shift is of the order of tau
        assert np.abs(shifts[:, runs == run].sum(axis=1)).max() < 1e-12
    assert np.median(np.abs(shifts) / fake.draws("shock")[:, None]) > 0.3
    # the diagnosis leaves the shifts out (tau times z: they would repeat z), keeps their sd
    derived = _derived(fake.idata, spec)
    assert "checkpoint_shock" in derived and "shock" not in derived
    # a prefix fit: the later checkpoints are in the model, without rows
    early = (steps.frame["D"] < steps.frame["D"].max()).to_numpy()
    prefix = bl.Fit.from_draws(idata=fake.idata, spec=spec, data=steps.select(early, "prefix"),
                               provenance={})
    late = steps.frame[~early]
    got = shock_draws(prefix, late, np.random.default_rng(0))
    stored = fake.draws("checkpoint_shock")[:, [list(labels).index(c)
                                                for c in checkpoint_labels(late)]]
    assert np.abs(got - stored).min() > 0  # drawn anew, not the stored value
    fitted = steps.frame[early]
    np.testing.assert_array_equal(
        shock_draws(prefix, fitted, np.random.default_rng(0)),
        fake.draws("checkpoint_shock")[:, [list(labels).index(c)
                                           for c in checkpoint_labels(fitted)]])


def test_a_saved_shock_fit_forecasts_the_same_after_loading(steps, tmp_path):
    """The checkpoints are labels (run @ D): a fit written and read back finds each fitted
    row's posterior shift again, and forecasts the same draws."""
    fake = prior_fit(shock_spec(), steps, seed=6, draws=40)
    loaded = bl.Fit.load(fake.save(tmp_path / "shock.nc"))
    rows = steps.frame.iloc[[0, 3, 7, 11]]
    before = shock_draws(fake, rows, np.random.default_rng(1))
    np.testing.assert_array_equal(shock_draws(loaded, rows, np.random.default_rng(1)), before)
    assert np.ptp(before, axis=0).min() > 0  # real shifts, not zeros: the test can fail
    target = steps.frame.iloc[:12]
    a = bl.predict(fake, target, seed=2).table
    b = bl.predict(loaded, target, seed=2).table
    np.testing.assert_array_equal(a["median"].to_numpy(), b["median"].to_numpy())
    np.testing.assert_array_equal(a["upper_90"].to_numpy(), b["upper_90"].to_numpy())
