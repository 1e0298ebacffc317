"""Is a compiled density the same when compiled in this process as when loaded from the cache?

Run: ``python benchmarks/bench_cold_warm.py`` (about 2 minutes). Two child processes share a
fresh PyTensor ``base_compiledir`` (so numba's cache starts empty): the first compiles the
default looped spec's density for a 3 x 3 sweep of 8 points per curve, the second loads it
from the cache. Each evaluates the log density and gradient at the initial point and at 200
points around it, and finds the warm start's mode. The report says which agree bit for bit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import sys, warnings
import numpy as np
import bayeslaw as bl
from bayeslaw.spec.catalog import load_spec
from bayeslaw.inference.modelcache import compiled_for
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import looped_sweep
from bayeslaw.inference.warmstart import LogDensity, find_mode

warnings.simplefilter("ignore")
frame, _ = looped_sweep(seed=3, points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8),
                        D_range=(3e7, 2e10))
data = bl.load(frame)
plan = make_plan(load_spec(law="looped_total"), data, data)
entry, compiled = compiled_for(plan, data)
entry.density.identity()
x0 = compiled.initial_point_func(4)
f = LogDensity(compiled)
rng = np.random.default_rng(0)
points = [x0] + [x0 + rng.normal(0, 0.5 * (1 + k / 20), len(x0)) for k in range(200)]
with np.errstate(all="ignore"):
    values = np.array([np.concatenate([[v], g]) for v, g in map(f, points)])
mode = find_mode(compiled, x0)
np.savez(sys.argv[1], values=values, mode=mode.point, from_disk=entry.density.from_disk)
"""


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={folder / 'pytensor'}"}
    out = {}
    for name in ("first", "second"):
        path = folder / f"{name}.npz"
        subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, check=True,
                       capture_output=True)
        out[name] = np.load(path)
    a, b = out["first"], out["second"]
    same = [np.array_equal(x, y, equal_nan=True) for x, y in zip(a["values"], b["values"],
                                                                  strict=True)]
    diff = np.nanmax(np.abs(a["values"] - b["values"]), axis=0)
    print(f"first process compiled (from disk: {bool(a['from_disk'])}), second loaded "
          f"(from disk: {bool(b['from_disk'])})")
    print(f"initial point: density and gradient identical: {same[0]}")
    print(f"200 points around it: {sum(same[1:])} identical; largest difference of the "
          f"log density {diff[0]:.3g}, of the gradient {diff[1:].max():.3g}")
    print(f"warm start's mode: largest difference {np.abs(a['mode'] - b['mode']).max():.3g}")


if __name__ == "__main__":
    main()
