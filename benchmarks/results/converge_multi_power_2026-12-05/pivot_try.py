"""One multi_power fit of GPT-3's curves (ColPret) with the spec's reference D moved, to see
whether the b-beta ridge comes from the reference point lying below the data.

    python benchmarks/results/converge_multi_power_2026-12-05/pivot_try.py --seed 6 --D 3e10 \
        [--sampler '{"slope_split": ["E", "b", "beta"]}'] [--kappa-mu 6.905]

Prints the fit's diagnostics line and its diagnosis (selection seeds only: 6 and up).
"""
import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

import pairs  # noqa: E402

import bayeslaw as bl  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, required=True)
ap.add_argument("--D", type=float, required=True)
ap.add_argument("--sampler", default="{}")
ap.add_argument("--kappa-mu", type=float, help="kappa's LogNormal mu (a rate per D_ref)")
args = ap.parse_args()
if args.seed < 6:
    sys.exit("selection seeds are 6 and up")
spec = bl.load_spec("multi_power").to_dict()
spec["reference"]["D"] = args.D
spec["sampler"].update(json.loads(args.sampler))
if args.kappa_mu is not None:
    spec["priors"]["kappa"]["mu"] = args.kappa_mu
fit = bl.fit(bl.load(pairs.colpret_gpt3_schedule()), bl.ModelSpec.from_dict(spec),
             seed=args.seed, progress=False)
print(fit.diagnostics)
