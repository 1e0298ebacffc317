"""Which fits of the convergence matrix does the warm start's sd floor change?

    python benchmarks/results/warm_start_floors_2026-12-04/which_fits.py [--seeds 1,2,3,4,5]
        [--pairs SUBSTRINGS]

For every pair of ``benchmarks/pairs.py`` (its table and shipped spec, default settings) and
seed: the group sds that the mode search now holds at their prior's median because the mode
put them below their floor (their prior's 1% quantile, ``scale_floors``; ``Mode.held``).
Those fits start elsewhere than before; the others start exactly where they did.  No
sampling.  Where the mode search ends with no proper mode, it is run again without the
floor to say whether the floor made the difference.
"""
import argparse
import sys
import warnings
from pathlib import Path

import bayeslaw as bl
from bayeslaw.inference.modelcache import compiled_for
from bayeslaw.inference.warmstart import find_mode, scale_floors
from bayeslaw.model.plan import make_plan

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from pairs import select  # noqa: E402

warnings.filterwarnings("ignore")
parser = argparse.ArgumentParser()
parser.add_argument("--seeds", default="1,2,3,4,5")
parser.add_argument("--pairs", default=None, help="comma-separated substrings of pair names")
args = parser.parse_args()
seeds = [int(s) for s in args.seeds.split(",")]
print("| pair | seed | group sds held at their prior's median |")
print("| --- | --- | --- |")
for pair in select(args.pairs):
    try:
        data = bl.load(pair.load())
    except FileNotFoundError as err:
        print(f"| {pair.name} | - | table missing: {err} |")
        continue
    spec = bl.load_spec(pair.spec)
    entry, compiled = compiled_for(make_plan(spec, data), data)
    entry.density.identity()
    model = entry.model.model
    names, _, shapes = compiled.shape_info
    floors = scale_floors(model, spec, dict(zip(names, shapes, strict=True)))
    moot = spec.sampler.init != "mode"  # the fit starts from the prior: no warm start at all
    for seed in seeds:
        mode = find_mode(compiled, compiled.initial_point_func(seed), floors=lambda f=floors: f)
        if floors is None:
            text = "no learned group sd"
        elif mode is None:
            before = find_mode(compiled, compiled.initial_point_func(seed))
            text = ("no proper mode: the chains start from the prior's centre ("
                    + ("as without the floor)" if before is None else
                       "**without the floor they started at a mode**)"))
        else:
            text = ", ".join(mode.held) or "none"
        text += " (moot: the spec's init = \"prior\" skips the warm start)" if moot else ""
        print(f"| {pair.name} | {seed} | {text} |", flush=True)
