"""Quantile recalibration from an inner backtest: the PIT, the quantile map, the inner split.

No MCMC here: the map is checked against closed forms for normal forecasts, the inner split
by set arithmetic on the small sweep.  ``test_cli.test_backtest_command`` runs it end to end.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeslaw.errors import ArgumentError, DataError
from bayeslaw.evaluation import metrics
from bayeslaw.evaluation.backtesting import Recalibration, backtest
from bayeslaw.evaluation.splits import inner_split, parse_split
from bayeslaw.posterior.prediction import summarise
from bayeslaw.spec.catalog import load_spec

S = 20_000
GRID = stats.norm.ppf((np.arange(S) + 0.5) / S)  # N(0, 1) draws, as a quantile grid


def test_pit_hand_values():
    draws = np.array([1.0, 2.0, 3.0, 4.0])[:, None] * np.ones((1, 4))
    pit = metrics.pit(np.array([2.5, 2.0, 0.0, 5.0]), draws)
    np.testing.assert_allclose(pit, [0.5, (1 + 0.5) / 4, 0.0, 1.0])


def test_uniform_pit_leaves_the_forecast_as_it_is():
    rec = Recalibration(np.sort((np.arange(1000) + 0.5) / 1000), "inner")
    draws = np.tile(GRID[:, None], (1, 3))
    out = rec.draws(draws)
    # the empirical quantile of 1,000 PIT values moves a level by up to 0.5 / 1,000: 0.005 in
    # z at the 5% level (density 0.10); 0.01 leaves room for the draws' own interpolation
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        np.testing.assert_allclose(np.quantile(out, q, axis=0), stats.norm.ppf(q), atol=0.01)


def test_a_forecast_half_as_wide_as_the_truth_is_widened_twofold():
    """Truths ~ N(0, 2^2) forecast by N(0, 1): PIT = Phi(y), and the recalibrated quantile
    at level u is Phi^-1(Q_pit(u)) = 2 Phi^-1(u), exactly the truth's quantile."""
    k = 4000
    truths = 2 * stats.norm.ppf((np.arange(k) + 0.5) / k)
    pit = metrics.pit(truths, np.tile(GRID[:, None], (1, k)))
    np.testing.assert_allclose(pit, stats.norm.cdf(truths), atol=1e-4)
    rec = Recalibration(np.sort(pit), "inner")
    out = rec.draws(np.tile(GRID[:, None], (1, 2)))
    for p in (0.5, 0.9):
        lo, hi = np.quantile(out[:, 0], [(1 - p) / 2, (1 + p) / 2])
        z = stats.norm.ppf((1 + p) / 2)
        assert lo == pytest.approx(-2 * z, abs=0.02) and hi == pytest.approx(2 * z, abs=0.02)


def test_recalibrated_bands_hold_their_share_of_new_points():
    """Seeded: PIT from 500 inner truths, coverage of 2,000 new ones (same miss). The band's
    level is estimated from 500 PITs (sd sqrt(0.09 / 500) = 0.013) and the new points add a
    binomial sd of 0.007, so 0.045 is over 3 sd of their sum; the raw band holds 59%."""
    rng = np.random.default_rng(3)
    forecast = rng.normal(0.0, 1.0, size=(4000, 1))
    inner, new = rng.normal(0.3, 2.0, size=500), rng.normal(0.3, 2.0, size=2000)
    rec = Recalibration(np.sort(metrics.pit(inner, np.tile(forecast, (1, 500)))), "inner")
    pred = summarise(pd.DataFrame({"x": np.arange(2000)}), np.tile(forecast, (1, 2000)),
                     "predictive", (0.5, 0.9))
    raw = metrics.coverage(new, *pred.band(0.9), 0.9).rate
    cal = rec.apply(pred)
    assert list(cal.table.columns) == list(pred.table.columns)
    assert cal.attrs["recalibrated_from"] == "inner"
    for p in (0.5, 0.9):
        assert abs(metrics.coverage(new, *cal.band(p), p).rate - p) < 0.045
    assert raw < 0.7
    with pytest.raises(ArgumentError, match="got kind='epistemic'"):
        rec.apply(summarise(pred.table[["x"]], pred.draws, "epistemic", (0.9,)))
    # the shift is learned too: the median moves to the truth's 0.3.  From 5,000 inner
    # truths the learned median is the sample median of N(0.3, 2^2): sd 1.2533 * 2 /
    # sqrt(5000) = 0.035 (plus the forecast grid's 0.02), so 0.12 is over 3 sds, and a
    # recalibration that learned no shift (median 0) fails
    many = rng.normal(0.3, 2.0, size=5000)
    shifted = Recalibration(np.sort(metrics.pit(many, np.tile(forecast, (1, 5000)))), "inner")
    assert shifted.apply(pred).table["median"].iloc[0] == pytest.approx(0.3, abs=0.12)


@pytest.mark.parametrize("split", ["prefix:0.5", "kfold:5", "largest-N", "kfold:5+prefix:0.5"])
def test_inner_split_learns_only_from_the_training_part(small_sweep, split):
    data, _ = small_sweep
    outer = parse_split(data, split, seed=1)[0]
    train = data.select(outer.train, "train")
    inner = inner_split(train, split, seed=1)
    key = ["run", "D"]
    outer_test = data.frame.loc[outer.test, key]
    inner_test = train.frame.loc[inner.test, key]
    inner_train = train.frame.loc[inner.train, key]
    # every inner point, trained on or scored, is a training point of the outer split
    assert outer_test.merge(pd.concat([inner_test, inner_train]), on=key).empty
    assert len(inner_test) > 0 and len(inner_train) > 0
    assert len(inner_test) + len(inner_train) == int(outer.train.sum())


def test_a_held_out_level_recalibrates_only_from_a_split_its_training_part_has(small_sweep):
    data, _ = small_sweep
    spec = load_spec(law="looped_total")
    with pytest.raises(DataError, match=r"inner split 'level:T_m=8' cannot be made on the "
                                        r"training part \(no rows with T_m = 8"):
        backtest(data, spec, "level:T_m=8", recalibrate=True)  # refused before any fit
    with pytest.raises(DataError, match="inner split 'prefix:0.001' of the training part "
                                        "leaves an empty train"):
        backtest(data, spec, "prefix:0.5", recalibrate="prefix:0.001")
    outer = parse_split(data, "level:T_m=8")[0]
    train = data.select(outer.train, "train")
    inner = inner_split(train, "level:T_m=4")  # named explicitly: T_m = 4 from T_m = 2
    assert set(train.frame.loc[inner.test, "T_m"]) == {4}
    assert set(train.frame.loc[inner.train, "T_m"]) == {2}
