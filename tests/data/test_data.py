import hashlib

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import DataError


def _csv(tmp_path, frame, name="sweep.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_valid_csv_loads_sorted_and_keeps_extras(tmp_path, tidy_frame):
    shuffled = tidy_frame.sample(frac=1.0, random_state=1)
    path = _csv(tmp_path, shuffled)
    before = path.read_bytes()
    data = bl.load(path)
    assert path.read_bytes() == before  # input never modified
    assert data.sha256 == hashlib.sha256(before).hexdigest()
    assert len(data) == 36 and len(data.runs) == 9 and data.has_T
    assert "lr" in data.columns
    for _, g in data.frame.groupby("run"):
        assert np.all(np.diff(g["D"].to_numpy()) > 0)
    levels, codes = data.levels("T_m")
    assert levels.tolist() == [2, 4, 8]
    assert sorted(set(codes.tolist())) == [0, 1, 2]


def test_dataframe_input_not_modified(tidy_frame):
    copy = tidy_frame.copy(deep=True)
    data = bl.load(tidy_frame, min_D=5e8)
    pd.testing.assert_frame_equal(tidy_frame, copy)
    assert data.frame["D"].min() >= 5e8 and len(data) == 27


def test_parquet_and_mapping(tmp_path, tidy_frame):
    frame = tidy_frame.rename(columns={"D": "step", "run": "name"})
    frame["step"] = frame["step"] / 1e6
    path = tmp_path / "s.parquet"
    frame.to_parquet(path)
    data = bl.load(path, columns={"step": "D", "name": "run"}, tokens_per_step=1e6)
    np.testing.assert_allclose(np.sort(data.frame["D"].unique()), [1e8, 1e9, 5e9, 1e10])
    assert any("tokens_per_step" in n for n in data.notes)


def test_final_loss_table_without_run(tidy_frame):
    final = tidy_frame.groupby("run").last().reset_index(drop=True)
    data = bl.load(final)
    assert not data.has_runs and len(data.runs) == len(final)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda f: f.drop(columns=["loss"]), r"lacks column\(s\) \['loss'\].*--column"),
        (lambda f: f.assign(N=f["N"].astype(object).where(f.index != 3, "big")),
         r"column 'N' must be numeric; row 4 .* 'big'"),
        (lambda f: f.assign(loss=f["loss"].where(f.index != 5, np.nan)),
         r"column 'loss' has a missing or infinite value .* row 6"),
        (lambda f: f.assign(D=f["D"].where(f.index != 2, np.inf)),
         r"column 'D' has a missing or infinite value .* row 3"),
        (lambda f: f.assign(N=f["N"].where(f.index != 0, -1.0)),
         r"column 'N' must be positive; row 1 .* -1"),
        (lambda f: f.assign(D=f["D"].where(f.index != 7, 0.0)),
         r"column 'D' must be positive; row 8"),
        (lambda f: pd.concat([f, f.iloc[[0]]]),
         r"run 'n1e\+08_t2' has several rows with D = 1e\+08"),
        (lambda f: f.assign(N=f["N"].where(f.index != 1, 2e8)),
         r"run 'n1e\+08_t2' has several N values along its curve"),
        (lambda f: f.assign(T_m=f["T_m"].where(f.index != 1, 3)),
         r"run 'n1e\+08_t2' has several T_m values"),
        (lambda f: f.assign(run=f["run"].where(f.index != 4, None)),
         r"column 'run' is empty in row 5"),
    ],
)
def test_every_validation_error_from_a_bad_file(tmp_path, tidy_frame, mutate, match):
    path = _csv(tmp_path, mutate(tidy_frame))
    before = path.read_bytes()
    with pytest.raises(DataError, match=match):
        bl.load(path)
    assert path.read_bytes() == before


def test_too_few_levels_for_law(tidy_frame):
    data = bl.load(tidy_frame[tidy_frame["T_m"] != 8])
    with pytest.raises(DataError, match=r"'T_m' has 2 distinct value\(s\).*at least 3"):
        data.require_levels(("N", "D", "T_m"), "looped_total")
    data2 = bl.load(tidy_frame.drop(columns=["T_m"]).query("run.str.endswith('t2')"))
    with pytest.raises(DataError, match="needs column 'T_m'"):
        data2.require_levels(("N", "D", "T_m"), "looped_total")


def test_file_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        bl.load(tmp_path / "nope.csv")
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(DataError, match="use a .csv, .tsv or .parquet"):
        bl.load(bad)
    empty = tmp_path / "e.csv"
    empty.write_text("run,N,D,loss\n")
    with pytest.raises(DataError, match="has no rows"):
        bl.load(empty)
    with pytest.raises(DataError, match="min_D=1e\\+20 drops every row"):
        bl.load(pd.DataFrame({"N": [1.0], "D": [1.0], "loss": [1.0]}), min_D=1e20)


def test_group_level_must_be_constant_within_run(tidy_frame):
    f = tidy_frame.copy()
    f.loc[1, "lr"] = 1e-3
    data = bl.load(f)
    with pytest.raises(DataError, match="column 'lr' changes within run"):
        data.levels("lr")
    with pytest.raises(DataError, match="group column 'dataset' is not in the data"):
        data.levels("dataset")


def test_horizon_column_is_checked():
    frame = pd.DataFrame({"run": ["r1", "r1", "r2"], "N": [1e8, 1e8, 2e8],
                          "D": [1e9, 2e9, 1e9], "horizon": [2e9, 2e9, 5e8], "loss": 3.0})
    with pytest.raises(DataError, match=r"row 3 .*D = 1e\+09 past its run's horizon 5e\+08"):
        bl.load(frame)
    frame.loc[2, "horizon"] = 1e9
    frame.loc[1, "horizon"] = 3e9
    with pytest.raises(DataError, match="several horizon values along its curve"):
        bl.load(frame)
    frame.loc[0, "horizon"] = 3e9
    assert bl.load(frame).frame["horizon"].tolist() == [3e9, 3e9, 1e9]


def test_from_portion_keeps_each_runs_late_points_and_at_least_min_kept():
    """A spec's ``data.min_portion``: a run keeps its points at or past that share of its
    last D, and never fewer than its last ``min_kept``; the choice is noted, and
    :meth:`before_portion` is the rest."""
    frame = pd.DataFrame({"run": list("aaaaaa") + list("bbbb"),
                          "D": [1e7, 5e7, 1e8, 2e8, 5e8, 1e9, 1e5, 2e6, 5e6, 1e8],
                          "loss": np.linspace(3.0, 2.0, 10)})
    data = bl.load(frame)
    kept = data.from_portion(0.1, 3)
    assert kept.frame.groupby("run")["D"].apply(list).to_dict() == {
        "a": [1e8, 2e8, 5e8, 1e9], "b": [2e6, 5e6, 1e8]}
    assert "3 point(s) before 0.1 of their run's last D left out" in kept.notes[-1]
    assert data.before_portion(0.1, 3)["D"].tolist() == [1e7, 5e7, 1e5]
    five = data.from_portion(0.1, 5)
    assert five.frame.groupby("run")["D"].apply(list).to_dict() == {
        "a": [5e7, 1e8, 2e8, 5e8, 1e9], "b": [1e5, 2e6, 5e6, 1e8]}
    assert "(at least the last 5 kept)" in five.notes[-1]
    assert data.from_portion(0.0, 3) is data and data.from_portion(1e-6, 3) is data
    assert data.before_portion(0.0, 3).empty
    with pytest.raises(DataError, match=r"in \[0, 1\), got 1.0"):
        data.from_portion(1.0, 3)
    with pytest.raises(DataError, match="min_kept must be at least 1.*got 0"):
        data.from_portion(0.1, 0)


def test_a_spec_with_min_portion_fits_the_late_points_and_says_so(capsys):
    """``bl.fit`` applies the spec's ``data.min_portion`` before building the model: the
    fit's data is the cut table and one stderr line counts what was left out."""
    from ..conftest import curve_table

    data = bl.load(curve_table(2, points=6, seed=1))
    spec = {"data": {"min_portion": 0.5, "min_kept": 2}}
    with pytest.warns(bl.ConvergenceWarning):  # 20 draws: plumbing, not inference
        fit = bl.fit(data, spec, draws=20, tune=20, chains=1, seed=1)
    expected = data.from_portion(0.5, 2)
    assert len(fit.data.frame) == len(expected.frame) == 4  # the last two of each run's six
    assert fit.spec.data.min_kept == 2
    # the spec's JSON carries min_kept only when it is not the default (older specs and saved
    # fits, without it, read as the default)
    assert bl.ModelSpec.from_dict(fit.spec.to_dict()).data == fit.spec.data
    plain = bl.ModelSpec.from_dict({**fit.spec.to_dict(), "data": {"min_portion": 0.5}})
    assert plain.data.min_kept == 3 and "min_kept" not in plain.to_dict()["data"]
    pd.testing.assert_frame_equal(fit.data.frame, expected.frame)
    assert "left out" in capsys.readouterr().err
