"""A model numba has not cached is compiled in a child process, then loaded (issue 34, item 2).

A process that compiles a density with numba runs code that differs in the last bits from the
code any later process loads from numba's cache: at 3 of 201 points of the bundled spec's
density the two differed by up to 2.3e-13 nats, and a chain that passes near such a point
follows another path from there (``python benchmarks/bench_cold_warm.py``).  Two users with
the same data, spec, settings and seed then got different draws, depending on whether their
cache held the model.  (Processes that load agree with each other bit for bit; reloading the
callbacks in the compiling process does not help: what it has compiled stays in use.)

So no fitting process compiles: where numba's cache lacks a model's callbacks,
:func:`compile_elsewhere` compiles the same model in a child process (its plan and data sent
by ``cloudpickle``, the model rebuilt there by the same code), and the calling process loads
what the child cached.  Every fit then runs loaded code, and its draws depend only on its
data, spec, settings and seed.  The price is the child's start (imports, building the
model) and the caller's load, a few seconds on top of a cold compile.

If the child fails (the error's last lines are in the warning), the calling process compiles
the model itself, as before, and says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from typing import Any


def _child_env() -> dict[str, str]:
    """The environment for the child, with PyTensor's compile directory made explicit.

    The child must write the cache this process reads.
    """
    import pytensor

    env = dict(os.environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    own = f"base_compiledir={pytensor.config.base_compiledir}"
    env["PYTENSOR_FLAGS"] = f"{flags},{own}" if flags else own
    return env


def compile_elsewhere(plan: Any, data: Any) -> bool:
    """Compile the model of ``plan`` with ``data`` in a child process, into numba's cache.

    Returns whether the child succeeded; if not, warns with the child's last lines of output
    (the caller then compiles the model itself).
    """
    import cloudpickle

    payload = cloudpickle.dumps((plan, data))
    run = subprocess.run([sys.executable, "-m", __name__], input=payload, env=_child_env(),
                         capture_output=True, check=False)
    if run.returncode == 0:
        return True
    tail = run.stderr.decode(errors="replace").strip().splitlines()[-5:]
    warnings.warn("bayeslaw: compiling the model in a child process failed (exit code "
                  f"{run.returncode}: {' / '.join(tail) or 'no output'}); compiling it in "
                  "this process instead, whose draws may differ in the last bits from a "
                  "later run that loads the model from the cache", RuntimeWarning,
                  stacklevel=2)
    return False


def main() -> None:
    """The child: read ``(plan, data)`` from stdin, compile the model into numba's cache."""
    import cloudpickle

    from ..model.graph import LossModel
    from .compiled import compile_model

    warnings.simplefilter("ignore")  # the parent shows what matters; the child's output is lost
    plan, data = cloudpickle.loads(sys.stdin.buffer.read())
    model = LossModel(plan)  # as modelcache.entry_for builds it
    model.set_data(data)
    compile_model(model.model)


if __name__ == "__main__":
    main()
