"""Noise models: per-run scale, decay with D, within-run AR(1), Student-t or normal.

The numpy log-likelihood (used for LOO, backtest scores and partial-curve weights) must equal
the PyMC graph's, parameter draw by parameter draw: checked on prior draws, no sampling.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.fit import get_model
from bayeslaw.model import previous_rows
from bayeslaw.predict import noise_scale_draws, pointwise_log_likelihood
from bayeslaw.priors import ModelSpec, load_spec
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate

from .conftest import prior_fit

NOISE = {
    "decay": {"sigma_decay": {"dist": "HalfNormal", "sigma": 0.3}},
    "ar1": {"ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "both": {"sigma_decay": {"dist": "HalfNormal", "sigma": 0.3},
             "ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
    "relative+ar1": {"sigma_relative": True, "sigma": {"dist": "HalfNormal", "sigma": 0.01},
                     "ar1": {"dist": "Beta", "alpha": 2.0, "beta": 2.0}},
}


def noise_spec(extra: dict, family: str = "student_t") -> ModelSpec:
    d = load_spec(law="looped_total").to_dict()
    d["likelihood"].update(extra)
    d["likelihood"]["family"] = family
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


@pytest.mark.parametrize("kind", ["decay", "ar1", "both", "relative+ar1"])
@pytest.mark.parametrize("family", ["student_t", "normal"])
def test_numpy_log_likelihood_equals_the_graph(curves, kind, family):
    import arviz as az
    import pymc as pm

    spec = noise_spec(NOISE[kind], family)
    fake = prior_fit(spec, curves, seed=1, draws=20)
    with get_model(spec, curves).model, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        graph = pm.compute_log_likelihood(az.InferenceData(posterior=fake.idata.posterior),
                                          progressbar=False)
    expected = graph.log_likelihood["loss"].values.reshape(20, -1)
    ours = pointwise_log_likelihood(fake)
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
    with pytest.raises(SpecError, match=r"unknown \[likelihood\] key\(s\) \['sigma_relativ'\]"):
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
