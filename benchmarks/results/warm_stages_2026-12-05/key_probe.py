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

import hashlib
import importlib
import sys
import time
import warnings
from typing import Any

import numpy as np


def encode(value: Any) -> str:
    """A text that fixes ``value``: ops by their props, arrays by their bytes."""
    if hasattr(value, "__props__"):
        props = ",".join(encode(getattr(value, p)) for p in value.__props__)
        return f"{type(value).__module__}.{type(value).__qualname__}({props})"
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return f"array({value.dtype},{value.shape},{digest})"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(encode(v) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: repr(kv[0]))
        return "{" + ",".join(f"{encode(k)}:{encode(v)}" for k, v in items) + "}"
    text = repr(value)
    if " at 0x" in text:
        raise ValueError(f"no stable encoding: {text}")
    return f"{type(value).__qualname__}:{text}"


def graph_key(inputs: list, outputs: list) -> str:
    """SHA-256 of the graph from ``inputs`` to ``outputs``, shared values left out."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant, io_toposort

    ids: dict = {}
    digest = hashlib.sha256()

    def number(var: Any) -> int:
        if var not in ids:
            if var.owner is None:
                if isinstance(var, Constant):
                    tag = f"const {var.type} {encode(np.asarray(var.data))}"
                elif isinstance(var, SharedVariable):
                    tag = f"shared {var.name} {var.type}"
                elif var in inputs:
                    tag = f"input {inputs.index(var)} {var.type}"
                else:
                    tag = f"root {var.type}"
                digest.update(tag.encode())
            ids[var] = len(ids)
        return ids[var]

    for node in io_toposort(list(inputs), list(outputs)):
        args = [number(v) for v in node.inputs]
        digest.update(f"{encode(node.op)}{args}->{[str(o.type) for o in node.outputs]}".encode())
        for out in node.outputs:
            number(out)
    digest.update(str([number(o) for o in outputs]).encode())
    return digest.hexdigest()


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
