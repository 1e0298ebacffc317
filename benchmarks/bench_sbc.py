"""Simulation-based calibration benchmark.

Run: ``python benchmarks/bench_sbc.py full --n-sims 100 --out sbc-full.jsonl`` (the default
looped-LM spec: partially pooled N and T_m effects on the data term, Student-t noise with a
per-run scale) and ``python benchmarks/bench_sbc.py power --n-sims 60`` (the reduced spec of
the CI test, matched and with the noise pinned far too small).

Both parts are resumable: each finished fit is appended to the ``--out`` file at once, and a
rerun with the same file skips the simulations already there, so a long run can be split
(``for n in 20 40 60 80 100; do python benchmarks/bench_sbc.py full --n-sims $n; done``).

``power`` estimates, by subsampling the per-fit ranks, how often a reduced SBC of
``--ci-sims`` simulations (the CI test's 20) rejects the narrow spec (power) and the matched
spec (false alarms) at family-wise level 0.01.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw import testing
from bayeslaw.simulate import design
from bayeslaw.spec.catalog import load_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.evaluation.test_checks import MATCHED, NARROW  # noqa: E402  (one definition of the specs)


def sweep(points: int) -> bl.LossData:
    frame = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, points))
    frame["loss"] = 3.0
    return bl.load(frame)


def full(args: argparse.Namespace) -> None:
    spec = load_spec(law="looped_total")
    params = [*spec.free_params, "sigma", "sigma_spread", "nu",
              *[f"{e.name}_sd" for e in spec.effects]]
    t0 = time.perf_counter()
    result = testing.sbc(sweep(args.points), spec, n_sims=args.n_sims, params=params,
                         seed=args.seed, path=args.out, draws=args.draws, tune=args.tune,
                         chains=args.chains, target_accept=0.95)
    print(f"{args.n_sims} fits of the default spec on a 3 x 3 sweep of {args.points} points "
          f"per curve; {time.perf_counter() - t0:.0f} s this call")
    print(result)
    print(result.details.to_string(float_format=lambda v: f"{v:.3g}"))
    testing.plot_sbc(result).savefig(Path(args.out).with_suffix(".png"), dpi=110)


def power(args: argparse.Namespace) -> None:
    data = sweep(8)
    kw = dict(draws=400, tune=300, chains=2, seed=args.seed, n_sims=args.n_sims)
    out = Path(args.out)
    arms = {"matched": testing.sbc(data, MATCHED, path=out.with_suffix(".matched.jsonl"), **kw),
            "narrow": testing.sbc(data, MATCHED, fit_spec=NARROW,
                                  path=out.with_suffix(".narrow.jsonl"), **kw)}
    rng = np.random.default_rng(0)
    for name, res in arms.items():
        ranks = res.values["ranks"]
        records = [{"ranks": {p: ranks[p][i] for p in ranks}, "n_ranks": res.values["n_ranks"],
                    "max_rhat": 1.0, "divergences": 0} for i in range(args.n_sims)]
        rejects = [not testing.sbc_verdict([records[i] for i in rng.choice(
            args.n_sims, args.ci_sims, replace=False)]).passed for _ in range(args.subsamples)]
        print(f"{name}: {args.n_sims} sims, verdict {res.verdict}; reduced SBC of "
              f"{args.ci_sims} sims rejects in {np.mean(rejects):.1%} of {args.subsamples} "
              "subsamples")
        print(res.details.to_string(float_format=lambda v: f"{v:.3g}"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=("full", "power"))
    ap.add_argument("--n-sims", type=int, default=100)
    ap.add_argument("--points", type=int, default=12)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--ci-sims", type=int, default=20)
    ap.add_argument("--subsamples", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="sbc-full.jsonl")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    full(args) if args.part == "full" else power(args)


if __name__ == "__main__":
    main()
