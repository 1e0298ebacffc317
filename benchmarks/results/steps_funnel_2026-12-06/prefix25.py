"""The step backtest's 25% prefix fit (seed S), looked at: which coordinates mix slowly.

Run from the repository root::

    python benchmarks/results/steps_funnel_2026-12-06/prefix25.py 6 > prefix25_s6.txt

The simulated step sweep of ``benchmarks/bench_steps.py`` (``looped_step_sweep(seed=S)``),
the first 25% of every curve's checkpoints fitted with the shipped ``looped_steps`` (as that
script's ``prefix 25%`` split fits it); prints the diagnostics, each shared coefficient's
posterior median and sd on the log scale with its median in each chain, the slope split's
coordinates ``log(E + a)`` and ``log(a alpha)``, the rank correlations beyond 0.7 among them,
and the rank correlation of ``log alpha`` with every element of the group effects.
"""
import sys
import warnings

import numpy as np
from scipy.stats import spearmanr

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.simulate import looped_step_sweep

seed = int(sys.argv[1])
table, truth = looped_step_sweep(seed=seed)
data = bl.load(table)
f = data.frame
position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
train = data.select(~np.asarray(position >= 0.25), "the first 25% of every curve")
print("fitted D from", train.frame[C.D].min(), "to", train.frame[C.D].max(),
      "; sizes", sorted(float(n) for n in train.frame[C.N].unique()))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(train, seed=seed, progress=False, like=data)
print(fit.diagnostics)
post = fit.idata.posterior
names = [n for n in ("E", "a", "alpha", "b", "beta", "c", "gamma", "beta_H") if n in post]
X = {n: np.log(post[n].values.ravel()) for n in names}
X["log(E+a)"] = np.log(post["E"].values.ravel() + post["a"].values.ravel())
X["log(a alpha)"] = np.log(post["a"].values.ravel() * post["alpha"].values.ravel())
for n, x in X.items():
    chains = [round(float(np.median(c)), 3) for c in x.reshape(post.sizes["chain"], -1)]
    print(f"{n:12s} median {np.median(x):+.4f} sd {x.std():.4f} chains {chains}")
keys = list(X)
for i, a in enumerate(keys):
    for b in keys[i + 1:]:
        r = spearmanr(X[a], X[b])[0]
        if abs(r) > 0.7:
            print(f"  {a} ~ {b} {r:+.2f}")
print("truth", {k: v for k, v in truth.params.items() if k in names})
alpha = X["alpha"]
for v in post.data_vars:
    if "_by_" not in v:
        continue
    vals = post[v].values.reshape(post.sizes["chain"] * post.sizes["draw"], -1)
    rs = [round(float(spearmanr(alpha, vals[:, j])[0]), 2) for j in range(vals.shape[1])]
    print(f"log alpha ~ {v}: {rs}")
