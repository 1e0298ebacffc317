"""The by-depth exit spec's T_m = 8 tail (issue 36 / 37): shipped sampler settings or another.

Usage, from the repository root: ``python tail.py SEEDS VARIANTS`` (comma-separated lists).
Each seed is its own simulated step sweep (``looped_step_sweep(q_logged=False,
exit_powers=0.3 / 1.0 / 1.8 at T_m = 2 / 4 / 8)``, the column ``entropy_weight`` = the truth's
``beta_H``: the truth ``bytm+ew`` of ../steps_exit_depth_2026-12-07/) fitted with
``models/looped_steps_latent_depths.toml`` and the fit's seed = the sweep's seed. Variants:
``shipped`` (the spec's settings: 1,000 draws a chain after 2,000 tuning, target accept 0.95,
nutpie's low-rank mass matrix), ``tune2000`` (the same, said again), ``draws2000`` (2,000
draws a chain), ``tune4000`` (tuning 4,000), ``diag`` (a diagonal mass matrix), ``fixed05``
(the depths' exponents about ``lambda_q`` with a fixed spread 0.5, ``pooling = "none"``: the
``fixed05`` of ../steps_exit_depth_2026-12-07/), ``noncentered`` (the depths' exponents
sampled as standard-normal offsets times the learned spread, ``centered = false``). Prints
each fit's diagnostics, its seconds, the worst R-hat's and the least bulk ESS's variables and
each depth's exponent (median, 90% interval) against the truth.
"""

import sys
import time
import tomllib
import warnings
from pathlib import Path

import arviz as az
import numpy as np

import bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep

BYTM = {2.0: 0.3, 4.0: 1.0, 8.0: 1.8}
SPEC = "models/looped_steps_latent_depths.toml"
# the spec's settings (the latent law's default spec's): draws 1,000, tune 2,000, target
# accept 0.95, low-rank mass matrix; tune2000 repeats them (a first list of variants took
# them for changes; its fits equal the shipped ones bit for bit: the same seed, the same draws)
VARIANTS = {"shipped": {}, "tune2000": {"tune": 2000}, "draws2000": {"draws": 2000},
            "tune4000": {"tune": 4000}}


def worst(table: "az.InferenceData", stat: str, largest: bool) -> str:
    """The variable (and its value) with the largest or smallest ``stat`` over its entries."""
    per = {v: float(np.nanmax(table[v].values) if largest else np.nanmin(table[v].values))
           for v in table.data_vars}
    name = (max if largest else min)(per, key=per.get)
    return f"{name} {per[name]:.3f}"


for seed in map(int, sys.argv[1].split(",")):
    table, truth = looped_step_sweep(q_logged=False, seed=seed, exit_powers=BYTM)
    table["entropy_weight"] = truth.params["beta_H"]
    data = bl.load(table)
    for variant in sys.argv[2].split(","):
        # the file's keys as a mapping, so that the table's entropy weight fixes beta_H (a
        # ModelSpec object is fitted as given: beta_H would be sampled, with a warning)
        spec = tomllib.loads(Path(SPEC).read_text())
        if variant == "diag":
            spec["sampler"] = {**spec.get("sampler", {}), "low_rank": False}
        if variant == "fixed05":  # the depths' exponents about lambda_q with a fixed spread
            for e in spec["effects"]:
                if e["param"] == "lambda_q":
                    e.update(pooling="none", scale=0.5)
                    e.pop("centered", None)
        if variant == "noncentered":  # the depths' exponents as z * spread about lambda_q
            for e in spec["effects"]:
                if e["param"] == "lambda_q":
                    e["centered"] = False
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = bl.fit(data, spec, seed=seed, progress=False, **VARIANTS.get(variant, {}))
        sec = time.perf_counter() - t0
        post = fit.idata.posterior
        rhat, ess = az.rhat(post), az.ess(post, method="bulk")
        print(f"## seed {seed} {variant}: {fit.diagnostics}; {sec:.0f} s; worst R-hat "
              f"{worst(rhat, 'rhat', True)}; least bulk ESS {worst(ess, 'ess', False)}")
        # the depths' exponents (identity link): sampled as values, or the population value
        # plus the deviations (non-centered: no `_value` variable)
        values = (post["lambda_q_by_T_m_value"] if "lambda_q_by_T_m_value" in post
                  else post["lambda_q"] + post["lambda_q_by_T_m"])
        x = np.asarray(values)
        for j, lvl in enumerate(values.coords["T_m_level"].values):
            lo, med, hi = np.quantile(x[..., j], [0.05, 0.5, 0.95])
            tv = BYTM[float(lvl)]
            print(f"  T_m {lvl:g}: {med:.3f} [{lo:.3f}, {hi:.3f}] truth {tv} "
                  f"{'in' if lo <= tv <= hi else 'OUT'}")
        sys.stdout.flush()
