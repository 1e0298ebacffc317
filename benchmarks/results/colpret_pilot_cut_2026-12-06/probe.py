"""ColPret's context (a subset, or all of it) fitted pooled with a spec: seconds and sampler.

Run from the repository root::

    python benchmarks/results/colpret_pilot_cut_2026-12-06/probe.py SPEC SUBSET

``SPEC``: a shipped spec's name or a TOML path (reference set to ``D = 1`` as
``bench_peers.py --spec`` does); the spec's own ``[data] min_portion`` applies (the shipped
``curve_bend`` leaves each curve's points before 0.1 of its last context x out).  ``SUBSET``:
24 curves drawn with numpy seed ``SUBSET``, ``worst`` or ``all``
(``../colpret_whiten_2026-12-05/common.py``); each curve's context only, thinned to 24
points, no target row read.  Prints the fit's seconds (pilot included), diagnostics, step
sizes, leapfrog steps and nu's median.
"""

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/
sys.path.insert(0, str(HERE.parent / "colpret_whiten_2026-12-05"))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402

spec_name, which = sys.argv[1], sys.argv[2]
args, ctx, keep = common.subset(which)
spec = bp.bench_spec(spec_name)
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"spec {spec_name}; curves {len(keep)}; context points {len(ctx)}, fitted "
      f"{len(fit.data.frame)}; fit seconds {time.perf_counter() - t0:.1f}")
print("timings", {k: v for k, v in fit.provenance.items() if "second" in k or "time" in k})
common.print_sampler(fit)
for name in ("nu", "sigma", "sigma_spread"):
    if name in fit.idata.posterior:
        print(name, "median", round(float(fit.idata.posterior[name].median()), 4))
