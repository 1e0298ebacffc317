"""Why the warm start finds no mode with `likelihood.shock` (seed-11 training table of shock.py).

Runs the warm start's steps one at a time with their seconds: L-BFGS from nutpie's start, the
largest gradient entries left (by variable), the sd floors, and the curvature's check.  The
first run (`mode_probe.txt`) labelled coordinates from `shape_info` (wrong: it lists the
deterministics too) and stopped at the floors; labelled from `model.free_RVs` since
(`mode_probe_labelled.txt`).

    python benchmarks/results/steps_shock_2026-12-07/mode_probe.py
"""

from __future__ import annotations

import time

import numpy as np
from shock import SHOCK_SD, spec_of  # noqa: E402  (this folder)

import bayeslaw as bl
from bayeslaw.inference import warmstart as ws
from bayeslaw.inference.modelcache import compiled_for
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import looped_step_sweep

frame, _ = looped_step_sweep(seed=11, shock=SHOCK_SD)
data = bl.load(frame)
held = ((data.frame["T_m"] == 4) & (data.frame["T"] == 4)).to_numpy()
train = data.select(~held, "T = 4 of T_m = 4 held out")
spec = spec_of(True)
plan = make_plan(spec, data, train)
entry, compiled = compiled_for(plan, train)
entry.density.identity()
names, _, shapes = compiled.shape_info
size = dict(zip(names, shapes, strict=True))
model = entry.model.model  # nutpie lays the coordinates out as model.free_RVs' values
owner = np.concatenate([[model.rvs_to_values[rv].name]
                        * int(np.prod(size[model.rvs_to_values[rv].name], dtype=int))
                        for rv in model.free_RVs])
density = ws.LogDensity(compiled)
start = compiled.initial_point_func(11)
t = time.perf_counter()
point = ws._maximize(density, np.asarray(start, float), 20000, 50, 1e-3, None)
print(f"L-BFGS: {time.perf_counter() - t:.1f} s, {density.calls} evaluations, "
      f"{len(start)} coordinates")
logp, grad = density(point)
order = np.argsort(-np.abs(grad))[:8]
print("logp", logp, "largest |gradient|:",
      [(owner[i], round(float(grad[i]), 4)) for i in order])
floors = ws.scale_floors(entry.model.model, spec, dict(zip(names, shapes, strict=True)))
below = point < floors.lower
print("below their floor:", sorted(set(owner[below])))
for name in ("shock_log__", "sigma_log__", "sigma_spread_log__"):
    if name in names:
        print(name, point[owner == name][:3])
t = time.perf_counter()
mode = ws._laplace(density, point)
print(f"curvature: {time.perf_counter() - t:.1f} s, proper: {mode is not None}")
if mode is None:
    objective = ws._negative(density)
    n = len(point)
    step = 1e-5 * np.maximum(1.0, np.abs(point))
    hess = np.empty((n, n))
    for i in range(n):
        up, down = point.copy(), point.copy()
        up[i] += step[i]
        down[i] -= step[i]
        hess[:, i] = (objective(up)[1] - objective(down)[1]) / (2 * step[i])
    hess = 0.5 * (hess + hess.T)
    w, v = np.linalg.eigh(hess)
    print("smallest eigenvalues:", w[:5])
    for k in range(3):
        top = np.argsort(-np.abs(v[:, k]))[:5]
        print(f"  eigenvector {k}:", [(owner[i], round(float(v[i, k]), 3)) for i in top])
