"""What a log density + gradient costs with a schedule law, against the plain curve law.

    python benchmarks/bench_schedule_gradient.py [--calls 2000] [--rounds 5]

On the misfitting curves with the sweep's schedule (past 1e9 tokens, all 3,627 checkpoints;
``../shared/data`` needed), compiles bayeslaw's density of ``chinchilla`` (on D), of
``annealing_area`` and of ``multi_power`` (its annealing sum over 21 level boundaries per
point) and times them (``--thin K``: on at most K checkpoints a run, as the schedule
benchmark fits them) at each model's mode, interleaved round by round so that the machine's
load hits all three alike.  Prints microseconds per call (best round) and the ratio to
``chinchilla``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
LAWS = ("chinchilla", "annealing_area", "multi_power")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--thin", type=int, help="keep at most this many checkpoints a run")
    args = ap.parse_args(argv)

    import bayeslaw as bl
    from bayeslaw.inference.modelcache import compiled_for
    from bayeslaw.inference.warmstart import LogDensity, find_mode
    from bayeslaw.model.plan import make_plan

    data = bl.load_misfitting(SHARED / "misfitting" / "scaling_results.csv", schedule=True,
                              min_tokens=1e9)
    if args.thin:
        data = data.thin(args.thin)
    funcs = {}
    for law in LAWS:
        entry, compiled = compiled_for(make_plan(bl.load_spec(law=law), data), data)
        entry.density.identity()
        f = LogDensity(compiled)
        mode = find_mode(compiled, compiled.initial_point_func(0))
        x = mode.point if mode is not None else compiled.initial_point_func(0)
        for _ in range(100):
            f(x)
        funcs[law] = (f, x)
    best = dict.fromkeys(LAWS, np.inf)
    for _ in range(args.rounds):
        for law, (f, x) in funcs.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                f(x)
            best[law] = min(best[law], (time.perf_counter() - start) / args.calls)
    width = int(data.frame.groupby("run").size().max())
    print(f"misfitting with its schedule: {len(data)} points, {len(data.runs)} runs, at most "
          f"{width} a run (the model's padded layout: {len(data.runs)} x {width})")
    print("| law | us per density + gradient | ratio to chinchilla |")
    print("| --- | --- | --- |")
    for law in LAWS:
        print(f"| {law} | {best[law] * 1e6:.1f} | {best[law] / best['chinchilla']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
