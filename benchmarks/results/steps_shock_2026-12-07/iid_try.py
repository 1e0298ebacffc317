import time, numpy as np, bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.model_spec import ModelSpec
frame, truth = looped_step_sweep(seed=1, shock=0.01)
base = bl.load_spec("looped_steps")
d = base.to_dict(); d["likelihood"]["shock"] = {"dist": "HalfNormal", "sigma": 0.02}
spec = ModelSpec.from_dict(d)
t=time.time()
fit = bl.fit(bl.load(frame), spec=spec, seed=1)
print("secs", time.time()-t)
print(fit.diagnostics if hasattr(fit,"diagnostics") else "")
import arviz as az
s = az.summary(fit.idata, var_names=["shock","sigma","E","beta_H"] , hdi_prob=0.9)
print(s)
print(truth.params)
