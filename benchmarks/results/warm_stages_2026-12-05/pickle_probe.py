"""Pickle the bundled model's two NUMBA-mode PyTensor functions, then load them elsewhere.

    python benchmarks/results/warm_stages_2026-12-05/pickle_probe.py dump
    python benchmarks/results/warm_stages_2026-12-05/pickle_probe.py load

Both build the model and its functions (``compiled._callbacks``, timed); ``dump`` pickles the
logp and expand functions to a temporary file, ``load`` (a second process) unpickles them.
"""

import importlib
import pickle
import sys
import tempfile
import time
import warnings
from pathlib import Path

OUT = Path(tempfile.gettempdir()) / "bayeslaw_pickle_probe.bin"


def main(mode: str) -> None:
    warnings.simplefilter("ignore")
    bl = importlib.import_module("bayeslaw")
    get_model = importlib.import_module("bayeslaw.inference.modelcache").get_model
    model = get_model(bl.load_spec(), bl.load(bl.bundled_path())).model
    start = time.perf_counter()
    parts = importlib.import_module("bayeslaw.inference.compiled")._callbacks(model)
    print(f"_callbacks {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    if mode == "dump":
        blob = pickle.dumps((parts["logp_pt"], parts["expand_pt"]))
        OUT.write_bytes(blob)
        print(f"pickled {len(blob)} bytes in {time.perf_counter() - start:.2f} s")
    else:
        pickle.loads(OUT.read_bytes())
        print(f"unpickled in {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
