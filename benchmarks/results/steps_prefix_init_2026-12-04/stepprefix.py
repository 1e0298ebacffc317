"""Prefix fits of the step law on the simulated step sweep: default init vs init='prior'."""
import sys, time, warnings
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
print(f"seed {seed} prefix {share} init {init}: {fit.diagnostics}; {time.perf_counter() - t0:.0f} s", flush=True)
