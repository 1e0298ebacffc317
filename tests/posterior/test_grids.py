"""Prediction grids on the stored posterior (no sampling): axes, order, the horizon rule."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from bayeslaw.errors import ArgumentError, DataError
from bayeslaw.posterior.points import GRID_COLUMNS, prediction_grid
from bayeslaw.posterior.prediction import predict


def _as(fit, law):
    """The stored fit with its spec relabelled to ``law``: only the law's covariates are read."""
    return dataclasses.replace(fit, spec=dataclasses.replace(fit.spec, law=law))


def test_grid_is_the_product_of_the_law_axes_in_column_order(stored_fit):
    assert stored_fit.spec.law == "looped_total"  # covariates N, D, T_m
    grid = prediction_grid(stored_fit, T_m=4, D=[2e10, 1e11], N=(1e8, 3e9))
    want = pd.DataFrame({"N": [1e8, 1e8, 3e9, 3e9], "D": [2e10, 1e11, 2e10, 1e11],
                         "T_m": [4.0] * 4})
    pd.testing.assert_frame_equal(grid, want)  # N, D, T_m order; the last axis fastest
    # the grid's forecast is the forecast at the same points built by hand
    np.testing.assert_array_equal(predict(stored_fit, grid, seed=1).table["median"],
                                  predict(stored_fit, want, seed=1).table["median"])
    assert GRID_COLUMNS == ("N", "D", "T_m", "P")


def test_a_grid_point_is_a_run_trained_to_D(stored_fit):
    anneal = _as(stored_fit, "chinchilla_anneal")  # covariates N, D, horizon
    grid = prediction_grid(anneal, N=3e8, D=np.array([5e9, 1e10]))
    assert list(grid.columns) == ["N", "D", "horizon"]
    assert grid["horizon"].tolist() == grid["D"].tolist() == [5e9, 1e10]
    assert "horizon" not in prediction_grid(stored_fit, N=1e8, D=1e9, T_m=2).columns
    table = pd.DataFrame({"N": [3e8], "D": [5e9]})
    given = prediction_grid(anneal, points=table)  # a table is taken as given
    pd.testing.assert_frame_equal(given, table)
    assert given is not table


def test_streams_law_grid_has_no_D(stored_fit):
    streams = _as(stored_fit, "parallel_streams")  # covariates N, P
    grid = prediction_grid(streams, N=[1e9, 2e9], P=[1, 8])
    assert list(zip(grid["N"], grid["P"], strict=True)) == [(1e9, 1), (1e9, 8), (2e9, 1),
                                                            (2e9, 8)]
    with pytest.raises(ArgumentError, match=r"has no D term: drop --D \(in Python: D=None\)"):
        prediction_grid(streams, N=1e9, P=1, D=1e10)


@pytest.mark.parametrize("kwargs, message", [
    ({"N": [1e8]}, r"law 'looped_total' needs --D \(tokens\).*D=\[...\]"),
    ({"N": [1e8], "D": [1e9]}, "needs --T_m"),
    ({"N": [1e8], "D": [1e9], "T_m": []}, "needs --T_m"),  # an empty axis is not given
    ({"N": [1e8], "D": [1e9], "T_m": [4], "P": [2]}, "has no P term: drop --P"),
    ({"N": [1e8], "D": [0.0], "T_m": [4]}, r"D takes positive finite numbers.*\[0.0\]"),
    ({"N": [np.nan], "D": [1e9], "T_m": [4]}, "N takes positive finite numbers"),
    ({"N": ["abc"], "D": [1e9], "T_m": [4]}, "N takes numbers, got"),
    ({"N": [[1e8, 2e8]], "D": [1e9], "T_m": [4]}, r"flat sequence.*shape \(1, 2\)"),
    ({"D": [1e9], "points": pd.DataFrame({"N": [1e8]})}, "not both: drop --points or --D"),
])
def test_grid_errors_name_the_argument(stored_fit, kwargs, message):
    with pytest.raises(ArgumentError, match=message) as err:
        prediction_grid(stored_fit, **kwargs)
    assert isinstance(err.value, ValueError)


def test_a_law_beyond_the_grid_axes_asks_for_a_table(stored_fit):
    with pytest.raises(ArgumentError, match="needs N_once, N_rec: give the points as a table"):
        prediction_grid(_as(stored_fit, "iso_depth"), N=1e9, D=1e10, T_m=2)


def test_points_file(stored_fit, tmp_path):
    path = tmp_path / "pts.csv"
    pd.DataFrame({"N": [3e8], "D": [5e10], "T_m": [2]}).to_csv(path, index=False)
    pd.testing.assert_frame_equal(prediction_grid(stored_fit, points=path),
                                  pd.read_csv(path))
    with pytest.raises(DataError, match="data file 'missing.csv' does not exist"):
        prediction_grid(stored_fit, points="missing.csv")
