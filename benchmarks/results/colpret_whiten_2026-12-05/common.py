"""What ``whiten.py`` and ``pilot_probe.py`` share: the subset of ColPret's context, the
printout of the sampler's step sizes and leapfrog steps (factored out after the runs of the
README; the same code as each script had)."""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
import bench_peers as bp  # noqa: E402

#: The four curves with the worst R-hat in
#: ../peers_converge_2026-12-04/colpret_values_diag_seed1.txt
WORST = ("pythia-70m", "pythia-2.8b-deduped", "GPT-3 Large", "pythia-1b-v0")


def subset(which):
    """``(args, context rows, curves kept)``: ``worst``, ``all`` or 24 curves drawn with
    numpy seed ``which``; each curve's context thinned to 24 points, no target row read.
    With ``DROP_FIRST=1`` each curve's first context point (its smallest x) is left out."""
    args = bp.parse_args(["--datasets", "ColPret", "--seed", "1", "--max-context", "24"])
    frame = bp.prepared(bp.DATA, "ColPret", args)
    runs = sorted(frame.run.unique())
    if which == "worst":
        keep = [r for r in runs if r.split("|")[-1] in WORST]
    elif which == "all":
        keep = runs
    else:
        keep = list(np.random.default_rng(int(which)).choice(runs, 24, replace=False))
    context = frame[(frame.role == "context") & frame.run.isin(keep)]
    if os.environ.get("DROP_FIRST"):  # a diagnosis: each curve's first context x left out
        first = context.groupby("run")["D"].transform("min")
        context = context[context["D"] > first]
    return args, context, keep


def print_sampler(fit):
    """The fit's diagnostics, then its step sizes and leapfrog steps per chain."""
    print(fit.diagnostics)
    stats = fit.idata.sample_stats
    for k in ("step_size", "n_steps"):
        print(k, np.round(stats[k].values.astype(float).mean(axis=1), 4).tolist())
