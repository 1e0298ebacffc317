"""us per logp+gradient of shipped specs' compiled models in the tree this runs from."""
import ctypes, json, math, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
import numpy as np
import pandas as pd
import bayeslaw as bl
from bayeslaw.inference.compiled import compile_model
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.spec.model_spec import ModelSpec

def us_per_grad(compiled):
    proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    fn = proto(compiled.compiled_logp_func.address)
    n = int(compiled.n_dim)
    x = np.ascontiguousarray(compiled.initial_point_func(0), dtype=float)
    grad, logp = np.zeros(n), np.zeros(1)
    args = (n, x.ctypes.data, grad.ctypes.data, logp.ctypes.data, compiled.user_data.ctypes.data)
    for _ in range(50):
        fn(*args)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(2000):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / 2000)
    return best * 1e6, float(logp[0])

out = {}
ref = json.loads(Path(sys.argv[1]).read_text())
for entry in sys.argv[2].split(","):
    r = ref[entry]
    model = LossModel(make_plan(ModelSpec.from_dict(r["spec"]), bl.load(pd.DataFrame(r["data"])))).model
    out[entry] = us_per_grad(compile_model(model).compiled)
    if entry == "looped_total@bundled" or True:
        pass
# the bundled sweep with the default spec (3,000 points)
m = LossModel(make_plan(bl.load_spec(), bl.load(bl.bundled_path()))).model
out["default@bundled_full"] = us_per_grad(compile_model(m).compiled)
print("RESULT " + json.dumps(out))
