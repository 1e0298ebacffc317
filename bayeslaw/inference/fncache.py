"""A disk cache of the PyTensor functions nutpie builds for a model (issue 34: the warm cost).

Every fit builds two PyTensor functions with nutpie's ``_make_functions`` (the log density with
its gradient, and the expansion to every stored variable), and PyTensor rewrites their graphs
each time: about 2.5 of the 3 s a warm process spends before sampling
(``benchmarks/results/warm_stages_2026-12-05/``).  Numba's cache keeps the machine code, not
that work.  Inside :func:`cached_compiles`, PyMC's ``compile`` (the one ``_make_functions``
calls) looks each graph up by :func:`graph_key` under PyTensor's compile directory
(:func:`cache_dir`) and, on a hit, unpickles the compiled function and sets each of its shared
variables (the data: losses, covariates, masks) to the value of the variable of the same name
in the graph asked for.  On a miss it compiles as before and stores the function.

**The key** fixes the graph up to the data's values: its apply nodes in topological order,
each op by class and ``__props__`` (a scalar op, which has none, by its attributes; arrays by
dtype, shape and SHA-256 of their bytes; functions by module and name), each
node's inputs by position, constants by their bytes, shared variables by name and type (their
values are what is rebound), the function's inputs and outputs, the compile's keyword
arguments, and the versions of PyTensor, PyMC, nutpie and numba, ``floatX`` and bayeslaw's
``CODE_VERSION``.  A graph the key cannot fix (an op without ``__props__``, a value whose
only text holds a memory address, an unnamed or twice-named shared variable) is compiled as
before and not stored.

**What a hit hands back** is a function that holds copies of the data, like the read-only
copies nutpie's callbacks read (:func:`bayeslaw.inference.compiled._shared_data`): changing
the PyMC model's data afterwards does not reach it; bayeslaw swaps data through the compiled
model's ``with_data``.  A cache file that cannot be read, or whose shared variables do not
match the graph's, is compiled afresh and replaced, with a warning.  Files are written
atomically; past :data:`MAX_BYTES` the files used longest ago are deleted.  :data:`ENABLED`
turns the cache off; :data:`EVENTS` logs each lookup (what a
test counts).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import tempfile
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

#: Whether :func:`cached_compiles` uses the disk cache (``False``: compile every time); the
#: environment variable ``BAYESLAW_FUNCTION_CACHE=0`` turns it off for a process.
ENABLED = os.environ.get("BAYESLAW_FUNCTION_CACHE", "1") != "0"
#: ``"hit"``, ``"stored"`` or ``"uncached"`` for each compile in this process, in order.
EVENTS: list[str] = []
#: The folder's size limit in bytes: past it, the files used longest ago are deleted (the
#: bundled sweep's default model's two functions take 6.3 MB:
#: benchmarks/results/fncache_2026-12-06/README.md).
MAX_BYTES = 256 * 2**20


class Unkeyable(ValueError):
    """A graph whose key would not fix it (it is compiled and not cached)."""


def cache_dir() -> Path:
    """Where the functions are kept: ``bayeslaw_functions`` in PyTensor's compile directory."""
    import pytensor

    return Path(pytensor.config.compiledir) / "bayeslaw_functions"


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
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        name = f"{value.__module__}.{value.__qualname__}"
        if "<" in name:  # a lambda or a closure: its name does not fix it
            raise Unkeyable(f"a local function has no stable text: {name}")
        return f"function:{name}"
    if _is_scalar_op(value):  # PyTensor's scalar ops have no __props__: equal by their state
        return f"{type(value).__module__}.{type(value).__qualname__}{encode(vars(value))}"
    text = repr(value)
    if " at 0x" in text:
        raise Unkeyable(f"no stable text: {text}")
    return f"{type(value).__qualname__}:{text}"


def _is_scalar_op(value: Any) -> bool:
    from pytensor.scalar.basic import ScalarOp

    return isinstance(value, ScalarOp)


def graph_key(inputs: list[Any], outputs: list[Any], extra: str) -> str:
    """SHA-256 of the graph from ``inputs`` to ``outputs`` and ``extra``; shared values left out.

    Raises
    ------
    Unkeyable
        Where the text would not fix the graph.
    """
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant

    try:
        from pytensor.graph.traversal import io_toposort
    except ImportError:  # pragma: no cover - PyTensor before the move
        from pytensor.graph.basic import io_toposort

    ids: dict[Any, int] = {}
    digest = hashlib.sha256(extra.encode())

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
        if not hasattr(node.op, "__props__") and not _is_scalar_op(node.op):
            raise Unkeyable(f"op {type(node.op).__qualname__} has no __props__")
        args = [number(v) for v in node.inputs]
        digest.update(f"{encode(node.op)}{args}->{[str(o.type) for o in node.outputs]}".encode())
        for out in node.outputs:
            number(out)
    digest.update(str([number(v) for v in inputs]).encode())
    digest.update(str([number(o) for o in outputs]).encode())
    return digest.hexdigest()


def shared_by_name(outputs: list[Any]) -> dict[str, Any]:
    """The shared variables ``outputs`` depend on, by name (each named, and once)."""
    from pytensor.compile.sharedvalue import SharedVariable

    try:
        from pytensor.graph.traversal import ancestors
    except ImportError:  # pragma: no cover - PyTensor before the move
        from pytensor.graph.basic import ancestors

    found: dict[str, Any] = {}
    for var in ancestors(outputs):
        if isinstance(var, SharedVariable):
            if not var.name or found.get(var.name, var) is not var:
                raise Unkeyable(f"shared variable {var.name!r} is unnamed or named twice")
            found[var.name] = var
    return found


def _versions(tag: str) -> str:
    import numba
    import nutpie
    import pymc
    import pytensor

    return (f"bayeslaw-fncache-1|{tag}|pytensor {pytensor.__version__}|pymc {pymc.__version__}|"
            f"nutpie {nutpie.__version__}|numba {numba.__version__}|"
            f"floatX {pytensor.config.floatX}")


@contextlib.contextmanager
def cached_compiles(tag: str) -> Iterator[None]:
    """PyMC's ``compile`` served from the disk cache while the block runs.

    ``tag`` (bayeslaw's ``CODE_VERSION``) joins the key.  Only calls of the form
    ``compile(inputs, outputs, **keywords)`` go through the cache.
    """
    import pymc.pytensorf as pytensorf

    original = pytensorf.compile

    def compile_cached(inputs: Any, outputs: Any, *args: Any, **kwargs: Any) -> Any:
        if not ENABLED or args:
            EVENTS.append("uncached")
            return original(inputs, outputs, *args, **kwargs)
        return _lookup(original, tag, inputs, outputs, kwargs)

    pytensorf.compile = compile_cached
    try:
        yield
    finally:
        pytensorf.compile = original


def _lookup(original: Any, tag: str, inputs: Any, outputs: Any, kwargs: dict[str, Any]) -> Any:
    """One compile through the cache (see :func:`cached_compiles`)."""
    import pytensor

    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    givens = kwargs.get("givens")
    graph = pytensor.clone_replace(outs, dict(givens)) if givens else outs
    rest = {k: v for k, v in kwargs.items() if k != "givens"}
    try:
        shared = shared_by_name(graph)
        key = graph_key(list(inputs), graph, f"{_versions(tag)}|{encode(rest)}|"
                                             f"{type(outputs).__name__}")
    except Unkeyable:
        EVENTS.append("uncached")
        return original(inputs, outputs, **kwargs)
    path = cache_dir() / f"{key}.pkl"
    if path.exists():
        fn = _load(path, shared)
        if fn is not None:
            EVENTS.append("hit")
            with contextlib.suppress(OSError):  # its last use, for the size limit's order
                os.utime(path)
            return fn
    fn = original(inputs, outputs, **kwargs)
    _store(fn, path)
    EVENTS.append("stored")
    return fn


def _load(path: Path, shared: dict[str, Any]) -> Any:
    """The function in ``path`` with its shared variables set from ``shared``, or None."""
    try:
        with open(path, "rb") as handle:
            fn = pickle.load(handle)
        own = {var.name: var for var in fn.get_shared()}
        if set(own) != set(shared) or any(str(own[k].type) != str(shared[k].type)
                                           for k in own):
            raise ValueError(f"its shared variables {sorted(own)} are not the graph's "
                             f"{sorted(shared)}")
        for name, var in own.items():
            var.set_value(shared[name].get_value(borrow=False))
        return fn
    except Exception as err:  # a stale or damaged file: compile afresh and replace it
        warnings.warn(f"bayeslaw: the cached PyTensor function {path} could not be used "
                      f"({type(err).__name__}: {err}); compiling it again",
                      RuntimeWarning, stacklevel=4)
        return None


def _store(fn: Any, path: Path) -> None:
    """``fn`` pickled to ``path`` atomically; a function that does not pickle is not kept."""
    try:
        blob = pickle.dumps(fn, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as err:
        warnings.warn(f"bayeslaw: a compiled PyTensor function did not pickle "
                      f"({type(err).__name__}: {err}); it is compiled in every process",
                      RuntimeWarning, stacklevel=4)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
        _prune(path.parent)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        warnings.warn(f"bayeslaw: could not store a compiled PyTensor function in {path} "
                      f"({err})", RuntimeWarning, stacklevel=4)


def _prune(folder: Path) -> None:
    """Delete the files used longest ago until the folder is within :data:`MAX_BYTES`."""
    files = sorted(folder.glob("*.pkl"), key=lambda f: f.stat().st_mtime)
    total = sum(f.stat().st_size for f in files)
    for old in files[:-1]:  # never the file just stored
        if total <= MAX_BYTES:
            break
        total -= old.stat().st_size
        old.unlink(missing_ok=True)
