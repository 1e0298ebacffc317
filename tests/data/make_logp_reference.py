"""Regenerate tests/data/logp_reference.json: the log density and its gradient of every
shipped spec's model at fixed points, the reference a new graph must reproduce.

Run from the repository root of the commit whose graph is the reference
(``python tests/data/make_logp_reference.py``); the stored file was made at 5d06e18.  Each
entry holds everything needed to rebuild the model without bayeslaw's simulator (the spec as
a dict and the data table), the point (unconstrained coordinates: the initial point moved by
seeded N(0, 0.3) steps) and the values there: the log density and its gradient per value
variable.

``--missing`` adds entries only for the shipped specs the file lacks, keeping the others as
they are: the schedule laws' specs (``annealing_area``, ``multi_power`` and their looped
variants) were added so at the commit that added them.  A table with a learning-rate schedule
is stored without the terms ``bl.load`` computes from it (they are computed again on load).
"""

import json
import sys
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw.data.schedules import TERM_COLUMNS
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import bundled_path, looped_sweep
from bayeslaw.spec.catalog import available_specs
from bayeslaw.spec.model_spec import ModelSpec
from tests.conftest import SMALL
from tests.test_laws_more import synthetic

MODE = None  # PyTensor's default (C); FAST_COMPILE fails on iso_depth's many-input Add
OUT = Path(__file__).with_name("logp_reference.json")


def evaluate(spec: ModelSpec, frame, point: dict) -> tuple[float, dict[str, list]]:
    """logp and its gradient per value variable at ``point`` (unconstrained coordinates)."""
    model = LossModel(make_plan(spec, bl.load(frame))).model
    logp = model.compile_logp(mode=MODE)
    dlogp = model.compile_dlogp(mode=MODE)
    values = {k: np.asarray(v, float) for k, v in point.items()}
    flat = np.asarray(dlogp(values), float)
    grad, at = {}, 0
    for var in model.value_vars:
        size = int(np.size(values[var.name]))
        grad[var.name] = flat[at:at + size].reshape(np.shape(values[var.name])).tolist()
        at += size
    return float(logp(values)), grad


def tables():
    """(entry, spec name, data): every shipped spec on a small table, and the bundled sweep."""
    for name in available_specs():
        if name == "looped_total":
            yield name, name, bl.load(looped_sweep(seed=11, **SMALL)[0])
            yield "looped_total@bundled", name, bl.load(bundled_path())
        else:
            yield name, name, synthetic(name)


def main() -> None:
    missing = "--missing" in sys.argv[1:]
    out = json.loads(OUT.read_text()) if missing else {}
    for i, (entry, name, data) in enumerate(tables()):
        if entry in out:
            continue
        spec = bl.load_spec(name)
        model = LossModel(make_plan(spec, data)).model
        rng = np.random.default_rng(100 + i)
        point = {k: (np.asarray(v, float) + rng.normal(0.0, 0.3, np.shape(v))).tolist()
                 for k, v in model.initial_point().items()}
        frame = data.frame.drop(columns=[c for c in TERM_COLUMNS if c in data.frame])
        logp, grad = evaluate(spec, frame, point)
        out[entry] = {"spec": spec.to_dict(), "data": {c: frame[c].tolist() for c in frame},
                     "point": point, "logp": logp, "grad": grad}
        norm = np.linalg.norm(np.concatenate([np.ravel(g) for g in grad.values()]))
        print(f"{entry}: logp {logp:.6f}, |grad| {norm:.4g}")
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
