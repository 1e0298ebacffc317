"""``likelihood.sigma_min_points``: a noise scale of its own only for levels with enough points.

A curve with about as many fitted points as the law has coefficients per curve can pass
through them, and its own noise scale then shrinks toward zero and traps its shape
(``benchmarks/results/few_points_convergence_2026-12-06/README.md``).  With
``sigma_min_points = K`` such a level takes the pooled ``sigma``, in the fit and in every
forecast; a held-out run (no point observed) still draws its scale from the population.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.inference.modelcache import get_model
from bayeslaw.model.plan import make_plan
from bayeslaw.posterior.noise import noise_scale_draws, pointwise_log_likelihood
from bayeslaw.simulate import DEFAULT_TRUTH, design, simulate
from bayeslaw.spec.catalog import load_spec

from ..density import compile_kwargs
from .test_noise_models import _held_out_fit, noise_spec

OWN = {"sigma_min_points": 5}


@pytest.fixture(scope="module")
def curves():
    """Nine simulated looped-LM runs of six points each (3 sizes x 3 depths)."""
    frame = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, 6))
    return bl.load(simulate(load_spec(law="looped_total"), frame, DEFAULT_TRUTH, seed=3)[0])


def _cut(curves, keep: dict[str, int]):
    """``curves`` with run ``r`` cut to its first ``keep[r]`` points (others whole)."""
    frame = curves.frame
    position = frame.groupby("run", sort=False).cumcount().to_numpy()
    limit = frame["run"].map(lambda r: keep.get(r, 99)).to_numpy()
    return curves.select(position < limit, "cut")


def test_spec_key_is_checked_and_kept_only_when_set():
    spec = noise_spec(OWN)
    assert spec.likelihood.sigma_min_points == 5
    assert spec.to_dict()["likelihood"]["sigma_min_points"] == 5
    assert "sigma_min_points" not in noise_spec({}).to_dict()["likelihood"]
    for bad in (0, 2.5, "6", True):
        with pytest.raises(SpecError, match=r"sigma_min_points must be a whole number.*got"):
            noise_spec({"sigma_min_points": bad})
    with pytest.raises(SpecError, match=r"sigma_by is \"none\".*remove sigma_min_points"):
        noise_spec({"sigma_min_points": 5, "sigma_by": "none"})


def test_few_point_runs_take_the_pooled_scale_and_held_out_runs_the_population(curves):
    """Runs observed at 3 and 4 points (< 5) get deviation 0 in the graph and in forecasts;
    whole runs (6 points) and a held-out run keep deviations of their own."""
    runs = list(curves.runs)
    data = _cut(curves, {runs[1]: 3, runs[2]: 4})
    spec = noise_spec(OWN)
    fake, model = _held_out_fit(spec, data, [runs[3]], seed=5)
    dev = fake.idata.posterior["sigma_log_dev"].stack(s=("chain", "draw")).values  # (runs, S)
    own = np.abs(dev).max(axis=1) > 0
    assert own.tolist() == [i not in (1, 2) for i in range(len(runs))]
    assert model.held["sigma_own"].tolist() == [float(o) for o in own]
    # the forecasts' scale: the pooled sigma for the few-point runs, exactly
    rows = data.frame.reset_index(drop=True)
    scale = noise_scale_draws(fake, rows, np.random.default_rng(0), np.ones((20, 1)))
    sigma = fake.draws("sigma")
    few = rows["run"].isin([runs[1], runs[2]]).to_numpy()
    np.testing.assert_array_equal(scale[:, few], np.repeat(sigma[:, None], few.sum(), 1))
    assert np.all(np.abs(np.log(scale[:, ~few] / sigma[:, None])) > 0)


def test_numpy_log_likelihood_equals_the_graph_with_pooled_levels(curves):
    import arviz as az
    import pymc as pm

    runs = list(curves.runs)
    data = _cut(curves, {runs[0]: 2, runs[5]: 4})
    fake, model = _held_out_fit(noise_spec(OWN), data, [runs[7]], seed=6)
    with model.model, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        graph = pm.compute_log_likelihood(az.InferenceData(posterior=fake.idata.posterior),
                                          progressbar=False, compile_kwargs=compile_kwargs())
    expected = graph.log_likelihood["loss"].values.reshape(20, -1)
    np.testing.assert_allclose(model.run_sums(pointwise_log_likelihood(fake), fake.data),
                               expected, rtol=1e-6, atol=1e-6)


def test_pooled_levels_are_non_centered_and_data_not_graph(curves):
    """A level at the pooled scale meets no data, so even ``sigma_centered = true`` builds it
    non-centered; which levels are pooled is a container, so two subsets with the same
    centering share one compiled model and differ only in ``sigma_own``."""
    runs = list(curves.runs)
    spec = noise_spec({**OWN, "sigma_centered": True})
    few = _cut(curves, {runs[2]: 4})
    plan = make_plan(spec, curves, few)
    assert plan.mask("sigma").tolist() == [i != 2 for i in range(len(runs))]
    spec = noise_spec(OWN)  # auto: every level non-centered on this small sweep
    first = get_model(spec, _cut(curves, {runs[2]: 4}), like=curves)
    own_first = first.held["sigma_own"].copy()
    second = get_model(spec, _cut(curves, {runs[4]: 3}), like=curves)
    assert second is first
    assert own_first.tolist() == [float(i != 2) for i in range(len(runs))]
    assert second.held["sigma_own"].tolist() == [float(i != 4) for i in range(len(runs))]
