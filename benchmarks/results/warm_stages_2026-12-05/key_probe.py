"""A cache key of the unrewritten graph that nutpie's ``_make_functions`` compiles: cost and
stability (the second open question of a ``_make_functions`` cache, issue 34).

    python benchmarks/results/warm_stages_2026-12-05/key_probe.py bundled     # twice
    python benchmarks/results/warm_stages_2026-12-05/key_probe.py shifted     # losses + 0.01
    python benchmarks/results/warm_stages_2026-12-05/key_probe.py chinchilla  # another law

For this probe only, PyMC's ``compile`` is wrapped so that each graph nutpie hands it (the
logp + gradient and the expansion, after its givens) is keyed before compiling: the graph's
apply nodes in topological order, each op by its class and its ``__props__`` (recursively,
arrays by dtype, shape and SHA-256 of their bytes), each node's inputs by position;
constants by their bytes; shared variables by name and type only (their values are data, set
at run time); an encoding that would hold a memory address raises.  Prints each key's first
16 hex digits, the seconds to compute it and ``_callbacks``' seconds.
"""

import importlib
import os
import sys
import time
import warnings

# the library's own cache of these functions would stand between the probe's wrapper and
# every compile it serves from disk (it wraps PyMC's compile too): off for the probe
os.environ["BAYESLAW_FUNCTION_CACHE"] = "0"


def graph_key(inputs: list, outputs: list) -> str:
    """The graph's key: the library's :func:`bayeslaw.inference.fncache.graph_key` since
    2026-12-06.  ``key_probe_output.txt`` was made at 1a8e7c0 by this script's own copy of it,
    which keyed PyTensor's scalar ops by their text (the library keys them by their
    attributes) and the inputs' positions less; its printed keys differ from today's."""
    from bayeslaw.inference.fncache import graph_key as library_key

    return library_key(inputs, outputs, "")


def main(case: str) -> None:
    warnings.simplefilter("ignore")
    import pymc.pytensorf as pytensorf
    import pytensor

    bl = importlib.import_module("bayeslaw")
    keys, seconds = [], []
    original = pytensorf.compile

    def keyed(inputs, outputs, *args, givens=None, **kwargs):
        start = time.perf_counter()
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if givens:
            outs = pytensor.clone_replace(outs, dict(givens))
        keys.append(graph_key(list(inputs), outs))
        seconds.append(time.perf_counter() - start)
        return original(inputs, outputs, *args, givens=givens, **kwargs)

    pytensorf.compile = keyed
    get_model = importlib.import_module("bayeslaw.inference.modelcache").get_model
    compiled = importlib.import_module("bayeslaw.inference.compiled")
    data = bl.load(bl.bundled_path())
    if case == "shifted":
        data = bl.load(data.frame.assign(loss=data.frame["loss"] + 0.01))
    spec = bl.load_spec(law="chinchilla") if case == "chinchilla" else bl.load_spec()
    start = time.perf_counter()
    compiled._callbacks(get_model(spec, data).model)
    total = time.perf_counter() - start
    print(f"{case}: keys {[k[:16] for k in keys]}, key seconds "
          f"{[round(s, 3) for s in seconds]}, _callbacks {total:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
