"""Three of those curves sampled alone given sim_curves.py's shared values (rounded): each one's
diagnostics at the spec's 4 x 1,000 draws.

    python benchmarks/results/by_curve_2026-12-07/per_curve.py
"""
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "inference"))
import test_by_curve as T  # noqa: E402

import bayeslaw as bl  # noqa: E402
from bayeslaw.inference import by_curve as bc  # noqa: E402

T.CURVES = 24  # as sim_curves.py
frame, truth = T.simulate(T.SEED)
shared = {"effects": {"m": (0.0, 0.17)}, "sigma": (-4.68, 0.31), "nu": 13.18, "own_scale": []}
spec = bc.curve_spec(bl.load_spec(T.SPEC), shared)
for run in ["c00", "c01", "c02"]:
    one = frame[(frame["run"] == run) & (frame["D"] <= 1.0)].assign(run="curve")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bl.fit(bl.load(one), spec, seed=1, progress=False)
    print(run, fit.diagnostics)
