"""Learning-rate schedules: shapes, areas, the schedule laws against hand values, the loader's
errors and forecasts with a schedule (no sampling: a posterior of fixed draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import DataError
from bayeslaw.laws.functions import annealing_area
from bayeslaw.laws.multi_power import (
    NODE_COLUMNS,
    NODES,
    RunSchedule,
    multi_power,
    node_areas,
    rate,
)

REF = {"N": 1e8, "D": 1e9}


# -- shapes ---------------------------------------------------------------------------------
def test_rate_of_each_kind_matches_its_formula_by_hand():
    D = np.array([0.5, 1.0, 5.5, 10.0])  # warm-up 1, horizon 10
    kw = {"warmup": 1.0, "horizon": 10.0}
    np.testing.assert_allclose(rate("constant", D, **kw), [0.5, 1, 1, 1])
    # cosine to 0.1: at the middle of the decay (D = 5.5) 0.1 + 0.9 * 0.5
    np.testing.assert_allclose(rate("cosine", D, final_ratio=0.1, **kw), [0.5, 1, 0.55, 0.1])
    np.testing.assert_allclose(rate("linear", D, **kw), [0.5, 1, 0.5, 0.0])
    np.testing.assert_allclose(rate("inverse_sqrt", np.array([4.0]), warmup=1.0, horizon=10.0),
                               [0.5])
    wsd = {"decay_start": 8.0, **kw}
    q = np.array([8.0, 9.0, 10.0])
    np.testing.assert_allclose(rate("wsd", q, **wsd), [1, 0.5, 0])
    np.testing.assert_allclose(rate("wsd", q, decay_shape="cosine", **wsd), [1, 0.5, 0])
    np.testing.assert_allclose(rate("wsd", q, decay_shape="1-sqrt", **wsd),
                               [1, 1 - np.sqrt(0.5), 0])
    # a decay that ends before the horizon holds its final rate (GPT-3: 260B of 300B)
    np.testing.assert_allclose(rate("cosine", np.array([9.0]), decay_end=8.0, final_ratio=0.1,
                                    **kw), [0.1])


def test_areas_drop_and_annealing_area_by_hand():
    # a step from 1 to 0.5 at D = 2 (a logged table): S1 = D then 2 + 0.5 (D - 2); the
    # annealing area is the step seen through the lag, 0.5 (1 - exp(-(D - 2) / w))
    D = np.concatenate([np.linspace(0, 2, 50), np.linspace(2.000001, 10, 400)])
    eta = np.where(D <= 2, 1.0, 0.5)
    sched = RunSchedule(D, eta, window=1.5)
    at = np.array([1.0, 4.0, 10.0])
    t = sched.terms(at)
    np.testing.assert_allclose(t["lr_area"], [1.0, 3.0, 6.0], rtol=1e-5)
    np.testing.assert_allclose(t["lr_drop"], [0.0, 0.5, 0.5])
    np.testing.assert_allclose(t["anneal_area"][1:], 0.5 * (1 - np.exp(-(at[1:] - 2) / 1.5)),
                               rtol=1e-5)
    assert t["anneal_area"][0] == 0.0


def test_node_areas_of_a_linear_decay():
    # eta = 1 - D/H from D = 0: drop D/H, S1 = D - D^2 / 2H; node j at drop (j - 1/2) / K
    H = 100.0
    D = np.linspace(0, H, 1001)
    area = D - D**2 / (2 * H)
    nodes = node_areas(D / H, area)
    level = np.arange(NODES + 1) / NODES
    np.testing.assert_allclose(nodes, level * H - (level * H) ** 2 / (2 * H), rtol=1e-6)
    # a drop that stops at 0.5 leaves the upper levels unreached (they add nothing)
    half = node_areas(np.minimum(D / H, 0.5), area)
    assert (half[level > 0.5] > 1e29).all() and (half[level <= 0.5] < H).all()
    # boundary 0 is where the decay starts, after a stable phase
    stable = np.where(D < 60, 0.0, (D - 60) / 40)
    assert node_areas(stable, D)[0] == 60.0


# -- the laws -------------------------------------------------------------------------------
THETA = {"E": 1.9, "a": 0.5, "alpha": 0.35, "b": 0.6, "beta": 0.45, "d": 0.25, "kappa": 8.0,
         "zeta": 0.6, "omega": 0.5}


def test_annealing_area_law_by_hand():
    cov = {"N": np.array([2e8]), "lr_area": np.array([3e9]), "anneal_area": np.array([0.4])}
    want = 1.9 + 0.5 * 2.0**-0.35 + 0.6 * 3.0**-0.45 - 0.25 * 0.4
    np.testing.assert_allclose(annealing_area(np, cov, THETA, REF), [want], rtol=1e-12)


def _schedule_cov(schedule: RunSchedule, D: np.ndarray, N: float) -> dict[str, np.ndarray]:
    t = schedule.terms(D)
    return {"N": np.full(len(D), N), **{k: np.asarray(v) for k, v in t.items()}}


def test_multi_power_law_matches_luo_et_al_sum_over_every_step():
    # Luo et al.'s LD(t) = B sum_k (eta_{k-1} - eta_k) (1 - (C eta_k^-gamma S_k(t) + 1)^-zeta),
    # S_k(t) = sum_{tau=k}^{t} eta_tau, over 4,000 steps of a WSD cool-down and a cosine
    steps, batch = 4000, 1e6
    D = np.arange(steps + 1) * batch
    for kind, extra in (("wsd", {"decay_start": 0.7 * D[-1]}), ("cosine", {})):
        # to 2% of the peak: Luo et al.'s eta_k^-gamma needs a rate above 0
        eta = rate(kind, D, warmup=40 * batch, horizon=D[-1], final_ratio=0.02, **extra)
        sched = RunSchedule(D, eta, window=1000 * batch)
        at = np.array([1500, 2900, 3300, 3700, 4000])
        area = np.concatenate([[0.0], np.cumsum(eta[1:] * batch)])  # sum_{tau <= t} eta_tau
        peak = int(np.argmax(eta))
        want = []
        for t in at:
            k = np.arange(peak + 1, t + 1)
            drop = eta[k - 1] - eta[k]
            s_k = (area[t] - area[k - 1]) / REF["D"]
            g = 1 - (THETA["kappa"] * eta[k] ** -THETA["omega"] * s_k + 1) ** -THETA["zeta"]
            want.append(THETA["d"] * np.sum(drop * g))
        cov = _schedule_cov(sched, D[at], 2e8)
        base = 1.9 + 0.5 * 2.0**-0.35 + 0.6 * (cov["lr_area"] / 1e9) ** -0.45
        got = base - multi_power(np, cov, THETA, REF)
        # the node sum is a trapezoid rule over 20 levels of the drop: within 1% of LD, or
        # 2e-4 nats early in a cool-down (the loss noise of a real curve is 1e-2)
        np.testing.assert_allclose(got, want, rtol=0.01, atol=2e-4)
        assert max(want) > 0.1  # the anneal matters in this test


def test_multi_power_is_the_plain_law_on_a_constant_schedule():
    D = np.linspace(0, 5e9, 200)
    sched = RunSchedule(D, np.ones_like(D), window=1e8)
    cov = _schedule_cov(sched, np.array([1e9, 5e9]), 1e8)
    np.testing.assert_allclose(multi_power(np, cov, THETA, REF),
                               1.9 + 0.5 + 0.6 * np.array([1.0, 5.0]) ** -0.45)


def test_multi_power_with_instant_saturation_is_the_drop_term_of_chinchilla_anneal():
    # kappa -> infinity: LD = d * drop, chinchilla_anneal's c (1 - cos(pi D/H)) / 2 for a
    # cosine to 0 without warm-up (its special case, with D for the forward area)
    H = 1e10
    D = np.linspace(0, H, 1000)
    sched = RunSchedule(D, rate("cosine", D, warmup=0.0, horizon=H), window=1e8)
    at = np.array([2e9, 5e9, 9e9])
    cov = _schedule_cov(sched, at, 1e8)
    theta = {**THETA, "kappa": 1e12}
    ld = 1.9 + 0.5 + 0.6 * (cov["lr_area"] / 1e9) ** -0.45 - multi_power(np, cov, theta, REF)
    # the trapezoid gives the level the drop is in half its weight (G falls to 0 at the
    # current step): at most d / 2K short
    want = 0.25 * (1 - np.cos(np.pi * at / H)) / 2
    assert np.all((ld <= want + 1e-6) & (ld >= want - 0.25 / (2 * NODES) - 1e-6))


# -- loading --------------------------------------------------------------------------------
def _curves(kind: str = "wsd", **plan) -> pd.DataFrame:
    rows = []
    for n in (1e8, 2e8, 4e8):
        for d in np.linspace(1e8, 1e9, 10):
            rows.append({"run": f"r{n:g}", "N": n, "D": d, "loss": 3.0, "schedule": kind,
                         "warmup": 1e7, "horizon": 1e9, **plan})
    return pd.DataFrame(rows)


def test_load_adds_the_terms_and_keeps_the_input():
    frame = _curves(decay_start=8e8)
    before = frame.copy()
    data = bl.load(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert set(NODE_COLUMNS) <= data.columns and data.schedules is not None
    last = data.frame.groupby("run").last()
    np.testing.assert_allclose(last["lr_norm"], 0.0, atol=1e-12)
    np.testing.assert_allclose(last["lr_area"], 1e9 - 5e6 - 1e8, rtol=1e-6)  # warm-up, cool-down
    assert bl.load(frame).sha256 == data.sha256


@pytest.mark.parametrize(("plan", "match"), [
    ({"schedule": "cosin"}, "schedule 'cosin' is not one of"),
    ({}, "needs 'decay_start'"),
    ({"decay_start": 8e8, "decay_shape": "sqrt"}, "decay_shape 'sqrt' is not one of"),
    ({"decay_start": 2e9}, "decay_start 2e.09 lies outside"),
    ({"decay_start": 8e8, "final_lr": 1e-4}, "final_lr needs the run's peak_lr"),
    ({"decay_start": 8e8, "final_lr_ratio": 1.5}, "ratio in \\[0, 1\\]\\), got 1.5"),
    ({"decay_start": 8e8, "final_lr_ratio": 0.1, "final_lr": 0.1, "peak_lr": 1.0}, "not both"),
    ({"decay_start": 8e8, "warmup": -1.0}, "'warmup' must be a finite number of tokens >= 0"),
])
def test_schedule_column_errors_name_the_run(plan, match):
    frame = _curves()
    for k, v in plan.items():
        frame[k] = v
    with pytest.raises(DataError, match=match) as err:
        bl.load(frame)
    assert "run 'r1e+08'" in str(err.value)


def test_schedule_errors_along_the_curves():
    frame = _curves("cosine")
    frame.loc[5, "warmup"] = 2e7
    with pytest.raises(DataError, match="'warmup' changes within run 'r1e\\+08' .first row 1"):
        bl.load(frame)
    late = _curves("cosine").drop(columns=["schedule", "warmup", "horizon"])
    late.loc[12, "D"] = 1.2e9
    with pytest.raises(DataError, match="run 'r2e\\+08', row 13 of <DataFrame>: D=1.2e.09 lies "
                                        "past the end of the run's known learning-rate"):
        bl.load(late, schedule=_lr_table())
    clash = _curves("cosine").assign(lr_area=1.0)
    with pytest.raises(DataError, match="'lr_area'.* computes from the learning-rate schedule"):
        bl.load(clash)
    with pytest.raises(DataError, match="kind 'cosine': decay_shape is for a wsd|this run's is"):
        bl.load(_curves("cosine", decay_shape="linear"))


def _lr_table(runs=("r1e+08", "r2e+08", "r4e+08"), end=1e9) -> pd.DataFrame:
    D = np.linspace(0, end, 101)
    return pd.concat([pd.DataFrame({"run": r, "D": D, "lr": 3e-4 * (1 - 0.9 * D / 1e9)})
                      for r in runs], ignore_index=True)


def test_a_logged_lr_table(tmp_path):
    curves = _curves("cosine").drop(columns=["schedule", "warmup", "horizon"])
    path = tmp_path / "lr.csv"
    _lr_table().to_csv(path, index=False)
    data = bl.load(curves, schedule=path)
    last = data.frame.groupby("run").last()
    np.testing.assert_allclose(last["lr_norm"], 0.1, rtol=1e-9)
    np.testing.assert_allclose(last["lr_area"], 1e9 * (1 - 0.45), rtol=1e-9)
    with pytest.raises(DataError, match="run 'r4e\\+08' .row 21 of <DataFrame>. has no "
                                        "learning-rate schedule"):
        bl.load(curves, schedule=_lr_table(runs=("r1e+08", "r2e+08")))
    bad = _lr_table()
    bad.loc[150, "D"] = bad.loc[149, "D"]
    with pytest.raises(DataError, match="run 'r2e\\+08', row 151: D .* does not increase"):
        bl.load(curves, schedule=bad)
    neg = _lr_table()
    neg.loc[7, "lr"] = -1.0
    with pytest.raises(DataError, match="run 'r1e\\+08', row 8: lr must be a finite number"):
        bl.load(curves, schedule=neg)
    nan = _lr_table()
    nan.loc[9, "lr"] = np.nan
    with pytest.raises(DataError, match="row 10: lr must be a finite number >= 0, got nan"):
        bl.load(curves, schedule=nan)
    # a logged table that ends early covers no later point, unless the plan continues it
    with pytest.raises(DataError, match="past the end of the run's known learning-rate"):
        bl.load(curves, schedule=_lr_table(end=5e8))
    planned = curves.assign(schedule="linear", horizon=1e9, warmup=0.0, final_lr_ratio=0.1,
                            peak_lr=3e-4)
    continued = bl.load(planned, schedule=_lr_table(end=5e8))
    np.testing.assert_allclose(continued.frame["lr_norm"], data.frame["lr_norm"], atol=1e-9)
    with pytest.raises(DataError, match="give a logged table .run, D, lr. or one row per run"):
        bl.load(curves, schedule=pd.DataFrame({"run": ["a"], "x": [1]}))


def test_a_per_run_schedule_table():
    curves = _curves("cosine").drop(columns=["schedule", "warmup"])
    table = pd.DataFrame({"run": ["r1e+08", "r2e+08", "r4e+08"], "schedule": "cosine",
                          "warmup": 1e7})
    assert np.allclose(bl.load(curves, schedule=table).frame["lr_area"],
                       bl.load(_curves("cosine")).frame["lr_area"])
    with pytest.raises(DataError, match="no row for run.*'r4e\\+08'"):
        bl.load(curves, schedule=table.iloc[:2])


# -- forecasts with a schedule ----------------------------------------------------------------
def fixed_draws(law: str = "multi_power", draws: int = 50):
    """The law's default spec, and draws that all equal :data:`THETA` (sigma 0.01, nu 30)."""
    import arviz as az
    import xarray as xr

    spec = bl.load_spec(law=law)
    values = {**{k: v for k, v in THETA.items() if k in spec.law_obj.param_names},
              "sigma": 0.01, "nu": 30.0}
    post = xr.Dataset({k: (("chain", "draw"), np.full((1, draws), v))
                       for k, v in values.items()},
                      coords={"chain": [0], "draw": np.arange(draws)})
    return spec, az.InferenceData(posterior=post)


def _fixed_posterior(data, law: str = "multi_power", draws: int = 50):
    from bayeslaw.posterior.draws import Posterior

    spec, idata = fixed_draws(law, draws)
    return Posterior(idata, spec, data)


def test_predict_what_if_an_earlier_cool_down():
    data = bl.load(_curves(decay_start=9e8))
    post = _fixed_posterior(data)
    points = pd.DataFrame({"run": "r1e+08", "N": 1e8, "D": [8.5e8, 1e9]})
    as_planned = bl.predict(post, points, kind="epistemic")
    earlier = pd.DataFrame({"run": ["r1e+08"], "schedule": "wsd", "warmup": 1e7,
                            "decay_start": 8e8})
    what_if = bl.predict(post, points, kind="epistemic", schedule=earlier)
    # by hand: the law on the terms of each schedule
    for sched, pred in ((9e8, as_planned), (8e8, what_if)):
        t = RunSchedule(*_grid(sched), window=0.01 * 1e9).terms(points["D"].to_numpy())
        cov = {"N": np.full(2, 1e8), **t}
        np.testing.assert_allclose(pred.table["median"], multi_power(np, cov, THETA, REF),
                                   rtol=1e-3)
    # at 85% the earlier cool-down is lower; a planned rest past the schedule is refused
    assert what_if.table["median"][0] < as_planned.table["median"][0] - 0.002
    with pytest.raises(DataError, match="past the end of the run's known learning-rate"):
        bl.predict(post, points.assign(D=[8e8, 1.2e9]))


def _grid(decay_start: float):
    from bayeslaw.laws.multi_power import grid
    D = grid(1e9, [1e7, decay_start])
    return D, rate("wsd", D, warmup=1e7, horizon=1e9, decay_start=decay_start)


def test_forecast_run_follows_the_schedule_to_the_horizon():
    data = bl.load(_curves("cosine"))
    post = _fixed_posterior(data)
    part = data.select(data.frame["D"] <= 5e8, "first half")
    post = _fixed_posterior(part)
    pred = bl.forecast_run(post, "r1e+08", 1e9, n_grid=5, kind="epistemic")
    full = data.frame[data.frame["run"] == "r1e+08"]
    cov = {c: full[c].to_numpy()[-1:] for c in post.spec.law_obj.covariates}
    np.testing.assert_allclose(pred.table["median"].iloc[-1],
                               multi_power(np, cov, THETA, REF)[0], rtol=1e-3)
    with pytest.raises(DataError, match="past the end"):
        bl.forecast_run(post, "r1e+08", 2e9, kind="epistemic")


def test_loss_at_a_run_trained_to_D_with_its_schedule():
    from bayeslaw.errors import ArgumentError

    post = _fixed_posterior(bl.load(_curves(decay_start=8e8)))
    with pytest.raises(ArgumentError, match="give the schedule of a run trained to D"):
        bl.loss_at(post, N=1e8, D=1e9)
    plan = {"schedule": "wsd", "warmup": 1e7, "decay_start": 9e8}
    got = bl.loss_at(post, N=1e8, D=1e9, columns=plan).draws
    t = RunSchedule(*_grid(9e8), window=0.01 * 1e9).terms(np.array([1e9]))
    np.testing.assert_allclose(got, multi_power(np, {"N": np.array([1e8]), **t}, THETA, REF)[0],
                               rtol=1e-3)


def test_a_saved_fit_keeps_a_text_columns_missing_values(tmp_path):
    # a saved fit's text columns held "nan" where a run had no decay_shape (66% of rows of
    # a mixed sweep differed after a round trip); schedule code read "nan" as no value
    from bayeslaw.posterior.result import Fit

    frame = pd.concat([_curves("cosine"), _curves(decay_start=8e8, decay_shape="cosine")
                       .assign(run=lambda f: f["run"] + "_wsd")], ignore_index=True)
    frame.loc[frame["schedule"] == "cosine", "decay_shape"] = np.nan
    frame["note"] = pd.Series(["a", None, "b"] * (len(frame) // 3), dtype="string")
    fit = Fit.from_draws(_fixed_posterior(bl.load(frame)).idata, bl.load_spec(law="multi_power"),
                         bl.load(frame), {})
    loaded = Fit.load(fit.save(tmp_path / "fit.nc"))
    assert fit.data.frame["decay_shape"].isna().sum() == 30
    pd.testing.assert_frame_equal(loaded.data.frame, fit.data.frame)
    again = bl.load(loaded.data.frame.drop(columns=[c for c in loaded.data.frame
                                                    if c.startswith(("lr_", "anneal"))]))
    pd.testing.assert_frame_equal(again.frame, fit.data.frame)


def test_a_held_out_run_without_rows_keeps_the_density_finite():
    # a run of the model with no observed rows (a K-fold's held-out run) has its padded
    # cells filled from the built data: a forward area of 0 would make b (S1/D_ref)^-beta
    # infinite, and 0 * inf is NaN even where masked
    from bayeslaw.model.graph import LossModel
    from bayeslaw.model.plan import make_plan

    data = bl.load(_curves(decay_start=8e8))
    train = data.select((data.frame["run"] != "r2e+08").to_numpy(), "one run held out")
    model = LossModel(make_plan(bl.load_spec("annealing_area"), data, train))
    model.set_data(train)
    assert model.held["lr_area_point"].min() > 0
    assert np.isfinite(model.model.point_logps(model.model.initial_point())["loss"])


def test_missing_values_of_nullable_dtypes_are_no_value():
    """pd.NA in a ``string`` / ``Float64`` schedule column (what Fit.load gives back for a
    text column) is a missing value like NaN; it was taken as a value ("decay_shape is for a
    wsd schedule", "got <NA>")."""
    from bayeslaw.simulate import schedule_design

    plain = schedule_design(points=4, N=(1e8,), horizons=(1e9,)).assign(loss=3.0)
    nullable = plain.astype({"decay_shape": "string", "decay_start": "Float64"})
    assert nullable["decay_shape"].isna().any() and nullable["decay_start"].isna().any()
    a, b = bl.load(plain).frame, bl.load(nullable).frame
    for col in ("lr_area", "lr_drop", "anneal_area"):
        np.testing.assert_array_equal(a[col].to_numpy(float), b[col].to_numpy(float))
