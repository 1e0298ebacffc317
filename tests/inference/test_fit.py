"""Seeded MCMC tests on a small simulated sweep; one compiled model shared by all of them."""

import warnings

import numpy as np
import pytest

from bayeslaw import constants as C
from bayeslaw.errors import ConvergenceError, ConvergenceWarning
from bayeslaw.inference.sampling import fit
from bayeslaw.posterior.diagnostics import Thresholds
from bayeslaw.posterior.result import Fit
from bayeslaw.simulate import DEFAULT_TRUTH


@pytest.mark.slow
def test_recovery_truth_inside_94_interval(small_fit):
    """Every true coefficient of the simulated 3 x 3 sweep lies in its central 94% interval
    (fitted on the first half of every curve: conftest's ``small_fit``)."""
    table = small_fit.summary()
    for name, true in DEFAULT_TRUTH.items():
        lo, hi = table.loc[name, ["lower_94%", "upper_94%"]]
        assert lo <= true <= hi, f"{name}: {true} outside [{lo:.4g}, {hi:.4g}]"
    d = small_fit.diagnostics
    assert d.max_rhat <= 1.01, d
    assert d.divergences == 0, d
    assert d.min_ess_bulk >= 200, d


SHORT = dict(draws=40, tune=40, chains=2)


@pytest.fixture(scope="module")
def seed_9(small_sweep):
    """A short fit with seed 9 (the two seed tests share it)."""
    with pytest.warns(ConvergenceWarning):
        return fit(small_sweep[0], seed=9, **SHORT)


def test_same_seed_same_draws(small_sweep, seed_9):
    with pytest.warns(ConvergenceWarning):
        again = fit(small_sweep[0], seed=9, **SHORT)
    for name in ("E", "alpha", "b_run", "sigma_run"):
        np.testing.assert_array_equal(again.draws(name), seed_9.draws(name))


def test_different_seed_different_draws(small_sweep, seed_9):
    """The same settings as :func:`test_same_seed_same_draws`, another seed: other draws."""
    with pytest.warns(ConvergenceWarning):
        other = fit(small_sweep[0], seed=10, **SHORT)
    assert not np.array_equal(other.draws("E"), seed_9.draws("E"))


def test_strict_raises_on_short_run(small_sweep):
    data, _ = small_sweep
    with pytest.raises(ConvergenceError, match="sampling did not converge: .*ESS"):
        fit(data, seed=1, draws=20, tune=20, chains=2, strict=True)


def test_log_likelihood_matches_pymc(small_fit):
    """The numpy pointwise log-likelihood equals PyMC's own on the same draws, PyMC's from
    the model the fit sampled: the whole sweep's design with the second halves unobserved."""
    import pymc as pm

    from bayeslaw.inference.modelcache import get_model

    from ..conftest import first_half_split
    from ..density import compile_kwargs

    lm = get_model(small_fit.spec, small_fit.data, like=first_half_split()[0])
    sub = small_fit.idata.sel(draw=slice(0, 20))
    ref = pm.compute_log_likelihood(sub, model=lm.model, extend_inferencedata=False,
                                    progressbar=False, compile_kwargs=compile_kwargs())
    # the graph's density is one per run's curve: compare ours summed per run
    np.testing.assert_allclose(lm.run_sums(sub.log_likelihood["loss"].values, small_fit.data),
                               ref["loss"].values, rtol=2e-5, atol=2e-5)


def test_in_sample_predictive_coverage(small_fit):
    """90% predictive bands hold the observed points at a binomially plausible rate."""
    from scipy import stats

    from bayeslaw.posterior.prediction import predict

    pred = predict(small_fit, small_fit.data.frame, seed=0)
    lo, hi = pred.band(0.9)
    y = small_fit.data.frame[C.LOSS].to_numpy()
    inside = int(((y >= lo) & (y <= hi)).sum())
    n = len(y)
    # two-sided 99% binomial acceptance region for p = 0.9
    assert stats.binom.ppf(0.005, n, 0.9) <= inside <= stats.binom.ppf(0.995, n, 0.9)


def test_save_load_round_trip(tmp_path, small_fit):
    path = small_fit.save(tmp_path / "fit.nc")
    back = Fit.load(path)
    assert back.spec == small_fit.spec
    assert back.provenance == small_fit.provenance
    assert back.data.frame.equals(small_fit.data.frame)
    assert back.data.sha256 == small_fit.data.sha256
    for group in ("posterior", "sample_stats", "log_likelihood"):
        a, b = getattr(small_fit.idata, group), getattr(back.idata, group)
        assert set(a.data_vars) == set(b.data_vars)
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values)
    assert back.summary().equals(small_fit.summary())


def test_prior_predictive_admits_the_data(small_sweep):
    from bayeslaw.inference.sampling import sample_prior_predictive

    data, _ = small_sweep
    prior = sample_prior_predictive(data, draws=300, seed=2)
    sims = prior.prior_predictive["loss"].values.reshape(300, -1)
    assert sims.shape[1] == len(data)
    lo, hi = np.quantile(sims, [0.01, 0.99], axis=0)
    y = data.frame["loss"].to_numpy()
    assert np.mean((y >= lo) & (y <= hi)) >= 0.95  # the priors allow what the sweep shows
    last = data.frame.groupby("run")["D"].idxmax().to_numpy()
    assert np.all(hi[last] - lo[last] > 1.0)  # ... and are not tuned to it: plateaus free



@pytest.mark.slow
def test_pymc_backend_same_model(small_sweep, monkeypatch):
    """PyMC's NUTS and nutpie sample the same posterior: every coefficient's mean agrees
    within 4 Monte Carlo standard errors of the difference (a one-in-16,000 event per
    coefficient when both are right), on a pooled spec that both sample quickly.

    PyMC's chains run one after the other in this process (``BAYESLAW_CORES=1``).  It was
    needed while ``tests/density.py`` loaded JAX (which warns at any ``os.fork``; PyMC forks
    a process per chain); without it the test was no faster on 2 cores (34.4 s against
    31.7 s, ``benchmarks/results/suite_pydensity_2026-12-05/README.md``).  Same seeds, same
    draws."""
    import arviz as az

    from bayeslaw.spec.catalog import load_spec
    from bayeslaw.spec.model_spec import ModelSpec

    data, _ = small_sweep
    d = load_spec(law="looped_total").with_pooling("complete").to_dict()
    d["likelihood"] = {"family": "normal", "sigma": d["likelihood"]["sigma"],
                       "sigma_by": "none"}
    d["sampler"]["sum_split"] = ["E", "a", "c"]  # as test_compare's pooled specs
    spec = ModelSpec.from_dict(d)
    # a Monte Carlo standard error needs a sound ESS, not 400: 200 (as small_fit)
    kw = dict(seed=4, draws=1000, tune=1000, chains=2, thresholds=Thresholds(min_ess=200))
    monkeypatch.setenv("BAYESLAW_CORES", "1")
    res = fit(data, spec, backend="pymc", **kw)
    monkeypatch.delenv("BAYESLAW_CORES")
    ref = fit(data, spec, backend="nutpie", **kw)
    assert res.provenance["sampler"]["backend"] == "pymc"
    assert res.idata.log_likelihood["loss"].shape == (2, 1000, len(data))
    names = [*spec.free_params, "sigma"]
    se = {f.provenance["sampler"]["backend"]: az.mcse(f.idata, var_names=names)
          for f in (res, ref)}
    for name in names:
        diff = res.draws(name).mean() - ref.draws(name).mean()
        tol = 4 * np.hypot(float(se["pymc"][name]), float(se["nutpie"][name]))
        assert abs(diff) < tol, f"{name}: pymc - nutpie = {diff:.3g}, 4 MCSE = {tol:.3g}"


def test_diagnostics_name_variables_whose_r_hat_is_not_defined():
    """A NaN R-hat / ESS is skipped only for a constant variable; a variable with a non-finite
    draw fails by name (at 5d06e18 its NaN was dropped and the fit passed)."""
    import arviz as az

    from bayeslaw.posterior.diagnostics import diagnose

    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 500))
    bad = x.copy()
    bad[2, 5] = np.nan
    stats = {"diverging": np.zeros((4, 500), bool), "energy": rng.normal(size=(4, 500))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ok = diagnose(az.from_dict(posterior={"x": x, "fixed": np.ones((4, 500))},
                                   sample_stats=stats))
        failed = diagnose(az.from_dict(posterior={"x": x, "bad": bad}, sample_stats=stats))
    assert ok.ok and ok.undefined == () and ok.max_rhat < 1.01
    assert not failed.ok and failed.undefined == ("bad",)
    assert "R-hat or ESS not defined for bad" in failed.failures[0]
