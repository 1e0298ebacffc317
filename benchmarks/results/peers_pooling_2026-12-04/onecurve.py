"""One curve of a selection split, fitted pooled (curve_bend_population) and alone.

Run from the repository root: ``python benchmarks/results/peers_pooling_2026-12-04/onecurve.py
DD cifar10-resnet18k-50k-adam``.  Prints the curve's posterior quantiles (5%, 50%, 95%) of
every variable in both fits and its forecast bands on the rest of its context.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
import bench_peers as bp  # noqa: E402

import bayeslaw as bl  # noqa: E402

ds, cname = sys.argv[1], sys.argv[2]
args = bp.parse_args(["--selection", "--datasets", ds])
spec = bp.bench_spec("curve_bend_population")
frame = bp.prepared(bp.DATA, ds, args)
fp = bp.fit_context(frame[frame.role == "context"], spec, args)
one = frame[frame.run.str.contains(cname, regex=False)].assign(run=bp.ALONE_RUN)
fa = bp.fit_context(one[one.role == "context"], bp.alone_spec(spec), args)
for name, f in (("pooled", fp), ("alone", fa)):
    print("==", name)
    post = f.idata.posterior
    for v in post.data_vars:
        a = post[v]
        dims = [d for d in a.dims if "run" in d]
        if dims:
            labels = [str(x) for x in a[dims[0]].values]
            idx = [i for i, x in enumerate(labels) if cname in x or x == bp.ALONE_RUN]
            if not idx:
                continue
            a = a.isel({dims[0]: idx[0]})
        if a.ndim == 2:
            print(f"  {v:30s} {np.quantile(a.values, [0.05, 0.5, 0.95]).round(4)}")
target = one[one.role == "target"][["run", "D", "loss"]].reset_index(drop=True)
pooled_run = next(r for r in frame.run.unique() if cname in r)
for name, f, t in (("pooled", fp, target.assign(run=pooled_run)), ("alone", fa, target)):
    draws = np.asarray(bl.predict(f, t[["run", "D"]], seed=1).draws)
    print(name, "D", t.D.round(2).tolist())
    print("  y   ", t.loss.round(3).tolist())
    for q in (0.05, 0.5, 0.95):
        print(f"  q{int(q * 100):02d} ", np.quantile(draws, q, axis=0).round(3).tolist())
