"""NSL-PFN's scores of one curve (RMSLE, LL, MSCE) against values computed by hand."""

import numpy as np
import pytest

from bayeslaw.errors import ArgumentError
from bayeslaw.evaluation import metrics

E = np.e

#: 101 draws 1, 2, ..., 101 for each of three targets.  numpy's linear quantile q of sorted
#: draws v_0..v_100 is v at index 100 q, here 1 + 100 q: the central c interval is
#: [1 + 50 (1 - c), 1 + 50 (1 + c)], i.e.
#:   0.5: [26, 76]   0.6: [21, 81]   0.7: [16, 86]   0.8: [11, 91]
#:   0.9: [6, 96]    0.95: [3.5, 98.5]   0.99: [1.5, 100.5]
DRAWS = np.tile(np.arange(1.0, 102.0), (3, 1)).T
#: one target in the middle (inside every band), one at 13 (inside the 0.8, 0.9, 0.95 and
#: 0.99 bands, outside 0.5, 0.6, 0.7), one at 100.7 (outside every band, past 100.5)
Y = np.array([51.0, 13.0, 100.7])
#: coverage 1/3 at 0.5, 0.6, 0.7 and 2/3 at 0.8, 0.9, 0.95, 0.99, so the squared errors are
#: (1/3 - 1/2)^2 = 1/36, (1/3 - 3/5)^2 = 16/225, (1/3 - 7/10)^2 = 121/900,
#: (2/3 - 4/5)^2 = 4/225, (2/3 - 9/10)^2 = 49/900, (2/3 - 19/20)^2 = 289/3600,
#: (2/3 - 99/100)^2 = 9409/90000; their mean over the seven levels:
MSCE_BY_HAND = (1 / 36 + 16 / 225 + 121 / 900 + 4 / 225 + 49 / 900 + 289 / 3600
                + 9409 / 90000) / 7


def test_rmsle_by_hand():
    # log(1/1) = 0, log(e/1) = 1, log(1/e) = -1: sqrt((0 + 1 + 1) / 3), natural log
    assert metrics.rmsle([1.0, E, 1.0], [1.0, 1.0, E]) == pytest.approx(np.sqrt(2 / 3))
    # scale-free: the same ratios at another scale
    assert metrics.rmsle([5.0, 5 * E, 5.0], [5.0, 5.0, 5 * E]) == pytest.approx(np.sqrt(2 / 3))


def test_central_bounds_are_numpy_linear_quantiles():
    # draws 0..4: q = 0.2 sits at index 0.2 * 4 = 0.8 -> 0.8, q = 0.8 at 3.2 -> 3.2 (linear;
    # "lower" would give 0 and 3, "nearest" 1 and 3)
    lower, upper = metrics.central_bounds(np.arange(5.0)[:, None], 0.6)
    assert (lower[0], upper[0]) == pytest.approx((0.8, 3.2))
    lower, upper = metrics.central_bounds(DRAWS, 0.95)
    assert lower == pytest.approx([3.5] * 3) and upper == pytest.approx([98.5] * 3)


def test_msce_by_hand():
    assert metrics.msce(DRAWS, Y) == pytest.approx(MSCE_BY_HAND)
    # one level: 1/3 covered at 0.5 -> (1/3 - 1/2)^2
    assert metrics.msce(DRAWS, Y, levels=(0.5,)) == pytest.approx(1 / 36)


def test_msce_counts_the_bounds_as_inside():
    # the 0.5 interval is [26, 76] exactly: 26 and 76 inside, 76.5 outside -> coverage 2/3,
    # error (2/3 - 1/2)^2 = 1/36 (with the bounds excluded it would be (0 - 1/2)^2 = 1/4)
    assert metrics.msce(DRAWS, [26.0, 76.0, 76.5], levels=(0.5,)) == pytest.approx(1 / 36)


def test_curve_scores_from_draws_and_from_bands():
    # median of 1..101 is 51: RMSLE = sqrt((log(51/51)^2 + log(51/13)^2 + log(51/100.7)^2) / 3)
    rmsle = np.sqrt((0.0 + np.log(51 / 13) ** 2 + np.log(51 / 100.7) ** 2) / 3)
    # LL: mean of (0.5, -1, 2) = 0.5, plus log(y_scale) = log 10
    log_density = np.array([0.5, -1.0, 2.0])
    from_draws = metrics.curve_scores(Y, log_density, draws=DRAWS, y_scale=10.0)
    assert from_draws.rmsle == pytest.approx(rmsle)
    assert from_draws.ll == pytest.approx(0.5 + np.log(10.0))
    assert from_draws.msce == pytest.approx(MSCE_BY_HAND)
    assert from_draws.n == 3
    # the same forecast given as its median and bands (the table above, written out)
    bounds = {0.5: (26, 76), 0.6: (21, 81), 0.7: (16, 86), 0.8: (11, 91), 0.9: (6, 96),
              0.95: (3.5, 98.5), 0.99: (1.5, 100.5)}
    bands = {c: (np.full(3, lo), np.full(3, hi)) for c, (lo, hi) in bounds.items()}
    from_bands = metrics.curve_scores(Y, log_density, median=np.full(3, 51.0), bands=bands,
                                      y_scale=10.0)
    assert (from_bands.rmsle, from_bands.ll, from_bands.msce) == pytest.approx(
        (rmsle, 0.5 + np.log(10.0), MSCE_BY_HAND))
    # y_scale 1: the LL is the mean log density itself
    assert metrics.curve_scores(Y, log_density, draws=DRAWS).ll == pytest.approx(0.5)


@pytest.mark.parametrize(("call", "named"), [
    (lambda: metrics.rmsle([1.0, 2.0], [1.0, 2.0, 3.0]), "median"),
    (lambda: metrics.rmsle([1.0, 0.0, 2.0], [1.0, 2.0, 3.0]), "median must be positive"),
    (lambda: metrics.rmsle([1.0, 1.0, 2.0], [1.0, -2.0, 3.0]), "y must be positive"),
    (lambda: metrics.msce(np.ones((10, 2)), [1.0, 2.0, 3.0]), "draws"),
    (lambda: metrics.msce(DRAWS, Y, levels=(0.5, 1.0)), "levels"),
    (lambda: metrics.curve_scores(Y, [0.0, 0.0], draws=DRAWS), "log_density"),
    (lambda: metrics.curve_scores(Y, [0.0] * 3, draws=DRAWS, y_scale=0.0), "y_scale"),
    (lambda: metrics.curve_scores(Y, [0.0] * 3, median=Y), "median and bands"),
])
def test_bad_arguments_are_refused_by_name(call, named):
    with pytest.raises(ArgumentError, match=named):
        call()
