"""Where a pooled curve_bend fit of a selection split fails to converge (issue 35 / 37).

Run from the repository root::

    python benchmarks/results/peers_converge_2026-12-04/diagnose.py DD [--spec SPEC]
        [--max-context N] [--seed S] [--save FIT.nc] [--full]

Fits the selection split's context (the first part of each curve's context, NSL-PFN's rule;
no target row is read) as ``bench_peers.py --selection --mode pooled`` does, then prints the
fit's diagnostics, the variables' worst R-hat per element, per-chain medians of the worst
ones, and the sampler's step sizes and tree depths per chain.  ``--full`` fits each curve's
whole context instead, as the target runs do (the fit still reads no target row): for a
diagnosis only, nothing is chosen on it.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
import arviz as az  # noqa: E402
import bench_peers as bp  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("dataset")
p.add_argument("--spec", default="curve_bend")
p.add_argument("--max-context", type=int)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--save")
p.add_argument("--full", action="store_true", help="fit each curve's whole context, as the "
               "target runs do (still no target row), not the selection split")
a = p.parse_args()
argv = ["--datasets", a.dataset, "--seed", str(a.seed)] + ([] if a.full else ["--selection"])
if a.max_context:
    argv += ["--max-context", str(a.max_context)]
args = bp.parse_args(argv)
spec = bp.bench_spec(a.spec)
frame = bp.prepared(bp.DATA, a.dataset, args)
t0 = time.perf_counter()
fit = bp.fit_context(frame[frame.role == "context"], spec, args)
print(f"fit seconds {time.perf_counter() - t0:.1f}; curves {frame.run.nunique()}")
print(fit.diagnostics)
post = fit.idata.posterior
rhat = az.rhat(post)
rows = []
for v in rhat.data_vars:
    r = rhat[v].values
    flat = np.atleast_1d(r).ravel()
    for i, x in enumerate(flat):
        rows.append((float(x), v, i))
rows.sort(reverse=True)
print("worst R-hat elements:")
for x, v, i in rows[:25]:
    arr = post[v].values.reshape(post[v].shape[0], post[v].shape[1], -1)[:, :, i]
    med = np.median(arr, axis=1).round(4).tolist()
    label = ""
    extra = [d for d in post[v].dims if d not in ("chain", "draw")]
    if extra:
        label = str(np.asarray(post[v][extra[0]].values).ravel()[i])
    print(f"  {x:7.3f} {v:24s} {label:40s} chain medians {med}")
ss = fit.idata.sample_stats
for k in ("step_size", "tree_depth", "n_steps", "diverging"):
    if k in ss:
        vals = ss[k].values.astype(float)
        print(k, "per chain mean", np.round(vals.mean(axis=1), 4).tolist(),
              "max", np.round(vals.max(axis=1), 4).tolist())
worst = sorted({lab for x, v, i in rows[:25] if x > 1.01
                for lab in [str(np.asarray(post[v][[d for d in post[v].dims
                                                    if d not in ("chain", "draw")][0]]
                                       .values).ravel()[i])] if "run" in post[v].dims[-1]})
print("rank correlations of each worst curve's free coordinates (pooled over chains):")
for lab in worst:
    names, cols = [], []
    for v in post.data_vars:
        if post[v].ndim == 3 and v.endswith(("_z", "_dev", "_shear")):
            dim = post[v].dims[-1]
            labels = [str(x) for x in post[v][dim].values]
            if lab in labels:
                names.append(v)
                cols.append(post[v].isel({dim: labels.index(lab)}).values.ravel())
    r = np.corrcoef(np.argsort(np.argsort(np.array(cols)), axis=1))
    print(" ", lab)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            print(f"    {names[i]:18s} {names[j]:18s} {r[i, j]:+.2f}")
if a.save:
    fit.save(a.save)
