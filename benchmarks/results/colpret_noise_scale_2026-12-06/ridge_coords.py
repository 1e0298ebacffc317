"""Which coordinates of each curve's shape ColPret's context pins: a look at a saved fit.

Run from the repository root on a fit saved by ``quick.py`` (``SAVE=fit.nc``)::

    python benchmarks/results/colpret_noise_scale_2026-12-06/ridge_coords.py fit.nc

For each curve, from its draws of ``f``, ``beta`` and ``q``: the sampled coordinates (``logit
f``, ``log beta``, ``logit q``) and, at the reference D (each curve's last context point), the
law's log-slope over its level ``s = f beta`` and its curvature over its level ``c = f beta^2
(2 - 1/q)``; at the middle of the fitted window, the log-slope over the level there and
the log of the drop ``L(u_mid) / L(0) - 1`` (``curve_bend``: L = m ((1 - f) + f / ((1 - q) +
q x^(beta / q)))). Prints, over
the curves whose ``logit f`` and ``log beta`` have a rank correlation beyond -0.95 (the
ridge), the median over curves of each coordinate's posterior sd and of the rank correlations
of ``log s`` and ``c`` with ``logit f``: near 0 would say that ``(logit f, log s, c)`` are
coordinates along and across the ridge.
"""

import sys

import numpy as np
from scipy.stats import spearmanr

import bayeslaw as bl

fit = bl.Fit.load(sys.argv[1])
post = fit.idata.posterior
f = post["f_run"].values.reshape(-1, post.sizes["run"])
beta = post["beta_run"].values.reshape(f.shape)
q = post["q_run"].values.reshape(f.shape)
coords = {"logit f": np.log(f / (1 - f)), "log beta": np.log(beta), "logit q": np.log(q / (1 - q)),
          "log s": np.log(f * beta), "c": f * beta**2 * (2 - 1 / q)}
# at the middle of the fitted window in log D (the spec's cut fits 0.1 to 1 of the last
# context x: u = log 0.1 / 2), the log-slope over the level there and the log of the
# curve's drop from there to the reference, L(u_mid) / L(0) - 1
u = np.log(0.1) / 2
g = (1 - q) + q * np.exp(beta / q * u)
coords["log s_mid"] = np.log(f * beta * np.exp(beta / q * u) / g**2 / ((1 - f) + f / g))
coords["log drop"] = np.log((1 - f) + f / g - 1)
rho = lambda a, b: spearmanr(a, b)[0]  # noqa: E731
ridge = [r for r in range(f.shape[1])
         if rho(coords["logit f"][:, r], coords["log beta"][:, r]) < -0.95]
print(f"curves {f.shape[1]}; on the f-beta ridge (rank correlation < -0.95): {len(ridge)}")
for name, x in coords.items():
    sd = np.median([x[:, r].std() for r in ridge])
    cor = np.median([rho(x[:, r], coords["logit f"][:, r]) for r in ridge])
    print(f"{name:9s} posterior sd (median over ridge curves) {sd:.4f}; "
          f"rank correlation with logit f {cor:+.3f}")
both = np.median([rho(coords["log s"][:, r], coords["c"][:, r]) for r in ridge])
print(f"rank correlation of log s with c (median) {both:+.3f}")
