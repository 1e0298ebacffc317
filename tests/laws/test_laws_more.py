"""The parallel-streams, looped-streams and iso-depth laws: values, graphs, data, specs.

No sampling: models are checked by a finite log-probability and gradient at the initial
point, predictions on a few prior draws used as a posterior.
"""

import io
import itertools

import numpy as np
import pandas as pd
import pytensor.tensor as pt
import pytest

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.data.public import load_parscale
from bayeslaw.errors import DataError, SpecError
from bayeslaw.laws.multi_power import NODE_COLUMNS
from bayeslaw.laws.registry import LAWS, evaluate, law_for_columns, takes_T_m
from bayeslaw.model.graph import LossModel, cov_data_name
from bayeslaw.model.plan import check_compatible, make_plan
from bayeslaw.posterior.draws import mean_draws
from bayeslaw.posterior.result import Fit
from bayeslaw.simulate import SCHEDULE_TRUTH, design, looped_step_sweep, schedule_sweep, simulate
from bayeslaw.spec.catalog import available_specs, load_spec
from bayeslaw.spec.parts import link_width

from ..density import compile_kwargs, compile_logp, compile_logp_dlogp

NEW_LAWS = ("parallel_streams", "parallel_streams_data", "looped_streams", "iso_depth",
            "iso_depth_eff", "chinchilla_anneal")
THETA = dict(E=1.3, a=0.6, alpha=0.2, k=0.35, b=0.5, beta=0.4, c=0.08, gamma=0.45, phi=0.6,
             d=0.2, kappa=5.0, zeta=0.6, omega=0.5, m=2.5, f=0.5, q=0.4, beta_H=0.05,
             lambda_q=1.5)
REF = {"N": 1.5e9, "D": 2e10, "P": 2.0}


# -- laws against hand-computed values ------------------------------------------------------
def test_parallel_streams_matches_parscale_form():
    # ParScale: L = E + (A / (N (k ln P + 1)))^alpha with A = N_ref a^(1/alpha)
    E, a, alpha, k = 0.69, 0.4, 0.19, 0.39
    A = 1.5e9 * a ** (1 / alpha)
    N, P = 2.2e9, 4.0
    want = E + (A / (N * (k * np.log(P) + 1))) ** alpha
    theta = dict(E=E, a=a, alpha=alpha, k=k)
    law = LAWS["parallel_streams"]
    assert evaluate(law, {"N": N, "P": P}, theta, REF) == pytest.approx(want, rel=1e-12)
    assert law.natural(theta, REF) == {"A": pytest.approx(A)}
    # one stream is a plain power law in N; at the reference size it is E + a
    assert evaluate(law, {"N": 1.5e9, "P": 1.0}, theta, REF) == pytest.approx(E + a)


def test_parallel_streams_data_adds_chinchilla_data_term():
    theta = dict(E=0.7, a=0.4, alpha=0.19, k=0.39, b=0.3, beta=0.35)
    N, P, D = 9e8, 8.0, 5e10
    A = 1.5e9 * 0.4 ** (1 / 0.19)
    B = 0.3 * 2e10**0.35
    want = 0.7 + (A / (N * (0.39 * np.log(8.0) + 1))) ** 0.19 + B / D**0.35
    law = LAWS["parallel_streams_data"]
    assert evaluate(law, {"N": N, "P": P, "D": D}, theta, REF) == pytest.approx(want, rel=1e-12)
    nat = law.natural(theta, REF)
    assert nat["A"] == pytest.approx(A) and nat["B"] == pytest.approx(B)


def test_looped_streams_hand_value():
    theta = dict(E=0.78, a=0.24, alpha=0.29, c=0.05, gamma=0.48)
    A, Cc = 0.24 * 1.5e9**0.29, 0.05 * 2.0**0.48
    N, P = 5.4e8, 8.0
    want = 0.78 + A / N**0.29 + Cc / P**0.48
    law = LAWS["looped_streams"]
    assert evaluate(law, {"N": N, "P": P}, theta, REF) == pytest.approx(want, rel=1e-12)
    nat = law.natural(theta, REF)
    assert nat["A"] == pytest.approx(A) and nat["C"] == pytest.approx(Cc)
    assert law.reference_keys == ("N", "P")


def test_iso_depth_hand_value_and_reduction_to_effective_N():
    theta = dict(E=1.8, a=0.6, alpha=0.3, phi=0.7, b=0.6, beta=0.55)
    ref = {"N": 6e8, "D": 1e9}
    N_once, N_rec, r, D = 5e7, 2e8, 4.0, 3e9
    A, B = 0.6 * 6e8**0.3, 0.6 * 1e9**0.55
    want = 1.8 + A / (N_once + r**0.7 * N_rec) ** 0.3 + B / D**0.55
    law = LAWS["iso_depth"]
    cov = {"N_once": N_once, "N_rec": N_rec, "T_m": r, "D": D}
    assert evaluate(law, cov, theta, ref) == pytest.approx(want, rel=1e-12)
    nat = law.natural(theta, ref)
    assert nat["A"] == pytest.approx(A) and nat["B"] == pytest.approx(B)
    assert law.reference_keys == ("N", "D")
    # no split: N_once = 0, N_rec = N is the effective-N form
    N = np.array([1e8, 4e8, 1.3e9])
    T = np.array([2.0, 4.0, 8.0])
    full = evaluate(law, {"N_once": 0.0 * N, "N_rec": N, "T_m": T, "D": D}, theta, ref)
    eff = evaluate(LAWS["iso_depth_eff"], {"N": N, "T_m": T, "D": D}, theta, ref)
    np.testing.assert_allclose(full, eff, rtol=1e-12)
    want_eff = 1.8 + A / (N * T**0.7) ** 0.3 + B / D**0.55
    np.testing.assert_allclose(eff, want_eff, rtol=1e-12)
    # phi = 1: a reuse is worth a fresh parameter (Chinchilla on N_once + r N_rec)
    chin = evaluate(LAWS["chinchilla"], {"N": N_once + r * N_rec, "D": D}, theta, ref)
    assert evaluate(law, cov, {**theta, "phi": 1.0}, ref) == pytest.approx(chin, rel=1e-12)


def test_chinchilla_anneal_hand_values():
    """The anneal term is 0 at a run's start, C/2 half way, C at (and past) its horizon."""
    theta = dict(E=1.8, a=0.6, alpha=0.3, b=0.6, beta=0.55, c=0.07)
    ref = {"N": 6e8, "D": 1e9}
    A, B = 0.6 * 6e8**0.3, 0.6 * 1e9**0.55
    law = LAWS["chinchilla_anneal"]
    N, H = 2e8, 8e9
    D = np.array([1e-6 * H, 0.25 * H, 0.5 * H, H, 2 * H])
    drop = np.array([0.0, (1 - np.cos(np.pi / 4)) / 2, 0.5, 1.0, 1.0])  # p past 1 counts as 1
    want = 1.8 + A / N**0.3 + B / D**0.55 - 0.07 * drop
    got = evaluate(law, {"N": N, "D": D, "horizon": H}, theta, ref)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    chin = evaluate(LAWS["chinchilla"], {"N": N, "D": D}, theta, ref)
    np.testing.assert_allclose(chin - got, 0.07 * drop, atol=1e-12)
    nat = law.natural(theta, ref)
    assert nat == {"A": pytest.approx(A), "B": pytest.approx(B), "C": 0.07}
    assert law.reference_keys == ("N", "D") and law.term_covariates("anneal") == ("D", "horizon")


def _covariates(law, n=4):
    rng = np.random.default_rng(0)
    values = {"N": rng.uniform(5e8, 5e9, n), "D": rng.uniform(1e9, 1e11, n),
              "T_m": np.array([1.0, 2.0, 4.0, 8.0])[:n], "P": np.array([1.0, 2.0, 4.0, 8.0])[:n],
              "N_once": rng.uniform(0, 1e8, n), "N_rec": rng.uniform(1e8, 1e9, n)}
    values["horizon"] = values["D"] * np.array([1.0, 1.3, 2.0, 7.0])[:n]
    # a schedule's terms: forward area, drop, annealing area, the node areas along the drop
    values["lr_area"] = 0.7 * values["D"]
    values["lr_drop"] = np.array([0.0, 0.3, 0.65, 0.9])[:n]
    values["anneal_area"] = 0.8 * values["lr_drop"]
    for j, name in enumerate(NODE_COLUMNS):
        values[name] = np.where(j / (len(NODE_COLUMNS) - 1) <= values["lr_drop"],
                                values["lr_area"] * j / len(NODE_COLUMNS), 1e30)
    # a step table's exit weights: steps 1 and 3, a logged q over 4 steps, a latent total's
    # steps up to T_m = 8
    weights = np.zeros((4, len(C.EXIT_WEIGHTS)))
    weights[0, 0] = weights[1, 2] = 1.0
    weights[2, :4] = (0.1, 0.2, 0.3, 0.4)
    weights[3, :] = 1.0
    values.update({c: weights[:n, k] for k, c in enumerate(C.EXIT_WEIGHTS)})
    values[C.EXIT_ENTROPY] = np.array([0.0, 0.0, -np.sum(weights[2, :4] * np.log(weights[2, :4])),
                                       0.0])[:n]
    values[C.EXIT_LATENT] = np.array([0.0, 0.0, 0.0, 1.0])[:n]
    return {c: values[c] for c in law.covariates}


@pytest.mark.parametrize("name", sorted(LAWS))
def test_numpy_and_pytensor_agree(name):
    law = LAWS[name]
    theta = {p.name: THETA.get(p.name, p.fixed or 0.0) for p in law.params}
    ref = {"N": 1.5e9, "D": 2e10, "P": 2.0, "T_m": 4.0, "T": 4.0}
    cov = _covariates(law)
    sym = law(pt, {k: pt.as_tensor(v) for k, v in cov.items()},
              {k: pt.as_tensor(float(v)) for k, v in theta.items()}, ref)
    np.testing.assert_allclose(sym.eval(), evaluate(law, cov, theta, ref), rtol=1e-10)
    nat_np = law.natural(theta, ref)
    nat_pt = law.natural({k: pt.as_tensor(float(v)) for k, v in theta.items()}, ref)
    for key, value in nat_np.items():
        assert float(nat_pt[key].eval()) == pytest.approx(value, rel=1e-10)


def test_default_law_for_columns():
    assert law_for_columns({"N", "P", "loss"}) == "parallel_streams"
    assert law_for_columns({"N", "P", "D", "loss"}) == "parallel_streams_data"
    assert law_for_columns({"N_once", "N_rec", "T_m", "D", "loss"}) == "iso_depth"
    assert law_for_columns({"N", "D", "T_m", "loss"}) == "looped_total"
    assert law_for_columns({"N", "D", "loss"}) == "chinchilla"


# -- synthetic tables and graphs ------------------------------------------------------------
def _streams_table(with_D: bool = False) -> pd.DataFrame:
    rows = []
    for n, p in itertools.product((5e8, 1.1e9, 2.8e9, 4.4e9), (1, 2, 4, 8)):
        for d in ((1e9, 5e9, 2e10, 6e10) if with_D else (None,)):
            row = {"run": f"N{n:g}_P{p}", "N": n, "P": float(p)}
            if d is not None:
                row["D"] = d
            rows.append(row)
    return pd.DataFrame(rows)


def _iso_table() -> pd.DataFrame:
    rows = []
    for (n_once, n_rec), t in itertools.product(((2e7, 5e7), (4e7, 1.5e8), (8e7, 4e8)),
                                                (2.0, 4.0, 8.0)):
        for d in np.geomspace(3e7, 2e10, 8):
            rows.append({"run": f"r{n_rec:g}_T{t:g}", "N_once": n_once, "N_rec": n_rec,
                         "T_m": t, "D": d})
    return pd.DataFrame(rows)


TRUTH = {
    "curve_power": dict(m=2.5, f=0.5, beta=0.4),
    "curve_bend": dict(m=2.5, f=0.5, beta=0.4, q=0.6),
    "parallel_streams": dict(E=0.7, a=0.4, alpha=0.19, k=0.39),
    "parallel_streams_data": dict(E=0.7, a=0.4, alpha=0.19, k=0.39, b=0.3, beta=0.4),
    "looped_streams": dict(E=0.78, a=0.24, alpha=0.29, c=0.05, gamma=0.48),
    "iso_depth": dict(E=1.8, a=0.6, alpha=0.3, phi=0.6, b=0.6, beta=0.55),
    "iso_depth_eff": dict(E=1.8, a=0.6, alpha=0.3, phi=0.6, b=0.6, beta=0.55),
    "size_only": dict(E=0.78, a=0.24, alpha=0.29),
    "chinchilla": dict(E=1.8, a=0.6, alpha=0.3, b=0.6, beta=0.55),
    "chinchilla_anneal": dict(E=1.8, a=0.6, alpha=0.3, b=0.6, beta=0.55, c=0.05),
}
#: The schedule laws' specs: simulated with known schedules (bayeslaw.simulate.schedule_sweep).
SCHEDULE_SPECS = ("annealing_area", "multi_power", "looped_annealing_area", "looped_multi_power")
#: The step-wise laws' specs: simulated by bayeslaw.simulate.looped_step_sweep.
STEP_SPECS = ("looped_steps", "looped_steps_latent")


def synthetic(spec_name: str) -> bl.LossData:
    """A small simulated table for the default spec ``spec_name``."""
    spec = load_spec(spec_name)
    if spec.law in SCHEDULE_SPECS:
        return _scheduled_table(spec)
    if spec.law in STEP_SPECS:  # step losses: 3 sizes, T_m 2 and 4, 6 checkpoints
        frame, _ = looped_step_sweep(q_logged=spec.law == "looped_steps", N=(1e8, 3e8, 1e9),
                                     T_m=(2, 4), D=tuple(np.geomspace(1e8, 2e10, 6)), seed=1)
        return bl.load(frame)
    if spec.law in ("parallel_streams", "looped_streams", "size_only"):
        table = _streams_table()
        if spec_name == "parallel_streams_pooled":
            table = pd.concat([table.assign(dataset="stack"),
                               table.assign(dataset="pile", run=table["run"] + "_pile")],
                              ignore_index=True)
    elif spec.law == "parallel_streams_data":
        table = _streams_table(with_D=True)
    elif spec.law == "iso_depth":
        table = _iso_table()
    elif spec.law in ("curve_power", "curve_bend"):  # curves without a model size
        table = design((1e8, 3e8, 1e9), None, np.geomspace(3e7, 2e10, 8)).drop(columns="N")
    elif any(e.group == "peak_lr" for e in spec.effects) or spec.law == "chinchilla_anneal":
        # curves with their learning rate and horizon
        table = design((1e8, 3e8, 1e9), None, np.geomspace(3e7, 2e10, 8))
        table["horizon"] = np.where(table["N"] > 2e8, 2e10, 4e10)  # no D past its horizon
        table["peak_lr"] = np.where(table["N"] > 5e8, 1e-3, 2e-3)
    else:
        table = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, 8))
    frame, _ = simulate(spec, table, TRUTH[spec.law], effect_sd={"b": 0.05, "E": 0.3},
                        sigma=0.005, seed=1)
    if not frame.duplicated("run").any():  # final losses: a table without a run column
        frame = frame.drop(columns="run")
    return bl.load(frame)


def _scheduled_table(spec) -> bl.LossData:
    """Curves of 3 sizes (and 3 depths for a looped law) with known schedules of every kind."""
    frame, _ = schedule_sweep(points=6, N=(1e8, 3e8, 1e9), horizons=(2e9,), law="multi_power")
    if "T_m" in spec.law_obj.covariates:
        frame = pd.concat([frame.assign(T_m=t, run=frame["run"] + f"_T{t}") for t in (2, 4, 8)],
                          ignore_index=True)
    data = bl.load(frame)
    truth = {**SCHEDULE_TRUTH, "c": 0.1, "gamma": 0.5}
    sim, _ = simulate(spec, data.frame, {k: v for k, v in truth.items()
                                         if k in spec.law_obj.param_names}, sigma=0.005, seed=1)
    return bl.load(sim[frame.columns])


NEW_SPECS = [s for s in available_specs() if s not in ("looped_total", "chinchilla")]


def test_every_new_law_has_a_default_spec():
    assert set(NEW_LAWS) <= set(available_specs())
    assert "parallel_streams_pooled" in available_specs()
    for name in NEW_SPECS:
        spec = load_spec(name)
        assert bl.ModelSpec.from_dict(spec.to_dict()) == spec and spec.description
        assert set(spec.reference) == set(spec.law_obj.reference_keys)


@pytest.mark.parametrize("name", NEW_SPECS)
def test_default_spec_builds_with_finite_logp(name):
    spec = load_spec(name)
    data = synthetic(name)
    lm = LossModel(make_plan(spec, data))
    m = lm.model
    for c in spec.law_obj.covariates:
        assert cov_data_name(c) in m.named_vars  # one pm.Data container per covariate
    for n in [*spec.free_params, *spec.law_obj.natural_names]:
        assert n in m.named_vars, n
    ip = m.initial_point()
    logp, grad = compile_logp_dlogp(m)(ip)
    assert np.isfinite(logp) and np.all(np.isfinite(grad)) and np.any(grad != 0)
    lm.set_data(data)  # the containers round-trip


def test_prior_draws_predict_through_mean_draws():
    """``mean_draws`` evaluates the new covariates (prior draws standing in for a posterior)."""
    import pymc as pm

    for name in ("parallel_streams", "iso_depth"):
        spec, data = load_spec(name), synthetic(name)
        with LossModel(make_plan(spec, data)).model:
            idata = pm.sample_prior_predictive(draws=5, random_seed=1,
                                               compile_kwargs=compile_kwargs())
        idata.add_groups(posterior=idata.prior)
        fit = Fit.from_draws(idata=idata, spec=spec, data=data, provenance={})
        assert "A" in fit.coefficient_names()
        points = data.frame.iloc[:3].drop(columns="run")
        mu = mean_draws(fit, points, np.random.default_rng(0))
        assert mu.shape == (5, 3) and np.all(np.isfinite(mu))
        if name == "parallel_streams":  # no effects: the law at each draw
            theta = {p: fit.draws(p)[:, None] for p in spec.free_params}
            cov = {c: points[c].to_numpy(float)[None, :] for c in spec.law_obj.covariates}
            np.testing.assert_allclose(mu, evaluate(spec.law_obj, cov, theta, spec.reference))


# -- data validation --------------------------------------------------------------------------
def test_table_without_D_loads_and_laws_needing_D_say_so():
    frame = _streams_table().drop(columns="run").assign(loss=1.1)
    data = bl.load(frame)
    assert "D" not in data.columns and not data.has_runs and len(data) == 16
    assert data.summary()["P_levels"] == [1.0, 2.0, 4.0, 8.0]
    with pytest.raises(DataError, match="law 'chinchilla' needs column 'D'.*parallel_streams"):
        check_compatible(load_spec(law="chinchilla"), data)
    with pytest.raises(DataError, match="no column 'D': tokens_per_step"):
        bl.load(frame, tokens_per_step=2.0)
    curves = _streams_table(with_D=True).drop(columns="D").assign(loss=1.1)
    with pytest.raises(DataError, match=r"lacks column\(s\) \['D'\]"):
        bl.load(curves)  # several rows per run: a curve needs its token axis


def test_missing_P_column_is_named():
    data = bl.load(_streams_table().drop(columns=["run", "P"]).assign(loss=1.1))
    with pytest.raises(DataError, match="law 'parallel_streams' needs column 'P'"):
        check_compatible(load_spec(law="parallel_streams"), data)
    with pytest.raises(DataError, match="law 'iso_depth' needs column 'N_once'"):
        check_compatible(load_spec(law="iso_depth"), bl.load(design((1e8, 3e8, 1e9), (2, 4),
                                                                    (1e8, 1e9)).assign(loss=2)))


@pytest.mark.parametrize("mutate, match", [
    (lambda f: f.assign(P=f["P"].where(f.index != 2, -1.0)),
     r"column 'P' must be positive; row 3 .* -1"),
    (lambda f: f.assign(P=f["P"].astype(object).where(f.index != 1, "four")),
     r"column 'P' must be numeric; row 2 .* 'four'"),
    (lambda f: f.assign(P=f["P"].where(f.index != 4, np.nan)),
     r"column 'P' has a missing or infinite value .* row 5"),
    (lambda f: f.assign(N_once=-1.0, N_rec=1e8), r"column 'N_once' must be zero or positive"),
    (lambda f: f.assign(N_once=0.0, N_rec=f["N"].where(f.index != 3, 0.0)),
     r"'N_once' and 'N_rec' are both 0 in row 4"),
])
def test_new_covariate_validation(mutate, match, tmp_path):
    frame = _streams_table().drop(columns="run").assign(loss=1.1)
    path = tmp_path / "t.csv"
    mutate(frame).to_csv(path, index=False)
    with pytest.raises(DataError, match=match):
        bl.load(path)


def test_run_level_covariates_constant_along_curves():
    frame = _iso_table().assign(loss=2.0)
    data = bl.load(frame)  # N is the total of the split
    np.testing.assert_allclose(data.frame["N"], data.frame["N_once"] + data.frame["N_rec"])
    assert "N = N_once + N_rec (total parameters)" in data.notes
    frame.loc[1, "N_rec"] = 7e8
    with pytest.raises(DataError, match="several N_rec values along its curve"):
        bl.load(frame)


def test_levels_needed_by_the_new_laws():
    one_P = bl.load(_streams_table().query("P == 1").drop(columns="run").assign(loss=1.1))
    with pytest.raises(DataError, match=r"'P' has 1 distinct value\(s\).*at least 2"):
        check_compatible(load_spec(law="parallel_streams"), one_P)
    two_P = bl.load(_streams_table().query("P <= 2").drop(columns="run").assign(loss=1.1))
    check_compatible(load_spec(law="parallel_streams"), two_P)  # k needs two stream counts
    with pytest.raises(DataError, match=r"'P' has 2 distinct .*at least 3"):
        check_compatible(load_spec(law="looped_streams"), two_P)  # gamma needs three
    few = _iso_table().query("N_rec < 3e8").assign(loss=2.0)
    with pytest.raises(DataError, match=r"\['N_once', 'N_rec'\] have 2 distinct combination"):
        check_compatible(load_spec(law="iso_depth"), bl.load(few))


def test_collinear_effects_of_multi_covariate_terms():
    streams = synthetic("parallel_streams")
    base = load_spec(law="parallel_streams").to_dict()
    for param in ("a", "k", "alpha"):
        d = dict(base, effects=[{"param": param, "group": "P"}])
        with pytest.raises(SpecError, match=f"'{param}' by 'P' is collinear.*N term"):
            check_compatible(load_spec(d), streams)
    iso = synthetic("iso_depth_eff")
    base = load_spec(law="iso_depth_eff").to_dict()
    for param, group in (("phi", "T_m"), ("E", "T_m"), ("a", "N")):
        d = dict(base, effects=[{"param": param, "group": group}])
        with pytest.raises(SpecError, match=f"'{param}' by '{group}' is collinear"):
            check_compatible(load_spec(d), iso)
    check_compatible(load_spec(dict(base, effects=[{"param": "b", "group": "T_m"}])), iso)


# -- pooling variants ------------------------------------------------------------------------
def _free(spec, data):
    return {v.name for v in LossModel(make_plan(spec, data)).model.free_RVs}


@pytest.mark.parametrize("name", ["iso_depth_eff", "parallel_streams_pooled"])
def test_with_pooling_variants(name):
    data = synthetic(name)
    spec = load_spec(name)
    effects = {e.name for e in spec.effects}
    complete = spec.with_pooling("complete")
    joint = spec.sampler.joint_names()  # split parameters are sampled jointly
    params = {p for p in spec.free_params if p not in joint} | set(joint.values())
    assert complete.effects == () and _free(complete, data) == {
        *params, "sigma", "nu", *(["sigma_spread", "sigma_z"]
                                  if spec.likelihood.sigma_by else [])}
    partial = spec.with_pooling("partial")
    assert all(e.pooling == "partial" for e in partial.effects)
    free = _free(partial, data)
    assert {f"{e}_sd" for e in effects} <= free
    # each term non-centered (z), centered (its deviations) or sampled as values
    assert all({f"{e}_z", e, f"{e}_value"} & free for e in effects)
    none = spec.with_pooling("none")
    assert [(e.param, e.group) for e in none.effects] == [(e.param, e.group)
                                                          for e in spec.effects]
    assert all(e.pooling == "none" and isinstance(e.scale, float) for e in none.effects)
    free = _free(none, data)
    assert not any(v.endswith("_sd") for v in free)
    # each term non-centered (z), centered (its deviations) or sampled as values
    assert all({f"{e}_z", e, f"{e}_value"} & free for e in effects)
    m = LossModel(make_plan(none, data)).model
    assert np.isfinite(compile_logp(m)(m.initial_point()))
    with pytest.raises(SpecError, match="pooling kind must be one of"):
        spec.with_pooling("some")


def test_unpooled_scale_is_the_population_prior_width():
    spec = load_spec(law="looped_total").with_pooling("none")
    # b ~ LogNormal(sigma=0.8), effects on log b: fixed sd 0.8
    assert {e.scale for e in spec.effects if e.param == "b"} == {0.8}
    assert {e.scale for e in spec.effects if e.param == "beta"} == {0.5}
    back = spec.with_pooling("partial")
    assert all(e.scale.dist == "HalfNormal" for e in back.effects)
    from bayeslaw.spec.parts import Prior
    assert link_width(Prior("Normal", {"mu": 1.0, "sigma": 0.3}), "identity") == 0.3
    lognormal = Prior("LogNormal", {"mu": 0.0, "sigma": 0.5})
    assert link_width(lognormal, "identity") == pytest.approx(
        np.sqrt((np.exp(0.25) - 1) * np.exp(0.25)))


# -- ParScale data ---------------------------------------------------------------------------
def test_parscale_loader(shared_data):
    path = shared_data / "parscale" / "parscale_loss_grid.csv"
    data = load_parscale(path)
    f = data.frame
    assert len(data) == 48 and not data.has_runs and "D" not in f.columns
    assert f.groupby("dataset").size().to_dict() == {"pile": 24, "stack_v2_python": 24}
    assert sorted(f["P"].unique()) == [1.0, 2.0, 4.0, 8.0]
    assert 5.3e8 < f["N"].min() < 5.4e8 and 4.4e9 < f["N"].max() < 4.42e9
    assert (f.groupby(["dataset", "P"]).size() == 6).all()
    stack = load_parscale(path, dataset="stack_v2_python")
    assert len(stack) == 24 and (stack.frame["dataset"] == "stack_v2_python").all()
    assert 0.97 < stack.frame["loss"].min() and stack.frame["loss"].max() < 1.18
    pile = load_parscale(path, dataset="pile").frame["loss"]
    assert 1.77 < pile.min() and pile.max() < 2.12
    # a bigger P lowers the loss at every size
    for _, g in f.groupby("dataset"):
        by_p = g.sort_values("N").groupby("P")["loss"].apply(np.asarray)
        assert all((by_p[a] > by_p[b]).all() for a, b in ((1, 2), (2, 4), (4, 8)))
    assert law_for_columns(data.columns) == "parallel_streams"
    for name in ("parallel_streams", "looped_streams"):
        check_compatible(load_spec(name), stack)
    m = LossModel(make_plan(load_spec("parallel_streams_pooled"), data)).model
    assert list(m.coords["dataset_level"]) == ["pile", "stack_v2_python"]
    assert np.isfinite(compile_logp(m)(m.initial_point()))
    with pytest.raises(DataError, match="no dataset 'c4'"):
        load_parscale(path, dataset="c4")


# -- the report's derived quantities for every default spec ----------------------------------
@pytest.mark.parametrize("name", ["chinchilla", *NEW_SPECS])
def test_report_forecasts_fill_every_column_the_spec_needs(name):
    """The derived-quantities section forecasts the largest model in each configuration it
    was run with, filling in the law's other covariates (P, N_once, N_rec, T_m) and the
    spec's group columns (peak_lr, dataset); a compute-optimal table only where the model
    size and its cost are one number N."""
    from bayeslaw.posterior.derived import compute_optimal, loss_at
    from bayeslaw.report.sections import _config_columns, _derived_section

    from ..conftest import prior_fit

    spec, data = load_spec(name), synthetic(name)
    fake = prior_fit(spec, data, seed=1)
    blocks = _derived_section(fake, "derived", 2, None, 0).blocks
    at = blocks[0].table
    assert np.isfinite(at["median"]).all()
    assert (at["lower_90"] <= at["median"]).all() and (at["median"] <= at["upper_90"]).all()
    law, frame = spec.law_obj, data.frame
    others = _config_columns(fake)
    if spec.law in SCHEDULE_SPECS:  # each run of the largest N at the end of its schedule
        assert len(at) == frame.loc[frame["N"] == frame["N"].max(), "run"].nunique()
        assert "no compute-optimal split" in blocks[0].text
        return
    if "N" not in frame.columns:  # curves without a model size: each curve at 10x its last D
        last = frame.groupby("run")["D"].max()
        np.testing.assert_allclose(at["D"].astype(float).loc[last.index], 10 * last, rtol=1e-5)
        return
    if "D" not in law.covariates:  # forecasts at twice the largest N, per configuration
        assert len(at) == (len(frame[others].drop_duplicates()) if others else 1)
        return
    biggest = frame[frame["N"] == frame["N"].max()]
    assert len(at) == (len(biggest[others].drop_duplicates()) if others else 1)
    extra = [c for c in law.covariates if c not in ("N", "D", "T_m", "horizon")]
    assert any(b.text.startswith("Compute-optimal") for b in blocks) == (not extra)
    if extra:
        with pytest.raises(SpecError, match=f"law '{spec.law}' also needs"):
            compute_optimal(fake, 1e21, T_m=4.0 if takes_T_m(law) else None)
    # each row is loss_at at that configuration (every level here is a fitted one, so the
    # values are deterministic)
    if spec.effects and all(e.group != "run" for e in spec.effects):
        row = biggest[others].drop_duplicates().sort_values(others).iloc[0].to_dict()
        # T_m: the law's covariate, or the step laws' group column (their effects by T_m)
        T_m = row.pop("T_m", None)
        one = loss_at(fake, frame["N"].max(), 10 * frame["D"].max(), T_m, columns=row)
        first = at.iloc[0]
        assert one.summary().loc["loss_at", "median"] == pytest.approx(first["median"])


def test_anneal_law_points_without_a_horizon_are_runs_trained_to_D(tmp_path, capsys):
    """Derived quantities and grid forecasts of ``chinchilla_anneal`` take ``horizon = D`` (a
    run trained to D: the whole anneal, C, is spent); a checkpoint of a longer run is asked
    for through ``columns``; compute-optimal is defined (the size is one number N)."""
    from bayeslaw.cli.commands import main
    from bayeslaw.posterior.derived import compute_optimal, loss_at

    from ..conftest import prior_fit

    spec = load_spec("chinchilla_anneal")
    fake = prior_fit(spec, synthetic("chinchilla_anneal"), seed=2)
    theta = {p: fake.draws(p) for p in spec.free_params}
    N, D = 3e8, 5e9
    trained = loss_at(fake, N, D).draws
    half_way = loss_at(fake, N, D, columns={"horizon": 2 * D}).draws
    law, ref = spec.law_obj, spec.reference
    np.testing.assert_allclose(trained, evaluate(law, {"N": N, "D": D, "horizon": D}, theta,
                                                 ref), rtol=1e-12)
    np.testing.assert_allclose(half_way - trained, 0.5 * theta["c"], rtol=1e-9)
    opt = compute_optimal(fake, 1e20).as_dict()
    at_opt = evaluate(law, {"N": opt["N_opt"], "D": opt["D_opt"], "horizon": opt["D_opt"]},
                      theta, ref)
    np.testing.assert_allclose(opt["loss_opt"], at_opt, rtol=1e-9)
    path = tmp_path / "fit.nc"
    fake.save(path)
    assert main(["predict", str(path), "--N", f"{N:g}", "--D", f"{D:g}", "--epistemic",
                 "--levels", "0.5"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert table["horizon"].tolist() == [D]
    assert table["median"].iloc[0] == pytest.approx(np.median(trained), rel=1e-5)  # %.6g


def test_predict_grid_takes_P_and_asks_for_a_table_when_it_cannot_be_a_grid(tmp_path, capsys):
    """``bayeslaw predict --N --P`` for a streams law (no D needed): the grid's values equal
    ``predict`` at those points; a law with N_once / N_rec needs --points."""
    from bayeslaw.cli.commands import main
    from bayeslaw.posterior.prediction import predict

    from ..conftest import prior_fit

    for name in ("parallel_streams", "iso_depth"):
        spec = load_spec(name)
        fake = prior_fit(spec, synthetic(name), seed=4)
        path = tmp_path / f"{name}.nc"
        fake.save(path)
        args = ["predict", str(path), "--N", "1e9,2e9", "--P", "1,8", "--epistemic"]
        if name == "iso_depth":
            assert main([*args[:4], "--D", "1e10", "--T_m", "2"]) == 2
            assert "needs N_once, N_rec: give the points as a table" in capsys.readouterr().err
            continue
        assert main(args) == 0
        table = pd.read_csv(io.StringIO(capsys.readouterr().out))
        grid = list(zip(table["N"], table["P"], strict=True))
        assert grid == [(1e9, 1), (1e9, 8), (2e9, 1), (2e9, 8)]
        want = predict(fake, table[["N", "P"]], kind="epistemic").table["median"]
        np.testing.assert_allclose(table["median"], want, rtol=1e-5)  # CSV's %.6g
        assert main([*args, "--D", "1e10"]) == 2
        assert "has no D term: drop --D" in capsys.readouterr().err
