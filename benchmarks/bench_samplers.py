"""Sampler benchmark on the bundled sweep: nutpie vs PyMC's NUTS on the same model.

Run: ``python benchmarks/bench_samplers.py [--pymc-draws 300]``.  Both samplers run in this
one process, one after the other, on the default spec and the bundled 15-curve sweep (3,000
points).  Compile time is timed separately (nutpie: ``compile_pymc_model``; PyMC: a 1-draw
call of ``pm.sample``, which compiles the logp / gradient functions into PyTensor's cache);
sampling time is the wall time of the sampling call alone.  ESS is the minimum bulk ESS over
the law coefficients (E, a, alpha, b, beta, c, gamma); ESS per second is that over sampling
time.  The PyMC side may run shorter (``--pymc-draws``) because it is slow; ESS per second
is a rate, so the ratio stays comparable.
"""

from __future__ import annotations

import argparse
import time
import warnings

import arviz as az
import numpy as np

import bayeslaw as bl
from bayeslaw.inference.modelcache import get_model
from bayeslaw.simulate import bundled_path

LAW = ["E", "a", "alpha", "b", "beta", "c", "gamma"]


def stats(idata, seconds):
    s = az.summary(idata, var_names=LAW)
    ess = float(s["ess_bulk"].min())
    return {"ess": ess, "rhat": float(s["r_hat"].max()),
            "div": int(idata.sample_stats["diverging"].sum()), "ess_per_s": ess / seconds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, help="default: the spec's")
    ap.add_argument("--tune", type=int, help="default: the spec's")
    ap.add_argument("--pymc-draws", type=int, default=300)
    ap.add_argument("--pymc-tune", type=int, default=300)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import nutpie
    import pymc as pm

    data = bl.load(bundled_path())
    spec = bl.load_spec(law="looped_total")
    lm = get_model(spec, data)
    draws = args.draws or spec.sampler.draws
    tune = args.tune or spec.sampler.tune
    accept = spec.sampler.target_accept
    rows = {}
    t = time.perf_counter()
    compiled = nutpie.compile_pymc_model(lm.model)
    compile_s = time.perf_counter() - t
    t = time.perf_counter()
    idata = nutpie.sample(compiled, draws=draws, tune=tune, chains=args.chains,
                          seed=args.seed, progress_bar=False, target_accept=accept,
                          low_rank_modified_mass_matrix=lm.plan.prefers_low_rank)
    rows["nutpie"] = {"compile_s": compile_s, "sample_s": time.perf_counter() - t,
                      "draws": f"{args.chains}x{draws}"}
    rows["nutpie"].update(stats(idata, rows["nutpie"]["sample_s"]))
    with lm.model:
        t = time.perf_counter()
        pm.sample(draws=1, tune=1, chains=1, progressbar=False, random_seed=args.seed,
                  compute_convergence_checks=False)
        compile_s = time.perf_counter() - t
        t = time.perf_counter()
        idata = pm.sample(draws=args.pymc_draws, tune=args.pymc_tune, chains=args.chains,
                          cores=2, target_accept=accept, progressbar=False,
                          random_seed=args.seed, compute_convergence_checks=False)
    rows["pymc"] = {"compile_s": compile_s, "sample_s": time.perf_counter() - t,
                    "draws": f"{args.chains}x{args.pymc_draws}"}
    rows["pymc"].update(stats(idata, rows["pymc"]["sample_s"]))
    print(f"{'sampler':8} {'draws':>8} {'compile s':>10} {'sample s':>9} {'min ESS':>8} "
          f"{'max R-hat':>9} {'div':>4} {'ESS/s':>8}")
    for name, r in rows.items():
        print(f"{name:8} {r['draws']:>8} {r['compile_s']:10.1f} {r['sample_s']:9.1f} "
              f"{r['ess']:8.0f} {r['rhat']:9.3f} {r['div']:4d} {r['ess_per_s']:8.2f}")
    ratio = rows["nutpie"]["ess_per_s"] / max(rows["pymc"]["ess_per_s"], np.finfo(float).tiny)
    print(f"ESS/s ratio nutpie / pymc: {ratio:.1f}x")


if __name__ == "__main__":
    main()
