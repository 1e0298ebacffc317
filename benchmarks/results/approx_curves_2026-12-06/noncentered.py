"""Laplace on ``curve_bend`` coded non-centered (the same posterior, other coordinates).

Run from the repository root::

    python benchmarks/results/approx_curves_2026-12-06/noncentered.py SEED
    # output: noncentered_seed{SEED}.txt

The shipped ``curve_bend`` with every group level a deviation ``sd * z`` (``centered`` false in
its effects, ``sigma_centered`` and ``centered_values`` false), fitted by Laplace on the two
tables of ``first_look.py``; then the shipped coding on the six curves with the same seed.
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
from tests.conftest import curve_table  # noqa: E402

seed = int(sys.argv[1])
d = bl.load_spec("curve_bend").to_dict()
for effect in d["effects"]:
    effect["centered"] = False
d["likelihood"]["sigma_centered"] = False
d["sampler"]["centered_values"] = False
noncentered = bl.ModelSpec.from_dict(d)
small = bl.load(curve_table(6, seed=4))
for name, data, spec in (("six curves, non-centered", small, noncentered),
                         ("six curves, shipped coding", small, "curve_bend"),
                         ("ColPret context, non-centered", bl.load(pairs.colpret_curves()),
                          noncentered)):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bl.fit(data, spec, method="laplace", seed=seed, progress=False)
    info = fit.provenance["sampling"]
    print(f"{name}: {time.perf_counter() - t0:.1f} s; Pareto k {info['pareto_k']:.2f}; "
          f"mode evaluations {info.get('start_evaluations')}; nu mean "
          f"{float(fit.draws('nu').mean()):.2f}")
    if data is small:
        last = data.frame.groupby("run").tail(1)
        pred = bl.predict(fit, last[["run", "D"]], seed=1)
        print("  median at each curve's last point - observed:",
              np.round(pred.table["median"].to_numpy() - last["loss"].to_numpy(), 4).tolist())
