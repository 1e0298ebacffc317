"""The latent exit distribution by depth: one exponent (shipped) or one per T_m.

Usage, from the repository root: ``python exit_depth.py SEED JOBS``, ``JOBS`` a comma-separated
list of ``truth:spec``. Truths: ``one`` (exponent 1.0 at every depth), ``bytm`` (0.3 / 1.0 /
1.8 at T_m = 2 / 4 / 8), ``bytm+ew`` (the same with the column ``entropy_weight``, which fixes
``beta_H``). Specs: ``shipped`` (models/looped_steps_latent.toml), ``bytm`` (an effect of
``lambda_q`` by ``T_m``, spread HalfNormal(1): models/looped_steps_latent_depths.toml),
``fixed05`` (the exponents around ``lambda_q`` with a fixed spread 0.5). The variants are
written to /tmp/lq/ without the ``beta_H`` prior line, so that a table's entropy weight fixes
it (a prior given in the user's file would win). Prints each fit's diagnostics and the
medians and 90% intervals of ``beta_H``, ``lambda_q``, ``c``, ``gamma``, ``E`` and each
depth's exponent against the truth (README.md beside this file).
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep

seed = int(sys.argv[1])
BYTM = {2.0: 0.3, 4.0: 1.0, 8.0: 1.8}
SHIPPED = Path("models/looped_steps_latent.toml").read_text().splitlines()
base = "\n".join(line for line in SHIPPED if not line.startswith("beta_H")) + "\n"
EFFECT = '''[[effects]]
param = "lambda_q"
group = "T_m"
{}

[likelihood]'''
Path("/tmp/lq").mkdir(exist_ok=True)
Path("/tmp/lq/bytm.toml").write_text(base.replace("[likelihood]", EFFECT.format(
    'scale = { dist = "HalfNormal", sigma = 1.0 }\ncentered = "auto"'), 1))
Path("/tmp/lq/fixed.toml").write_text(base.replace("[likelihood]", EFFECT.format(
    'pooling = "none"\nscale = 0.5'), 1))
SPECS = {"shipped": "models/looped_steps_latent.toml", "bytm": "/tmp/lq/bytm.toml",
         "fixed05": "/tmp/lq/fixed.toml"}


def interval(x: np.ndarray) -> tuple[float, float, float]:
    """The 5% quantile, the median and the 95% quantile of ``x``'s values."""
    lo, med, hi = np.quantile(np.ravel(x), [0.05, 0.5, 0.95])
    return lo, med, hi


for truthname, specname in (job.split(":") for job in sys.argv[2].split(",")):
    powers = BYTM if truthname.startswith("bytm") else None
    table, truth = looped_step_sweep(q_logged=False, seed=seed, exit_powers=powers)
    if truthname.endswith("+ew"):
        table["entropy_weight"] = truth.params["beta_H"]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bl.fit(bl.load(table), SPECS[specname], seed=seed, progress=False)
    sec = time.perf_counter() - t0
    post = fit.idata.posterior
    print(f"## truth={truthname} spec={specname} seed={seed}: {fit.diagnostics}; {sec:.0f} s")
    for name in ("beta_H", "lambda_q", "c", "gamma", "E"):
        if name not in post:  # beta_H fixed by the table
            continue
        lo, med, hi = interval(post[name])
        tv = truth.params[name]
        print(f"  {name}: truth {tv:.4g} median {med:.4g} [{lo:.4g}, {hi:.4g}] "
              f"{'in' if lo <= tv <= hi else 'OUT'}")
    for v in post.data_vars:  # the depth effect's variables (not per run, not raw)
        if ("lambda_q" not in v or v == "lambda_q" or "run" in post[v].dims
                or "offset" in v or "joint" in v):
            continue
        x = np.asarray(post[v])
        print(f"  {v}: dims {post[v].dims} shape {x.shape}")
        if x.ndim == 3:  # per depth: the lambda_q_by_T_m_value lines are the exponents
            for j in range(x.shape[-1]):
                lo, med, hi = interval(x[..., j])
                lvl = post[v].coords[post[v].dims[-1]].values[j]
                tv = (powers or {}).get(float(lvl), truth.params["lambda_q"])
                print(f"    level {lvl}: value median {med:.3f} [{lo:.3f}, {hi:.3f}] truth {tv}")
        else:
            print(f"    median {np.median(x):.3f} q05 {np.quantile(x, .05):.3f} "
                  f"q95 {np.quantile(x, .95):.3f}")
    sys.stdout.flush()
