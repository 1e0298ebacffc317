"""Prefix fits of the step law: every T_m effect non-centered (shipped "auto" centers them)."""
import sys
import time
import warnings

import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.simulate import looped_step_sweep

warnings.filterwarnings("ignore")
seed, share, variant = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
table, _ = looped_step_sweep(seed=seed)
data = bl.load(table)
f = data.frame
position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
out = np.asarray(position >= share, bool)
train = data.select(~out, "prefix")
d = bl.load_spec(law="looped_steps").to_dict()
for e in d["effects"]:
    if variant == "noncentered_T_m" and e["group"] == "T_m":
        e["centered"] = False
spec = bl.ModelSpec.from_dict(d)
t0 = time.perf_counter()
fit = bl.fit(train, spec, seed=seed, progress=False, like=data)
seconds = time.perf_counter() - t0
print(f"seed {seed} prefix {share} {variant}: {fit.diagnostics}; {seconds:.0f} s", flush=True)
