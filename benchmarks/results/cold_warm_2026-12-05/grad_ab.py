"""Microseconds per log density + gradient of reference entries' compiled models (and the
default spec on the bundled sweep), in the tree this runs from (``PYTHONPATH``).

    python grad_ab.py tests/fixtures/logp_reference.json entry1,entry2,...
"""

import ctypes
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import bayeslaw as bl
from bayeslaw.inference.compiled import compile_model
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.spec.model_spec import ModelSpec


def us_per_grad(compiled) -> tuple[float, float]:
    """Best of 5 x 2,000 calls after 50, and the log density at the start point."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    fn = proto(compiled.compiled_logp_func.address)
    n = int(compiled.n_dim)
    x = np.ascontiguousarray(compiled.initial_point_func(0), dtype=float)
    grad, logp = np.zeros(n), np.zeros(1)
    args = (n, x.ctypes.data, grad.ctypes.data, logp.ctypes.data,
            compiled.user_data.ctypes.data)
    for _ in range(50):
        fn(*args)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(2000):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / 2000)
    return best * 1e6, float(logp[0])


def main() -> None:
    warnings.simplefilter("ignore")
    ref = json.loads(Path(sys.argv[1]).read_text())
    out = {}
    for entry in sys.argv[2].split(","):
        r = ref[entry]
        plan = make_plan(ModelSpec.from_dict(r["spec"]), bl.load(pd.DataFrame(r["data"])))
        out[entry] = us_per_grad(compile_model(LossModel(plan).model).compiled)
    plan = make_plan(bl.load_spec(), bl.load(bl.bundled_path()))  # 3,000 points
    out["default@bundled_full"] = us_per_grad(compile_model(LossModel(plan).model).compiled)
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
