"""A data set's context fitted pooled with a spec, as ``bench_peers.py`` does: sampler figures.

Run from the repository root::

    python benchmarks/results/colpret_pilot_cut_2026-12-06/context.py DATASET SPEC [MAX_CONTEXT]

``DATASET``: one of ``../shared/data/nslpfn_bench/``'s sets; ``SPEC``: a shipped spec's name or
a TOML path (merged over ``curve_bend``, reference D = 1, as ``bench_peers.py --spec`` does);
``MAX_CONTEXT``: thin each curve's context to that many points (``--max-context``).  Only the
context rows are fitted and no score is computed: no target row is read.  Prints the points
left out by the spec's cut, the fit's seconds, diagnostics, step sizes and leapfrog steps.
"""

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # benchmarks/
sys.path.insert(0, str(HERE.parent / "colpret_whiten_2026-12-05"))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402

name, spec_name = sys.argv[1], sys.argv[2]
argv = ["--datasets", name, "--seed", "1"]
if len(sys.argv) > 3:
    argv += ["--max-context", sys.argv[3]]
args = bp.parse_args(argv)
frame = bp.prepared(bp.DATA, name, args)
ctx = frame[frame.role == "context"]
spec = bp.bench_spec(spec_name)
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"{name}; spec {spec_name} (min_portion {spec.data.min_portion}, min_kept "
      f"{spec.data.min_kept}, pilot {spec.sampler.pilot}); curves {ctx.run.nunique()}; context "
      f"points {len(ctx)}, fitted {len(fit.data.frame)}; fit seconds "
      f"{time.perf_counter() - t0:.1f}")
common.print_sampler(fit)
