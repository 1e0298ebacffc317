"""The first look at `likelihood.shock`: the whole simulated step sweep (seed 1, shock sd
0.01) fitted with the shipped spec plus `shock ~ HalfNormal(0.02)`; the fit's diagnostics and
a summary of the shock's sd, the noise scale, E and beta_H (lint-formatted after the runs).

    python benchmarks/results/steps_shock_2026-12-07/iid_try.py
"""

import time

import arviz as az

import bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.model_spec import ModelSpec

frame, truth = looped_step_sweep(seed=1, shock=0.01)
d = bl.load_spec("looped_steps").to_dict()
d["likelihood"]["shock"] = {"dist": "HalfNormal", "sigma": 0.02}
spec = ModelSpec.from_dict(d)
t = time.time()
fit = bl.fit(bl.load(frame), spec=spec, seed=1)
print("secs", time.time() - t)
print(fit.diagnostics)
print(az.summary(fit.idata, var_names=["shock", "sigma", "E", "beta_H"], hdi_prob=0.9))
print(truth.params)
