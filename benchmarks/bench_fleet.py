"""Fleets of fits, serial against a local Dask cluster of 2 workers, side by side in one run.

Run: ``python benchmarks/bench_fleet.py --out benchmarks/results/fleet_2026-12-02``
(writes ``.csv`` with one row per measurement and ``.md`` with the ratios).

1. **Backtest**: ``kfold:5`` on the bundled sweep with its default spec and settings
   (4 x (1,000 + 1,000), the least-squares baseline with 100 bootstraps), serially and with
   ``workers=2``. The serial run goes first, so the numba cache on disk is warm for the
   workers, as on a second run of a user's.
2. **SBC**: 40 simulations of the reduced spec of the CI test (``tests/test_checks.py``:
   no group effects, normal noise) on its 3 x 3 sweep of 8 points per curve, 2 x (300 +
   400), serially and with ``workers=2``.
3. **Per-task time of the default spec's SBC** (for the estimate of a cluster): a few
   simulations of ``bench_sbc.py full``'s set-up (the default looped spec on a 3 x 3 sweep
   of 12 points per curve, 4 x (1,000 + 1,000), target_accept 0.95), serially, each fit's
   seconds from the progress records.
4. **Scheduler overhead**: 200 tasks that do nothing on a running 2-worker cluster, and the
   start of a 2-worker cluster.

Wall times include everything a user waits for (the cluster's start and its workers' first
compile of each structure). Each fit on 2 cores uses both (nutpie's chains in threads), so
2 workers of 1 core each are expected to give about 1x here: the path is what is measured.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayeslaw as bl
from bayeslaw import testing
from bayeslaw.inference import fleet
from bayeslaw.simulate import design
from bayeslaw.spec.catalog import load_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.evaluation.test_checks import MATCHED, SBC_SAMPLER  # noqa: E402  (the CI SBC's spec)


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def sbc_design(points: int) -> bl.LossData:
    frame = design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, points))
    frame["loss"] = 3.0
    return bl.load(frame)


def backtests(rows: list[dict]) -> None:
    data = bl.load(bl.bundled_path())
    spec = load_spec(law="looped_total")
    serial, s = timed(bl.backtest, data, spec, "kfold:5", seed=2)
    rows.append({"part": "backtest kfold:5", "how": "serial", "wall_s": s})
    dask, d = timed(bl.backtest, data, spec, "kfold:5", seed=2, workers=2)
    rows.append({"part": "backtest kfold:5", "how": "2 workers", "wall_s": d})
    same = serial.table.equals(dask.table)
    rows.append({"part": "backtest kfold:5", "how": "tables identical", "wall_s": float(same)})
    print(f"backtest: serial {s:.1f} s, 2 workers {d:.1f} s, identical {same}", flush=True)


def sbcs(rows: list[dict], out: Path) -> None:
    data = sbc_design(8)
    kw = dict(n_sims=40, seed=1, **SBC_SAMPLER)
    for how, where in (("serial", {}), ("2 workers", {"workers": 2})):
        path = out.with_name(out.name + f"_sbc_{how.replace(' ', '_')}.jsonl")
        path.unlink(missing_ok=True)
        res, t = timed(testing.sbc, data, MATCHED, path=path, **where, **kw)
        rows.append({"part": "SBC 40 sims (reduced spec)", "how": how, "wall_s": t})
        print(f"SBC {how}: {t:.1f} s, {res.verdict}", flush=True)
        path.unlink()
        if how == "serial":
            first = res.values
    rows.append({"part": "SBC 40 sims (reduced spec)", "how": "records identical",
                 "wall_s": float(first == res.values)})


def default_spec_tasks(rows: list[dict], n: int) -> None:
    spec = load_spec(law="looped_total")
    params = [*spec.free_params, "sigma"]
    data = sbc_design(12)
    seconds = []

    def done(_: int, outcome: fleet.Outcome) -> None:
        seconds.append(outcome.seconds)

    real = fleet.run

    def run(tasks, **kwargs):
        sizes.extend(len(pickle.dumps(t)) for t in tasks)
        return real(tasks, **{**kwargs, "on_done": done})

    sizes: list[int] = []
    fleet.run = run
    try:
        testing.sbc(data, spec, n_sims=n, params=params, seed=7, target_accept=0.95)
    finally:
        fleet.run = real
    for i, s in enumerate(seconds):
        rows.append({"part": "default spec SBC: one simulation", "how": f"sim {i}",
                     "wall_s": s})
    rows.append({"part": "default spec SBC: task payload", "how": "bytes (mean)",
                 "wall_s": float(np.mean(sizes))})
    print(f"default spec SBC tasks: {np.round(seconds, 1)} s; payload {np.mean(sizes):.0f} B",
          flush=True)


def overhead(rows: list[dict]) -> None:
    import distributed

    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(2)
        rows.append({"part": "cluster start (2 workers)", "how": "2 workers",
                     "wall_s": time.perf_counter() - t0})
        tasks = [fleet.Task(f"noop {i}", len, ((),)) for i in range(200)]
        fleet.run(tasks[:10], client=client)  # the plugin and imports, once
        _, t = timed(fleet.run, tasks, client=client)
        rows.append({"part": "200 empty tasks", "how": "2 workers", "wall_s": t})
        print(f"200 empty tasks: {t:.2f} s ({t / 200 * 1e3:.1f} ms per task)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="benchmarks/results/fleet")
    ap.add_argument("--default-sims", type=int, default=4)
    ap.add_argument("--only", default="backtest,sbc,default,overhead")
    args = ap.parse_args()
    out = Path(args.out)
    warnings.simplefilter("ignore", bl.BayeslawWarning)  # convergence is not measured here
    rows: list[dict] = []
    parts = {"backtest": lambda: backtests(rows), "sbc": lambda: sbcs(rows, out),
             "default": lambda: default_spec_tasks(rows, args.default_sims),
             "overhead": lambda: overhead(rows)}
    for name in args.only.split(","):
        parts[name]()
        pd.DataFrame(rows).to_csv(out.with_suffix(".csv"), index=False)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
