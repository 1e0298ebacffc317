"""Forecasts of fitted runs keep the fit's schedules, the schedule columns' checks, and a
saved fit's schedules (no sampling: posteriors of fixed draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import DataError
from bayeslaw.formulas import multi_power
from bayeslaw.schedules import TERM_COLUMNS

REF = {"N": 1e8, "D": 1e9}
THETA = {"E": 1.9, "a": 0.5, "alpha": 0.35, "b": 0.6, "beta": 0.45, "d": 0.25, "kappa": 8.0,
         "zeta": 0.6, "omega": 0.5}
RUNS = ("r1e+08", "r2e+08", "r4e+08")


def fixed_fit(data, law: str = "multi_power", draws: int = 20) -> bl.Fit:
    """A fit whose draws all equal :data:`THETA` (the law's value is its median)."""
    import arviz as az
    import xarray as xr

    spec = bl.load_spec(law=law)
    values = {**{k: v for k, v in THETA.items() if k in spec.law_obj.param_names},
              "sigma": 0.01, "nu": 30.0}
    post = xr.Dataset({k: (("chain", "draw"), np.full((1, draws), v))
                       for k, v in values.items()},
                      coords={"chain": [0], "draw": np.arange(draws)})
    return bl.Fit.from_draws(az.InferenceData(posterior=post), spec, data, {"method": "laplace"})


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
    from bayeslaw.backtesting import _bayeslaw_scores

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
