"""Forecasts of fitted runs keep the fit's schedules, the schedule columns' checks, and a
saved fit's schedules (no sampling: posteriors of fixed draws)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.data.schedules import TERM_COLUMNS
from bayeslaw.errors import DataError
from bayeslaw.laws.multi_power import multi_power

from ..data.test_schedules import THETA, fixed_draws

REF = {"N": 1e8, "D": 1e9}
RUNS = ("r1e+08", "r2e+08", "r4e+08")


def fixed_fit(data, law: str = "multi_power", draws: int = 20) -> bl.Fit:
    """A fit whose draws all equal :data:`THETA` (the law's value is its median)."""
    spec, idata = fixed_draws(law, draws)
    return bl.Fit.from_draws(idata, spec, data, {"method": "laplace"})


def law_at(frame: pd.DataFrame) -> np.ndarray:
    """The multi-power law at ``frame``'s rows, on the terms the rows hold."""
    cov = {c: frame[c].to_numpy(float) for c in ("N", *TERM_COLUMNS)}
    return multi_power(np, cov, THETA, REF)


def imported_curves() -> pd.DataFrame:
    """Curves with a logged ``lr`` column along each run (what ``bayeslaw import`` writes)."""
    D = np.linspace(2e7, 1e9, 40)
    lr = 3e-4 * (0.1 + 0.45 * (1 + np.cos(np.pi * D / 1e9)))
    return pd.concat([pd.DataFrame({"run": r, "N": n, "D": D, "loss": 3.0, "lr": lr})
                      for r, n in zip(RUNS, (1e8, 2e8, 4e8), strict=True)], ignore_index=True)


def test_predict_at_fitted_rows_with_a_logged_lr_column_is_the_fits_law():
    data = bl.load(imported_curves())
    fit = fixed_fit(data)
    rows = data.frame.drop(columns=["loss"])
    pred = bl.predict(fit, rows, kind="epistemic")
    np.testing.assert_allclose(pred.table["lr_area"], rows["lr_area"], rtol=1e-12)
    np.testing.assert_allclose(pred.table["median"], law_at(rows), rtol=1e-12)


def test_a_backtest_forecasts_held_out_rows_on_the_datas_terms():
    # prefix:0.5 on curves with a logged lr column: the held-out rows carry lr, and their
    # forecast used the schedule of those rows alone (an area of 2.6e9 for 4.1e9)
    from bayeslaw.evaluation.backtesting import _bayeslaw_scores

    data = bl.load(imported_curves())
    early = (data.frame["D"] <= 5e8).to_numpy()
    fit = fixed_fit(data.select(early, "first half"))
    test = data.frame[~early].reset_index(drop=True)
    pred, row, _ = _bayeslaw_scores(fit, test, (0.5, 0.9), seed=1)
    for c in TERM_COLUMNS:
        np.testing.assert_allclose(pred.table[c], test[c], rtol=1e-12, err_msg=c)
    epi = bl.predict(fit, test, kind="epistemic")
    np.testing.assert_allclose(epi.table["median"], law_at(test), rtol=1e-12)


def in_progress() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs in progress: a logged lr table to 5e8 (stable at the peak) and a cosine plan."""
    D = np.linspace(1e8, 5e8, 20)
    curves = pd.concat([pd.DataFrame({"run": r, "N": n, "D": D, "loss": 3.0,
                                      "schedule": "cosine", "warmup": 0.0, "horizon": 1e9,
                                      "peak_lr": 3e-4, "final_lr_ratio": 0.1})
                        for r, n in zip(RUNS, (1e8, 2e8, 4e8), strict=True)],
                       ignore_index=True)
    logged = np.linspace(0, 5e8, 51)
    table = pd.concat([pd.DataFrame({"run": r, "D": logged, "lr": 3e-4}) for r in RUNS],
                      ignore_index=True)
    return curves, table


def test_runs_in_progress_forecast_on_the_fits_schedule():
    curves, table = in_progress()
    data = bl.load(curves, schedule=table)
    fit = fixed_fit(data)
    rows = data.frame.drop(columns=["loss"])
    pred = bl.predict(fit, rows, kind="epistemic")
    np.testing.assert_allclose(pred.table["lr_drop"], 0.0)  # the logged rate never dropped
    np.testing.assert_allclose(pred.table["median"], law_at(rows), rtol=1e-12)
    # the rest of a run: on the fit's schedule (the log, then the plan), from its last point
    rest = bl.forecast_run(fit, "r1e+08", 1e9, n_grid=5, kind="epistemic")
    want = fit.data.schedules["r1e+08"].terms(rest.table["D"].to_numpy())
    for c in TERM_COLUMNS:
        np.testing.assert_allclose(rest.table[c], want[c], rtol=1e-12, err_msg=c)
    np.testing.assert_allclose(rest.table["median"], law_at(rest.table), rtol=1e-12)
    # only an explicit schedule= replaces a fitted run's: a cosine plan from the start
    plan = pd.DataFrame({"run": ["r1e+08"], "schedule": "cosine", "warmup": 0.0})
    what_if = bl.predict(fit, rows.query("run == 'r1e+08'"), kind="epistemic", schedule=plan)
    assert what_if.table["lr_drop"].iloc[-1] > 0.4
    # ... and only for the runs it names: the other runs' points keep the fit's (a plan for one
    # run among points of two raised "schedule table has no row for run(s) ['r2e+08']")
    both = bl.predict(fit, rows.query("run != 'r4e+08'"), kind="epistemic", schedule=plan)
    one = both.table["run"] == "r1e+08"
    np.testing.assert_allclose(both.table.loc[one, "lr_drop"], what_if.table["lr_drop"])
    np.testing.assert_allclose(both.table.loc[~one, "lr_drop"], 0.0)
    np.testing.assert_allclose(both.table.loc[~one, "median"],
                               law_at(rows.query("run == 'r2e+08'")), rtol=1e-12)


# -- the schedule columns' checks -------------------------------------------------------------
def wsd_curves(**plan) -> pd.DataFrame:
    """Three runs of a WSD schedule in per-run columns, ``plan`` added to every row."""
    D = np.linspace(1e8, 1e9, 10)
    return pd.concat([pd.DataFrame({"run": r, "N": n, "D": D, "loss": 3.0, "schedule": "wsd",
                                    "warmup": 1e7, "horizon": 1e9, "decay_start": 8e8, **plan})
                      for r, n in zip(RUNS, (1e8, 2e8, 4e8), strict=True)], ignore_index=True)


@pytest.mark.parametrize(("plan", "match"), [
    ({"peak_lr": "high"}, "column 'peak_lr' must be a learning rate > 0, got 'high'"),
    ({"final_lr_ratio": "a tenth"}, "column 'final_lr_ratio' must be a share of the peak rate "
                                    "in \\[0, 1\\], got 'a tenth'"),
    ({"final_lr": "low", "peak_lr": 1e-3}, "column 'final_lr' must be a learning rate >= 0, "
                                           "got 'low'"),
    ({"batch_tokens": "1M"}, "column 'batch_tokens' must be a number of tokens per step > 0, "
                             "got '1M'"),
    ({"peak_lr": 0.0, "final_lr": 1e-4}, "column 'peak_lr' must be a learning rate > 0, got 0$"),
    ({"batch_tokens": -1e6}, "column 'batch_tokens' must be .* > 0, got -1e\\+06"),
    ({"batch_tokens": 0.0}, "column 'batch_tokens' must be .* > 0, got 0$"),
])
def test_bad_schedule_numbers_name_column_run_and_value(plan, match):
    # text raised ValueError, peak_lr = 0 ZeroDivisionError; a batch of -1e6 or 0 tokens
    # was taken (0 with thousands of divide-by-zero warnings)
    frame = wsd_curves()
    first = frame["run"] == RUNS[0]
    for k, v in plan.items():
        frame[k] = 1e6 if k == "batch_tokens" else 3e-4 if k == "peak_lr" else 0.1
        frame[k] = frame[k].astype(object)
        frame.loc[first, k] = v
    with pytest.raises(DataError, match=match) as err:
        bl.load(frame)
    assert f"run {RUNS[0]!r}" in str(err.value)


def test_a_peak_lr_below_the_logged_rates_is_refused():
    # lr_norm reached 2.98 and the drop ran negative, every node past the horizon
    curves = wsd_curves().drop(columns=["schedule", "warmup", "decay_start"])
    D = np.linspace(0, 1e9, 101)
    table = pd.concat([pd.DataFrame({"run": r, "D": D, "lr": 3e-4 * (1 - 0.9 * D / 1e9)})
                       for r in RUNS], ignore_index=True)
    with pytest.raises(DataError, match=re.escape(f"run {RUNS[0]!r}: peak_lr 0.0001 is below the "
                                                  "largest logged lr 0.0003 (row 1)")):
        bl.load(curves.assign(peak_lr=1e-4), schedule=table)
    at_peak = bl.load(curves.assign(peak_lr=3e-4), schedule=table)
    np.testing.assert_allclose(at_peak.frame["lr_norm"].max(), 1 - 0.9 * 0.1, rtol=1e-9)
    np.testing.assert_allclose(at_peak.frame["lr_drop"],
                               bl.load(curves, schedule=table).frame["lr_drop"], rtol=1e-12)


# -- a schedule law's data -------------------------------------------------------------------
def zero_first_lr() -> pd.DataFrame:
    """Imported curves whose first logged lr is 0 (the step before the warm-up's first)."""
    frame = imported_curves()
    return frame.assign(lr=frame["lr"].where(frame["D"] > frame["D"].min(), 0.0))


def test_a_first_logged_lr_of_zero_is_refused_by_the_area_laws():
    # the forward area is 0 at the first point: the D term is infinite, and the Laplace fit
    # failed with "needs a proper mode ... use pathfinder / nuts"
    data = bl.load(zero_first_lr())
    first = data.frame.index[data.frame["run"] == RUNS[0]][0] + 1
    message = re.escape(f"run {RUNS[0]!r}, row {first} of <DataFrame>: the forward area "
                        "lr_area is 0 at D=2e+07")
    for law in ("multi_power", "annealing_area"):
        with pytest.raises(DataError, match=message + f".*law {law!r} divides by"):
            bl.fit(data, spec=law, method="laplace", progress=False)
    fit = fixed_fit(bl.load(imported_curves()))
    with pytest.raises(DataError, match=re.escape(f"run {RUNS[0]!r}, row 1 of the prediction "
                                                  "points: the forward area lr_area is 0")):
        bl.predict(fit, data.frame.iloc[:3], schedule=data.frame[["run", "D", "lr"]])
    # a law without the forward area fits the same table; cut the rows and the area law does
    cut = bl.load(zero_first_lr(), min_D=3e7)
    assert cut.frame["lr_area"].min() > 0
    from bayeslaw.model.plan import check_compatible
    check_compatible(bl.load_spec("multi_power"), cut)
    check_compatible(bl.load_spec("chinchilla"), data)


def test_an_effect_on_a_schedule_term_by_run_is_not_collinear():
    # multi_power's anneal term reads lr_area and lr_drop (along each run) besides the
    # node areas (one per run): "collinear ... a function of lr_node_00" was false
    from bayeslaw.errors import SpecError
    from bayeslaw.model.plan import check_compatible

    data = bl.load(wsd_curves())
    for law, param in (("multi_power", "d"), ("multi_power", "kappa"), ("annealing_area", "d"),
                       ("multi_power", "b")):
        base = bl.load_spec(law).to_dict()
        check_compatible(bl.load_spec(dict(base, effects=[{"param": param, "group": "run"}])),
                         data)
    base = bl.load_spec("multi_power").to_dict()
    for param in ("E", "a"):  # still collinear: N is one value per run
        with pytest.raises(SpecError, match=f"effect '{param}' by 'run' is collinear"):
            check_compatible(bl.load_spec(dict(base, effects=[{"param": param,
                                                               "group": "run"}])), data)


def test_a_saved_fit_keeps_each_runs_momentum_window(tmp_path):
    # each run its own batch size: windows of 1e8, 2e8 and 4e8 tokens (1% of the horizon
    # would be 1e7 for all); the annealing area read by annealing_area depends on them
    batch = dict(zip(RUNS, (1e5, 2e5, 4e5), strict=True))
    frame = wsd_curves()
    frame["batch_tokens"] = frame["run"].map(batch)
    data = bl.load(frame)
    for law in ("annealing_area", "multi_power"):
        fit = fixed_fit(data, law)
        loaded = bl.Fit.load(fit.save(tmp_path / f"{law}.nc"))
        for run, tokens in batch.items():
            assert loaded.data.schedules[run].window == fit.data.schedules[run].window
            assert loaded.data.schedules[run].window == 1000 * tokens
        points = data.frame.drop(columns=["loss"])
        a, b = (bl.predict(f, points, kind="epistemic").table for f in (fit, loaded))
        np.testing.assert_array_equal(b["anneal_area"], a["anneal_area"])
        np.testing.assert_array_equal(b["anneal_area"], data.frame["anneal_area"])
        np.testing.assert_array_equal(b["median"], a["median"])
    # the windows matter: with another window the annealing area differs along the decay
    other = bl.load(frame.assign(batch_tokens=1e4))
    assert np.abs(other.frame["anneal_area"] - data.frame["anneal_area"]).max() > 0.05


def test_predict_on_a_grid_says_a_schedule_law_needs_a_run_or_its_schedule(tmp_path, capsys):
    # it said the law "needs lr_area, lr_drop, lr_node_00, ...: give --points"
    from bayeslaw.cli.commands import main

    data = bl.load(wsd_curves())
    path = fixed_fit(data.select(data.frame["D"] <= 5e8, "first half")).save(tmp_path / "fit.nc")
    assert main(["predict", str(path), "--N", "1e8", "--D", "1e9"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lr_node" not in err, err
    assert "reads each point's learning-rate schedule" in err
    assert "--run NAME --D TOKENS" in err and "schedule columns (schedule, warmup" in err
    # the way it names works: a fitted run, and a new run with its schedule columns
    assert main(["predict", str(path), "--run", RUNS[0], "--D", "1e9"]) == 0
    points = pd.DataFrame({"run": ["new"], "N": [3e8], "D": [5e8], "schedule": ["cosine"],
                           "warmup": [1e7], "horizon": [1e9]})
    points.to_csv(tmp_path / "points.csv", index=False)
    assert main(["predict", str(path), "--points", str(tmp_path / "points.csv")]) == 0
