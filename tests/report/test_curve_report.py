"""The report and the output folder of a fit to curves without N (prior draws, no sampling).

Each section that read N (the data's N levels, the residuals by N, the forecast at the largest
model and its compute-optimal allocation) says what a population of curves has instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.report.folders import coefficients_sentence
from bayeslaw.spec.catalog import load_spec

from ..conftest import curve_table, prior_fit

SECTIONS = ["Data", "Priors and hierarchy", "Diagnostics", "Coefficients", "Fitted curves",
            "Residuals", "Group effects", "Derived quantities"]


@pytest.fixture(scope="module")
def curves_fit():
    data = bl.load(curve_table(4, seed=2, d_max=(2e9, 3e9)))
    return prior_fit(load_spec(law="curve_power"), data, seed=2, provenance={"seed": 2})


def test_report_of_curves_without_N(curves_fit):
    report = bl.build_report(curves_fit)
    text = report.to_markdown()
    assert [s.title for s in report.sections] == SECTIONS
    assert "N levels" not in text and "| runs | 4 |" in text
    assert {"report-grid", "report-grid-zoom", "report-residuals",
            "report-effects"} <= {im.name for im in report.images}
    # the coefficients are named by the law's own parameters, not a, b, c
    assert "`m`: the curve's loss at D_ref" in text and "`a`, `b`, `c`" not in text
    # residuals by curve, one row a run
    assert "Residuals per run (nats)" in text
    for run in ("c0", "c1", "c2", "c3"):
        assert f"| {run} | 12 |" in text
    # each curve forecast at ten times its own largest D: the law's epistemic median
    derived = report.sections[-1].blocks[0].table
    assert list(derived.index) == ["c0", "c1", "c2", "c3"]
    assert list(derived["D"]) == ["2e+10", "3e+10", "2e+10", "3e+10"]
    points = derived.reset_index()[["run"]].assign(D=derived["D"].astype(float).to_numpy())
    want = bl.predict(curves_fit, points, kind="epistemic", probs=(0.9,)).table
    np.testing.assert_allclose(derived["median"].to_numpy(float), want["median"])
    assert "no compute-optimal split" in text


def test_coefficient_sentences(curves_fit, stored_fit):
    curves = coefficients_sentence(curves_fit)
    assert curves.startswith("`m`: the curve's loss at D_ref; `f`: ")
    assert "`E`, `B` are the textbook coefficients of `L = E + B/D^beta`" in curves
    assert "`_by_run_sd` rows" in curves
    sweep = coefficients_sentence(stored_fit)
    assert sweep.startswith("`a`, `b`, `c` are each term's loss contribution")
