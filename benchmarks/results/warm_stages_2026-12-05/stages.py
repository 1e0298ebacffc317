"""Where a warm process's seconds go before sampling (bundled sweep, default spec).

    python benchmarks/results/warm_stages_2026-12-05/stages.py     # run twice: caches warm

Prints the seconds of: importing bayeslaw; importing pymc, pytensor and nutpie; building the
PyMC model; ``compiled._callbacks`` (PyMC's logp graph, PyTensor's rewriting, the functions'
linking and their cache keys); then ``compile_model`` once more (the same again, plus loading
numba's cached callbacks).
"""

import importlib
import time
import warnings


def main() -> None:
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    bl = importlib.import_module("bayeslaw")
    t1 = time.perf_counter()
    for name in ("pymc", "pytensor", "nutpie"):
        importlib.import_module(name)
    t2 = time.perf_counter()
    get_model = importlib.import_module("bayeslaw.inference.modelcache").get_model
    model = get_model(bl.load_spec(), bl.load(bl.bundled_path())).model
    t3 = time.perf_counter()
    compiled = importlib.import_module("bayeslaw.inference.compiled")
    compiled._callbacks(model)
    t4 = time.perf_counter()
    compiled.compile_model(model)
    t5 = time.perf_counter()
    print(f"import bayeslaw {t1 - t0:.2f} | import pymc+pytensor+nutpie {t2 - t1:.2f} | "
          f"build model {t3 - t2:.2f} | _callbacks {t4 - t3:.2f} | "
          f"compile_model (again, incl. load) {t5 - t4:.2f}")


if __name__ == "__main__":
    main()
