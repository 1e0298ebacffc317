"""A checkpoint shock on the simulated step sweep: fitted with and without `likelihood.shock`.

The sweep (`bl.simulate.looped_step_sweep`, seed given) with every row of a checkpoint shifted
by one N(0, 0.01) draw; the exit step T = 4 of the T_m = 4 runs held out (its q-weighted
total stays: the link), forecast with `bl.predict` and scored per curve: the 50% / 90%
bands' share of the held-out points, and the mean log predictive density.  Selection seed:
not a reported seed of any other table.

    python benchmarks/results/steps_shock_2026-12-07/shock.py --seed 11 [--without]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bayeslaw as bl
from bayeslaw.posterior.noise import predictive_log_density
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.model_spec import ModelSpec

SHOCK_SD = 0.01


def spec_of(with_shock: bool) -> ModelSpec:
    d = bl.load_spec("looped_steps").to_dict()
    if with_shock:
        d["likelihood"]["shock"] = {"dist": "HalfNormal", "sigma": 0.02}
    return ModelSpec.from_dict(d)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--without", action="store_true", help="the shipped spec, no shock term")
    args = ap.parse_args()
    frame, truth = looped_step_sweep(seed=args.seed, shock=SHOCK_SD)
    data = bl.load(frame)
    held = ((data.frame["T_m"] == 4) & (data.frame["T"] == 4)).to_numpy()
    train = data.select(~held, "T = 4 of T_m = 4 held out")
    target = data.frame[held].reset_index(drop=True)
    start = time.perf_counter()
    fit = bl.fit(train, spec=spec_of(not args.without), seed=args.seed)
    secs = time.perf_counter() - start
    print(f"spec: looped_steps{'' if args.without else ' + shock HalfNormal(0.02)'}; "
          f"sweep seed {args.seed}, true shock sd {SHOCK_SD}; fit {secs:.0f} s")
    print(fit.diagnostics)
    if not args.without:
        tau = fit.draws("shock")
        print(f"shock sd: median {np.median(tau):.4f}, 90% "
              f"[{np.quantile(tau, 0.05):.4f}, {np.quantile(tau, 0.95):.4f}] (truth {SHOCK_SD})")
    pred = bl.predict(fit, target, seed=args.seed)
    y = target["loss"].to_numpy()
    lpd = predictive_log_density(fit, target, seed=args.seed)
    rows = []
    for run, idx in target.groupby("run").indices.items():
        t = pred.table.iloc[idx]
        inside = {p: np.mean((y[idx] >= t[f"lower_{p}"]) & (y[idx] <= t[f"upper_{p}"]))
                  for p in ("50", "90")}
        rows.append((run, inside["50"], inside["90"], float(np.mean(lpd[idx]))))
    print("| held-out curve | in 50% band | in 90% band | mean log density |")
    print("| --- | --- | --- | --- |")
    for run, a, b, c in rows:
        print(f"| {run} | {a:.2f} | {b:.2f} | {c:.3f} |")
    print(f"| all ({len(rows)} curves) | {np.mean([r[1] for r in rows]):.2f} | "
          f"{np.mean([r[2] for r in rows]):.2f} | {np.mean([r[3] for r in rows]):.3f} |")
    abs_err = np.abs(pred.table["median"].to_numpy() - y)
    print(f"median absolute error of the median: {np.median(abs_err):.4f}")


if __name__ == "__main__":
    main()
