import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.errors import DataError, SpecError
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import check_compatible, make_plan
from bayeslaw.simulate import looped_sweep
from bayeslaw.spec.catalog import available_specs, load_spec
from bayeslaw.spec.parts import Prior

from ..density import compile_kwargs, compile_logp, compile_logp_dlogp


@pytest.fixture(scope="module")
def small_data():
    frame, _ = looped_sweep(points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8), seed=3)
    return bl.load(frame)


def test_shipped_specs_load_and_round_trip():
    assert {"looped_total", "chinchilla"} <= set(available_specs())
    for name in available_specs():
        spec = load_spec(name)
        assert bl.ModelSpec.from_dict(spec.to_dict()) == spec
        assert spec.description


def test_user_spec_merges_over_default(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('law = "looped_total"\n[priors.t2]\ndist = "LogNormal"\nmu = 15.0\n'
                    'sigma = 0.5\n[sampler]\ndraws = 10\n')
    spec = load_spec(path)
    assert "t2" in spec.free_params and "t2" not in spec.fixed  # a prior frees an offset
    default = load_spec(law="looped_total").sampler
    assert spec.sampler.draws == 10 and spec.sampler.tune == default.tune  # kept
    assert spec.sampler.sum_split == default.sum_split
    assert spec.priors["E"] == load_spec(law="looped_total").priors["E"]


@pytest.mark.parametrize("bad, match", [
    ({"priors": {"E": {"dist": "Cauchy", "alpha": 0}}}, "unknown prior distribution 'Cauchy'"),
    ({"priors": {"E": {"dist": "Normal", "mu": 1}}},
     r"priors.E: prior Normal: missing \['sigma'\]; it takes \['mu', 'sigma'\]"),
    # every key is checked (each of these loaded silently at 5d06e18): the error names the
    # key, its section and the allowed keys
    ({"sampler": {"draw": 500}}, r"unknown key\(s\) \['draw'\] in \[sampler\]; allowed keys: "
                                 r"\['backend', 'centered_values', 'chains', 'draws'"),
    ({"sampler": {"chians": 2}}, r"\['chians'\] in \[sampler\]"),
    ({"data": {"min_kep": 6}}, r"\['min_kep'\] in \[data\]; allowed keys: "
                               r"\['min_kept', 'min_portion'\]"),
    ({"data": {"min_kept": 0}}, r"data.min_kept must be a whole number .* at least 1, got 0"),
    ({"data": {"min_kept": 2.5}}, r"data.min_kept must be .* got 2.5"),
    ({"data": {"min_kept": True}}, r"data.min_kept must be .* got True"),
    ({"data": {"min_portion": 1.0}}, r"data.min_portion must be a share .* got 1.0"),
    ({"effects": [{"param": "b", "group": "N", "centred": False}]},
     r"\['centred'\] in effects\[0\] \(the \[\[effects\]\] entry number 1\); allowed keys: "
     r"\['centered', 'group', 'param', 'pooling', 'scale'\]"),
    ({"effects": [{"param": "b", "group": "N"}, {"param": "beta", "group": "N",
                                                 "scal": {"dist": "HalfNormal", "sigma": 1}}]},
     r"\['scal'\] in effects\[1\]"),
    ({"reference": {"Tm": 4}}, r"\['Tm'\] in \[reference\] of law 'looped_total'; allowed keys: "
                               r"\['D', 'N', 'T_m'\]"),
    ({"priors": {"E": {"dist": "Gamma"}}}, r"priors.E: prior Gamma: missing \['alpha', 'beta'\]"),
    ({"priors": {"E": {"dist": "Uniform", "lower": 0}}}, r"missing \['upper'\]"),
    ({"priors": {"E": {"dist": "Normal", "mu": 1, "sigma": 1, "sd": 2}}},
     r"unknown parameter\(s\) \['sd'\]"),
    ({"priors": {"zeta": {"dist": "Normal", "mu": 0, "sigma": 1}}}, "no parameter 'zeta'"),
    # both in the user's spec (a [fixed] value alone overrides the default's prior)
    ({"fixed": {"E": 1.7}, "priors": {"E": {"dist": "LogNormal", "mu": 0.5, "sigma": 0.4}}},
     r"\['E'\] are both fixed and given a prior"),
    ({"effects": [{"param": "t1", "group": "N"}]}, "'t1' is fixed, it cannot vary"),
    ({"effects": [{"param": "b", "group": "N", "pooling": "some"}]}, "pooling must be one of"),
    ({"effects": [{"param": "b", "group": "N", "pooling": "none", "scale": {"dist": "HalfNormal",
                                                                           "sigma": 1}}]},
     "pooling='none' needs a positive number"),
    ({"likelihood": {"family": "cauchy"}}, "likelihood.family must be one of"),
    ({"likelihood": {"family": "contaminated"}},
     r"family = 'contaminated' needs a prior on 'outlier_share' \(the share"),
    ({"likelihood": {"family": "contaminated", "outlier_share": {"dist": "Beta", "alpha": 1,
                                                                 "beta": 19}}},
     "needs a prior on 'outlier_scale'"),
    ({"likelihood": {"family": "contaminated",
                     "outlier_share": {"dist": "HalfNormal", "sigma": 0.1},
                     "outlier_scale": {"dist": "LogNormal", "mu": 2, "sigma": 1}}},
     "outlier_share is a probability in \\(0, 1\\): give it a Beta or Uniform prior"),
    # the user's own key of another family is an error; the default's nu is dropped (below)
    ({"likelihood": {"family": "normal", "nu": {"dist": "Gamma", "alpha": 2, "beta": 0.1}}},
     "likelihood.nu belongs to family 'student_t', not 'normal'"),
    ({"likelihood": {"outlier_share": {"dist": "Beta", "alpha": 1, "beta": 19}}},
     "likelihood.outlier_share belongs to family 'contaminated', not 'student_t'"),
    ({"sampler": {"backend": "stan"}}, "sampler.backend must be"),
    ({"reference": {"N": -1}}, r"\[reference\] needs a positive N"),
    ({"colour": 1}, "unknown spec section"),
    ({"sampler": {"sum_split": ["E"]}}, "sum_split must name two or more different"),
    ({"sampler": {"sum_split": ["E", "c", "E"]}}, "sum_split must name two or more different"),
    ({"sampler": {"sum_split": ["E", "t1"]}}, "'t1' is not a sampled parameter"),
    ({"sampler": {"sum_split": ["E", "c"]}, "priors": {"c": {"dist": "HalfNormal",
                                                              "sigma": 0.3}}},
     "the prior of 'c' is HalfNormal, not LogNormal"),
    ({"sampler": {"slope_split": ["E", "a"]}}, "slope_split must name three different"),
    ({"sampler": {"slope_split": ["E", "a", "a"]}}, "slope_split must name three different"),
    ({"sampler": {"slope_split": "E"}}, "slope_split must name three different"),
    ({"sampler": {"slope_split": ["E", "a", "t1"]}}, "'t1' is not a sampled parameter"),
    ({"sampler": {"sum_split": [], "slope_split": ["E", "a", "alpha"]},
      "priors": {"alpha": {"dist": "HalfNormal", "sigma": 0.3}}},
     "the prior of 'alpha' is HalfNormal, not LogNormal"),
    # looped_total's default sum_split is E, a, c: a slope_split may share its floor and
    # coefficient with it, both, not one alone nor the exponent
    ({"sampler": {"sum_split": ["E", "a", "c"], "slope_split": ["E", "b", "beta"]}},
     r"may share the floor and the coefficient .*not \['E'\]"),
    ({"sampler": {"sum_split": ["E", "a", "c"], "slope_split": ["E", "a", "c"]}},
     r"may share the floor and the coefficient .*not \['E', 'a', 'c'\]"),
])
def test_spec_errors(bad, match):
    with pytest.raises(SpecError, match=match):
        load_spec(bad, law="looped_total")


def test_a_family_set_over_the_default_drops_the_defaults_own_keys():
    """looped_total's default is Student-t: setting the family replaces nu by the new
    family's keys, and the spec round-trips through its dict."""
    assert load_spec({"likelihood": {"family": "normal"}}, law="looped_total").likelihood.nu is None
    share = {"dist": "Beta", "alpha": 1.0, "beta": 19.0}
    scale = {"dist": "LogNormal", "mu": 2.2, "sigma": 0.7}
    spec = load_spec({"likelihood": {"family": "contaminated", "outlier_share": share,
                                     "outlier_scale": scale}}, law="looped_total")
    lk = spec.likelihood
    assert (lk.nu, lk.outlier_share.to_dict(), lk.outlier_scale.to_dict()) == (None, share, scale)
    assert bl.ModelSpec.from_dict(spec.to_dict()).to_dict() == spec.to_dict()


def test_prior_dict_round_trip():
    p = Prior("Gamma", {"alpha": 4.0, "beta": 0.4})
    assert Prior.from_dict(p.to_dict()) == p
    with pytest.raises(SpecError, match=r"prior Gamma: missing \['alpha', 'beta'\]"):
        Prior("Gamma", {})  # accepted at 5d06e18, failing later inside PyMC
    assert Prior("TruncatedNormal", {"mu": 0.0, "sigma": 1.0}).params == {"mu": 0.0, "sigma": 1.0}


def test_collinear_effects_rejected(small_data):
    base = load_spec(law="looped_total").to_dict()
    for param, group in [("E", "T_m"), ("E", "N"), ("c", "T_m"), ("gamma", "T_m"),
                         ("a", "N"), ("E", "run"), ("alpha", "run")]:
        d = dict(base, effects=[{"param": param, "group": group}])
        with pytest.raises(SpecError, match=f"effect '{param}' by '{group}' is collinear"):
            check_compatible(load_spec(d), small_data)
    ok = dict(base, effects=[{"param": "b", "group": "run"}, {"param": "c", "group": "N"}])
    check_compatible(load_spec(ok), small_data)


def test_final_loss_table_needs_spec_without_run_terms(small_data):
    final = small_data.frame.groupby("run").sample(1, random_state=0).drop(columns="run")
    data = bl.load(final)
    with pytest.raises(DataError, match="no 'run' column .*likelihood.sigma_by = 'run'"):
        check_compatible(load_spec(law="looped_total"), data)


def test_graph_variables_dims_and_finite_logp(small_data):
    spec = load_spec(law="looped_total")
    lm = LossModel(make_plan(spec, small_data))
    m = lm.model
    names = set(m.named_vars)
    for v in ["E", "a", "alpha", "b", "beta", "c", "gamma", "sigma", "nu", "sigma_spread",
              "b_by_N", "beta_by_T_m", "b_run", "beta_run", "sigma_run", "A", "B", "C", "loss"]:
        assert v in names, v
    assert not {"t1", "t2", "t3"} & names  # fixed offsets are constants
    assert m.named_vars_to_dims["b_by_N"] == ("N_level",)
    assert list(m.coords["T_m_level"]) == [2.0, 4.0, 8.0]
    # the run-major layout: one row per run, padded to its longest curve, every point once
    counts = small_data.frame.groupby("run", sort=False).size()
    assert len(m.coords["pos"]) == counts.max()
    mask = m["mask"].get_value()
    np.testing.assert_array_equal(mask.sum(axis=1), counts.reindex(small_data.runs).to_numpy())
    np.testing.assert_array_equal(lm.flatten(m["loss_obs"].get_value(), small_data),
                                  small_data.values("loss"))
    ip = m.initial_point()
    logp, grad = compile_logp_dlogp(m)(ip)
    assert np.isfinite(logp) and np.all(np.isfinite(grad)) and np.any(grad != 0)


def test_pooling_variants_build(small_data):
    base = load_spec(law="looped_total")
    complete = base.replace_effects(())
    assert "b_run" not in LossModel(make_plan(complete, small_data)).model.named_vars
    d = base.to_dict()
    d["effects"] = [{"param": "b", "group": "run", "pooling": "none", "scale": 1.0}]
    m = LossModel(make_plan(load_spec(d), small_data)).model
    assert "b_by_run_sd" not in m.named_vars and m.named_vars_to_dims["b_by_run"] == ("run",)


def test_held_out_levels_are_non_centered_and_the_rest_centered():
    """A level in the model but not observed is a funnel if centered: resolved per level."""
    import numpy as np

    import bayeslaw as bl
    from bayeslaw.inference.modelcache import get_model
    from bayeslaw.model.plan import centering
    from bayeslaw.simulate import design, simulate

    spec = load_spec(law="looped_total")
    frame = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, 80))
    frame, _ = simulate(spec, frame, {"E": 1.8, "a": 0.6, "alpha": 0.3, "b": 0.6,
                                      "beta": 0.55, "c": 0.25, "gamma": 0.5}, seed=1)
    full = bl.load(frame)
    train = full.select(full.frame["T_m"].to_numpy() != 8, "hold out T_m = 8")
    masks = dict(centering(spec, full, train))
    assert masks["b_by_T_m"].tolist() == [True, True, False]  # 240, 240, 0 observed points
    assert masks["b_by_N"].all()  # rich in the full data and observed: as in the full fit
    assert dict(centering(spec, full, full))["b_by_T_m"].all()
    thin = bl.load(frame.groupby("run").head(20))  # 60 points per level: non-centered
    assert not dict(centering(spec, thin, thin))["b_by_N"].any()
    model = get_model(spec, train, like=full)
    names = set(model.model.named_vars)
    assert {"b_by_T_m_c", "b_by_T_m_z", "b_by_T_m", "b_by_N"} <= names
    logp = compile_logp(model.model)(model.model.initial_point())
    assert np.isfinite(logp)
    # the model of the full data is another graph (fully centered T_m terms)
    assert get_model(spec, full) is not model


def test_sum_split_transform_round_trip_and_jacobian():
    """(x_0, ..., x_n-1) <-> (log sum, log x_i / x_0) is a bijection and its log-Jacobian is
    the log-determinant of the backward map, computed here by finite differences."""
    import pytensor.tensor as pt

    from bayeslaw.model.transforms import sum_split_transform

    tr = sum_split_transform()
    u = pt.dvector("u")
    f_back = pt.as_tensor(tr.backward(u)).eval
    f_jac = pt.as_tensor(tr.log_jac_det(u)).eval
    for x in ([1.8, 0.25], [1.8, 0.6, 0.25]):
        fwd = pt.as_tensor(tr.forward(pt.as_tensor(np.array(x)))).eval()
        np.testing.assert_allclose(fwd, [np.log(sum(x)), *np.log(np.array(x[1:]) / x[0])])
        np.testing.assert_allclose(f_back({u: fwd}), x)
    for point in ([0.7, -2.0], [-1.0, 0.5], [2.0, 3.0], [0.7, -1.0, -2.0], [0.1, 1.5, -0.3]):
        x, eps = np.array(point), 1e-6
        cols = [(f_back({u: x + eps * e}) - f_back({u: x - eps * e})) / (2 * eps)
                for e in np.eye(len(x))]
        numeric = np.log(abs(np.linalg.det(np.column_stack(cols))))
        assert f_jac({u: x}) == pytest.approx(numeric, rel=1e-6)


def _prior_draws_follow(model, joint, spec, names):
    """The joint split variable's prior draws have each parameter's LogNormal prior."""
    import pymc as pm

    logs = np.log(pm.draw(model[joint], draws=20000, random_seed=1))
    for i, name in enumerate(names):
        prior = spec.priors[name].params
        assert logs[:, i].mean() == pytest.approx(prior["mu"], abs=0.03)
        assert logs[:, i].std() == pytest.approx(prior["sigma"], rel=0.03)


def test_slope_split_transform_round_trip_and_jacobian():
    """(E, a, alpha) <-> (log(E + a), log(a / E), log(a alpha)) is a bijection, and its
    log-Jacobian is the log-determinant of the backward map, by finite differences, also far
    out along the share coordinate (where a naive log(sigmoid) would underflow)."""
    import pytensor.tensor as pt

    from bayeslaw.model.transforms import slope_split_transform

    tr = slope_split_transform()
    u = pt.dvector("u")
    f_back = pt.as_tensor(tr.backward(u)).eval
    f_jac = pt.as_tensor(tr.log_jac_det(u)).eval
    for x in ([1.8, 0.6, 0.3], [0.02, 5.0, 1.7], [3.0, 1e-4, 0.05]):
        fwd = pt.as_tensor(tr.forward(pt.as_tensor(np.array(x)))).eval()
        np.testing.assert_allclose(fwd, [np.log(x[0] + x[1]), np.log(x[1] / x[0]),
                                         np.log(x[1] * x[2])], rtol=1e-12)
        np.testing.assert_allclose(f_back({u: fwd}), x, rtol=1e-12)
    for point in ([0.7, -2.0, 0.3], [2.0, 5.0, -3.0], [-1.0, 30.0, 1.0], [0.1, -40.0, 2.0]):
        z, eps = np.array(point), 1e-6
        cols = [(f_back({u: z + eps * e}) - f_back({u: z - eps * e})) / (2 * eps)
                for e in np.eye(3)]
        numeric = np.log(abs(np.linalg.det(np.column_stack(cols))))
        assert np.isfinite(f_jac({u: z}))
        assert f_jac({u: z}) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_slope_split_keeps_the_model(small_data):
    """With ``sampler.slope_split`` the graph is the same model in other coordinates: at the
    same constrained point its density equals the default coordinates' to rtol 1e-9 without
    the Jacobians and with them (the transform's log-Jacobian is log E + log a + log alpha,
    exactly the log transforms' it replaces), and its prior draws follow the LogNormal
    priors. A user who fixes one of the three drops the split (it needs all three)."""

    d = load_spec(law="iso_depth_eff").to_dict()
    d["sampler"]["slope_split"] = []  # the shipped default samples the split
    spec = load_spec(d)
    d["sampler"]["slope_split"] = ["E", "a", "alpha"]
    split = load_spec(d)
    names, joint = ("E", "a", "alpha"), "E_a_alpha_slope"
    plain = LossModel(make_plan(spec, small_data)).model
    paired = LossModel(make_plan(split, small_data)).model
    assert {*names, joint} <= set(paired.named_vars) and joint not in plain.named_vars
    assert make_plan(spec, small_data).key != make_plan(split, small_data).key
    rng = np.random.default_rng(0)
    for jacobian in (False, True):
        logp_plain = compile_logp(plain, jacobian=jacobian)
        logp_paired = compile_logp(paired, jacobian=jacobian)
        for _ in range(3):
            point = plain.initial_point()
            for k in point:
                point[k] = point[k] + rng.normal(0, 0.3, np.shape(point[k]))
            E, a, alpha = np.exp([point[f"{n}_log__"] for n in names])
            other = {k: v for k, v in point.items()
                     if k not in {f"{n}_log__" for n in names}}
            other[f"{joint}_slopesplit__"] = np.array([np.log(E + a), np.log(a / E),
                                                       np.log(a * alpha)])
            assert logp_paired(other) == pytest.approx(logp_plain(point), rel=1e-9)
    _prior_draws_follow(paired, joint, spec, names)
    from bayeslaw.spec.catalog import _merge

    merged = _merge(split.to_dict(), {"fixed": {"alpha": 0.3}})  # as over a law's default
    assert merged["sampler"]["slope_split"] == [] and load_spec(merged).fixed["alpha"] == 0.3
    assert _merge(split.to_dict(), {"fixed": {"b": 0.3}})["sampler"]["slope_split"] == [*names]
    d["fixed"] = {"alpha": 0.3}  # the user's own split keeps its names, and is refused
    del d["priors"]["alpha"]
    with pytest.raises(SpecError, match="'alpha' is not a sampled parameter"):
        load_spec(d)


def test_sum_slope_transform_round_trip_and_jacobian():
    """(E, a, c, alpha) <-> (log sum, log a/E, log c/E, log(a alpha)): a bijection whose
    log-Jacobian is the backward map's log-determinant (finite differences)."""
    import pytensor.tensor as pt

    from bayeslaw.model.transforms import sum_slope_transform

    tr = sum_slope_transform(1)
    u = pt.dvector("u")
    f_back = pt.as_tensor(tr.backward(u)).eval
    f_jac = pt.as_tensor(tr.log_jac_det(u)).eval
    x = np.array([1.8, 0.6, 0.2, 0.3])
    fwd = pt.as_tensor(tr.forward(pt.as_tensor(x))).eval()
    np.testing.assert_allclose(fwd, [np.log(2.6), np.log(0.6 / 1.8), np.log(0.2 / 1.8),
                                     np.log(0.18)], rtol=1e-12)
    np.testing.assert_allclose(f_back({u: fwd}), x, rtol=1e-12)
    for point in ([0.7, -2.0, 0.5, 0.3], [2.0, 5.0, -3.0, 1.0], [-1.0, 0.1, 0.2, -4.0],
                  [0.5, -750.0, 0.0, -100.0]):  # a = e^-750 underflows; alpha = e^650 does not
        z, eps = np.array(point), 1e-6
        with np.errstate(all="ignore"):
            cols = [(f_back({u: z + eps * e}) - f_back({u: z - eps * e})) / (2 * eps)
                    for e in np.eye(4)]
            numeric = np.log(abs(np.linalg.det(np.column_stack(cols))))
        if not np.isfinite(numeric):  # the finite differences underflow there
            assert np.isfinite(f_jac({u: z})) and np.isfinite(f_back({u: z})[-1])
            continue
        assert f_jac({u: z}) == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_a_users_split_or_prior_moves_the_defaults_split_aside():
    """What the user wrote wins over the default's sampler splits: a sum_split alone drops
    a default slope_split it cannot stand beside (and the reverse); a prior other than
    LogNormal on a split parameter takes it out of the default's split; a split the user
    wrote is kept as written and refused by the parser when wrong."""
    chin = load_spec({"law": "chinchilla", "sampler": {"sum_split": ["E", "a"]}}).sampler
    assert chin.sum_split == ("E", "a") and chin.slope_split == ()
    kept = load_spec({"law": "chinchilla", "sampler": {"sum_split": ["E", "b"]}}).sampler
    assert kept.slope_split == ("E", "b", "beta")  # shares floor and coefficient: allowed
    total = load_spec({"law": "looped_total",
                       "sampler": {"slope_split": ["E", "b", "beta"]}}).sampler
    assert total.sum_split == () and total.slope_split == ("E", "b", "beta")
    half = {"dist": "HalfNormal", "sigma": 0.5}
    beta = load_spec({"law": "chinchilla", "priors": {"beta": half}})
    assert beta.sampler.slope_split == () and beta.sampler.sum_split == ("E", "a", "b")
    assert beta.priors["beta"].dist == "HalfNormal"
    b = load_spec({"law": "chinchilla", "priors": {"b": half}}).sampler
    assert b.slope_split == () and b.sum_split == ("E", "a")
    assert load_spec({"law": "iso_depth_eff", "priors": {"alpha": half}}).sampler.slope_split \
        == ()
    with pytest.raises(SpecError, match="may share the floor and the coefficient"):
        load_spec({"law": "chinchilla", "sampler": {"sum_split": ["E", "a"],
                                                    "slope_split": ["E", "b", "beta"]}})


def test_sum_and_slope_split_together_keep_the_model(small_data):
    """looped_total's sum_split (E, a, c) with slope_split (E, a, alpha): one joint variable
    E_a_c_alpha_slope; at the same constrained point the density equals the default
    coordinates' to rtol 1e-9 without the Jacobians, and with them after adding the log
    transforms' Jacobian the joint one replaces (checked as a difference: the sum split's
    Jacobian differs from the log transforms')."""

    from bayeslaw.model.transforms import sum_slope_transform

    d = load_spec(law="looped_total").to_dict()
    d["sampler"]["sum_split"] = []
    plain_spec = load_spec(d)
    d["sampler"]["sum_split"] = ["E", "a", "c"]
    d["sampler"]["slope_split"] = ["E", "a", "alpha"]
    both = load_spec(d)
    assert both.sampler.joint_names() == dict.fromkeys(["E", "a", "c", "alpha"],
                                                        "E_a_c_alpha_slope")
    plain = LossModel(make_plan(plain_spec, small_data)).model
    paired = LossModel(make_plan(both, small_data)).model
    joint, names = "E_a_c_alpha_slope", ("E", "a", "c", "alpha")
    assert {*names, joint} <= set(paired.named_vars)
    rng = np.random.default_rng(1)
    tr = sum_slope_transform(1)
    for jacobian in (False, True):
        logp_plain = compile_logp(plain, jacobian=jacobian)
        logp_paired = compile_logp(paired, jacobian=jacobian)
        for _ in range(3):
            point = plain.initial_point()
            for k in point:
                point[k] = point[k] + rng.normal(0, 0.3, np.shape(point[k]))
            x = np.exp([point[f"{n}_log__"] for n in names])
            other = {k: v for k, v in point.items() if k not in {f"{n}_log__" for n in names}}
            other[f"{joint}_sumslope__"] = np.asarray(tr.forward(x).eval())
            # with Jacobians: the joint transform's log-Jacobian replaces sum(log x)
            shift = (float(tr.log_jac_det(other[f"{joint}_sumslope__"]).eval())
                     - float(np.log(x).sum())) if jacobian else 0.0
            assert logp_paired(other) == pytest.approx(logp_plain(point) + shift, rel=1e-9)
    _prior_draws_follow(paired, joint, plain_spec, names)


@pytest.mark.parametrize("names", [("E", "c"), ("E", "a", "c")])
def test_sum_split_keeps_the_model(small_data, names):
    """With ``sampler.sum_split`` the graph is the same model sampled in other coordinates:
    its density of the constrained values (no Jacobian) equals the default coordinates' at
    the same point, and its prior draws follow the LogNormal priors."""

    d = load_spec(law="looped_total").to_dict()
    d["sampler"]["sum_split"] = []
    spec = load_spec(d)
    d["sampler"]["sum_split"] = list(names)
    split = load_spec(d)
    joint = "_".join(names) + "_sum"
    plain = LossModel(make_plan(spec, small_data)).model
    paired = LossModel(make_plan(split, small_data)).model
    assert {*names, joint} <= set(paired.named_vars)
    assert joint not in plain.named_vars and {*names} <= set(plain.named_vars)
    rng = np.random.default_rng(0)
    logp_plain = compile_logp(plain, jacobian=False)
    logp_paired = compile_logp(paired, jacobian=False)
    for _ in range(3):
        point = plain.initial_point()
        for k in point:
            point[k] = point[k] + rng.normal(0, 0.1, np.shape(point[k]))
        x = np.exp([point[f"{n}_log__"] for n in names])
        other = {k: v for k, v in point.items() if k not in {f"{n}_log__" for n in names}}
        other[f"{joint}_sumsplit__"] = np.array([np.log(x.sum()), *np.log(x[1:] / x[0])])
        assert logp_paired(other) == pytest.approx(logp_plain(point), rel=1e-9)
    _prior_draws_follow(paired, joint, spec, names)


def test_set_data_swaps_values_and_skips_an_equal_swap(small_data, monkeypatch):
    """A swap puts the new values in the PyMC model; swapping in what it already holds does
    not call ``pm.set_data`` (which re-evaluates every dim's length)."""
    import pymc as pm

    model = LossModel(make_plan(load_spec(law="looped_total"), small_data))
    frame = small_data.frame.copy()
    frame["loss"] = frame["loss"] * 1.01
    moved = bl.load(frame)
    calls = []
    real = pm.set_data
    monkeypatch.setattr(pm, "set_data", lambda *a, **k: (calls.append(1), real(*a, **k))[1])

    model.set_data(small_data)  # the data it was built with
    assert calls == []
    for data, n_calls in ((moved, 1), (moved, 1), (small_data, 2)):
        model.set_data(data)
        assert len(calls) == n_calls
        held = model.model["loss_obs"].get_value()
        np.testing.assert_array_equal(held, model.data_values(data)["loss_obs"])
    assert not np.array_equal(model.data_values(moved)["loss_obs"],
                              model.data_values(small_data)["loss_obs"])


def test_sampler_settings_round_trip_and_sum_split_errors():
    """A spec written out and read back is the same spec (every setting is written, so the
    law's default cannot switch one back on), and a sum_split that is not a list is a spec
    error naming the key."""
    spec = load_spec({"law": "chinchilla", "sampler": {"sum_split": [], "draws": 10}})
    assert spec.sampler.sum_split == () and load_spec(law="chinchilla").sampler.sum_split
    again = load_spec(spec.to_dict())
    assert again == spec and again.sampler == spec.sampler
    assert set(spec.to_dict()["sampler"]) == bl.SamplerSettings.keys()
    with pytest.raises(SpecError, match="sampler.sum_split must name two or more"):
        load_spec({"law": "chinchilla", "sampler": {"sum_split": 3}})
    with pytest.raises(SpecError, match=r"unknown key\(s\) \['draw'\] in \[sampler\]"):
        load_spec({"law": "chinchilla", "sampler": {"draw": 10}})
    piloted = load_spec({"law": "chinchilla", "sampler": {"pilot": 200}})
    assert piloted.sampler.pilot == 200 and load_spec(piloted.to_dict()) == piloted
    with pytest.raises(SpecError, match="sampler.pilot must be a whole number >= 0, got -1"):
        load_spec({"law": "chinchilla", "sampler": {"pilot": -1}})
    with pytest.raises(SpecError, match="sampler.pilot = 200 needs backend = \"nutpie\""):
        load_spec({"law": "chinchilla", "sampler": {"pilot": 200, "backend": "pymc"}})


@pytest.mark.parametrize("name", ["looped_total", "curve_bend", "curve_bend_population"])
def test_centered_values_keep_the_model(small_data, name):
    """With ``sampler.centered_values`` a parameter's first centered effect samples each
    level's value on the link scale, ``<effect>_value = link(centre) + deviation``: at the
    same point the density equals the deviations' to rtol 1e-9, with and without the
    Jacobians (a shift: unit Jacobian); the deviations stay in the posterior, derived; the
    compiled model's key differs; ``low_rank = "auto"`` picks the diagonal mass matrix; a
    ``[correlation]`` block's effects (curve_bend_population) stay as they are."""
    from bayeslaw.model.arithmetic import link_of
    from bayeslaw.model.plan import correlated_terms
    from bayeslaw.posterior.result import _derived

    data = small_data if name == "looped_total" else bl.load(_curves())
    d = load_spec(name).to_dict()  # the shipped spec of that name
    for e in d["effects"]:
        e["centered"] = True  # every level centered: each first effect is sampled as values
    d["sampler"]["centered_values"] = False  # (curve_bend ships with them)
    plain = load_spec(d)
    d["sampler"]["centered_values"] = True
    valued = load_spec(d)
    assert load_spec(valued.to_dict()) == valued and valued != plain
    plan_a, plan_b = make_plan(plain, data), make_plan(valued, data)
    a, b = LossModel(plan_a).model, LossModel(plan_b).model
    assert plan_a.key != plan_b.key
    first = {}
    for e in plain.effects:
        first.setdefault(e.param, e)
    names = {e.name for e in first.values()} - correlated_terms(valued)
    assert names and {f"{n}_value" for n in names} <= set(b.named_vars)
    # the diagonal mass matrix goes with it (low_rank = "auto")
    assert not plan_b.prefers_low_rank
    if name == "looped_total":  # every term centered (the noise too): low-rank without it
        every = plain.to_dict()
        every["likelihood"] = {**every["likelihood"], "sigma_centered": True}
        assert make_plan(load_spec(every), data).prefers_low_rank
        every["sampler"] = {**every["sampler"], "centered_values": True}
        assert not make_plan(load_spec(every), data).prefers_low_rank
    assert not any(v.endswith("_value") for v in a.named_vars)
    import pytensor.tensor as pt

    centre = {e.name: a.compile_fn(  # the population value on the link scale, at a's point
        a.replace_rvs_by_values([link_of(pt, a[e.param], valued.law_obj.param(e.param).link)])[0],
        inputs=a.value_vars, on_unused_input="ignore", **compile_kwargs())
        for e in first.values() if e.name in names}
    rng = np.random.default_rng(0)
    for jacobian in (False, True):
        la, lb = compile_logp(a, jacobian=jacobian), compile_logp(b, jacobian=jacobian)
        for _ in range(3):
            point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in a.initial_point().items()}
            other = dict(point)
            for n in names:
                other[f"{n}_value"] = other.pop(n) + np.asarray(centre[n](point))
            assert lb(other) == pytest.approx(la(point), rel=1e-9)
    import arviz as az

    idata = az.from_dict(posterior={v: np.zeros((1, 2)) for v in b.named_vars})
    assert names <= set(_derived(idata, valued))


def _curves():
    from tests.conftest import curve_table

    return curve_table(4, seed=2)
