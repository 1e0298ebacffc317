"""Prefix fits of the step law on the simulated step sweep: default init vs init='prior'."""
import sys
import time
import warnings

import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.simulate import looped_step_sweep

warnings.filterwarnings("ignore")
seed, share, init = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
table, _ = looped_step_sweep(seed=seed)
data = bl.load(table)
f = data.frame
position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
out = np.asarray(position >= share, bool)
train = data.select(~out, "prefix")
spec = bl.load_spec({"sampler": {"init": init}} if init != "mode" else {}, law="looped_steps")
t0 = time.perf_counter()
fit = bl.fit(train, spec, seed=seed, progress=False, like=data)
seconds = time.perf_counter() - t0
print(f"seed {seed} prefix {share} init {init}: {fit.diagnostics}; {seconds:.0f} s", flush=True)
