"""The shipped curve_bend's nu posterior on DD's and IC's selection context (issue 35).

Run from the repository root::

    python benchmarks/results/colpret_whiten_2026-12-05/nu_selection.py

Output: ``nu_selection.txt``.  Seed 1; IC thinned to 24 context points a curve, as its
selection runs are; the inner split of each curve's context fitted, no target row read.
"""

import sys

import numpy as np

sys.path.insert(0, "benchmarks")
import bench_peers as bp  # noqa: E402

for name, extra in (("DD", []), ("IC", ["--max-context", "24"])):
    args = bp.parse_args(["--datasets", name, "--seed", "1", "--selection", *extra])
    spec = bp.bench_spec("curve_bend")
    frame = bp.prepared(bp.DATA, name, args)
    fit = bp.fit_context(frame[frame.role == "context"], spec, args)
    nu = fit.idata.posterior["nu"].values.ravel()
    low, high = np.quantile(nu, [0.05, 0.95])
    print(f"{name} selection context: nu median {np.median(nu):.2f}, 90% interval "
          f"[{low:.2f}, {high:.2f}] | {fit.diagnostics}")
