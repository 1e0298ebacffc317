"""How many curves of each peer data set a curve_bend fit sees with fewer than six points
(the spec's cut applied, context rows only: no target row is read), for each fit the peer
benchmark makes: the target fit (the context), the widening's inner fit (NSL-PFN's rule on
the context) and, on DD and IC, the selection fit and its widening's fit.  Run from the
repository root:

    python benchmarks/results/own_noise_scale_2026-12-06/count_short_curves.py
"""
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import bench_peers as bp  # noqa: E402

import bayeslaw as bl  # noqa: E402

FOLDER = Path("../shared/data/nslpfn_bench")
SPEC = bp.bench_spec("curve_bend")


def counts(frame) -> str:
    ctx = frame[frame["role"] == "context"]
    kept = bl.load(bp.one_row_per_point(ctx)).from_portion(SPEC.data.min_portion,
                                                           SPEC.data.min_kept)
    n = kept.frame.groupby("run").size()
    return f"curves {len(n)}, under 6 points {(n < 6).sum()}, min {n.min()}"


for name in bp.DATASETS:
    raw = bp.read_dataset(FOLDER, name)
    for most in (None, 24) if name in ("IC", "ColPret") else (None,):
        base = raw if most is None else bp.thin_context(raw, most)
        lines = [f"target fit: {counts(bp.normalise(base))}",
                 f"target widening fit: {counts(bp.normalise(bp.inner_split(base)))}"]
        if name in bp.SELECTION:
            sel = bp.inner_split(raw)
            sel = sel if most is None else bp.thin_context(sel, most)
            lines += [f"selection fit: {counts(bp.normalise(sel))}",
                      "selection widening fit: "
                      f"{counts(bp.normalise(bp.inner_split(sel)))}"]
        print(f"{name} (--max-context {most})", *lines, sep="\n  ")
