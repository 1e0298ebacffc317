"""Each curve's posterior covariance of (logit f, log beta, logit q): its principal sds and
the loosest direction, with the sds of the slope log(f beta) and early excess log f + logit q.

Run from the repository root on a fit saved by ``diagnose.py --save FIT.nc``::

    python benchmarks/results/peers_converge_2026-12-04/diagnose.py DD --save /tmp/dd_fit.nc
    python benchmarks/results/peers_converge_2026-12-04/ridges.py /tmp/dd_fit.nc
"""

import sys

import numpy as np

from bayeslaw.posterior.result import Fit

post = Fit.load(sys.argv[1]).idata.posterior
runs = [str(x) for x in post["f_run"]["run"].values]
print("curve | sd (logit f, log beta, logit q) | principal sds | loosest direction | "
      "sd log(f beta) | sd (log f + logit q) | median q")
for i, run in enumerate(runs):
    f, b, q = (post[v].values[..., i].ravel() for v in ("f_run", "beta_run", "q_run"))
    x = np.c_[np.log(f / (1 - f)), np.log(b), np.log(q / (1 - q))]
    cov = np.cov(x.T)
    w, v = np.linalg.eigh(cov)
    big = v[:, 2] * np.sign(v[0, 2] or 1.0)
    print(f"{run} | {np.sqrt(np.diag(cov)).round(2)} | {np.sqrt(w).round(3)} | {big.round(2)} "
          f"| {np.log(f * b).std():.3f} | {(np.log(f) + x[:, 2]).std():.3f} "
          f"| {np.median(q):.2f}")
