"""Noise models: per-run scale, decay with D, within-run AR(1) or random walk, Student-t or
normal.

The numpy log-likelihood (used for LOO, backtest scores and partial-curve weights) must equal
the PyMC graph's, parameter draw by parameter draw: checked on prior draws, no sampling.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.inference.modelcache import get_model
from bayeslaw.model.noise import previous_rows, walk_variance
from bayeslaw.posterior.draws import mean_draws
from bayeslaw.posterior.noise import (
    log_likelihood,
    noise_scale_draws,
    pointwise_log_likelihood,
    walk_bridge,
    walk_draws,
)
from bayeslaw.posterior.prediction import predict
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate
from bayeslaw.spec.catalog import load_spec
from bayeslaw.spec.model_spec import ModelSpec

from ..conftest import prior_fit
from ..density import compile_kwargs

NOISE = {
    "decay": {"sigma_decay": {"dist": "HalfNormal", "sigma": 0.3}},
    "ar1": {"ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "both": {"sigma_decay": {"dist": "HalfNormal", "sigma": 0.3},
             "ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "relative+ar1": {"sigma_relative": True, "sigma": {"dist": "HalfNormal", "sigma": 0.01},
                     "ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "walk": {"walk": {"dist": "HalfNormal", "sigma": 0.05},
             "walk_start": {"dist": "HalfNormal", "sigma": 0.05}},
    "walk+hurst": {"walk": {"dist": "HalfNormal", "sigma": 0.05},
                   "walk_start": {"dist": "HalfNormal", "sigma": 0.05},
                   "walk_hurst": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "relative+walk": {"sigma_relative": True, "sigma": {"dist": "HalfNormal", "sigma": 0.01},
                      "walk": {"dist": "HalfNormal", "sigma": 0.02},
                      "walk_start": {"dist": "HalfNormal", "sigma": 0.02}},
}


def noise_spec(extra: dict, family: str = "student_t") -> ModelSpec:
    d = load_spec(law="looped_total").to_dict()
    d["likelihood"].update(extra)
    d["likelihood"]["family"] = family
    if family != "student_t":
        d["likelihood"].pop("nu")
    if family == "contaminated":
        d["likelihood"]["outlier_share"] = {"dist": "Beta", "alpha": 1.0, "beta": 9.0}
        d["likelihood"]["outlier_scale"] = {"dist": "LogNormal", "mu": 2.0, "sigma": 0.5}
    return ModelSpec.from_dict(d)


@pytest.fixture(scope="module")
def curves():
    frame = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, 6))
    frame, _ = simulate(load_spec(law="looped_total"), frame, DEFAULT_TRUTH, seed=3)
    return bl.load(frame)


def test_previous_rows():
    prev, first = previous_rows(np.array(["a", "a", "a", "b", "b", "c"]))
    assert prev.tolist() == [0, 0, 1, 3, 3, 5]
    assert first.tolist() == [1, 0, 0, 1, 0, 1]


@pytest.fixture(scope="module")
def ragged(curves):
    """The curves cut to different lengths (6, 5 and 4 points): the graph's run-major layout
    pads the shorter ones, and every term must stay finite in the padding (the walk's power of
    a gap to the previous point was NaN there before the padding repeated a run's last D)."""
    frame = curves.frame
    position = frame.groupby("run", sort=False).cumcount().to_numpy()
    cut = np.array([len(curves.runs) and i % 3 for i in curves.run_index])
    return curves.select(position < 6 - cut, "ragged")


@pytest.mark.parametrize("kind", ["decay", "ar1", "both", "relative+ar1", "walk",
                                  "walk+hurst", "relative+walk"])
@pytest.mark.parametrize("family", ["student_t", "normal", "contaminated"])
@pytest.mark.parametrize("layout", ["equal", "ragged"])
def test_numpy_log_likelihood_equals_the_graph(curves, ragged, kind, family, layout):
    import arviz as az
    import pymc as pm

    curves = curves if layout == "equal" else ragged

    spec = noise_spec(NOISE[kind], family)
    fake = prior_fit(spec, curves, seed=1, draws=20)
    model = get_model(spec, curves)
    with model.model, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        graph = pm.compute_log_likelihood(az.InferenceData(posterior=fake.idata.posterior),
                                          progressbar=False,
                                          compile_kwargs=compile_kwargs())
    # the graph's density is one per run's curve: compare the numpy one summed per run
    expected = graph.log_likelihood["loss"].values.reshape(20, -1)
    ours = model.run_sums(pointwise_log_likelihood(fake), curves)
    np.testing.assert_allclose(ours, expected, rtol=1e-6, atol=1e-6)


def test_noise_scale_falls_with_D(curves):
    fake = prior_fit(noise_spec(NOISE["decay"]), curves, seed=2)
    one_run = curves.frame[curves.frame["run"] == curves.runs[0]]
    scale = noise_scale_draws(fake, one_run, np.random.default_rng(0), np.ones((10, 1)))
    decay = fake.draws("sigma_decay")
    d = one_run["D"].to_numpy()
    # scale ratio between two points = (D1 / D0) ** -decay, draw by draw
    np.testing.assert_allclose(scale[:, -1] / scale[:, 0], (d[-1] / d[0]) ** -decay)


def test_relative_noise_is_a_fraction_of_the_law(curves):
    fake = prior_fit(noise_spec(NOISE["relative+ar1"]), curves, seed=4)
    frame = curves.frame
    mu = np.random.default_rng(1).uniform(2.0, 4.0, size=(10, len(frame)))
    scale = noise_scale_draws(fake, frame, np.random.default_rng(0), mu)
    sigma_run = fake.draws("sigma_run")[:, curves.run_index]
    np.testing.assert_allclose(scale, sigma_run * mu)


def test_simulated_relative_noise_scales_with_the_loss():
    spec = noise_spec({"sigma_relative": True}, "normal")
    frame = design((1e8, 1e9), (2, 8), np.geomspace(3e7, 2e10, 200))
    sim, _ = simulate(spec, frame, DEFAULT_TRUTH, sigma=0.01, sigma_spread=0.0, seed=6)
    mu = simulate(spec, frame, DEFAULT_TRUTH, sigma=0.0, sigma_spread=0.0, seed=6)[0]["loss"]
    rel = ((sim["loss"] - mu) / mu).to_numpy()
    # 800 normal draws of sd 0.01: the sample sd has sd 0.01 / sqrt(1600) = 0.00025, so 10% is
    # 4 of those sds; an absolute scale of 0.01 nats would give about 0.01 / 3 here
    assert abs(rel.std() - 0.01) < 0.001


def test_likelihood_keys_are_checked():
    with pytest.raises(SpecError, match=r"unknown key\(s\) \['sigma_relativ'\] in \[likelihood\]"):
        noise_spec({"sigma_relativ": True})
    with pytest.raises(SpecError, match="sigma_relative must be true or false"):
        noise_spec({"sigma_relative": "yes"})


def test_ar1_needs_a_correlation_prior_and_decay_needs_D():
    with pytest.raises(SpecError, match="Beta or Uniform"):
        noise_spec({"ar1": {"dist": "Normal", "mu": 0.0, "sigma": 1.0}})
    d = load_spec(law="size_only").to_dict()
    d["likelihood"]["sigma_decay"] = {"dist": "HalfNormal", "sigma": 0.3}
    with pytest.raises(SpecError, match="no D"):
        ModelSpec.from_dict(d)


def test_simulated_ar1_residuals_are_correlated():
    spec = noise_spec({}, "normal")
    frame = design((3e8,), (4,), np.geomspace(3e7, 2e10, 400))
    truth = dict(DEFAULT_TRUTH)
    plain, _ = simulate(spec, frame, truth, sigma=0.01, sigma_spread=0.0, seed=5)
    corr, _ = simulate(spec, frame, truth, sigma=0.01, sigma_spread=0.0, ar1=0.8, seed=5)
    mu = simulate(spec, frame, truth, sigma=0.0, sigma_spread=0.0, seed=5)[0]["loss"]
    for sim, expected in ((plain, 0.0), (corr, 0.8)):
        e = (sim["loss"] - mu).to_numpy()
        lag1 = np.corrcoef(e[:-1], e[1:])[0, 1]
        # 400 points: the lag-1 sample correlation's sd is about 0.05 (0.03 at rho 0.8)
        assert abs(lag1 - expected) < 0.15


def test_walk_bridge_hand_values():
    x = np.array([0.0, 1.0, 3.0])
    e = np.array([[0.1, 0.3, -0.1]])
    rows = np.array([2.0, 1.0, 5.0, -1.0])
    mean, var, alone = walk_bridge(x, e, rows, np.array([[2.0]]))
    # x=2 between 1 and 3: mean 0.3 - 0.4/2, var 4 * 1 * 1 / 2; x=1 (a logged point) from its
    # neighbours 0 and 3: 0.1 - 0.2/3, 4 * 1 * 2 / 3; past the last: -0.1, 4 * 2; before the
    # first: 0.1, 4 * 1
    np.testing.assert_allclose(mean[0], [0.1, 0.1 - 0.2 / 3, -0.1, 0.1])
    np.testing.assert_allclose(var[0], [2.0, 8.0 / 3.0, 8.0, 4.0])
    assert not alone.any()
    _, _, alone = walk_bridge(np.array([0.0]), np.array([[0.2]]), np.array([0.0, 1.0]),
                              np.array([[1.0]]))
    assert alone.tolist() == [True, False]  # a row at a run's only logged point has no other
    # Hurst exponent 1: each distance enters squared (the bridge's 1/2 -> 1/4, 2 -> 4, 1 -> 1)
    _, var, _ = walk_bridge(x, e, rows, np.array([[2.0]]), hurst=1.0)
    np.testing.assert_allclose(var[0], [1.0, 4.0 * (2.0 / 3.0) ** 2, 16.0, 4.0])


@pytest.mark.parametrize("kind", ["walk", "walk+hurst"])
def test_walk_forecasts_start_from_the_run_and_widen_with_log_tokens(curves, kind):
    spec = noise_spec(NOISE[kind])
    fake = prior_fit(spec, curves, seed=7, draws=20)
    frame = curves.frame
    run = curves.runs[0]
    logged = frame[frame["run"] == run]
    last = logged.iloc[-1]
    ahead = logged.iloc[[-1, -1]].copy()
    ahead["D"] = last["D"] * np.array([2.0, 8.0])
    new = ahead.assign(run="not-fitted")
    rng = np.random.default_rng(0)
    mu = mean_draws(fake, pd.concat([ahead, new]), rng)
    shift, var = walk_draws(fake, pd.concat([ahead, new]), mu, rng)
    tau, start = fake.draws("walk")[:, None], fake.draws("walk_start")[:, None]
    h2 = 2 * fake.draws("walk_hurst")[:, None] if kind == "walk+hurst" else 1.0
    e_last = last["loss"] - mean_draws(fake, logged.iloc[[-1]], rng)
    # a fitted run: its last logged residual, and variance tau^2 * (log tokens past it)
    np.testing.assert_allclose(shift[:, :2], np.broadcast_to(e_last, (20, 2)))
    np.testing.assert_allclose(var[:, :2], tau**2 * np.log([2.0, 8.0]) ** h2)
    # a new run: no shift, the walk's marginal variance from the reference tokens
    x_ref = np.log(spec.reference["D"])
    np.testing.assert_allclose(shift[:, 2:], 0.0)
    gap = np.abs(np.log(ahead["D"].to_numpy()) - x_ref)
    np.testing.assert_allclose(var[:, 2:], start**2 + tau**2 * gap**h2)
    # held-out scores and bands use the same forecast
    sigma = noise_scale_draws(fake, ahead, rng, mu[:, :2])
    ll = log_likelihood(fake, ahead.assign(loss=last["loss"]))
    from scipy import stats
    expected = stats.t.logpdf(last["loss"], df=fake.draws("nu")[:, None], loc=mu[:, :2] + e_last,
                              scale=np.sqrt(sigma**2 + var[:, :2]))
    np.testing.assert_allclose(ll, expected, rtol=1e-6)
    pred = predict(fake, ahead, probs=(0.9,), seed=0)
    lo, hi = pred.band(0.9)
    assert (hi - lo)[1] > (hi - lo)[0]  # wider 8x past the last point than 2x


def test_walk_spec_errors():
    with pytest.raises(SpecError, match="go together"):
        noise_spec({"walk": {"dist": "HalfNormal", "sigma": 0.05}})
    with pytest.raises(SpecError, match="keep one"):
        noise_spec({**NOISE["walk"], **NOISE["ar1"]})
    with pytest.raises(SpecError, match="give walk and walk_start"):
        noise_spec({"walk_hurst": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}})
    with pytest.raises(SpecError, match="Beta or Uniform"):
        noise_spec({**NOISE["walk"], "walk_hurst": {"dist": "HalfNormal", "sigma": 1.0}})
    d = load_spec(law="size_only").to_dict()
    d["likelihood"].update(NOISE["walk"])
    with pytest.raises(SpecError, match="no D"):
        ModelSpec.from_dict(d)


def fixed_fit(spec: ModelSpec, data, seed: int, draws: int = 400):
    """Draws (a ``Posterior``: no log-likelihood or diagnostics needed) whose every draw is
    one prior draw of ``spec``: known parameters."""
    import arviz as az

    from bayeslaw.posterior.draws import Posterior

    one = prior_fit(spec, data, seed=seed, draws=1).idata.posterior.isel(chain=[0], draw=[0])
    post = one.isel(draw=np.zeros(draws, dtype=int)).assign_coords(draw=np.arange(draws))
    return Posterior(az.InferenceData(posterior=post), spec, data)


def _walk_process(truth, data):
    """The law's value and each point's innovation sd given its run's previous point, for the
    one draw of ``truth`` (a walk+hurst spec), written out from ``walk_variance``."""
    frame = data.frame
    mu = mean_draws(truth, frame, np.random.default_rng(0))[0]  # (no new level: rng unused)
    sigma = truth.draws("sigma_run")[0][data.run_index]
    prev, first = previous_rows(frame["run"].to_numpy())
    log_d = np.log(frame["D"].to_numpy())
    sd = np.sqrt(sigma**2 + walk_variance(np, log_d, log_d[prev], 1.0 - first,
                                          truth.draws("walk")[0], truth.draws("walk_start")[0],
                                          np.log(truth.spec.reference["D"]),
                                          truth.draws("walk_hurst")[0]))
    return mu, sd, prev, first


def test_walk_forecast_of_the_next_point_is_calibrated(curves):
    """Data simulated from the walk model itself, with known parameters (every posterior draw
    equal to one prior draw): the 90% band for each run's next point, from its logged points,
    must hold 90% of them.  1,800 forecasts (200 data sets x 9 runs): the 95% binomial
    interval of a calibrated band is about [0.886, 0.914]."""
    from bayeslaw.evaluation.metrics import clopper_pearson
    from bayeslaw.posterior.draws import Posterior

    spec = noise_spec(NOISE["walk+hurst"], "normal")
    truth = fixed_fit(spec, curves, seed=11)
    frame = curves.frame
    rng = np.random.default_rng(12)
    mu, sd, prev, first = _walk_process(truth, curves)
    last = np.r_[first[1:] == 1, True]  # each run's last row
    inside = []
    for _ in range(200):
        e = np.zeros(len(frame))
        for i in range(len(frame)):  # rows sorted by run then D: the model's sequence
            e[i] = (0.0 if first[i] else e[prev[i]]) + sd[i] * rng.standard_normal()
        sim = frame.assign(loss=mu + e)
        logged = bl.load(sim.loc[~last])
        fit = Posterior(truth.idata, spec, logged)
        pred = predict(fit, sim.loc[last], probs=(0.9,), seed=int(rng.integers(1 << 30)))
        lo, hi = pred.band(0.9)
        inside.append((sim.loc[last, "loss"].to_numpy() >= lo)
                      & (sim.loc[last, "loss"].to_numpy() <= hi))
    inside = np.concatenate(inside)
    low, high = clopper_pearson(int(inside.sum()), len(inside))
    assert low <= 0.9 <= high, f"{inside.mean():.3f} [{low:.3f}, {high:.3f}]"


def test_walk_fit_draws_its_grid_and_report(curves):
    """Plumbing on prior draws: the sweep grid (bands of fitted runs bridge their logged
    points, forecasts past them widen) and the report's likelihood rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeslaw.plots.sweep import plot_grid
    from bayeslaw.report.document import Report
    from bayeslaw.report.sections import _spec_section

    fake = prior_fit(noise_spec(NOISE["walk+hurst"]), curves, seed=13, draws=20)
    fig = plot_grid(fake, extend_to=8e10, n_grid=30)
    assert len(fig.axes) == 9
    plt.close(fig)
    text = Report("walk", [_spec_section(fake, "Model", 2)]).to_markdown()
    assert "random walk's Hurst exponent" in text
    assert "random-walk drift per e-fold of tokens" in text


def test_walk_forecast_of_a_new_partial_curve_starts_from_its_last_point(curves):
    """A new partial curve under the walk: each draw's future is the law shifted by the
    curve's last logged residual (the bridge past its last point), with variance
    walk^2 (log tokens past it); the epistemic forecast stays the law; the band widens with
    the distance."""
    from bayeslaw.posterior.prediction import forecast_run

    fake = prior_fit(noise_spec(NOISE["walk"], "normal"), curves, seed=14, draws=200)
    d = np.array([1e9, 2e9, 4e9, 8e9])
    y = np.array([3.0, 2.9])  # two logged points, then two future rows
    mu = np.random.default_rng(0).uniform(2.5, 3.5, size=(200, 4))
    tau = fake.draws("walk")[:, None]
    shift, var, alone = walk_bridge(np.log(d[:2]), y - mu[:, :2], np.log(d[2:]), tau)
    np.testing.assert_allclose(shift, np.repeat((2.9 - mu[:, 1])[:, None], 2, axis=1))
    np.testing.assert_allclose(var, tau**2 * np.log([2.0, 4.0]), rtol=1e-9)
    assert not alone.any()
    # known parameters, no group effects: the law at a point is one number
    spec = noise_spec(NOISE["walk"], "normal").with_pooling("complete")
    known = fixed_fit(spec, curves, seed=15)
    frame = curves.frame
    partial = frame[frame["run"] == curves.runs[4]].drop(columns=["run"]).iloc[:4]
    partial = partial.assign(loss=partial["loss"] + 0.3)  # 0.3 nats above its run
    last = partial.iloc[[-1]].assign(run="__partial__")
    step = last.assign(D=last["D"] * 1.001)
    rng = np.random.default_rng(0)
    mu_last, mu_step = (mean_draws(known, t, rng)[0, 0] for t in (last, step))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        near = forecast_run(known, partial, step["D"].iloc[0], n_grid=1, seed=0)
        law = forecast_run(known, partial, step["D"].iloc[0], n_grid=1, kind="epistemic",
                           seed=0)
        far = forecast_run(fake, partial, partial["D"].iloc[-1] * 1e3, n_grid=2, probs=(0.9,),
                           seed=0)
    np.testing.assert_allclose(law.table["median"], mu_step, rtol=1e-9)
    # 400 draws of noise at 0.001 e-folds past the last point: the median is within a few
    # hundredths of the law shifted by the last residual (about 0.3 here)
    expected = mu_step + partial["loss"].iloc[-1] - mu_last
    assert abs(near.table["median"].iloc[0] - expected) < 0.03
    lo, hi = far.band(0.9)
    assert (hi - lo)[1] > (hi - lo)[0]


def _held_out_fit(spec, curves, held: list[str], seed: int, draws: int = 20):
    """Prior draws of a model built on ``curves`` (``like``) with the runs ``held`` left out
    of the observed data: the layout of a backtest's training part."""
    import arviz as az
    import pymc as pm

    from bayeslaw.posterior.draws import Posterior

    train = curves.select(~curves.frame["run"].isin(held).to_numpy(), "held out")
    model = get_model(spec, train, like=curves)
    with model.model:
        prior = pm.sample_prior_predictive(draws=draws, random_seed=seed,
                                           compile_kwargs=compile_kwargs())
    return Posterior(az.InferenceData(posterior=prior.prior), spec, train), model


@pytest.mark.parametrize("sigma_by", ["run", "T_m", "N"])
def test_numpy_log_likelihood_equals_the_graph_with_held_out_runs(curves, sigma_by):
    """``like != data`` (held-out runs in the model, unobserved) and a noise scale by another
    group: the numpy likelihood must index each run's scale in the model's run order.  With
    ``sigma_by = "T_m"`` it failed at 5d06e18 (scales of another level)."""
    import arviz as az
    import pymc as pm

    spec = noise_spec({"sigma_by": sigma_by}, "student_t")
    held = [curves.runs[0], curves.runs[4]]  # the first run shifts every later position
    fake, model = _held_out_fit(spec, curves, held, seed=7)
    with model.model, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        graph = pm.compute_log_likelihood(az.InferenceData(posterior=fake.idata.posterior),
                                          progressbar=False,
                                          compile_kwargs=compile_kwargs())
    expected = graph.log_likelihood["loss"].values.reshape(20, -1)  # one per run's curve
    np.testing.assert_allclose(model.run_sums(pointwise_log_likelihood(fake), fake.data),
                               expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("sigma_by", ["run", "T_m"])
def test_held_out_runs_get_their_own_levels_noise_scale(curves, sigma_by):
    """A held-out run's rows get the scale of its own level (sigma * exp(deviation)); at
    5d06e18 ``sigma_by = "T_m"`` returned another level's scale."""
    spec = noise_spec({"sigma_by": sigma_by}, "student_t")
    held = [curves.runs[0], curves.runs[4]]
    fake, _ = _held_out_fit(spec, curves, held, seed=8)
    rows = curves.frame[curves.frame["run"].isin(held)].reset_index(drop=True)
    scale = noise_scale_draws(fake, rows, np.random.default_rng(0), np.ones((20, 1)))
    dev = fake.idata.posterior["sigma_log_dev"]
    dim = dev.dims[-1]
    expected = np.stack([
        fake.draws("sigma") * np.exp(dev.sel({dim: level}).values.reshape(-1))
        for level in rows[sigma_by].tolist()], axis=1)
    np.testing.assert_allclose(scale, expected, rtol=1e-12)


def _one_step_residuals(truth, data):
    """Standardised residuals of each point given its run's previous point (model order)."""
    from bayeslaw.posterior.draws import Posterior
    from bayeslaw.posterior.noise import sequential_terms

    fit = Posterior(truth.idata, truth.spec, data)
    frame, rng = data.frame, np.random.default_rng(0)
    y = frame["loss"].to_numpy()
    mu = mean_draws(fit, frame, rng)
    loc, sd = sequential_terms(fit, frame, y, mu, noise_scale_draws(fit, frame, rng, mu))
    return (y - loc[0]) / sd[0], previous_rows(frame["run"].to_numpy())


@pytest.mark.parametrize("kind", ["walk", "walk+hurst", "ar1"])
def test_simulate_from_draw_follows_the_models_own_process(curves, kind):
    """Data simulated from one draw of a walk / AR(1) model: given each run's previous point,
    the standardised residuals are iid N(0, 1) under the model.  40 data sets x 54 points:
    the variance of 2,160 N(0, 1) draws has sd sqrt(2 / 2160) = 0.03 (tolerance 0.15, 5 sds),
    the lag-1 correlation within runs sd 1 / sqrt(1800) = 0.024 (tolerance 0.12).  At 5d06e18
    the simulation left the walk and the AR(1) out (iid noise): variance and correlation were
    both off."""
    from bayeslaw.testing import simulate_from_draw

    truth = fixed_fit(noise_spec(NOISE[kind], "normal"), curves, seed=21)
    z, follows = [], []
    for i in range(40):
        data = simulate_from_draw(truth, 0, seed=100 + i)
        r, (prev, first) = _one_step_residuals(truth, data)
        z.append(np.c_[r, r[prev]][first == 0])
        follows.append(r)
    pairs, z = np.concatenate(z), np.concatenate(follows)
    assert abs(z.var() - 1.0) < 0.15, z.var()
    assert abs(np.corrcoef(pairs.T)[0, 1]) < 0.12, np.corrcoef(pairs.T)[0, 1]


def _simulate_by_hand(truth, data, rng):
    """Losses from the one draw of ``truth`` (a walk+hurst spec), the walk written out as in
    test_walk_forecast_of_the_next_point_is_calibrated: independent of bayeslaw's simulator."""
    frame = data.frame
    mu, sd, prev, first = _walk_process(truth, data)
    e = np.zeros(len(frame))
    for i in range(len(frame)):
        e[i] = (0.0 if first[i] else e[prev[i]]) + sd[i] * rng.standard_normal()
    return bl.load(frame.assign(loss=mu + e))


def test_posterior_predictive_check_holds_the_walk(curves):
    """The check's 90% band of each observed point (given its run's previous point) holds 90%
    of points simulated by hand from the walk model: one-step predictive bands are independent
    trials under the model, so 100 data sets x 54 points give a binomial interval (99%: a
    matched model fails 1 seed in 100).  A band of 400 draws covers 0.8955 on average (the
    expected coverage of sample quantiles 380.05 / 401 - 20.95 / 401), inside that interval.
    At 5d06e18 the band left the walk's variance out and held 0.09 here."""
    from bayeslaw.evaluation.metrics import clopper_pearson
    from bayeslaw.posterior.draws import Posterior
    from bayeslaw.testing import posterior_predictive_check

    truth = fixed_fit(noise_spec(NOISE["walk+hurst"], "normal"), curves, seed=22)
    rng = np.random.default_rng(23)
    inside = n = 0
    for i in range(100):
        data = _simulate_by_hand(truth, curves, rng)
        fake = Posterior(truth.idata, truth.spec, data)
        check = posterior_predictive_check(fake, seed=i)
        inside += round(check.values["coverage"] * check.values["n_points"])
        n += check.values["n_points"]
    low, high = clopper_pearson(inside, n, confidence=0.99)
    assert low <= 0.9 <= high, f"{inside / n:.3f} [{low:.3f}, {high:.3f}]"


def test_outlier_probability_is_the_wide_parts_share_draw_by_draw(curves):
    """The contaminated normal's responsibilities against scipy's normal densities, per draw
    (prior draws, the fitted rows as the model sees them), then averaged; a point moved far
    from its curve is called an outlier; other families are refused by name."""
    from scipy import stats

    frame = curves.frame.copy()
    far = 7  # one point moved 50 times the largest noise scale of any draw up
    fake = prior_fit(noise_spec({}, "contaminated"), curves, seed=5, draws=20)
    mu = mean_draws(fake, frame, np.random.default_rng(0))
    scale = noise_scale_draws(fake, frame, np.random.default_rng(0), mu)
    frame.loc[frame.index[far], "loss"] = (mu[:, far] + 50 * scale.max()).max()
    moved = bl.load(frame)
    fake = bl.Fit.from_draws(idata=fake.idata, spec=fake.spec, data=moved,
                             provenance=fake.provenance)
    share, excess = (fake.draws(k)[:, None] for k in ("outlier_share", "outlier_scale"))
    y = moved.frame["loss"].to_numpy()
    wide = np.log(share) + stats.norm.logpdf(y, mu, (1 + excess) * scale)
    bulk = np.log(1 - share) + stats.norm.logpdf(y, mu, scale)
    want = np.exp(wide - np.logaddexp(wide, bulk)).mean(axis=0)  # logs: the far point's
    # densities underflow
    got = bl.outlier_probability(fake)
    np.testing.assert_allclose(got["p_outlier"], want, rtol=1e-9, atol=1e-12)
    assert got["p_outlier"].iloc[far] > 0.999
    assert list(got.columns) == ["run", "D", "loss", "residual", "p_outlier"]
    with pytest.raises(ValueError, match="likelihood.family is 'contaminated'; this fit's is "
                                         "'student_t'"):
        bl.outlier_probability(prior_fit(noise_spec({}), curves, seed=5, draws=5))
