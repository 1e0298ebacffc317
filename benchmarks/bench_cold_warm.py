"""Does a fit's density depend on whether its process found the model in numba's cache?

Run: ``python benchmarks/bench_cold_warm.py`` (about 3 minutes). Three processes, one after
another, each building the default looped spec's density for a 3 x 3 sweep of 8 points per
curve (what ``bl.fit`` does: ``modelcache.compiled_for``):

* **cold**: a fresh PyTensor ``base_compiledir`` (numba's cache empty): the model is compiled
  in a child process and loaded (``bayeslaw.inference.coldcompile``, the default);
* **warm**: the same directory, now holding the model: it is loaded;
* **cold, compiled here**: another fresh directory, with
  ``modelcache.COMPILE_IN_CHILD = False``: the process compiles the model itself (the
  behaviour before 2026-12-05).

Each evaluates the log density and gradient at the initial point and at 200 points around
it, and finds the warm start's mode; the report says which agree bit for bit with the warm
process, and how long each took to get its compiled model (wall clock, one run each: a
ratio between rows of one run, not a timing to quote alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import sys, time, warnings
import numpy as np
import bayeslaw as bl
from bayeslaw.spec.catalog import load_spec
from bayeslaw.inference import modelcache
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import looped_sweep
from bayeslaw.inference.warmstart import LogDensity, find_mode

warnings.simplefilter("ignore")
modelcache.COMPILE_IN_CHILD = sys.argv[2] == "child"
frame, _ = looped_sweep(seed=3, points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8),
                        D_range=(3e7, 2e10))
data = bl.load(frame)
plan = make_plan(load_spec(law="looped_total"), data, data)
t0 = time.perf_counter()
before = len(modelcache.COMPILES)
entry, compiled = modelcache.compiled_for(plan, data)
seconds = time.perf_counter() - t0
entry.density.identity()
x0 = compiled.initial_point_func(4)
f = LogDensity(compiled)
rng = np.random.default_rng(0)
points = [x0] + [x0 + rng.normal(0, 0.5 * (1 + k / 20), len(x0)) for k in range(200)]
with np.errstate(all="ignore"):
    values = np.array([np.concatenate([[v], g]) for v, g in map(f, points)])
mode = find_mode(compiled, x0)
np.savez(sys.argv[1], values=values, mode=mode.point, seconds=seconds,
         origin=modelcache.origin(entry, before))
"""

RUNS = (("cold", "a", "child"), ("warm", "a", "child"), ("cold, compiled here", "b", "here"))


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    out = {}
    for name, cache, how in RUNS:
        env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={folder / cache}"}
        path = folder / f"{cache}-{how}-{len(out)}.npz"
        subprocess.run([sys.executable, "-c", CHILD, str(path), how], env=env, check=True,
                       capture_output=True)
        out[name] = np.load(path)
    warm = out["warm"]
    for name, _, _ in RUNS:
        run = out[name]
        same = [np.array_equal(x, y, equal_nan=True)
                for x, y in zip(run["values"], warm["values"], strict=True)]
        with np.errstate(invalid="ignore"):
            diff = np.nanmax(np.abs(run["values"] - warm["values"]), axis=0)
        print(f"{name}: compiled model in {float(run['seconds']):.1f} s "
              f"({run['origin']}); against the warm process: initial point identical "
              f"{same[0]}, {sum(same[1:])} of 200 points around it identical (largest "
              f"difference of the log density {diff[0]:.3g}, of the gradient "
              f"{diff[1:].max():.3g}); warm start's mode: largest difference "
              f"{np.abs(run['mode'] - warm['mode']).max():.3g}")


if __name__ == "__main__":
    main()
