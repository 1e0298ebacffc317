"""The warm start: the mode and curvature of a known posterior, and the standardized
coordinates reproducing the log density and its gradient exactly (no sampling).

The models are compiled by :func:`bayeslaw.inference.compiled.compile_model`, as ``fit`` compiles
them; ``tests/test_compiled.py`` checks that its raw density is nutpie's own."""

import warnings

import numpy as np
import pytest

from bayeslaw.inference.compiled import compile_model
from bayeslaw.inference.warmstart import LogDensity, Mode, find_mode, standardized


def _conjugate_model():
    import pymc as pm

    y = np.random.default_rng(3).normal(1.5, 1.0, size=40)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.LogNormal("s", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=pm.Data("y_obs", y))  # shared data, as a fit's
    return model, y


def _compile(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        return compile_model(model)


@pytest.fixture(scope="module")
def conjugate():
    """y_i ~ N(mu, 1), mu ~ N(0, 10), log(s) ~ N(0, 1) (a second, independent coordinate):
    the posterior of mu is normal with known mean and variance."""
    model, y = _conjugate_model()
    density = _compile(model)
    post_var = 1.0 / (len(y) + 1.0 / 100.0)
    return density, y.sum() * post_var, post_var


def _names(compiled):
    return list(compiled.shape_info[0])


def test_mode_and_curvature_of_a_normal_posterior(conjugate):
    density, mean, var = conjugate
    density.identity()
    compiled = density.compiled
    mode = find_mode(compiled, np.array([-3.0, 2.0]))
    assert mode is not None
    i, j = _names(compiled).index("mu"), _names(compiled).index("s_log__")
    # exact for a normal posterior up to the optimizer's tolerance and the finite differences
    np.testing.assert_allclose(mode.point[i], mean, atol=1e-6)
    np.testing.assert_allclose(mode.cov[i, i], var, rtol=1e-4)
    # log(s) ~ N(0, 1) with the log-Jacobian: the density of u = log s is N(0, 1), mode 0
    np.testing.assert_allclose(mode.point[j], 0.0, atol=1e-6)
    np.testing.assert_allclose(mode.cov[j, j], 1.0, rtol=1e-4)
    assert abs(mode.cov[i, j]) < 1e-6


def test_a_log_density_keeps_the_data_it_reads_alive(conjugate):
    """nutpie's ``user_data`` holds only the addresses of the shared arrays, which the compiled
    model owns: a :class:`LogDensity` outliving the model it was made from (a benchmark that
    kept only the functions) read freed memory, and -inf or another model's data came back."""
    import gc
    import weakref

    density, _, _ = conjugate
    density.identity()
    y = np.random.default_rng(5).normal(0.5, 1.0, size=40)
    compiled = density.compiled.with_data(y_obs=y)  # fresh arrays only this object owns
    alive = weakref.ref(compiled.shared_data["y_obs"])
    f = LogDensity(compiled)
    names = _names(compiled)
    x = np.where(np.array(names) == "mu", 0.3, 0.1)  # mu = 0.3, log s = 0.1
    logp, grad = f(x)
    del compiled
    gc.collect()
    assert alive() is not None  # the array the density reads is still there
    junk = [np.full_like(y, np.nan) for _ in range(100)]  # reuse of freed memory would show
    again, grad_again = f(x)
    assert np.isfinite(logp) and again == logp and np.array_equal(grad_again, grad)
    # the density is that of y (mu's gradient: sum(y - mu) - mu / 100 at mu = 0.3)
    assert grad[names.index("mu")] == pytest.approx(np.sum(y - 0.3) - 0.3 / 100)
    del junk


@pytest.mark.parametrize("dense", [True, False])
def test_standardized_coordinates_keep_the_density(conjugate, monkeypatch, dense):
    """logp(z) = logp(shift + L z), grad_z = L^T grad_x, for the dense factor and for the
    diagonal one that models above DENSE_MAX_DIM coordinates get."""
    import bayeslaw.inference.warmstart as ws

    density = conjugate[0]
    if not dense:  # the layout is chosen when compiling
        monkeypatch.setattr(ws, "DENSE_MAX_DIM", 1)
        density = _compile(_conjugate_model()[0])
    assert density.dense is dense
    compiled = density.compiled
    cov = np.array([[0.04, 0.01], [0.01, 0.09]])
    mode = Mode(np.array([0.7, -0.2]), cov, 0)
    factor = np.linalg.cholesky(cov) if dense else np.diag(np.sqrt(np.diag(cov)))
    np.testing.assert_allclose(mode.factor(), factor)
    zs = np.random.default_rng(0).normal(size=(5, 2))
    density.identity()
    plain = LogDensity(compiled)
    raw = [plain(mode.point + factor @ z) for z in zs]
    std = standardized(density, compiled, mode)
    wrapped = LogDensity(std)
    for z, (lp_x, g_x) in zip(zs, raw, strict=True):
        lp_z, g_z = wrapped(z)
        np.testing.assert_allclose(lp_z, lp_x, rtol=1e-12)
        np.testing.assert_allclose(g_z, factor.T @ g_x, rtol=1e-10, atol=1e-12)
    start = std.initial_point_func(4)
    np.testing.assert_array_equal(start, std.initial_point_func(4))  # seeded per chain
    assert not np.array_equal(start, std.initial_point_func(5))


def test_a_flat_direction_gives_no_mode():
    """A ridge (the data pin only the sum of two flat parameters) has no proper mode:
    ``find_mode`` says so instead of returning a singular curvature."""
    import pymc as pm

    with pm.Model() as model:
        a, b = pm.Flat("a"), pm.Flat("b")
        pm.Normal("y", a + b, 1.0, observed=np.zeros(3))
    assert find_mode(_compile(model).compiled, np.zeros(2)) is None


def _funnel_model(y, alpha=2.0):
    """levels theta_k ~ N(0, tau) (centered), tau ~ Gamma(alpha, 20), y_k ~ N(theta_k, 1).

    On u = log tau the joint density goes as exp((alpha - k) u) into the funnel's neck
    (tau -> 0, the levels with it): with k = 3 levels and alpha = 2 (the shipped sds'
    prior) the joint mode is at tau = 0; with alpha = 5 it is proper."""
    import pymc as pm

    with pm.Model() as model:
        tau = pm.Gamma("tau", alpha=alpha, beta=20.0)
        theta = pm.Normal("theta", 0.0, tau, shape=len(y))
        pm.Normal("y", theta, 1.0, observed=y)
    return model


def _tau_floors(alpha=2.0):
    from scipy import stats

    from bayeslaw.inference.warmstart import ScaleFloors

    prior = stats.gamma(alpha, scale=1 / 20.0)
    lower = np.array([np.log(prior.ppf(0.01)), -np.inf, -np.inf, -np.inf])
    centre = np.array([np.log(prior.median()), 0.0, 0.0, 0.0])
    spread = np.array([0.5 * np.log(prior.ppf(0.8413) / prior.ppf(0.1587)), 1.0, 1.0, 1.0])
    return ScaleFloors(lower, centre, spread, ("tau", "theta", "theta", "theta"))


def test_a_mode_in_a_funnels_neck_is_held_at_the_sds_prior_median():
    y = np.array([0.05, -0.03, 0.02])
    compiled = _compile(_funnel_model(y)).compiled
    assert _names(compiled)[:2] == ["tau_log__", "theta"]
    floors = _tau_floors()
    start = np.array([np.log(0.1), 0.0, 0.0, 0.0])
    sunk = find_mode(compiled, start)  # no floors: no proper mode, or one in the neck
    assert sunk is None or sunk.point[0] < floors.lower[0]
    mode = find_mode(compiled, start, floors=lambda: floors)
    assert mode is not None
    tau = np.exp(floors.centre[0])
    assert mode.point[0] == floors.centre[0] and mode.held == ("tau",)  # the prior's median
    # the levels at their mode given tau: theta_k = y_k tau^2 / (tau^2 + 1)
    np.testing.assert_allclose(mode.point[1:], y * tau**2 / (tau**2 + 1), atol=1e-7)
    # the held sd: the prior's scale, uncorrelated; the levels: their conditional variance
    np.testing.assert_allclose(mode.cov[0, 0], floors.spread[0] ** 2)
    np.testing.assert_array_equal(mode.cov[0, 1:], 0.0)
    np.testing.assert_allclose(np.diag(mode.cov)[1:], tau**2 / (tau**2 + 1), rtol=1e-4)


def test_floors_change_nothing_where_the_mode_is_above_them():
    """A proper mode above the floor: the same mode, to the last bit."""
    y = np.array([-0.4, 0.1, 0.5])
    compiled = _compile(_funnel_model(y, alpha=5.0)).compiled
    floors = _tau_floors(alpha=5.0)
    start = np.array([np.log(0.1), 0.0, 0.0, 0.0])
    plain = find_mode(compiled, start)
    called = []
    held = find_mode(compiled, start, floors=lambda: called.append(1) or floors)
    assert plain is not None and plain.point[0] > floors.lower[0] and called == [1]
    np.testing.assert_array_equal(held.point, plain.point)
    np.testing.assert_array_equal(held.cov, plain.cov)
    assert held.held == ()


def test_floors_of_another_layout_are_an_error():
    """Floors whose length is not the model's point's are a caller's bug: an error naming
    both lengths, not floors dropped without a word."""
    from bayeslaw.inference.warmstart import ScaleFloors

    compiled = _compile(_funnel_model(np.array([-0.4, 0.1, 0.5]))).compiled
    f = _tau_floors()
    short = ScaleFloors(f.lower[:3], f.centre[:3], f.spread[:3], f.names[:3])
    with pytest.raises(ValueError, match="floors have 3 coordinates and the model's point 4"):
        find_mode(compiled, np.array([np.log(0.1), 0.0, 0.0, 0.0]), floors=lambda: short)


def _shapes(model):
    """Each value variable's shape, from the PyMC model's initial point (the fit reads them
    from the compiled model instead)."""
    return {name: np.shape(value) for name, value in model.initial_point(0).items()}


def test_scale_floors_of_a_spec_sit_at_its_group_sds_prior_quantiles():
    import bayeslaw as bl
    from bayeslaw.inference.warmstart import SCALE_FLOOR_QUANTILE, scale_floors
    from bayeslaw.model.graph import LossModel
    from bayeslaw.model.plan import make_plan

    spec = bl.load_spec(law="looped_total")
    data = bl.load(bl.bundled_path())  # effects by N and T_m, a noise scale per run
    model = LossModel(make_plan(spec, data)).model
    found = scale_floors(model, spec, _shapes(model))
    point = model.initial_point(0)
    at, seen = 0, set()
    for rv in model.free_RVs:
        size = int(np.size(point[model.rvs_to_values[rv].name]))
        block = slice(at, at + size)
        effect = next((e for e in spec.effects if f"{e.name}_sd" == rv.name), None)
        prior = (effect.scale if effect is not None else spec.likelihood.sigma_spread
                 if rv.name == "sigma_spread" else None)
        if prior is None:
            assert np.all(found.lower[block] == -np.inf)
        else:
            seen.add(rv.name)
            np.testing.assert_allclose(found.lower[block],
                                       np.log(prior.quantile(SCALE_FLOOR_QUANTILE)))
            np.testing.assert_allclose(found.centre[block], np.log(prior.quantile(0.5)))
        at += size
    assert at == len(found.lower) and {f"{e.name}_sd" for e in spec.effects} <= seen


def test_the_fit_line_names_the_sds_held_at_their_prior():
    from bayeslaw.inference.sampling import timing_line

    info = {"compile_s": 1.0, "start_s": 2.0, "sample_s": 3.0}
    assert "held" not in timing_line("nuts", {**info, "start_held": []})
    line = timing_line("nuts", {**info, "start_held": ["c_by_T_m_sd"]})
    assert "warm start 2.0 s (c_by_T_m_sd held at the prior's median" in line
    line = timing_line("nuts", {**info, "start_pinned": ["shock", "checkpoint_shock_z"]})
    assert "(shock, checkpoint_shock_z held at the prior's centre during the search)" in line
    assert "funnel" not in line  # pinned by design, not because the search fell


def test_pinned_coordinates_stay_at_their_centre_and_the_rest_is_maximized_given_them():
    """The checkpoint shifts' treatment on a small model: the levels pinned at 0 with unit
    curvature, the sd at its mode given them (closed form), nothing reported as fallen."""
    from bayeslaw.inference.warmstart import ScaleFloors

    y = np.array([-0.4, 0.1, 0.5])
    compiled = _compile(_funnel_model(y, alpha=5.0)).compiled
    f = _tau_floors(alpha=5.0)
    pinned = np.array([False, True, True, True])
    floors = ScaleFloors(f.lower, f.centre, f.spread, f.names, pinned)
    free = find_mode(compiled, np.array([np.log(0.1), 0.0, 0.0, 0.0]))
    mode = find_mode(compiled, np.array([np.log(0.3), 0.3, -0.2, 0.1]), floors=lambda: floors)
    assert mode is not None and mode.pinned == ("theta",) and mode.held == ()
    np.testing.assert_array_equal(mode.point[1:], 0.0)
    assert not np.allclose(free.point[1:], 0.0, atol=1e-3)  # free, the levels move: can fail
    # theta = 0: on u = log tau the density is Gamma(5, 20)'s times tau^-3 (three N(0, tau)
    # levels at 0) times the Jacobian tau: tau^(5-1-3+1) exp(-20 tau), at its maximum tau = 2/20
    # (the search starts at 0.3), where -d2/du2 = 20 tau = 2: variance 1/2
    np.testing.assert_allclose(np.exp(mode.point[0]), 2 / 20, rtol=1e-5)
    np.testing.assert_allclose(mode.cov[0, 0], 0.5, rtol=1e-4)
    np.testing.assert_allclose(np.diag(mode.cov)[1:], 1.0)
    np.testing.assert_array_equal(mode.cov[0, 1:], 0.0)


def test_a_pinned_search_still_holds_an_sd_that_falls_below_its_floor():
    """Levels pinned at 0 leave their sd without data: under Gamma(2, 20) its density on
    log tau, tau^(2-1-3+1) exp(-20 tau), rises without end toward 0, below the floor; the sd
    is then held at its prior's median and the free mean maximized given both."""
    import pymc as pm

    from bayeslaw.inference.warmstart import ScaleFloors

    y = np.array([0.3, -0.1, 0.6])
    with pm.Model() as model:
        tau = pm.Gamma("tau", alpha=2.0, beta=20.0)
        theta = pm.Normal("theta", 0.0, tau, shape=3)
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", mu + theta, 1.0, observed=y)
    compiled = _compile(model).compiled
    assert _names(compiled)[:3] == ["tau_log__", "theta", "mu"]
    f = _tau_floors()
    floors = ScaleFloors(np.append(f.lower, -np.inf), np.append(f.centre, 0.0),
                         np.append(f.spread, 1.0), (*f.names, "mu"),
                         np.array([False, True, True, True, False]))
    mode = find_mode(compiled, np.array([np.log(0.1), 0.2, 0.2, 0.2, 0.0]),
                     floors=lambda: floors)
    assert mode is not None and mode.held == ("tau",) and mode.pinned == ("theta",)
    assert mode.point[0] == f.centre[0]
    np.testing.assert_array_equal(mode.point[1:4], 0.0)
    # mu given theta = 0: three N(mu, 1) points and a N(0, 1) prior
    np.testing.assert_allclose(mode.point[4], y.sum() / 4, atol=1e-6)
    np.testing.assert_allclose(mode.cov[4, 4], 1 / 4, rtol=1e-4)
    np.testing.assert_allclose(mode.cov[0, 0], f.spread[0] ** 2)


def test_scale_floors_pin_a_checkpoint_shocks_shifts_and_sd():
    import bayeslaw as bl
    from bayeslaw.inference.warmstart import scale_floors
    from bayeslaw.model.graph import LossModel
    from bayeslaw.model.plan import make_plan
    from bayeslaw.simulate import looped_step_sweep
    from bayeslaw.spec.model_spec import ModelSpec

    d = bl.load_spec(law="looped_steps").to_dict()
    d["likelihood"]["shock"] = {"dist": "HalfNormal", "sigma": 0.02}
    spec = ModelSpec.from_dict(d)
    frame, _ = looped_step_sweep(seed=2, shock=0.01, N=(1e8, 3e8, 1e9),
                                 T_m=(2, 4), D=tuple(np.geomspace(1e8, 1e10, 3)))
    model = LossModel(make_plan(spec, bl.load(frame))).model
    found = scale_floors(model, spec, _shapes(model))
    names = np.array(found.names)
    assert set(names[found.pinned]) == {"shock", "checkpoint_shock_z"}
    assert np.sum(names == "checkpoint_shock_z") == 6 * 3  # 6 looped runs x 3 checkpoints
    np.testing.assert_array_equal(found.centre[names == "checkpoint_shock_z"], 0.0)
    np.testing.assert_allclose(found.centre[names == "shock"],
                               np.log(spec.likelihood.shock.quantile(0.5)))
    plain = scale_floors(model, bl.load_spec(law="looped_steps"), _shapes(model))
    assert plain is not None and not plain.pinned.any()


def test_prior_quantiles_against_closed_forms():
    from bayeslaw.spec.parts import Prior

    half = 0.6744897501960817  # the standard normal's 75% quantile: a half-normal's median
    assert np.isclose(Prior("HalfNormal", {"sigma": 0.2}).quantile(0.5), 0.2 * half)
    assert np.isclose(Prior("Exponential", {"lam": 4.0}).quantile(0.5), np.log(2) / 4.0)
    assert np.isclose(Prior("LogNormal", {"mu": -1.0, "sigma": 0.7}).quantile(0.5), np.exp(-1))
    assert np.isclose(Prior("Gamma", {"alpha": 1.0, "beta": 4.0}).quantile(0.01),
                      -np.log(0.99) / 4.0)  # Gamma(1, b) is Exponential(b)
    assert np.isclose(Prior("Uniform", {"lower": 1.0, "upper": 3.0}).quantile(0.25), 1.5)
    assert np.isclose(Prior("TruncatedNormal", {"mu": 0.0, "sigma": 2.0, "lower": 0.0})
                      .quantile(0.5), 2.0 * half)


def test_an_sd_not_sampled_on_the_log_scale_gets_no_floor():
    """A Uniform sd is sampled as an interval's logit: its floor would be on another scale."""
    import bayeslaw as bl
    from bayeslaw.inference.warmstart import scale_floors
    from bayeslaw.model.graph import LossModel
    from bayeslaw.model.plan import make_plan

    d = bl.load_spec(law="looped_total").to_dict()
    d["effects"][0]["scale"] = {"dist": "Uniform", "lower": 0.0, "upper": 1.0}
    spec = bl.ModelSpec.from_dict(d)
    model = LossModel(make_plan(spec, bl.load(bl.bundled_path()))).model
    found = scale_floors(model, spec, _shapes(model))
    uniform = f"{spec.effects[0].name}_sd"
    assert uniform in found.names and found.names.count(uniform) == 1
    at = found.names.index(uniform)
    assert found.lower[at] == -np.inf
    assert np.isfinite(found.lower).sum() == len(spec.effects) - 1 + (
        spec.likelihood.sigma_by is not None)
