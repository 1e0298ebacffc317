"""Per chain: each depth's exit exponent and the log density, for one seed and variant.

Usage, from the repository root: ``python chains.py SEED [init]``: the sweep and fit of
``tail.py``'s ``shipped`` variant (with ``init``, the spec's ``sampler.init`` set to it, e.g.
``prior``), then each chain's median exponent per depth, its mean log density (nutpie's
``lp``) and where the warm start's mode put the exponents.
"""

import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep

BYTM = {2.0: 0.3, 4.0: 1.0, 8.0: 1.8}
seed = int(sys.argv[1])
table, truth = looped_step_sweep(q_logged=False, seed=seed, exit_powers=BYTM)
table["entropy_weight"] = truth.params["beta_H"]
# the file's keys as a mapping: the table's entropy weight then fixes beta_H
spec = tomllib.loads(Path("models/looped_steps_latent_depths.toml").read_text())
if len(sys.argv) > 2:
    spec["sampler"] = {**spec.get("sampler", {}), "init": sys.argv[2]}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fit = bl.fit(bl.load(table), spec, seed=seed, progress=False)
print(fit.diagnostics)
post, stats = fit.idata.posterior, fit.idata.sample_stats
lp_name = next(n for n in ("lp", "logp") if n in stats)
values = np.asarray(post["lambda_q_by_T_m_value"])
for c in range(values.shape[0]):
    med = ", ".join(f"{v:.3f}" for v in np.median(values[c], axis=0))
    print(f"chain {c}: exponents (T_m 2 / 4 / 8) {med}; mean {lp_name} "
          f"{float(np.mean(stats[lp_name].values[c])):.2f}; entropy weight fixed "
          f"{truth.params['beta_H']}")
