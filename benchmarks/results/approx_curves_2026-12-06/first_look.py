"""A first look (``method="laplace"`` / ``"pathfinder"``) on tables of curves under ``curve_bend``.

Run from the repository root::

    python benchmarks/results/approx_curves_2026-12-06/first_look.py    # output.txt

Two tables: six simulated curves (``tests.conftest.curve_table(6, seed=4)``, noise 0.01) and
ColPret's context (``benchmarks/pairs.py: colpret_curves``, 192 curves thinned to 24 points,
no target row).  For each method: wall seconds, the fit's own timing line, its Pareto k, how
many distinct points its draws hold and, on the simulated curves, each curve's forecast median
at its last point minus the observed loss.
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
import pairs  # noqa: E402

import bayeslaw as bl  # noqa: E402
from bayeslaw.posterior.result import distinct_draws  # noqa: E402
from tests.conftest import curve_table  # noqa: E402


def first_look(name, data, method, check_last=False):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = bl.fit(data, "curve_bend", method=method, seed=1, progress=False)
        except bl.BayeslawError as exc:
            print(f"{name} {method}: {time.perf_counter() - t0:.1f} s, error: {exc}")
            return
    distinct, n = distinct_draws(fit.idata.posterior)
    k = fit.provenance["sampling"].get("pareto_k")
    print(f"{name} {method}: {time.perf_counter() - t0:.1f} s; Pareto k {k:.2f}; "
          f"{distinct} distinct of {n} draws")
    if check_last:
        last = data.frame.groupby("run").tail(1)
        pred = bl.predict(fit, last[["run", "D"]], seed=1)
        print("  median at each curve's last point - observed:",
              np.round(pred.table["median"].to_numpy() - last["loss"].to_numpy(), 4).tolist())


small = bl.load(curve_table(6, seed=4))
colpret = bl.load(pairs.colpret_curves())
first_look("six simulated curves", small, "laplace", check_last=True)
first_look("ColPret context", colpret, "laplace")
first_look("ColPret context", colpret, "pathfinder")
