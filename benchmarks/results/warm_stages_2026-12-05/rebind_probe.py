"""Can a pickled NUMBA-mode logp function serve another data set of the same structure?

    python benchmarks/results/warm_stages_2026-12-05/rebind_probe.py   # rebind_probe_output.txt

Builds the default spec's model on the bundled sweep, evaluates and pickles its logp function
(``compiled._callbacks``), then builds it on a copy whose losses are shifted by +0.01 (same
structure, other data), unpickles the first function, sets each of its shared variables to
the second model's value by name, and compares its log density and gradient at the initial
point with the second model's own function.  Also prints the seconds of each step.
"""

import importlib
import pickle
import time
import warnings

import numpy as np


def main() -> None:
    warnings.simplefilter("ignore")
    bl = importlib.import_module("bayeslaw")
    get_model = importlib.import_module("bayeslaw.inference.modelcache").get_model
    compiled = importlib.import_module("bayeslaw.inference.compiled")
    data = bl.load(bl.bundled_path())
    other = bl.load(data.frame.assign(loss=data.frame["loss"] + 0.01))
    first = compiled._callbacks(get_model(bl.load_spec(), data).model)
    x = np.asarray(first["initial_point_fn"](1), float)
    c_logp, _ = first["logp_pt"](x)  # before the second model exists (the model cache may
    start = time.perf_counter()      # give both the same PyMC model, with the new data set)
    blob = pickle.dumps(first["logp_pt"])
    print(f"pickle {len(blob)} bytes: {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    second = compiled._callbacks(get_model(bl.load_spec(), other).model)
    print(f"_callbacks of the second model: {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    loaded = pickle.loads(blob)
    print(f"unpickle: {time.perf_counter() - start:.2f} s")
    u_logp, _ = loaded(x)
    print(f"unpickled, before rebinding: logp {float(u_logp):.12f} (the first data's: "
          f"{float(u_logp) == float(c_logp)})")
    own = {v.name: v for v in second["logp_pt"].get_shared()}
    names = sorted(v.name for v in loaded.get_shared())
    print(f"shared variables: {len(names)}; the same names as the second model's: "
          f"{names == sorted(own)}")
    for var in loaded.get_shared():
        var.set_value(own[var.name].get_value())
    a_logp, a_grad = loaded(x)
    b_logp, b_grad = second["logp_pt"](x)
    print(f"logp: rebound {float(a_logp):.12f}, second model's own {float(b_logp):.12f}, "
          f"first model's {float(c_logp):.12f}")
    print(f"rebound == own: logp {float(a_logp) == float(b_logp)}, "
          f"gradient max |diff| {np.max(np.abs(np.asarray(a_grad) - np.asarray(b_grad))):.3g}")


if __name__ == "__main__":
    main()
