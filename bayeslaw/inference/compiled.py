"""nutpie's compiled model, built so that numba caches it across processes (issue 19).

``nutpie.compile_pymc_model`` (0.16) compiles the PyTensor log density + gradient in NUMBA
mode and wraps it in two numba ``cfunc`` callbacks.  Those callbacks close over generated
functions and data addresses, which numba refuses to cache ("uses dynamic globals"), so every
process compiled them again, with the extraction code, the error formatting and the LLVM
linking under them.  The PyTensor function inside is cacheable (PyTensor keys each generated
numba function by its graph) except where an op has no cache key; here that was digamma (the
gradient of ``gammaln(nu / 2)`` in the Student-t normalizer, a pointer to scipy's Cython
function), which left the whole graph uncached.  A second process now compiles the bundled
sweep's model in 4.3 s against the old code's 15.9 s
(``benchmarks/results/speed_2026-12-01_compile.md``).

So this module builds the same compiled model itself:

* the PyTensor functions come from nutpie's own ``_make_functions`` (the one place that
  knows nutpie's layout of the unconstrained vector and of the draws);
* each callback (reading the shared data out of nutpie's ``user_data`` record, the warm
  start's affine map ``x = shift + L z`` of :mod:`bayeslaw.inference.warmstart`, the call, the
  finiteness checks) is one generated ``cfunc`` that reads every address at run time from
  ``user_data``, registered with PyTensor's numba cache locator under a key made of the
  PyTensor function's own key, the generated source, the data's dtypes and this module's
  :data:`CODE_VERSION`; a second process loads it from disk.  Where numba's cache lacks a
  callback (:func:`in_cache`), :func:`compile_model` first calls its ``cold`` hook, with
  which :mod:`bayeslaw.inference.modelcache` compiles the model in a child process
  (:mod:`bayeslaw.inference.coldcompile`): what a process compiles differs in the last
  bits from what it would load, so a NUTS fit loads its density (its fallbacks: that module).

The affine map's buffer ``[flag, shift (n), factor]`` is owned by the returned
:class:`Density` and its address stored in ``user_data``: the factor is ``L`` (n x n
row-major, any invertible matrix) up to warmstart.DENSE_MAX_DIM coordinates, above it
``L`` sparse, at most :data:`SPARSE_WIDTH` entries a row (their values, then their
columns: a diagonal scale, or the blocks of :mod:`bayeslaw.inference.metric`);
``flag = 0`` is the identity (the raw density, as nutpie's own compiled model computes it),
which the mode search uses.  nutpie's private helpers are pinned by the ``nutpie`` bound in
``pyproject.toml``; ``tests/test_compiled.py`` checks the raw density, its gradient and the
expansion against the PyMC model (the tests' small sweep, default spec), and that a cold and
a warm process load both callbacks and draw the same.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import fncache

#: Version of the generated source: part of every cache key, bumped when the source changes.
CODE_VERSION = "bayeslaw-density-2"

#: Entries per row of the affine map's factor above warmstart.DENSE_MAX_DIM coordinates.
SPARSE_WIDTH = 16

_digamma_registered = False


def register_cached_digamma() -> None:
    """Give PyTensor's numba backend a cacheable digamma (``Psi``) in place of scipy's.

    PyTensor 2.38 implements ``Psi`` in numba through a pointer to scipy's Cython
    ``psi``; a function calling a pointer cannot be cached, so every graph holding a
    Student-t's gradient in ``nu`` was compiled from scratch in each process.  This
    registers a numba digamma (recurrence to x >= 10, then the asymptotic series to x^-14:
    truncation error below 1e-15 relative; reflection for x < 0; at the poles what
    scipy gives: -inf at +0, inf at -0, NaN at negative integers) with a cache key.  It
    only adds a registration for ``Psi`` when PyTensor has none of its own with a key, so
    a PyTensor that caches ``Psi`` itself is left alone.
    """
    global _digamma_registered
    if _digamma_registered:
        return
    from pytensor.link.numba.dispatch.basic import (
        numba_funcify_and_cache_key,
        numba_njit,
        register_funcify_and_cache_key,
    )
    from pytensor.scalar.basic import ScalarOp
    from pytensor.scalar.math import Psi

    if numba_funcify_and_cache_key.dispatch(Psi) is not numba_funcify_and_cache_key.dispatch(
            ScalarOp):  # PyTensor registered Psi itself: keep it
        _digamma_registered = True
        return
    import inspect

    import pytensor

    # the implementation's own source and module in the key: a cached entry is reused by key
    # alone, and numba rebuilds its environment from the module by name
    source = hashlib.sha256(inspect.getsource(_digamma_impl).encode()).hexdigest()[:16]
    key = f"{CODE_VERSION}-{__name__}-digamma-{source}-pytensor{pytensor.__version__}"

    @register_funcify_and_cache_key(Psi)
    def _numba_psi(op: Any, node: Any = None, **kwargs: Any) -> tuple[Any, str]:
        return numba_njit(_digamma_impl), key

    _digamma_registered = True


def _digamma_impl(x: float) -> float:  # pragma: no cover - compiled by numba
    """Digamma of a float (njit by :func:`register_cached_digamma`)."""
    if x == 0.0:  # as scipy: -inf at +0, +inf at -0
        return -math.copysign(math.inf, x)
    if x < 0.0 and math.floor(x) == x:
        return math.nan
    acc = 0.0
    if x < 0.0:  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (
        1.0 / 240 + f * (-1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))))
    return acc + math.log(x) - 0.5 / x + series


@dataclass
class Density:
    """A compiled model and the buffer of its affine map.

    Attributes
    ----------
    compiled : nutpie's ``CompiledPyMCModel``
        Sampled by ``nutpie.sample``; ``with_data`` swaps data and keeps the buffer.
    buffer : ndarray
        ``[flag, shift, factor]``; written by :meth:`identity` and :meth:`standardize`.
    dense : bool
        Whether the factor is stored dense (n x n), or sparse by rows above
        warmstart.DENSE_MAX_DIM coordinates.
    in_child : bool
        Whether a child process compiled the callbacks just before this one loaded them.
    from_disk : bool
        Whether numba loaded both callbacks from its cache (a process before compiled them).
    """

    compiled: Any
    buffer: np.ndarray
    dense: bool
    in_child: bool = False

    @property
    def from_disk(self) -> bool:
        """Whether both callbacks were loaded from numba's cache instead of compiled."""
        return bool(self.compiled.compiled_logp_func.cache_hits
                    and self.compiled.compiled_expand_func.cache_hits)

    @property
    def n(self) -> int:
        """Unconstrained coordinates of the model."""
        return int(self.compiled.n_dim)

    def identity(self) -> None:
        """The raw density: ``x = z``."""
        self.buffer[:] = 0.0

    def standardize(self, shift: np.ndarray, factor: np.ndarray) -> None:
        """``x = shift + factor @ z``, ``factor`` n x n and invertible.

        The warm start's factor is lower-triangular, a pilot's is not.

        Above warmstart.DENSE_MAX_DIM coordinates each row of ``factor`` may hold at most
        :data:`SPARSE_WIDTH` nonzero entries (a ValueError otherwise).
        """
        n = self.n
        if self.dense:
            body = np.asarray(factor, dtype=float).ravel()
        else:
            body = sparse_rows(np.asarray(factor, dtype=float))
        self.buffer[0] = 1.0
        self.buffer[1:n + 1] = shift
        self.buffer[n + 1:] = body

    def current(self) -> tuple[np.ndarray, np.ndarray]:
        """``(shift, factor)`` of the map as written now (the identity: zeros and I)."""
        n, buf = self.n, self.buffer
        if buf[0] == 0.0:
            return np.zeros(n), np.eye(n)
        if self.dense:
            return buf[1:n + 1].copy(), buf[n + 1:].reshape(n, n).copy()
        values = buf[n + 1:n + 1 + n * SPARSE_WIDTH].reshape(n, SPARSE_WIDTH)
        columns = buf[n + 1 + n * SPARSE_WIDTH:].reshape(n, SPARSE_WIDTH).astype(int)
        factor = np.zeros((n, n))
        np.add.at(factor, (np.repeat(np.arange(n), SPARSE_WIDTH), columns.ravel()),
                  values.ravel())
        return buf[1:n + 1].copy(), factor


def sparse_rows(factor: np.ndarray) -> np.ndarray:
    """``factor``'s rows as the sparse buffer: ``n x SPARSE_WIDTH`` values, then columns.

    Unused entries have value 0 and their row's own column; the diagonal comes first, so a
    diagonal factor computes ``shift + d z`` exactly as a diagonal map does.
    """
    n = factor.shape[0]
    values = np.zeros((n, SPARSE_WIDTH))
    columns = np.tile(np.arange(n, dtype=float)[:, None], (1, SPARSE_WIDTH))
    for i in range(n):
        cols = [i, *[j for j in np.flatnonzero(factor[i]) if j != i]]
        if len(cols) > SPARSE_WIDTH:
            raise ValueError(f"row {i} of the factor has {len(cols)} entries; at most "
                             f"{SPARSE_WIDTH} fit the compiled map above "
                             "warmstart.DENSE_MAX_DIM coordinates")
        values[i, :len(cols)] = factor[i, cols]
        columns[i, :len(cols)] = cols
    return np.concatenate([values.ravel(), columns.ravel()])


def _key_of(fn: Any) -> str | None:
    """PyTensor's numba cache key of a compiled function's jitted graph (None: uncached)."""
    from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS

    return CACHED_SRC_FUNCTIONS.get(fn.py_func)


def _source(kind: str, names: list[str], all_names: list[str], ndims: dict[str, int],
            n: int, n_exp: int, dense: bool) -> str:
    """The generated core of one callback (``kind``: "logp" or "expand")."""
    offsets, slots = _slots(all_names, ndims)
    lines = [*_signature(kind, n, n_exp), f"    u = numba.carray(ud_, ({slots},), np.uint64)"]
    args = []
    for i, name in enumerate(names):
        j = all_names.index(name)
        shape = ", ".join(f"int(u[{offsets[name] + d}])" for d in range(ndims[name]))
        shape = f"({shape},)" if ndims[name] == 1 else f"({shape})"
        lines.append(f"    s{i} = numba.carray(address_as_void_pointer(u[{j}]), {shape}, "
                     f"dtype_{i})")
        args.append(f"s{i}")
    lines += _affine_map(n, dense, slots)
    call = ", ".join(["x", *args])
    lines += _expand_tail(n_exp, call) if kind == "expand" else _logp_tail(n, dense, call)
    return "\n".join(lines) + "\n"


def _slots(all_names: list[str], ndims: dict[str, int]) -> tuple[dict[str, int], int]:
    """Where each shared array's shape starts in ``user_data``, and its number of slots.

    ``user_data`` holds each array's address, then each one's size, then the shapes, then
    the affine map's buffer's address (the last slot).
    """
    offsets, at = {}, 2 * len(all_names)
    for name in all_names:
        offsets[name] = at
        at += ndims[name]
    return offsets, at + 1


def _signature(kind: str, n: int, n_exp: int) -> list[str]:
    """The callback's ``def`` line and its check of the dimensions nutpie passes."""
    if kind == "expand":
        return [f"def bl_{kind}(dim, expanded, z_, out_, ud_):",
                f"    if dim != {n} or expanded != {n_exp}:",
                "        return -1"]
    return [f"def bl_{kind}(dim, z_, out_, logp_, ud_):",
            f"    if dim != {n}:",
            "        return -1"]


def _affine_map(n: int, dense: bool, slots: int) -> list[str]:
    """Lines computing ``x = shift + L z`` from the buffer (``x = z`` when its flag is 0)."""
    size = 1 + n + (n * n if dense else 2 * n * SPARSE_WIDTH)
    lines = [
        f"    buf = numba.carray(address_as_void_pointer(u[{slots - 1}]), ({size},), np.float64)",
        f"    z = numba.carray(z_, ({n},))",
        f"    x = np.empty({n})",
        "    if buf[0] == 0.0:",
        "        x[:] = z",
        "    else:",
        f"        for i in range({n}):",
    ]
    if dense:  # every column: a pilot's factor is not triangular (bayeslaw.inference.metric)
        return lines + ["            acc = buf[1 + i]",
                        f"            for j in range({n}):",
                        f"                acc += buf[{n + 1} + i * {n} + j] * z[j]",
                        "            x[i] = acc"]
    w, at = SPARSE_WIDTH, n + 1
    return lines + ["            acc = buf[1 + i]",
                    f"            for k in range({w}):",
                    f"                v = buf[{at} + i * {w} + k]",
                    "                if v != 0.0:",
                    f"                    acc += v * z[int(buf[{at + n * w} + i * {w} + k])]",
                    "            x[i] = acc"]


def _expand_tail(n_exp: int, call: str) -> list[str]:
    """The expansion callback's call and copy of the draws' values."""
    return [f"    out = numba.carray(out_, ({n_exp},))",
            f"    (values,) = inner({call})",
            "    out[...] = values",
            "    return 0"]


def _logp_tail(n: int, dense: bool, call: str) -> list[str]:
    """The density callback's call, gradient ``L^T grad_x`` and finiteness checks."""
    lines = [f"    lp, gx = inner({call})",
             f"    out = numba.carray(out_, ({n},))",
             "    if buf[0] == 0.0:",
             "        out[:] = gx",
             "    else:",
             f"        for j in range({n}):",  # grad_z = L^T grad_x
             ]
    if dense:
        lines += ["            acc = 0.0",
                  f"            for i in range({n}):",
                  f"                acc += buf[{n + 1} + i * {n} + j] * gx[i]",
                  "            out[j] = acc"]
        return lines + _finite_tail()
    w, at = SPARSE_WIDTH, n + 1
    lines += [  # grad_z[c] += L[i, c] grad_x[i] over the stored entries
        "            out[j] = 0.0",
        f"        for i in range({n}):",
        f"            for k in range({w}):",
        f"                v = buf[{at} + i * {w} + k]",
        "                if v != 0.0:",
        f"                    out[int(buf[{at + n * w} + i * {w} + k])] += v * gx[i]"]
    return lines + _finite_tail()


def _finite_tail() -> list[str]:
    """The density callback's last lines: its log density out, the finiteness checks."""
    return ["    lpo = numba.carray(logp_, ())",
            "    lpo[()] = lp",
            "    if not np.all(np.isfinite(out)):",
            "        return 3",
            "    if not np.isfinite(lp):",
            "        return 4",
            "    return 0"]


def _callback_function(kind: str, inner: Any, names: list[str], all_names: list[str],
                       shared: dict[str, np.ndarray], n: int, n_exp: int, dense: bool
                       ) -> tuple[Any, str | None]:
    """One of nutpie's two callbacks as a Python function for ``numba.cfunc``, and its key.

    The key is ``None`` where ``inner`` has none: numba cannot cache the callback then.
    """
    import numba
    from nutpie.compile_pymc import address_as_void_pointer
    from pytensor.link.numba.cache import compile_numba_function_src

    ndims = {name: shared[name].ndim for name in all_names}
    dtypes = {name: shared[name].dtype for name in all_names}
    src = _source(kind, names, all_names, ndims, n, n_exp, dense)
    # __name__: numba rebuilds a cached function's environment from its module by name, so the
    # module's name is part of the key (an entry cached before a move is not loaded after it)
    env = {"__name__": __name__, "numba": numba, "np": np, "inner": inner,
           "address_as_void_pointer": address_as_void_pointer}
    env.update({f"dtype_{i}": np.dtype(dtypes[name]) for i, name in enumerate(names)})
    inner_key = _key_of(inner)
    key = None
    if inner_key is not None:
        layout = repr([str(dtypes[name]) for name in names])  # the dtype_i globals
        key = hashlib.sha256(
            f"{CODE_VERSION}|{__name__}|{inner_key}|{layout}|{src}".encode()).hexdigest()
    return compile_numba_function_src(src, f"bl_{kind}", env, cache_key=key), key


def _cfunc_signature(kind: str) -> Any:
    """The C signature nutpie calls a callback of ``kind`` with."""
    import numba

    f64p = numba.types.CPointer(numba.types.double)
    if kind == "expand":
        return numba.types.int64(numba.types.uint64, numba.types.uint64, f64p, f64p,
                                 numba.types.voidptr)
    return numba.types.int64(numba.types.uint64, f64p, f64p, f64p, numba.types.voidptr)


def _cfunc(kind: str, fn: Any, key: str | None) -> Any:
    """The callback compiled, or loaded from numba's cache when it holds it."""
    import numba

    return numba.cfunc(_cfunc_signature(kind), cache=key is not None, error_model="numpy")(fn)


def _all_cached(functions: dict[str, tuple[Any, str | None]]) -> bool:
    """Whether numba's cache holds every callback of ``functions`` (kind -> (fn, key))."""
    return all(in_cache(kind, fn) for kind, (fn, _) in functions.items())


def in_cache(kind: str, fn: Any) -> bool:
    """Whether numba's cache holds the callback ``fn`` of ``kind`` (its index lists it).

    Reads the index as ``numba.cfunc(..., cache=True)`` would before loading, without loading
    anything (numba 0.6x's ``FunctionCache``, private names: tested with numba 0.65).  A
    numba without them answers ``False`` with a warning (the model is then compiled in a
    child process, and in this one if that does not cache it).  An index that lists a data
    file since deleted answers ``True``, and this process then compiles the callback.
    """
    from numba.core.caching import FunctionCache
    from numba.core.registry import cpu_target

    cache = FunctionCache(fn)
    try:
        key = cache._index_key(_cfunc_signature(kind), cpu_target.target_context.codegen())
        return key in cache._cache_file._load_index()
    except AttributeError as err:  # pragma: no cover - another numba
        warnings.warn(f"bayeslaw: numba's FunctionCache is not the one "
                      f"bayeslaw.inference.compiled.in_cache reads ({err}; tested with numba "
                      "0.65): treating the model as not cached", RuntimeWarning, stacklevel=2)
        return False


def compile_model(model: Any, cold: Callable[[], bool] | None = None) -> Density:
    """``model`` compiled for nutpie (numba), its callbacks' work cached across processes.

    Equivalent to ``nutpie.compile_pymc_model(model)`` with its defaults (support-point
    initialization jittered, every variable stored) plus the affine map's buffer; the raw
    density (``identity``) equals nutpie's.

    ``cold`` (optional): called when numba's cache lacks a callback, before this process
    would compile it; it returns whether it put both callbacks in the cache (another
    process compiled them: :mod:`bayeslaw.inference.coldcompile`), and this process then
    loads them.  Not called for a graph that numba cannot cache.
    """
    from nutpie.compile_pymc import CompiledPyMCModel, _prepare_dims_and_coords

    parts = _callbacks(model)
    functions = parts["functions"]
    in_child = False
    if cold is not None and all(key is not None for _, key in functions.values()) \
            and not _all_cached(functions):
        # the child's word is not enough: it must have cached these very callbacks
        in_child = cold() and _all_cached(functions)
        if not in_child:
            warnings.warn("bayeslaw: numba's cache still lacks this model after the child "
                          "process compiled (a child importing another bayeslaw or "
                          "PyTensor configuration, or a graph whose cache key depends on the "
                          "process: see cache_keys); compiling it in this process, whose draws "
                          "may differ in the last bits from a run that loads it",
                          RuntimeWarning, stacklevel=3)
    logp, expand = (_cfunc(kind, *functions[kind]) for kind in ("logp", "expand"))
    n, shape_info = parts["n"], parts["shape_info"]
    dims, coords = _prepare_dims_and_coords(model, shape_info)
    compiled = CompiledPyMCModel(
        _n_dim=n, dims=dims, _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp, compiled_expand_func=expand,
        initial_point_func=parts["initial_point_fn"], shared_data=parts["shared"],
        user_data=parts["user_data"], n_expanded=parts["n_exp"], shape_info=shape_info,
        logp_func=parts["logp_pt"], expand_func=parts["expand_pt"])
    return Density(compiled, parts["buffer"], parts["dense"], in_child)


def cache_keys(model: Any) -> dict[str, str | None]:
    """The numba cache key of each of ``model``'s two callbacks ("logp", "expand").

    Compiles nothing with numba.  A process that builds the same model must get the same
    keys, or it can never load what another process cached (the child of
    :mod:`bayeslaw.inference.coldcompile` included).
    """
    return {kind: key for kind, (_, key) in _callbacks(model)["functions"].items()}


def _callbacks(model: Any) -> dict[str, Any]:
    """``model``'s PyTensor functions, the two callbacks' Python functions and their keys."""
    from nutpie.compile_pymc import _make_functions, _wrap_with_lock
    from pymc.initial_point import make_initial_point_fn

    register_cached_digamma()
    point_fn = _wrap_with_lock(make_initial_point_fn(
        model=model, overrides=None, default_strategy="support_point",
        jitter_rvs=set(model.free_RVs), return_transformed=True))
    with fncache.cached_compiles(CODE_VERSION):  # PyTensor's rewriting, kept on disk
        n, n_exp, logp_pt, expand_pt, initial_point_fn, shape_info = _make_functions(
            model, mode="NUMBA", compute_grad=True, join_expanded=True,
            pymc_initial_point_fn=point_fn, var_names=None)
    shared, shared_vars = _shared_data([*logp_pt.get_shared(), *expand_pt.get_shared()])
    all_names = list(shared_vars)
    from . import warmstart

    dense = n <= warmstart.DENSE_MAX_DIM
    buffer = np.zeros(1 + n + (n * n if dense else 2 * n * SPARSE_WIDTH))
    functions = {
        kind: _callback_function(kind, pt.vm.jit_fn, [v.name for v in pt.get_shared()],
                                 all_names, shared, n, n_exp, dense)
        for kind, pt in (("logp", logp_pt), ("expand", expand_pt))}
    return {"n": n, "n_exp": n_exp, "logp_pt": logp_pt, "expand_pt": expand_pt,
            "initial_point_fn": initial_point_fn, "shape_info": shape_info, "shared": shared,
            "dense": dense, "buffer": buffer,
            "user_data": _user_data(shared_vars, shared, buffer), "functions": functions}


def _shared_data(variables: list[Any]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read-only copies of the shared variables' values, and the variables, by name.

    Two variables of one name must be one variable or, for the two functions loaded from
    :mod:`bayeslaw.inference.fncache` (each with its own copy of the data), hold equal values
    of one type: the callbacks read the data through ``user_data``, one array per name.
    """
    shared: dict[str, np.ndarray] = {}
    shared_vars: dict[str, Any] = {}
    for var in variables:
        value = np.array(var.get_value(), order="C", copy=True)
        if var.name in shared and shared_vars[var.name] is not var and not (
                str(var.type) == str(shared_vars[var.name].type)
                and np.array_equal(value, shared[var.name])):
            raise ValueError(f"shared variables must have unique names: {var.name}")
        shared[var.name] = value
        shared_vars[var.name] = var
    for value in shared.values():
        value.flags.writeable = False
    return shared, shared_vars


def _user_data(shared_vars: dict[str, Any], shared: dict[str, np.ndarray],
               buffer: np.ndarray) -> np.ndarray:
    """The ``user_data`` record (nutpie's) of the shared data, plus the address of ``buffer``.

    Raises
    ------
    RuntimeError
        If nutpie's record is not laid out as the generated callbacks read it.
    """
    from nutpie.compile_pymc import make_user_data, update_user_data

    base = make_user_data(shared_vars, shared).dtype
    record = np.dtype([*[(f, base.fields[f][0]) for f in base.names],
                       ("bayeslaw_buffer", np.uintp)])
    user_data = np.zeros((), dtype=record)
    user_data["bayeslaw_buffer"] = buffer.ctypes.data
    user_data = update_user_data(user_data, shared)  # nutpie's own, as its with_data does
    if record.itemsize != 8 * (2 * len(shared) + sum(v.ndim for v in shared.values()) + 1):
        raise RuntimeError("nutpie's user_data layout is not the one "
                           "bayeslaw.inference.compiled reads; "
                           "check the nutpie version against pyproject.toml")
    return user_data
