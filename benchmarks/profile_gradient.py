"""Where one log density + gradient of a shipped model spends its time.

Prints the microseconds per call of the compiled density (``bayeslaw.inference.compiled``, numba,
called through ctypes) at the mode, nutpie's own compiled density of the same model there, the
compiled density through the warm start's affine map, and PyTensor's op
profile of the same logp + gradient under its C backend (the numba backend has no per-op
profiler; the C backend's split shows which nodes are heavy, not their numba cost).

    python benchmarks/profile_gradient.py                 # looped_total on the bundled sweep
    python benchmarks/profile_gradient.py --calls 500 --ops 15
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def per_call_us(f, x: np.ndarray, calls: int) -> float:
    """Best of 5 mean times of ``calls`` calls of ``f(x)``, in microseconds."""
    for _ in range(50):
        f(x)
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            f(x)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--ops", type=int, default=25, help="rows of the op and apply tables")
    args = ap.parse_args(argv)
    import nutpie
    import pytensor

    import bayeslaw as bl
    from bayeslaw.inference.modelcache import compiled_for
    from bayeslaw.inference.warmstart import LogDensity, find_mode, standardized
    from bayeslaw.model.plan import make_plan
    from bayeslaw.simulate import bundled_path
    from bayeslaw.spec.catalog import load_spec

    data, spec = bl.load(bundled_path()), load_spec(law="looped_total")
    entry, compiled = compiled_for(make_plan(spec, data), data)
    entry.density.identity()
    raw = LogDensity(compiled)
    mode = find_mode(compiled, compiled.initial_point_func(0))
    if mode is None:
        raise SystemExit("no mode found: nothing to profile at")
    own = LogDensity(nutpie.compile_pymc_model(entry.model.model))
    print(f"{raw.n} coordinates, {len(data)} points")
    print(f"compiled density at the mode: {per_call_us(raw, mode.point, args.calls):.1f} "
          "us/call")
    print(f"nutpie's own at the mode: {per_call_us(own, mode.point, args.calls):.1f} us/call")
    wrapped = LogDensity(standardized(entry.density, compiled, mode))
    print(f"through the affine map at z = 0: "
          f"{per_call_us(wrapped, np.zeros(raw.n), args.calls):.1f} us/call")
    model = entry.model.model
    logp, values = model.logp(), model.value_vars
    f = pytensor.function(values, [logp, *pytensor.grad(logp, values)], profile=True)
    point = model.initial_point()
    inputs = [point[v.name] for v in values]
    for _ in range(500):
        f(*inputs)
    out = io.StringIO()
    f.profile.summary(file=out, n_ops_to_print=args.ops, n_apply_to_print=args.ops)
    text = out.getvalue()
    print(text[text.find("Class"):text.find("Here are tips")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
