"""backtest() end to end without sampling: the fit is the committed small posterior.

``bayeslaw.inference.sampling.fit`` is replaced by a stand-in that checks what it is given and
returns the stored fit, so the scoring, both kinds of band, the notes and the forecasts are checked
on a real posterior while no MCMC runs (plumbing: the forecasts are not of the training part).
"""

import warnings
from dataclasses import replace

import numpy as np
import pytest

from bayeslaw.evaluation import metrics
from bayeslaw.evaluation.backtesting import backtest
from bayeslaw.evaluation.splits import parse_split


@pytest.fixture()
def no_sampling(monkeypatch, stored_fit):
    """Replace fit() by the stored fit; record the training parts it was given."""
    import bayeslaw.inference.sampling

    seen = []

    def fake_fit(train, spec, **kwargs):
        seen.append(train)
        return stored_fit

    monkeypatch.setattr(bayeslaw.inference.sampling, "fit", fake_fit)
    return seen


def test_backtest_scores_both_kinds_of_band_for_both_methods(stored_fit, no_sampling):
    data, spec = stored_fit.data, stored_fit.spec
    with pytest.warns(UserWarning, match="short of levels"):  # 2 sizes left of 3
        res = backtest(data, spec, "largest-N:0.3", seed=1, n_boot=5)  # 3 of 9 runs: N = 1e9
    (part,) = parse_split(data, "largest-N:0.3")
    (train,) = no_sampling
    assert len(train.frame) == part.train.sum() and set(train.frame["N"]) == {1e8, 3e8}
    t = res.table.set_index("method")
    assert list(t.index) == ["bayeslaw", "baseline"] and not t["identified"].any()
    assert (t["n_curves"] == 3).all() and (t["n_test"] == 30).all()
    assert bool(t.loc["baseline", "converged"]) and t.loc["baseline", "boot_unconverged"] == 0
    for method in ("bayeslaw", "baseline"):
        f = res.forecasts[f"largest-N:0.3 / {method}"]
        y = f["loss"].to_numpy()
        for suffix in ("", "_epistemic"):  # each column scores the band its name says
            inside = (y >= f[f"lower_90{suffix}"]) & (y <= f[f"upper_90{suffix}"])
            assert t.loc[method, f"coverage_90{suffix}"] == pytest.approx(inside.mean())
            by = metrics.coverage_by_curve(y, f[f"lower_90{suffix}"], f[f"upper_90{suffix}"],
                                           f["run"], 0.9)
            assert t.loc[method, f"coverage_90{suffix}_curves"] == pytest.approx(by.rate)
        # noise widens the band: the predictive one is the wider on every point
        width = f["upper_90"] - f["lower_90"]
        assert (width > f["upper_90_epistemic"] - f["lower_90_epistemic"]).all()
        assert t.loc[method, "crps"] > 0 and t.loc[method, "crps_epistemic"] > 0
    assert res.notes == []
    assert "coverage_90_epistemic" in repr(res) and "n_curves" in repr(res)


def test_one_held_out_point_has_nan_r2_and_a_note(stored_fit, no_sampling):
    data, spec = stored_fit.data, stored_fit.spec
    frame = data.frame.assign(hold=["x"] + ["-"] * (len(data.frame) - 1))
    marked = replace(data, frame=frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero RuntimeWarning from R^2
        res = backtest(marked, spec, "level:hold=x", seed=1, n_boot=5)
    assert (res.table["n_test"] == 1).all() and res.table["r2"].isna().all()
    assert np.isfinite(res.table["mape"]).all()
    assert res.notes == ["split 'level:hold=x': R^2 is not defined on 1 held-out point(s) "
                         "with no spread in loss; it is NaN for bayeslaw, baseline"]
    assert "note: split 'level:hold=x'" in repr(res)
