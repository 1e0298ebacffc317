"""Backtest splits hold out exactly what they say; a held-out level forecast end to end."""

import warnings

import numpy as np
import pytest

from bayeslaw.backtest import backtest, parse_split
from bayeslaw.errors import DataError, SpecError
from bayeslaw.priors import load_spec


def test_prefix_split(small_sweep):
    data, _ = small_sweep
    (s,) = parse_split(data, "prefix:0.25")
    f = data.frame
    limit = 0.25 * f.groupby("run")["D"].transform("max")
    assert (f.loc[s.train, "D"] <= limit[s.train]).all()
    assert (f.loc[s.test, "D"] > limit[s.test]).all()
    assert (s.train ^ s.test).all()
    assert f.loc[s.train, "run"].nunique() == 9  # every curve keeps its beginning


def test_largest_n_and_level_splits(small_sweep):
    data, _ = small_sweep
    f = data.frame
    (s,) = parse_split(data, "largest-N")
    assert set(f.loc[s.test, "N"]) == {1e9} and 1e9 not in set(f.loc[s.train, "N"])
    (s,) = parse_split(data, "level:T_m=8")
    assert set(f.loc[s.test, "T_m"]) == {8.0} and 8.0 not in set(f.loc[s.train, "T_m"])


def test_kfold_split_partitions_runs(small_sweep):
    data, _ = small_sweep
    f = data.frame
    folds = parse_split(data, "kfold:3", seed=1)
    assert len(folds) == 3
    test_runs = [set(f.loc[s.test, "run"]) for s in folds]
    assert set().union(*test_runs) == set(f["run"])
    assert sum(len(t) for t in test_runs) == 9  # each run held out exactly once
    for s, runs in zip(folds, test_runs, strict=True):
        assert not runs & set(f.loc[s.train, "run"])


@pytest.mark.parametrize("split, error, match", [
    ("prefix:1.5", SpecError, r"must lie in \(0, 1\)"),
    ("prefix:x", SpecError, "takes a fraction"),
    ("level:lr=1", SpecError, "COLUMN=VALUE with a column of the data"),
    ("level:T_m=3", DataError, "no rows with T_m = 3"),
    ("kfold:1", SpecError, "2 <= K"),
    ("kfold:x", SpecError, "takes a number of folds"),
    ("holdout", SpecError, "unknown split"),
])
def test_split_errors(small_sweep, split, error, match):
    data, _ = small_sweep
    with pytest.raises(error, match=match):
        parse_split(data, split)


def test_held_out_runs_continued_from_their_prefix(small_sweep):
    """RUNS+prefix:F: the held-out runs train on their first F only, every other run whole."""
    data, _ = small_sweep
    f = data.frame
    first = (f["D"] <= 0.5 * f.groupby("run")["D"].transform("max")).to_numpy()
    parts = parse_split(data, "kfold:3+prefix:0.5", seed=4)
    folds = parse_split(data, "kfold:3", seed=4)
    assert [p.name for p in parts] == [f"kfold:3+prefix:0.5 fold {i}" for i in (1, 2, 3)]
    for part, fold in zip(parts, folds, strict=True):
        assert (part.train ^ part.test).all()
        np.testing.assert_array_equal(part.test, fold.test & ~first)
        np.testing.assert_array_equal(part.train, fold.train | (fold.test & first))
        held = set(f.loc[fold.test, "run"])
        assert set(f.loc[part.test, "run"]) == held  # every held-out run is continued
        assert held <= set(f.loc[part.train, "run"])  # from its own beginning
    (part,) = parse_split(data, "largest-N+prefix:0.25")
    big = (f["N"] == 1e9).to_numpy()
    assert part.name == "largest-N+prefix:0.25"
    assert (part.test == big & (f["D"] > 0.25 * f.groupby("run")["D"].transform("max"))).all()
    for bad in ("prefix:0.5+kfold:3", "kfold:3+largest-N", "kfold:3+prefix:0.5+prefix:0.2"):
        with pytest.raises(SpecError, match="RUNS\\+prefix:F"):
            parse_split(data, bad)


def test_short_of_levels_names_what_a_training_part_lacks(small_sweep):
    """Holding out a level can leave the law unidentified; the other splits keep every level."""
    from bayeslaw.backtest import short_of_levels

    data, _ = small_sweep
    spec = load_spec(law="looped_total")
    for split, lacks in (("prefix:0.25", None), ("kfold:3", None), ("level:T_m=8", "T_m"),
                         ("largest-N", "N")):
        for part in parse_split(data, split, seed=1):
            why = short_of_levels(data.select(part.train, "train"), spec)
            if lacks is None:
                assert why is None, (split, why)
            else:
                assert f"column '{lacks}' has 2 distinct value(s)" in why


def test_backtest_held_out_level_end_to_end(small_sweep, small_fit):
    """T_m = 8 held out: its runs stay in the model unobserved (no recompilation)."""
    data, _ = small_sweep
    spec = load_spec(law="looped_total")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # short chains: convergence is not the point here
        res = backtest(data, spec, "level:T_m=8", seed=2, draws=150, tune=300, chains=2,
                       n_boot=10)
    # two T_m levels left for the T_m term: said, and marked in the table
    short = [str(w.message) for w in caught if "short of levels" in str(w.message)]
    assert len(short) == 1 and "column 'T_m' has 2 distinct value(s)" in short[0]
    t = res.table.set_index("method")
    assert not t["identified"].any()
    assert list(t.index) == ["bayeslaw", "baseline"]
    assert (t["n_test"] == 75).all() and (t["n_train"] == 150).all()
    assert t.loc["bayeslaw", "mape"] < 0.05 and np.isfinite(t.loc["bayeslaw", "lpd"])
    assert 0 <= t.loc["bayeslaw", "coverage_90"] <= 1
    assert t.loc["bayeslaw", "coverage_90_low"] <= t.loc["bayeslaw", "coverage_90"]
    # 3 held-out curves: counted once each, the interval is far wider than the pointwise one
    b = t.loc["bayeslaw"]
    assert b["coverage_90_curves_low"] <= b["coverage_90_curves"] <= b["coverage_90_curves_high"]
    assert (b["coverage_90_curves_high"] - b["coverage_90_curves_low"]
            > b["coverage_90_high"] - b["coverage_90_low"])
