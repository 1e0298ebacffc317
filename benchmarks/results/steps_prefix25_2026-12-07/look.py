"""The step backtest's 25% prefix fit (seed S), looked at in the sampled coordinates.

Run from the repository root::

    python benchmarks/results/steps_prefix25_2026-12-07/look.py 6 > look_s6.txt

Fits the first 25% of every curve of ``looped_step_sweep(seed=S)`` with the shipped
``looped_steps`` (as ``benchmarks/bench_steps.py``'s ``prefix 25%`` split does) and prints the
diagnostics, nutpie's sampler statistics by chain (steps a draw, step size, the low-rank
metric's eigenvalue count), the twelve worst bulk ESS, the slope split's sampled coordinates
``v = log(E + a)``, ``l = log(a / E)``, ``s = log(a alpha)`` (sd, each chain's autocorrelation
of ``l`` at lags 1-50, the conditional sd of ``s`` given ``l`` by bins) and ``l``'s Pearson
correlation with every other posterior variable (first 20 elements).
"""
import sys
import warnings

import arviz as az
import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.simulate import looped_step_sweep

seed = int(sys.argv[1])
table, _ = looped_step_sweep(seed=seed)
data = bl.load(table)
f = data.frame
position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
train = data.select(~np.asarray(position >= 0.25), "the first 25% of every curve")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(train, seed=seed, progress=False, like=data)
print(fit.diagnostics)
stats = fit.idata.sample_stats
for k in ("n_steps", "step_size", "depth", "num_eigenvalues", "mean_tree_accept"):
    print(f"{k} by chain {np.round(stats[k].values.mean(axis=1), 3).tolist()}")
post = fit.idata.posterior
ess = az.ess(post)
worst = sorted((round(float(np.min(ess[name].values))), name) for name in ess.data_vars)
print("worst bulk ESS", worst[:12])
x = post["E_a_alpha_slope_slopesplit__"].values
share, slope = x[..., 1], x[..., 2]  # l and s
print("sd of v, l, s", np.round(x.reshape(-1, 3).std(0), 4).tolist())
for c in range(share.shape[0]):
    lc = share[c]
    ac = [round(float(np.corrcoef(lc[:-k], lc[k:])[0, 1]), 2) for k in (1, 5, 10, 20, 50)]
    print(f"chain {c}: l mean {lc.mean():.3f} sd {lc.std():.3f}; autocorrelation at lags "
          f"1, 5, 10, 20, 50: {ac}")
L, S = share.ravel(), slope.ravel()
edges = np.quantile(L, np.linspace(0, 1, 8))
for lo, hi in zip(edges[:-1], edges[1:], strict=True):
    m = (L >= lo) & (L <= hi)
    print(f"l in [{lo:.2f}, {hi:.2f}]: s mean {S[m].mean():.3f} sd {S[m].std():.4f}")
for name in sorted(post.data_vars):
    vals = post[name].values.reshape(L.size, -1)
    cs = [float(np.corrcoef(L, vals[:, j])[0, 1]) if vals[:, j].std() > 0 else 0.0
          for j in range(vals.shape[1])]
    print(f"corr(l, {name}) [{vals.shape[1]}]: {np.round(cs[:20], 2).tolist()}")
