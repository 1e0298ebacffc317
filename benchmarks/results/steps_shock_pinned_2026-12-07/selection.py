"""Selection seeds for the checkpoint shock as `looped_steps`' default (rule in README.md).

For each seed, the simulated step sweep with and without a checkpoint shock (sd 0.01), the
exit step T = 4 of the T_m = 4 runs held out, fitted with the shipped spec and with
`likelihood.shock = HalfNormal(0.02)`; one row per fit, printed as soon as it ends.

    python benchmarks/results/steps_shock_pinned_2026-12-07/selection.py --seeds 6,7,8,9,10
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import bayeslaw as bl
from bayeslaw.posterior.noise import predictive_log_density
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.model_spec import ModelSpec


def spec_of(with_shock: bool) -> ModelSpec:
    d = bl.load_spec("looped_steps").to_dict()
    if with_shock:
        d["likelihood"]["shock"] = {"dist": "HalfNormal", "sigma": 0.02}
    return ModelSpec.from_dict(d)


def row(seed: int, sweep_shock: float, with_shock: bool, draws: int | None = None) -> str:
    frame, _ = looped_step_sweep(seed=seed, shock=sweep_shock)
    data = bl.load(frame)
    held = ((data.frame["T_m"] == 4) & (data.frame["T"] == 4)).to_numpy()
    train = data.select(~held, "T = 4 of T_m = 4 held out")
    target = data.frame[held].reset_index(drop=True)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = bl.fit(train, spec=spec_of(with_shock), seed=seed, progress=False, draws=draws)
    secs = time.perf_counter() - start
    warm = "failed" if any("warm start found no" in str(w.message) for w in caught) else "ok"
    diag = fit.diagnostics
    pred = bl.predict(fit, target, seed=seed)
    y = target["loss"].to_numpy()
    lpd = predictive_log_density(fit, target, seed=seed)
    per = []
    for _, idx in target.groupby("run").indices.items():
        t = pred.table.iloc[idx]
        per.append([np.mean((y[idx] >= t[f"lower_{p}"]) & (y[idx] <= t[f"upper_{p}"]))
                    for p in ("50", "90")] + [float(np.mean(lpd[idx]))])
    per = np.mean(per, axis=0)
    mae = np.median(np.abs(pred.table["median"].to_numpy() - y))
    tau = (f"{np.median(fit.draws('shock')):.4f}" if with_shock else "-")
    return (f"| {seed} | {sweep_shock} | {'shock' if with_shock else 'shipped'} | "
            f"{per[0]:.2f} | {per[1]:.2f} | {per[2]:.3f} | {mae:.4f} | {secs:.0f} | {warm} | "
            f"{diag.max_rhat:.3f} | {diag.divergences} | {'; '.join(diag.failures) or 'ok'} | "
            f"{tau} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="6,7,8,9,10")
    ap.add_argument("--shocked-only", action="store_true",
                    help="only the shocked sweep fitted with the shock")
    ap.add_argument("--draws", type=int, default=None, help="draws a chain (the spec's: 2000)")
    args = ap.parse_args()
    print("| seed | sweep shock sd | spec | in 50% | in 90% | mean log density | median abs. "
          "error | fit s | warm start | worst R-hat | divergences | thresholds | shock sd |")
    print("| " + " | ".join(["---"] * 13) + " |", flush=True)
    for seed in [int(s) for s in args.seeds.split(",")]:
        for sweep_shock in (0.01,) if args.shocked_only else (0.01, 0.0):
            for with_shock in (True,) if args.shocked_only else (False, True):
                print(row(seed, sweep_shock, with_shock, args.draws), flush=True)


if __name__ == "__main__":
    main()
