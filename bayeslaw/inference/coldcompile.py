"""A model numba has not cached is compiled in a child process, then loaded (issue 34, item 2).

A process that compiles a density with numba runs code that differs in the last bits from the
code any later process loads from numba's cache: at 3 of 200 points around the start of the
default looped spec's density the two differed by up to 2.3e-13 nats, and every draw of a
short fit differed (``benchmarks/results/cold_warm_2026-12-05/``).  Two users with the same
data, spec, settings and seed then got different draws, depending on whether their cache held
the model.  (Processes that load agree with each other bit for bit; loading the callbacks
again in the compiling process does not help: what it compiled stays in use.)

So a NUTS fit does not compile its density itself: where numba's cache lacks a model's
callbacks, :func:`compile_elsewhere` has a child process compile the same model (its plan and
data sent by ``cloudpickle``, the model rebuilt there by the same code), and the calling
process loads what the child cached (it checks that the cache now holds them).  Every such
fit then runs loaded code, and its draws depend only on its data, spec, settings and seed.
Still compiled in the calling process: a graph numba cannot cache, a model after a failed
child (with a warning), pathfinder (pymc-extras' own compile) and ``backend = "pymc"``.

The child stays up for the next model new to the cache (its imports paid once a process),
and is replaced after :data:`COMPILES_PER_CHILD` models to bound its memory; an idle child
holds the models it compiled until then or until the calling process exits (it exits when
that process closes its input, at exit or when it dies).  A child is waited for without a
time limit: a cold compile may take minutes.

If the child fails, the calling process compiles the model itself, as before, and says so
with the child's last lines of output.
"""

from __future__ import annotations

import atexit
import os
import struct
import subprocess
import sys
import tempfile
import threading
import warnings
from typing import Any

#: Models one child compiles before it is replaced (each holds its compiled code in memory).
COMPILES_PER_CHILD = 8

_LOCK = threading.Lock()
_child: dict[str, Any] = {}


def _child_env() -> dict[str, str]:
    """The environment for the child, from this process's.

    Its module path (the child imports the same bayeslaw) and PyTensor's compile directory
    made explicit (the child must write the cache this process reads).
    """
    import pytensor

    env = dict(os.environ)
    flags = env.get("PYTENSOR_FLAGS", "")
    own = f"base_compiledir={pytensor.config.base_compiledir}"
    env["PYTENSOR_FLAGS"] = f"{flags},{own}" if flags else own
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _start() -> dict[str, Any]:
    """A new child, its output going to a temporary file (read when it fails).

    ``-P``: the working directory is not put first on the child's path (the parent's path,
    passed in ``PYTHONPATH``, decides which bayeslaw it imports).
    """
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-P", "-m", __name__], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=log, env=_child_env())
    return {"proc": proc, "log": log, "compiled": 0}


def _stop() -> None:
    """Close the child's input (it exits) and wait for it."""
    child = _child.pop("child", None)
    if child is None:
        return
    proc = child["proc"]
    try:
        proc.stdin.close()
        proc.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    proc.stdout.close()
    child["log"].close()


atexit.register(_stop)


def _tail(child: dict[str, Any]) -> str:
    """The child's last lines of output."""
    log = child["log"]
    log.seek(0)
    lines = log.read().decode(errors="replace").strip().splitlines()[-5:]
    return " / ".join(lines) or "no output"


def compile_elsewhere(built: Any, plan: Any, data: Any) -> bool:
    """Compile a model into numba's cache in the child process.

    ``built``: the plan the calling process built the model's graph from (the child builds
    the same graph); ``plan``, ``data``: the fit's, swapped into it.  The graph, and so its
    cache keys, must not depend on the process (:func:`bayeslaw.inference.compiled.cache_keys`).
    Returns whether the child succeeded; if not, warns with its last lines of output (the
    caller then compiles the model itself).
    """
    import cloudpickle

    try:
        payload = cloudpickle.dumps((built, plan, data))
    except Exception as err:  # noqa: BLE001 - said in the warning below
        payload, reason = None, f"the model cannot be sent: {type(err).__name__}: {err}"
    if payload is not None:
        reason = _exchange(payload)
        if reason is None:
            return True
    warnings.warn(f"bayeslaw: compiling the model in a child process failed ({reason}); "
                  "compiling it in this process instead, whose draws may differ in the last "
                  "bits from a later run that loads the model from the cache", RuntimeWarning,
                  stacklevel=2)
    return False


def _exchange(payload: bytes) -> str | None:
    """Send one model to the child and wait for its answer.

    ``None`` when it cached the model, else why not (the child is then stopped).  An
    interruption stops the child too, so that its late answer is never read as the next
    model's.
    """
    with _LOCK:
        child = _child.get("child")
        if child is None or child["proc"].poll() is not None \
                or child["compiled"] >= COMPILES_PER_CHILD:
            _stop()
            child = _child["child"] = _start()
        proc = child["proc"]
        try:
            proc.stdin.write(struct.pack("<Q", len(payload)) + payload)
            proc.stdin.flush()
            reply = proc.stdout.readline()
        except OSError:
            reply = b""
        except BaseException:
            _stop()
            raise
        child["compiled"] += 1
        if reply == b"ok\n":
            return None
        reason = reply.decode(errors="replace").strip() or _tail(child)
        _stop()
        return reason


def serve() -> None:
    """The child: compile each ``(plan, data)`` read from stdin into numba's cache.

    Answers ``ok`` (or the error) on stdout per model; returns at the end of the input.
    """
    reply = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed, imports included, goes to the log, not the replies
    import cloudpickle

    from ..model.graph import LossModel
    from .compiled import compile_model

    warnings.simplefilter("ignore")  # the parent shows what matters
    source = sys.stdin.buffer
    while True:
        head = source.read(8)
        if len(head) < 8:
            return
        (size,) = struct.unpack("<Q", head)
        try:
            built, plan, data = cloudpickle.loads(source.read(size))
            model = LossModel(built)  # the graph as modelcache.entry_for built it,
            model.plan = plan  # with this fit's plan and data swapped in
            model.set_data(data)
            compile_model(model.model)
            reply.write(b"ok\n")
        except Exception as err:  # noqa: BLE001 - sent to the parent, which warns with it
            reply.write(f"{type(err).__name__}: {err}".replace("\n", " ").encode() + b"\n")
        reply.flush()


if __name__ == "__main__":
    serve()
