"""Bands widened with the distance past a curve's data (:mod:`bayeslaw.evaluation.widen`).

No MCMC: the widened density is checked to integrate to one and against scipy, the learner
against a known widening on normal forecasts, and the real forecast path on a fit whose
draws are prior draws (``prior_fit``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import bayeslaw as bl
from bayeslaw.errors import ArgumentError
from bayeslaw.evaluation import widen as W
from bayeslaw.spec.catalog import load_spec

from ..conftest import curve_table, prior_fit


def normal_terms(y: np.ndarray, loc: np.ndarray, scale: np.ndarray) -> W._Terms:
    """Forecast terms of a stub fit with normal noise: per draw ``N(loc, scale)``."""
    fit = SimpleNamespace(spec=SimpleNamespace(likelihood=SimpleNamespace(family="normal")))
    centre = np.median(loc, axis=0)
    return W._Terms(fit, np.asarray(y, float), loc, scale, centre)


def test_factor_is_the_scale_at_the_last_point_and_grows_linearly_past_it():
    w = W.Widening(scale=1.5, rate=0.4)
    np.testing.assert_allclose(w.factor([-1.0, 0.0, 1.0, 2.5]), [1.5, 1.5, 2.1, 3.0])


def test_widened_density_is_the_scaled_mixture_and_integrates_to_one():
    rng = np.random.default_rng(0)
    loc = rng.normal(0.0, 0.3, (50, 1))  # 50 draws of one point's location
    scale = np.full((50, 1), 0.2)
    terms = normal_terms(np.zeros(1), loc, scale)
    k = 2.5

    def widened(y: float) -> float:
        t = W._Terms(terms.fit, np.array([y]), loc, scale, terms.centre)
        return float(np.exp(t.lpd(np.array([k]))[0]))

    total, _ = integrate.quad(widened, -6, 6, limit=200)
    assert total == pytest.approx(1.0, abs=1e-6)
    y, m = 0.7, terms.centre[0]
    mixture = np.mean(stats.norm.pdf(m + (y - m) / k, loc[:, 0], scale[:, 0])) / k
    assert widened(y) == pytest.approx(mixture, rel=1e-10)


def test_learn_recovers_a_known_widening():
    """Forecasts N(0, 1) of points that truly spread 1.5 (1 + 0.5 d): the maximum-likelihood
    widening is consistent; with 4,000 points its standard errors are about 0.02 (scale) and
    0.03 (rate) here, and 0.1 leaves three of them."""
    rng = np.random.default_rng(1)
    n = 4000
    d = rng.uniform(0.0, 2.0, n)
    y = rng.normal(0.0, 1.5 * (1.0 + 0.5 * d))
    terms = normal_terms(y, np.zeros((1, n)), np.ones((1, n)))
    fit = SimpleNamespace(data=SimpleNamespace(frame=pd.DataFrame({"run": ["a"], "D": [1.0]})))
    points = pd.DataFrame({"run": "a", "D": np.exp(d), "loss": y})
    original = W._Terms.of
    try:
        W._Terms.of = classmethod(lambda cls, *_: terms)
        w = W.Widening.learn(fit, points)
    finally:
        W._Terms.of = original
    assert w.scale == pytest.approx(1.5, abs=0.1)
    assert w.rate == pytest.approx(0.5, abs=0.1)
    assert w.n_points == n and w.lpd_after > w.lpd_before


def test_one_widening_learned_from_several_fits_is_that_of_their_points_together(
        monkeypatch):
    """Curves fitted one at a time (``--mode alone``) learn one widening: the mean log density
    is over every fit's points, so two fits of half the points each learn what one fit of all
    of them learns, and neither half alone does."""
    rng = np.random.default_rng(2)
    n = 2000
    d = rng.uniform(0.0, 2.0, n)
    y = rng.normal(0.0, np.where(np.arange(n) < n // 2, 1.2, 2.0) * (1.0 + 0.5 * d))
    frame = pd.DataFrame({"run": ["a"], "D": [1.0]})
    fits = [SimpleNamespace(data=SimpleNamespace(frame=frame)) for _ in range(3)]
    halves = [slice(0, n // 2), slice(n // 2, n), slice(0, n)]
    terms = {id(f): normal_terms(y[h], np.zeros((1, len(y[h]))), np.ones((1, len(y[h]))))
             for f, h in zip(fits, halves, strict=True)}
    monkeypatch.setattr(W._Terms, "of", classmethod(lambda cls, f, *_: terms[id(f)]))
    points = [pd.DataFrame({"run": "a", "D": np.exp(d[h]), "loss": y[h]}) for h in halves]
    both = W.Widening.learn(fits[:2], points[:2])
    whole = W.Widening.learn(fits[2], points[2])
    assert both.scale == pytest.approx(whole.scale, rel=1e-3)
    assert both.rate == pytest.approx(whole.rate, rel=1e-2)
    assert both.n_points == n and both.lpd_before == pytest.approx(whole.lpd_before)
    first = W.Widening.learn(fits[0], points[0])  # the narrower half alone: another widening
    assert first.scale < both.scale - 0.2
    with pytest.raises(ArgumentError, match="2 fit.*1 table"):
        W.Widening.learn(fits[:2], points[:1])


@pytest.fixture(scope="module")
def curves_fit():
    data = bl.load(curve_table(3, points=8, seed=2))
    return prior_fit(load_spec(law="curve_bend"), data, seed=3, draws=40), data


def test_apply_and_log_density_follow_the_forecast(curves_fit):
    fit, data = curves_fit
    last = data.frame.groupby("run")["D"].max()
    points = pd.DataFrame({"run": ["c0", "c1", "c2"],
                           "D": last.to_numpy() * np.array([1.0, np.e, np.e ** 2])})
    points["loss"] = [2.5, 2.4, 2.3]
    w = W.Widening(scale=1.2, rate=0.5)
    pred = bl.predict(fit, points[["run", "D"]], seed=4)
    wide = w.apply(fit, pred)
    k = np.array([1.2, 1.8, 2.4])  # d = 0, 1, 2 e-folds past each run's last point
    centre = np.median(pred.draws, axis=0)
    np.testing.assert_allclose(wide.draws, centre + k * (pred.draws - centre))
    np.testing.assert_allclose(wide.table["median"], centre)
    lo, hi = pred.band(0.9)
    wlo, whi = wide.band(0.9)
    np.testing.assert_allclose(whi - wlo, k * (hi - lo), rtol=1e-9)
    # the density: the model's own at the point pulled back towards the median, over k
    pulled = points.assign(loss=centre + (points["loss"] - centre) / k)
    expected = bl.log_density(fit, pulled, seed=4) - np.log(k)
    np.testing.assert_allclose(w.log_density(fit, points, seed=4), expected, rtol=1e-10)


def test_new_runs_and_epistemic_forecasts_are_refused(curves_fit):
    fit, _ = curves_fit
    w = W.Widening(scale=1.0, rate=1.0)
    with pytest.raises(ArgumentError, match=r"run\(s\) \['zz'\] are not in the fit's data"):
        W.distances(fit, pd.DataFrame({"run": ["zz"], "D": [1e10]}))
    epi = bl.predict(fit, pd.DataFrame({"run": ["c0"], "D": [1e10]}), kind="epistemic")
    with pytest.raises(ArgumentError, match="kind='predictive'"):
        w.apply(fit, epi)


def test_distances_in_e_folds_or_per_fitted_span():
    frame = pd.DataFrame({"run": ["a", "a", "b", "b", "c"],
                          "D": [1.0, np.e ** 2, 1.0, np.e, 5.0]})
    fit = SimpleNamespace(data=SimpleNamespace(frame=frame))
    points = pd.DataFrame({"run": ["a", "b", "a"], "D": [np.e ** 4, np.e ** 3, np.e]})
    np.testing.assert_allclose(W.distances(fit, points), [2.0, 2.0, -1.0])
    np.testing.assert_allclose(W.distances(fit, points, per_span=True), [1.0, 2.0, -0.5])
    with pytest.raises(ArgumentError, match=r"run\(s\) \['c'\] were fitted at one D"):
        W.distances(fit, points.assign(run="c"), per_span=True)
