"""The diagnosis of a failed fit: a known funnel and a known ridge are named (issue 37).

The sampled test runs nutpie on Neal's funnel (a centered group of 8 levels with no data, its
sd log-normal with a log-scale sd of 1.5: the step size that suits the wide mouth cannot enter
the narrow neck) beside a linear ridge (``a + b`` pinned to 0 by one observation with sd 0.01
while ``a`` and ``b`` have prior sd 1: a rank correlation near -1).  nutpie's adaptation
leaves few divergences on this funnel (too few for the rank statistic, on the seeds tried
before the test was written) but its sd mixes worst, which is how the diagnosis names it
here; where the divergences sit is checked on hand-made draws whose answer is known by
construction.
The variables carry bayeslaw's graph names (``x_by_g_sd``, ``x_by_g``), so the remedies name
the spec entry to change.
"""

from __future__ import annotations

import arviz as az
import numpy as np
import pytest

from bayeslaw.posterior.diagnosis import DIVERGENCE_Z, LevelFacts, diagnose_failure
from bayeslaw.posterior.diagnostics import diagnose
from bayeslaw.spec.settings import SamplerSettings


@pytest.fixture(scope="module")
def funnel_and_ridge():
    import nutpie
    import pymc as pm

    with pm.Model(coords={"g": list("abcdefgh")}) as model:
        sd = pm.LogNormal("x_by_g_sd", 0.0, 1.5)
        pm.Normal("x_by_g", 0.0, sd, dims="g")  # centered, no data: Neal's funnel
        a, b = pm.Normal("a", 0.0, 1.0), pm.Normal("b", 0.0, 1.0)
        pm.Normal("y", a + b, 0.01, observed=0.0)  # a ridge along a + b = 0
    compiled = nutpie.compile_pymc_model(model)
    return nutpie.sample(compiled, draws=500, tune=500, chains=2, seed=4, progress_bar=False,
                         cores=1)


def test_a_known_funnel_and_ridge_are_named(funnel_and_ridge):
    d = diagnose(funnel_and_ridge)
    why = d.diagnosis
    assert why is not None and not d.ok
    # the sd mixes worst (nutpie's unconstrained copy x_by_g_sd_log__ is left out)
    assert why.worst_ess[0][0] == "x_by_g_sd", why
    pair = {why.correlations[0][0], why.correlations[0][1]}
    assert pair == {"a", "b"} and why.correlations[0][2] < -0.9, why
    text = str(why)
    assert ('a funnel (x_by_g_sd mixes worst, centered): set centered = false in the '
            '[[effects]] entry with param = "x", group = "g"') in text
    assert "a ridge between a and b: set low_rank = true in [sampler]" in text
    assert d.to_dict()["diagnosis"]["remedies"] == list(why.remedies)


def _idata(draws: dict[str, np.ndarray], diverging: np.ndarray) -> az.InferenceData:
    return az.from_dict(posterior=draws, sample_stats={"diverging": diverging})


def test_divergences_placed_by_their_ranks():
    rng = np.random.default_rng(0)
    shape = (2, 1000)
    sd = rng.lognormal(0.0, 1.0, shape)
    other = rng.normal(size=shape)
    # divergent where sd is in its lowest fifth: the mean rank is 0.1, far past the threshold
    diverging = sd < np.quantile(sd, 0.2)
    draws = {"x_by_g_sd": sd, "x_by_g_z": rng.normal(size=(*shape, 3)), "other": other}
    rhat, ess = az.rhat(az.from_dict(posterior=draws)), az.ess(az.from_dict(posterior=draws))
    why = diagnose_failure(_idata(draws, diverging), rhat, ess,
                           settings=SamplerSettings(tune=300), failed_mixing=True)
    assert why.divergent_at[0][:2] == ("x_by_g_sd", "low")
    assert why.divergent_at[0][2] <= -DIVERGENCE_Z
    # the expected z: (0.1 - 0.5) / sqrt(1 / (12 n)) with n = 400
    assert why.divergent_at[0][2] == pytest.approx(-0.4 / np.sqrt(1 / 4800), rel=0.01)
    assert all(not name.startswith("other") for name, _, _ in why.divergent_at)
    text = str(why)
    # non-centered (x_by_g_z is there): the switch is the other way
    assert "(divergences at small x_by_g_sd, non-centered): set centered = true" in text
    assert "set tune = 600 in [sampler]" in text


def test_a_short_tune_is_the_first_remedy_even_beside_funnels_and_a_ridge():
    """Two funnels and a ridge fill the three remedies shown; with a tune of 30 steps the
    longer tune comes first (what the draws say is not to be trusted yet), at 300 last."""
    from bayeslaw.posterior.diagnosis import SHORT_TUNE, TOP, _remedies

    args = ([], ["x_by_g_sd", "y_by_g_sd"], [("a", "b", -0.99)],
            {"x_by_g_sd", "x_by_g_z", "y_by_g_sd", "y_by_g_z", "a", "b"}, {"a", "b"})
    short = _remedies(*args, SamplerSettings(tune=30), True)
    assert len(short) == TOP and short[0].startswith(
        "chains that have not mixed: set tune = 60 in [sampler]")
    assert "funnel (x_by_g_sd mixes worst" in short[1]
    enough = _remedies(*args, SamplerSettings(tune=SHORT_TUNE), True)
    assert len(enough) == TOP and not any("set tune" in r for r in enough)
    assert "a ridge between a and b" in enough[2]


def test_random_divergences_name_nothing_and_a_noise_funnel_is_named():
    rng = np.random.default_rng(1)
    shape = (2, 1000)
    spread = rng.lognormal(0.0, 1.0, shape)
    draws = {"sigma_spread": spread, "sigma_z": rng.normal(size=(*shape, 4)),
             "E": rng.normal(size=shape)}
    ids = az.from_dict(posterior=draws)
    rhat, ess = az.rhat(ids), az.ess(ids)
    scattered = rng.random(shape) < 0.1
    none = diagnose_failure(_idata(draws, scattered), rhat, ess, failed_mixing=False)
    assert none.divergent_at == () and none.remedies == () and none.correlations == ()
    low = spread < np.quantile(spread, 0.1)
    noise = diagnose_failure(_idata(draws, low), rhat, ess, failed_mixing=False)
    assert noise.divergent_at[0][:2] == ("sigma_spread", "low")
    assert noise.remedies == ("a funnel (divergences at small sigma_spread): set "
                              "sigma_centered = true in [likelihood], or give sigma_spread a "
                              "tighter prior there",)


def test_derived_variables_are_left_out_and_a_passing_fit_has_no_diagnosis():
    rng = np.random.default_rng(2)
    shape = (4, 500)
    a = rng.normal(size=shape)
    draws = {"a": a, "A": 2.0 * a + 1.0, "b": rng.normal(size=shape)}
    # iid energies: BFMI about 2, so every check passes
    ids = az.from_dict(posterior=draws, sample_stats={"diverging": np.zeros(shape, bool),
                                                      "energy": rng.normal(size=shape)})
    assert diagnose(ids).ok and diagnose(ids).diagnosis is None
    rhat, ess = az.rhat(ids), az.ess(ids)
    kept = diagnose_failure(ids, rhat, ess, failed_mixing=False)
    assert kept.correlations[0][:2] == ("a", "A") and kept.correlations[0][2] == pytest.approx(1)
    left = diagnose_failure(ids, rhat, ess, derived=("A",), failed_mixing=False)
    assert left.correlations == ()


def test_a_fits_derived_variables_include_the_correlation_matrix():
    # in Nano's pooled fit the diagnosis listed run_corr[0,1] ~ run_corr[1,0] +1.00 (the two
    # halves of one symmetric matrix) as the strongest correlation; the matrix is derived
    from bayeslaw.posterior.result import _derived
    from bayeslaw.spec.catalog import load_spec

    shape = (2, 10, 3, 3)
    names = {"m": np.ones(shape[:2]), "A": np.ones(shape[:2]), "sigma_run": np.ones((2, 10, 4)),
             "run_corr": np.ones(shape), "run_corr_w01": np.ones(shape[:2])}
    ids = az.from_dict(posterior=names)
    spec = load_spec("curve_power")
    assert spec.correlation is not None and spec.correlation.name == "run_corr"
    derived = _derived(ids, spec)
    assert "run_corr" in derived and "sigma_run" in derived and "run_corr_w01" not in derived
    assert "m" not in derived


def test_a_ridge_within_a_power_term_gets_the_slope_split():
    """E and a on a ridge (their sum pinned): the remedy is sampler.slope_split over the
    term's floor, coefficient and exponent; a fit that already used it gets low_rank."""
    rng = np.random.default_rng(3)
    shape = (4, 500)
    E = rng.lognormal(0.7, 0.2, shape)
    draws = {"E": E, "a": 2.5 - E + rng.normal(0, 0.01, shape),
             "alpha": rng.lognormal(-1.0, 0.3, shape), "b": rng.normal(size=shape)}
    ids = az.from_dict(posterior=draws)
    rhat, ess = az.rhat(ids), az.ess(ids)
    why = diagnose_failure(ids, rhat, ess, settings=SamplerSettings(sum_split=("E", "a", "b")))
    assert {why.correlations[0][0], why.correlations[0][1]} == {"E", "a"}
    assert ('a ridge between E and a: set slope_split = ["E", "a", "alpha"] in [sampler] '
            "(samples the level E + a") in str(why)  # beside the sum split, sampled with it
    odd = diagnose_failure(ids, rhat, ess, settings=SamplerSettings(sum_split=("E", "c")))
    assert "slope_split" not in str(odd)  # a sum split with E but not a: not allowed
    plain = diagnose_failure(ids, rhat, ess, settings=SamplerSettings())
    assert 'set slope_split = ["E", "a", "alpha"] in [sampler] (samples' in str(plain)
    done = diagnose_failure(ids, rhat, ess,
                            settings=SamplerSettings(slope_split=("E", "a", "alpha")))
    assert "slope_split" not in str(done) and "set low_rank = true" in str(done)
    no_exponent = {k: v for k, v in draws.items() if k != "alpha"}
    ids = az.from_dict(posterior=no_exponent)
    other = diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings())
    assert "slope_split" not in str(other) and "set low_rank = true" in str(other)


def test_a_coefficient_rising_with_its_exponent_gets_a_reference_inside_the_data():
    """b and beta rising together (data above the term's reference, as GPT-3's curves under
    multi_power's D_ref): the remedy is a reference inside the data, not the slope split,
    which samples at the same reference; the usual negative ridge still gets the split."""
    rng = np.random.default_rng(5)
    shape = (4, 500)
    beta = rng.lognormal(-1.0, 0.3, shape)
    base = {"E": rng.lognormal(0.7, 0.2, shape), "beta": beta}
    # log b = log(value at x = 100 x_ref) + beta log(100): b and beta rise together
    above = {**base, "b": np.exp(-2.0 + beta * np.log(100.0) + rng.normal(0, 0.01, shape))}
    ids = az.from_dict(posterior=above)
    why = diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings())
    assert ("b and beta rise together (rank correlation +1.00): the reference point of b's "
            "term lies below where the data pin the term") in str(why)
    assert "[reference]" in str(why) and "set slope_split" not in str(why)
    below = {**base, "b": np.exp(-2.0 - beta * np.log(100.0) + rng.normal(0, 0.01, shape))}
    ids = az.from_dict(posterior=below)  # falling together: not this case
    other = diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings())
    assert "[reference]" not in str(other) and "set slope_split" in str(other)


def test_split_vectors_and_non_centered_deviations_are_derived():
    # in a step-law prefix fit the diagnosis listed sigma_log_dev[r] ~ sigma_z[r] +1.00 and two
    # levels of a non-centered b_by_N (sd times z) as its strongest correlations, not E ~ a
    from bayeslaw.posterior.result import _derived
    from bayeslaw.spec.catalog import load_spec

    spec = load_spec("iso_depth_eff")
    assert spec.sampler.slope_split == ("E", "a", "alpha")
    s = (2, 10)
    ids = az.from_dict(posterior={
        "E": np.ones(s), "E_a_alpha_slope": np.ones((*s, 3)), "b_by_N": np.ones((*s, 4)),
        "b_by_N_z": np.ones((*s, 4)), "b_by_T_m": np.ones((*s, 3)), "sigma_z": np.ones((*s, 5)),
        "sigma_log_dev": np.ones((*s, 5)), "sigma_spread": np.ones(s), "sigma": np.ones(s)})
    derived = set(_derived(ids, spec))
    assert {"E_a_alpha_slope", "b_by_N", "sigma_log_dev"} <= derived
    # sigma is sampled: sigma_z is its curves' z, not sigma's (review of 71aebdf)
    assert not derived & {"E", "b_by_N_z", "b_by_T_m", "sigma_z", "sigma_spread", "sigma"}


def test_chains_that_never_moved_get_the_prior_start():
    # the step law on the first half of its simulated curves: 3,116 of 4,000 transitions
    # divergent, bulk ESS 4 (the chains sat where the warm start put them)
    rng = np.random.default_rng(4)
    shape = (4, 500)
    draws = {"E": rng.normal(size=shape) * 1e-3 + np.arange(4)[:, None],
             "b": rng.normal(size=shape)}
    ids = az.from_dict(posterior=draws)
    rhat, ess = az.rhat(ids), az.ess(ids)
    most = np.arange(2000).reshape(shape) % 5 != 0  # 80% exactly
    why = diagnose_failure(_idata(draws, most), rhat, ess, settings=SamplerSettings())
    assert why.remedies[0].startswith("chains that never left their start (80% of the "
                                      'transitions divergent): set init = "prior"'), why
    prior = diagnose_failure(_idata(draws, most), rhat, ess,
                             settings=SamplerSettings(init="prior"))
    assert "init" not in str(prior)
    pymc = diagnose_failure(_idata(draws, most), rhat, ess,
                            settings=SamplerSettings(backend="pymc"))
    assert "init" not in str(pymc)  # no warm start on that backend
    few = diagnose_failure(_idata(draws, rng.random(shape) < 0.3), rhat, ess,
                           settings=SamplerSettings())
    assert "init" not in str(few)


def _unmixed(level: str, shape: tuple[int, int] = (2, 400)) -> dict[str, np.ndarray]:
    """Draws where ``f_by_run_z[level]``'s two chains sit 3 sds apart (R-hat about 1.8) and
    every other element mixes."""
    rng = np.random.default_rng(7)
    z = rng.normal(size=(*shape, 3))
    z[1, :, ["c0", "c1", "c2"].index(level)] += 3.0
    return {"f_by_run_z": z, "m": rng.normal(size=shape), "sigma": rng.lognormal(size=shape)}


def _levels_diagnosis(draws: dict[str, np.ndarray], levels):
    ids = az.from_dict(posterior=draws, coords={"run": ["c0", "c1", "c2"]},
                       dims={"f_by_run_z": ["run"]})
    return diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings(),
                            facts=LevelFacts(noise=levels))


def test_a_short_level_with_its_own_noise_scale_gets_sigma_min_points():
    from bayeslaw.posterior.diagnosis import NoiseLevels

    counts = {"c0": 4, "c1": 30, "c2": 30}
    why = _levels_diagnosis(_unmixed("c0"), NoiseLevels("run", counts, 4))
    assert why.worst_rhat[0][0] == "f_by_run_z[c0]", why
    assert why.remedies[0].startswith(
        "f_by_run_z[c0] mixes worst, and run 'c0' is fitted from 4 points, about as many as "
        "its 4 coefficients"), why
    assert why.remedies[0].endswith("set sigma_min_points = 6 in [likelihood] (a run with "
                                    "fewer points then takes the pooled scale sigma)"), why
    # the rule is coefficients + 2: five points with three coefficients is enough
    assert "sigma_min_points" not in str(_levels_diagnosis(
        _unmixed("c0"), NoiseLevels("run", {**counts, "c0": 5}, 3)))
    # a level with many points, one already at the pooled scale, no levels given: not named
    for draws, levels in ((_unmixed("c1"), NoiseLevels("run", counts, 4)),
                          (_unmixed("c0"), NoiseLevels("run", counts, 4, min_points=6)),
                          (_unmixed("c0"), None)):
        assert "sigma_min_points" not in str(_levels_diagnosis(draws, levels))
    # a level whose own points reach sigma_min_points but not the rule's count is named
    kept = _levels_diagnosis(_unmixed("c0"), NoiseLevels("run", counts, 4, min_points=3))
    assert "set sigma_min_points = 6" in kept.remedies[0], kept


def test_a_fit_names_sigma_min_points_for_its_short_curve(tmp_path):
    # the wiring: Fit.from_draws counts each curve's fitted points and its own coefficients
    # (curve_bend's m, f, beta and q by run) from the spec and the data
    import dataclasses

    import bayeslaw as bl
    from bayeslaw.posterior.result import Fit, noise_levels
    from bayeslaw.spec.catalog import load_spec

    from ..conftest import curve_table, prior_fit

    frame = curve_table(3, points=12)
    frame = frame[(frame.run != "c0") | (frame.groupby("run").cumcount() < 4)]
    data = bl.load(frame)
    shipped = load_spec("curve_bend")
    assert noise_levels(shipped, data) == bl_levels(c0=4, c1=12, c2=12, min_points=6)
    spec = dataclasses.replace(shipped, likelihood=dataclasses.replace(
        shipped.likelihood, sigma_min_points=None))
    prior = prior_fit(spec, data, seed=3, draws=400).idata.posterior
    two = {name: np.asarray(da.values).reshape(2, 200, *da.shape[2:])
           for name, da in prior.data_vars.items()}
    two["f_by_run_z"][1, :, 0] += 3.0  # c0's f: the chains disagree
    idata = az.from_dict(posterior=two, coords={"run": list(prior["run"].values)},
                         dims={n: list(da.dims[2:]) for n, da in prior.data_vars.items()})
    fit = Fit.from_draws(idata, spec, data, provenance={})
    assert not fit.diagnostics.ok
    assert "set sigma_min_points = 6 in [likelihood]" in fit.diagnostics.diagnosis.remedies[0]
    # with the shipped key c0 already takes the pooled scale: the remedy does not apply
    shipped_fit = Fit.from_draws(idata, shipped, data, provenance={})
    assert "sigma_min_points" not in str(shipped_fit.diagnostics.diagnosis)


def bl_levels(min_points=None, **counts):
    from bayeslaw.posterior.diagnosis import NoiseLevels

    return NoiseLevels("run", counts, 4, min_points)


def test_a_ridge_within_one_curve_names_its_effects_scale():
    # ColPret's context under curve_bend: each curve's f and beta on a ridge (rank correlation
    # -1.00), every draw at the maximum tree depth
    # (benchmarks/results/colpret_noise_scale_2026-12-06/)
    rng = np.random.default_rng(11)
    shape = (2, 400)
    f = rng.normal(size=(*shape, 2))
    f[1] += 2.0  # the chains disagree
    beta = -f + 0.01 * rng.normal(size=f.shape)
    draws = {"f_by_run_z": f, "beta_by_run_z": beta, "m": rng.normal(size=shape)}
    ids = az.from_dict(posterior=draws, coords={"run": ["c0", "c1"]},
                       dims={"f_by_run_z": ["run"], "beta_by_run_z": ["run"]})
    why = diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings())
    pair = why.correlations[0]
    assert pair[0].split("[")[1] == pair[1].split("[")[1] and pair[2] < -0.99, why
    level = pair[0].split("[")[1][:-1]
    text = str(why)
    assert (f"within run '{level}' (rank correlation {pair[2]:+.2f}): its points pin a "
            "combination of the two, not each. Removing the [[effects]] entry with param = "
            ) in text, text
    assert "group = \"run\" (every run then shares" in text, text
    # the same ridge in the window coordinates (sampler.shape_at = "window": ``_mid``)
    mid = {"f_by_run_mid": f, "beta_by_run_mid": beta, "m": draws["m"]}
    ids = az.from_dict(posterior=mid, coords={"run": ["c0", "c1"]},
                       dims={"f_by_run_mid": ["run"], "beta_by_run_mid": ["run"]})
    text = str(diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings()))
    assert f"within run '{level}'" in text and "group = \"run\" (every run" in text, text
    # two levels of one parameter, or two curves' terms, are no such ridge
    across = {"f_by_run_z": f, "beta_by_run_z": np.flip(beta, axis=-1), "m": draws["m"]}
    ids = az.from_dict(posterior=across, coords={"run": ["c0", "c1"]},
                       dims={"f_by_run_z": ["run"], "beta_by_run_z": ["run"]})
    other = diagnose_failure(ids, az.rhat(ids), az.ess(ids), settings=SamplerSettings())
    assert other.correlations and "within run" not in str(other), other


@pytest.mark.parametrize("centered", [True, False])
def test_a_funnels_centering_switch_is_advised_only_where_it_applies(centered):
    # a funnel whose divergent draws sit at its sd's small values; with the effects' points
    # known (rich: every level at CENTERED_MIN_POINTS or more) the switch is advised only
    # toward the form the data call for (a centered step-law effect of rich levels mixed far
    # worse non-centered: benchmarks/results/steps_funnel_2026-12-06/)
    from bayeslaw.constants import CENTERED_MIN_POINTS as K

    rng = np.random.default_rng(12)
    shape = (2, 1000)
    sd = rng.lognormal(0.0, 1.0, shape)
    draws = {"x_by_g_sd": sd, "x_by_g" if centered else "x_by_g_z": rng.normal(size=(*shape, 3))}
    ids = _idata(draws, sd < np.quantile(sd, 0.2))
    rhat, ess = az.rhat(az.from_dict(posterior=draws)), az.ess(az.from_dict(posterior=draws))

    def funnel(rich):
        why = diagnose_failure(ids, rhat, ess, failed_mixing=False, facts=LevelFacts(rich=rich))
        (remedy,) = [r for r in why.remedies if r.startswith("a funnel")]
        return remedy

    entry = 'the [[effects]] entry with param = "x", group = "g"'
    unknown, rich, poor = funnel(None), funnel(frozenset({"x_by_g"})), funnel(frozenset())
    switch = f"set centered = {'false' if centered else 'true'} in {entry}"
    assert switch in unknown and "if its levels" in unknown
    applies, not_applies = (poor, rich) if centered else (rich, poor)
    assert switch in applies and "if its levels" not in applies
    assert (f"(a level holds fewer than {K} points)" if centered
            else f"(every level holds {K} points or more)") in applies
    assert "set centered" not in not_applies
    assert f"give its scale a tighter prior there (in {entry})" in not_applies
    assert ("mixed far worse: benchmarks/results/steps_funnel_2026-12-06/" in not_applies) \
        == centered


def test_a_fit_counts_which_effects_are_rich_in_data():
    # the wiring: each effect's levels counted in the fitted data (a level of 200 points
    # or more is rich; an effect is rich when every level is)
    import bayeslaw as bl
    from bayeslaw.constants import CENTERED_MIN_POINTS as K
    from bayeslaw.posterior.result import rich_effects
    from bayeslaw.spec.catalog import load_spec

    from ..conftest import curve_table

    frame = curve_table(3, points=K)
    spec = load_spec("curve_bend")
    assert rich_effects(spec, bl.load(frame)) == {"m_by_run", "f_by_run", "beta_by_run",
                                                  "q_by_run"}
    short = frame[(frame.run != "c1") | (frame.groupby("run").cumcount() < K - 1)]
    assert rich_effects(spec, bl.load(short)) == frozenset()


def test_a_second_terms_mean_sliding_with_the_joined_values_gets_the_shift():
    """The checkpoint shock's failure (``benchmarks/results/steps_shock_trades_2026-12-07/``):
    the depths' term of ``b`` (centered) and its sizes' term (joined, ``"offset"``) trade along
    their sum, the chains apart along it: the diagnosis names ``centered_values =
    "shifted"``; not where the coordinates are already shifted, nor where the second term is
    non-centered (the shift does not apply), nor for another parameter's worst element."""
    from bayeslaw.posterior.diagnosis import _shift_remedy

    rng = np.random.default_rng(5)
    shape = (4, 300)
    slide = rng.normal(size=shape) + np.arange(4)[:, None] * 0.8  # the chains disagree
    depth = slide[..., None] + 0.01 * rng.normal(size=(*shape, 3))
    size = -slide[..., None] + 0.01 * rng.normal(size=(*shape, 2))
    draws = {"b_by_T_m": depth, "b_by_N_value": size,
             "b_by_N_joint": np.concatenate([-slide[..., None], size], axis=-1),
             "b_by_N_sd": np.exp(rng.normal(size=shape)),
             "b_by_T_m_sd": np.exp(rng.normal(size=shape)), "E": rng.normal(size=shape)}
    dims = {"b_by_T_m": ["T_m"], "b_by_N_value": ["N"], "b_by_N_joint": ["joint"]}
    ids = az.from_dict(posterior=draws, coords={"T_m": [2, 4, 8], "N": [1e8, 3e8],
                                                "joint": [0, 1, 2]}, dims=dims)
    text = str(diagnose_failure(ids, az.rhat(ids), az.ess(ids), derived=("b_by_N_value",),
                                settings=SamplerSettings(centered_values="offset")))
    assert ("b_by_T_m's levels trade with b_by_N's values (the data pin each run's sum of the "
            "two, not how it splits): set centered_values = \"shifted\" in [sampler]") in text, text
    names = set(draws)
    worst = ["b_by_T_m[8]"]
    assert _shift_remedy(worst, names, SamplerSettings(centered_values="offset")) is not None
    assert _shift_remedy(["b_by_N_value[1e8]"], names,
                         SamplerSettings(centered_values="offset")) is not None
    assert _shift_remedy(worst, names, SamplerSettings(centered_values="shifted")) is None
    assert _shift_remedy(worst, names | {"b_by_T_m_z"},
                         SamplerSettings(centered_values="offset")) is None
    assert _shift_remedy(["E"], names, SamplerSettings(centered_values="offset")) is None
