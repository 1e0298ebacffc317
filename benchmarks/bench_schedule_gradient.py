"""What a log density + gradient costs with a schedule law, against the plain curve law.

    python benchmarks/bench_schedule_gradient.py [--calls 2000] [--rounds 5]

On the misfitting curves with the sweep's schedule (past 1e9 tokens, all 3,627 checkpoints;
``../shared/data`` needed), compiles bayeslaw's density of ``chinchilla`` (on D), of
``annealing_area`` and of ``multi_power`` (its annealing sum over 21 level boundaries per
point) and times them (``--thin K``: on at most K checkpoints a run, as the schedule
benchmark fits them) at each model's mode, interleaved round by round so that the machine's
load hits all three alike.  Prints microseconds per call (best round) and the ratio to
``chinchilla``.  A fourth row, ``chinchilla, no slope_split``, is the same law sampled in its
plain coordinates (the shipped spec samples ``E``, ``b`` and ``beta`` through ``slope_split``
since 2026-12-03, and the schedule laws' specs do not): the law's own cost, where the first row
includes the coordinates'.

Each density is called through a ``LogDensity`` that holds its compiled model, whose arrays
the call reads (before e316a03 only the last law's model stayed alive, and the earlier laws'
rows timed calls on freed memory: ``schedule_gradient_2026-12-0[25].md`` are void for them);
every timed call's log density must equal the one at the start, or the script stops.  With
``PYTHONPATH`` naming another checkout, that checkout's library is measured (the flat layout
of 23aba32 too): how ``bench_speed.py --targets`` compares two versions with one script.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):  # else the checkout PYTHONPATH names is measured
    sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
LAWS = ("chinchilla", "annealing_area", "multi_power")
PLAIN = "chinchilla, no slope_split"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--thin", type=int, help="keep at most this many checkpoints a run")
    args = ap.parse_args(argv)

    import bayeslaw as bl

    try:
        from bayeslaw.inference.modelcache import compiled_for
        from bayeslaw.inference.warmstart import LogDensity, find_mode
        from bayeslaw.model.plan import make_plan
    except ImportError:  # the flat layout (23aba32)
        from bayeslaw.modelcache import compiled_for
        from bayeslaw.plan import make_plan
        from bayeslaw.warmstart import LogDensity, find_mode
    print(f"bayeslaw from {Path(bl.__file__).parent}")

    data = bl.load_misfitting(SHARED / "misfitting" / "scaling_results.csv", schedule=True,
                              min_tokens=1e9)
    if args.thin:
        data = data.thin(args.thin)
    funcs = {}
    specs = {law: bl.load_spec(law=law) for law in LAWS}
    plain = specs["chinchilla"].to_dict()
    if plain["sampler"].get("slope_split"):
        plain["sampler"]["slope_split"] = []
        specs[PLAIN] = bl.ModelSpec.from_dict(plain)
    for law, spec in specs.items():
        entry, compiled = compiled_for(make_plan(spec, data), data)
        entry.density.identity()
        f = LogDensity(compiled)
        f.keep = compiled  # the arrays the call reads (LogDensity holds them since e316a03)
        mode = find_mode(compiled, compiled.initial_point_func(0))
        x = mode.point if mode is not None else compiled.initial_point_func(0)
        for _ in range(100):
            f(x)
        funcs[law] = (f, x, f(x)[0])
        if not np.isfinite(funcs[law][2]):
            raise SystemExit(f"{law}: the log density at its mode is {funcs[law][2]}")
    best = dict.fromkeys(specs, np.inf)
    for _ in range(args.rounds):
        for law, (f, x, logp) in funcs.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                f(x)
            best[law] = min(best[law], (time.perf_counter() - start) / args.calls)
            if f(x)[0] != logp:  # the call still reads this law's data
                raise SystemExit(f"{law}: log density {f(x)[0]} after the timed calls, "
                                 f"{logp} before")
    width = int(data.frame.groupby("run").size().max())
    print(f"misfitting with its schedule: {len(data)} points, {len(data.runs)} runs, at most "
          f"{width} a run (the model's padded layout: {len(data.runs)} x {width})")
    print("| law | us per density + gradient | ratio to chinchilla | log density at the mode |")
    print("| --- | --- | --- | --- |")
    for law in specs:
        print(f"| {law} | {best[law] * 1e6:.1f} | {best[law] / best['chinchilla']:.2f} | "
              f"{funcs[law][2]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
