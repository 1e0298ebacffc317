"""``sampler.shape_at = "window"``: ``curve_bend``'s curves sampled at their windows' middles.

:mod:`bayeslaw.model.window` samples each curve's coefficients as the same curve's at the
middle of its fitted points (its slope there one coordinate) and maps them in closed form to
the spec's reference, where the priors are: the same model.  Checked here: the map gives the
same curve, it inverts, its Jacobian is 1, and the model's density at points mapped from the
spec's own coordinates is theirs less the non-centered terms' ``log sd`` (their ``z`` has
density ``sd`` times its value's), to rtol 1e-10.  No sampling.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.laws.functions import curve_bend
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.model.window import from_reference, to_reference, window_middles
from bayeslaw.spec.settings import GRAPH_FIELDS, SAMPLING_ONLY, SamplerSettings

from ..density import compile_logp


def _window(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Window coordinates of ``n`` curves, shallow to steep, flat-started to pure power."""
    return {"m": rng.normal(0.9, 0.5, n), "f": rng.normal(0.0, 1.5, n),
            "s": rng.normal(-1.5, 0.8, n), "q": rng.normal(1.0, 1.5, n)}


def _natural(v: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Link-scale coordinates ``(log m, logit f, log beta, logit q)`` to the law's values."""
    return {"m": np.exp(v["m"]), "f": 1 / (1 + np.exp(-v["f"])), "beta": np.exp(v["beta"]),
            "q": 1 / (1 + np.exp(-v["q"]))}


def test_the_change_of_reference_keeps_the_curve_and_inverts():
    rng = np.random.default_rng(11)
    u = _window(rng, 200)
    log_x1 = rng.uniform(-3.0, 2.0, 200)
    v = to_reference(np, u, -log_x1)
    x = np.exp(np.linspace(-4.0, 3.0, 40))[:, None]
    at_window = {"m": np.exp(u["m"]), "f": 1 / (1 + np.exp(-u["f"])),
                 "q": 1 / (1 + np.exp(-u["q"]))}
    at_window["beta"] = np.exp(u["s"]) / at_window["f"]
    window_curve = curve_bend(np, {"D": x}, at_window, {"D": np.exp(log_x1)})
    reference_curve = curve_bend(np, {"D": x}, _natural(v), {"D": 1.0})
    # the law from natural values loses digits where q at the reference rounds to 1 (a steep
    # curve whose window lies far past it: 1 - q below 1e-16 on five of these curves); the map
    # itself is in log space (its inverse below holds on every curve)
    usable = v["q"] < np.log(1e8)  # 1 - q > 1e-8
    assert usable.sum() >= 180
    np.testing.assert_allclose(reference_curve[:, usable], window_curve[:, usable], rtol=1e-7)
    back = from_reference(np, v, log_x1)
    for k in u:
        np.testing.assert_allclose(back[k], u[k], rtol=1e-9, atol=1e-9)
    moved = to_reference(np, u, -log_x1 - 0.5)  # another window: another curve
    assert not np.allclose(curve_bend(np, {"D": x}, _natural(moved), {"D": 1.0}),
                           window_curve, rtol=1e-3)


def test_the_map_has_jacobian_one():
    """Central differences of the map ``(u_m, u_f, u_s, u_q) -> (log m, logit f, log beta,
    logit q)`` at 50 curves: ``|det| = 1`` to 1e-6 (the density needs no Jacobian term)."""
    rng = np.random.default_rng(5)
    keys, out = ("m", "f", "s", "q"), ("m", "f", "beta", "q")
    for _ in range(50):
        u = {k: np.array([val]) for k, val in zip(keys, [rng.normal(0.9, 0.5),
             rng.normal(0, 1.5), rng.normal(-1.5, 0.8), rng.normal(1, 1.5)], strict=True)}
        log_r = rng.uniform(-2.0, 3.0)
        jac = np.empty((4, 4))
        for j, k in enumerate(keys):
            hi = to_reference(np, {**u, k: u[k] + 1e-6}, log_r)
            lo = to_reference(np, {**u, k: u[k] - 1e-6}, log_r)
            jac[:, j] = [(hi[o][0] - lo[o][0]) / 2e-6 for o in out]
        assert abs(abs(np.linalg.det(jac)) - 1.0) < 1e-6


def test_window_middles_are_the_middle_of_each_curves_points():
    log_d = np.array([[-2.0, -1.0, 0.0, 0.0], [-0.5, 0.5, 1.5, 2.5], [3.0, 3.0, 3.0, 3.0]])
    mask = np.array([[1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 0, 0]], float)
    np.testing.assert_array_equal(window_middles(log_d, mask), [-1.0, 1.5, 0.0])


def _curves() -> bl.LossData:
    rng = np.random.default_rng(0)
    rows = [{"run": f"c{r}", "D": d, "loss": (2.0 + r / 4) * d ** (-0.1 - r / 20)
             + rng.normal(0, 0.01)}
            for r in range(4) for d in np.geomspace(0.05 * (r + 1), 3.0 * (r + 1), 7)]
    return bl.load(pd.DataFrame(rows))


def test_the_window_model_has_the_specs_density():
    """``curve_bend`` as shipped (reference D = 1, the benchmark's scale) and with
    ``shape_at = "window"``: at three points of the shipped model mapped into window
    coordinates (each curve's middle from the model's own container), the log density is the
    shipped one less ``log 1.1 + log 0.7 + log 1.4`` per curve (``f``, ``beta``, ``q`` are
    non-centered with those fixed sds; ``m``'s levels are values in both), and ``f_run`` is
    the same.  Unmapped, the density differs."""
    d = bl.load_spec("curve_bend").to_dict()
    d["reference"] = {"D": 1.0}
    shipped = bl.ModelSpec.from_dict(d)
    d["sampler"]["shape_at"] = "window"
    window = bl.ModelSpec.from_dict(d)
    data = _curves()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        models = [LossModel(make_plan(s, data)) for s in (shipped, window)]
        logps = [compile_logp(m.model) for m in models]
        f_runs = [m.model.compile_fn(m.model.replace_rvs_by_values([m.model["f_run"]])[0],
                                     inputs=m.model.value_vars, on_unused_input="ignore",
                                     mode="FAST_COMPILE") for m in models]
    log_x1 = models[1].held["window_mid_log"]
    assert np.ptp(log_x1) > 0.5  # the curves' windows differ
    rng = np.random.default_rng(2)
    start = models[0].model.initial_point()
    for _ in range(3):
        point = {k: rng.normal(0.0, 0.5, np.shape(v)) + (v if k.endswith("_value") else 0)
                 for k, v in start.items()}
        v = {"m": point["m_by_run_value"],
             "f": point["f_logodds__"] + 1.1 * point["f_by_run_z"],
             "beta": point["beta_log__"] + 0.7 * point["beta_by_run_z"],
             "q": point["q_logodds__"] + 1.4 * point["q_by_run_z"]}
        u = from_reference(np, v, log_x1)
        mapped = {k: x for k, x in point.items()
                  if not k.startswith(("m_by_run_value", "f_by_run_z", "beta_by_run_z",
                                       "q_by_run_z"))}
        mapped.update({"m_by_run_mid": u["m"], "f_by_run_mid": u["f"],
                       "beta_by_run_mid": u["s"], "q_by_run_mid": u["q"]})
        assert set(mapped) == {x.name for x in models[1].model.value_vars}
        want = float(logps[0](point)) - 4 * np.log(1.1 * 0.7 * 1.4)
        np.testing.assert_allclose(float(logps[1](mapped)), want, rtol=1e-10)
        np.testing.assert_allclose(f_runs[1](mapped), f_runs[0](point), rtol=1e-10)
        unmapped = {**mapped, "beta_by_run_mid": mapped["beta_by_run_mid"] + 0.3}
        assert abs(float(logps[1](unmapped)) - want) > 1e-3


def test_shape_at_window_is_refused_where_it_does_not_apply():
    d = bl.load_spec("curve_bend").to_dict()
    d["sampler"]["shape_at"] = "middle"
    with pytest.raises(SpecError, match=r'sampler.shape_at must be "reference".*got \'middle\''):
        bl.ModelSpec.from_dict(d)
    d["sampler"]["shape_at"] = "window"
    window = bl.ModelSpec.from_dict(d)  # complete pooling leaves nothing per curve
    assert window.with_pooling("complete").sampler.shape_at == "reference"
    assert window.with_pooling("none").sampler.shape_at == "window"
    with pytest.raises(SpecError, match=r"'q' needs exactly one \[\[effects\]\] entry, by 'run'"):
        bl.ModelSpec.from_dict({**d, "effects": [e for e in d["effects"] if e["param"] != "q"]})
    other = bl.load_spec("chinchilla_curves").to_dict()
    other["sampler"]["shape_at"] = "window"
    with pytest.raises(SpecError, match="the law is 'chinchilla', not 'curve_bend'"):
        bl.ModelSpec.from_dict(other)


def test_the_window_is_part_of_the_compiled_models_key():
    """A window spec and the shipped one are different graphs: a process that fitted one
    must not reuse the other's compiled model (it did, before ``shape_at`` joined the key:
    the window fit returned the shipped fit's draws).  Every sampler setting is declared
    either a graph setting or a sampling-only one, so a new setting cannot be left out."""
    d = bl.load_spec("curve_bend").to_dict()
    shipped = make_plan(bl.ModelSpec.from_dict(d), _curves())
    d["sampler"]["shape_at"] = "window"
    window = make_plan(bl.ModelSpec.from_dict(d), _curves())
    assert shipped.key != window.key
    d["sampler"].update(shape_at="reference", draws=77, target_accept=0.99)
    assert make_plan(bl.ModelSpec.from_dict(d), _curves()).key == shipped.key
    assert set(GRAPH_FIELDS) | set(SAMPLING_ONLY) == SamplerSettings.keys()
    assert not set(GRAPH_FIELDS) & set(SAMPLING_ONLY)
