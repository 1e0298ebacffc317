"""The tests' two density functions against the one (tests/density.py), on stored references.

    python benchmarks/results/suite_density_2026-12-05/values.py looped_steps_latent \
        looped_steps iso_depth_eff curve_bend chinchilla_curves_walk     # values.txt

Run from the repository root. Prints, per reference entry, the seconds of ``compile_logp``
plus PyMC's ``compile_dlogp`` (JAX where it can trace the graph, as the tests) and of
``compile_logp_dlogp``, each on a freshly built model, and how far the values differ. (One
process, in which the first functions warm shared caches; the suite's saving is in the
README.)
"""

import json
import sys
import time

import numpy as np
import pandas as pd

import bayeslaw as bl
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.spec.model_spec import ModelSpec
from tests.density import compile_kwargs, compile_logp, compile_logp_dlogp

REFERENCE = json.loads(open("tests/fixtures/logp_reference.json").read())


def model_of(ref: dict):
    spec = ModelSpec.from_dict(ref["spec"])
    return LossModel(make_plan(spec, bl.load(pd.DataFrame(ref["data"])))).model


def main() -> None:
    for entry in sys.argv[1:]:
        ref = REFERENCE[entry]
        point = {k: np.asarray(v, float) for k, v in ref["point"].items()}
        model = model_of(ref)
        t0 = time.perf_counter()
        logp = compile_logp(model)(point)
        grad = np.asarray(model.compile_dlogp(**compile_kwargs(model))(point))
        t1 = time.perf_counter()
        model = model_of(ref)
        t2 = time.perf_counter()
        logp1, grad1 = compile_logp_dlogp(model)(point)
        t3 = time.perf_counter()
        rel = abs(logp1 / logp - 1)
        grad_rel = np.max(np.abs(grad1 - grad)) / np.max(np.abs(grad))
        print(f"{entry}: two functions {t1 - t0:.2f} s, one {t3 - t2:.2f} s; logp differs by "
              f"{rel:.2e} (relative), gradient by {grad_rel:.2e} (of its largest entry)",
              flush=True)


if __name__ == "__main__":
    main()
