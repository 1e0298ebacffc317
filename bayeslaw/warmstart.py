"""A warm start for nutpie: chains start near the posterior, in coordinates scaled to it.

Without it, nutpie starts each chain at the prior's centre with a unit mass matrix, and on
the bundled sweep warm-up spent 82% of the leapfrog steps (issue 18).  Here:

1. :func:`find_mode` maximizes the log density (L-BFGS on the compiled nutpie function,
   called through ``ctypes``) and takes the curvature there by central differences of the
   gradient: a Laplace approximation ``N(mode, H^-1)``.
2. :class:`Standardized` wraps the compiled log density and its expansion to the draws in
   the affine map ``x = mode + L z`` (``L`` the Cholesky factor of ``H^-1``, or its diagonal
   for models of more than :data:`DENSE_MAX_DIM` coordinates, where the dense product would
   cost as much as the gradient).  nutpie 0.16 takes no starting mass matrix, so this is how
   the curvature reaches it: it samples ``z``, which is about standard normal, and adapts
   from there.  The map is affine, so its Jacobian is a constant and the posterior of ``x``
   is unchanged.  Each chain starts at ``z ~ N(0, I)``: a draw of the Laplace approximation,
   so chains are dispersed about as much as the posterior.

The wrappers are compiled once per compiled model (numba); a new fit writes its mode and
factor into the wrapper's buffer, so refits of the same structure compile nothing.
"""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Largest model (unconstrained coordinates) that gets the dense Cholesky factor; larger ones
#: get the diagonal scale (per-run terms of a sweep of hundreds of runs).
DENSE_MAX_DIM = 150

_PROTO = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p, ctypes.c_void_p)
_EXPAND_PROTO = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64,
                                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


@dataclass(frozen=True)
class Mode:
    """A mode of the posterior and the Laplace approximation there.

    Attributes
    ----------
    point : ndarray
        The maximum of the log density, in nutpie's unconstrained coordinates.
    cov : ndarray
        The inverse of the negative Hessian there.
    evaluations : int
        Log density + gradient evaluations spent (optimization and curvature).
    """

    point: np.ndarray
    cov: np.ndarray
    evaluations: int

    def factor(self) -> np.ndarray:
        """The lower-triangular ``L`` with ``L L^T = cov`` (diagonal for large models)."""
        if len(self.point) > DENSE_MAX_DIM:
            return np.diag(np.sqrt(np.diag(self.cov)))
        return np.linalg.cholesky(self.cov)


class LogDensity:
    """The compiled nutpie log density + gradient as a Python function (``ctypes``)."""

    def __init__(self, compiled: Any) -> None:
        self.n = int(compiled.n_dim)
        self._fn = _PROTO(compiled.compiled_logp_func.address)
        self._user_data = compiled.user_data  # keeps the data alive while we call
        self._grad = np.zeros(self.n)
        self._logp = np.zeros(1)
        self.calls = 0

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(logp, grad)`` at ``x``; ``logp = -inf`` where nutpie reports a failure."""
        x = np.ascontiguousarray(x, dtype=float)
        self.calls += 1
        code = self._fn(self.n, x.ctypes.data, self._grad.ctypes.data,
                        self._logp.ctypes.data, self._user_data.ctypes.data)
        if code != 0:
            return -np.inf, np.zeros(self.n)
        return float(self._logp[0]), self._grad.copy()


def find_mode(compiled: Any, start: np.ndarray, *, max_iter: int = 20000, restarts: int = 50,
              gtol: float = 1e-3) -> Mode | None:
    """The mode of ``compiled``'s log density from ``start`` and the curvature there.

    Returns ``None`` (the caller warns) when the optimizer ends at a non-finite point, or
    the negative Hessian is not positive definite (a mode on a ridge or at the boundary of
    the support, such as a group sd collapsing to zero).
    """
    from scipy.optimize import minimize

    density = LogDensity(compiled)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        logp, grad = density(x)
        if not np.isfinite(logp):
            return np.inf, np.zeros_like(x)
        return -logp, -grad

    # a line search that steps into an overflow (logp = -inf) stops L-BFGS early: restart
    # from the best point until the gradient vanishes or nothing improves
    point, best = np.asarray(start, float), np.inf
    with np.errstate(all="ignore"):
        for _ in range(restarts):
            res = minimize(objective, point, jac=True, method="L-BFGS-B",
                           options={"maxiter": max_iter, "maxfun": 2 * max_iter, "maxcor": 30,
                                    "ftol": 1e-13, "gtol": 1e-7})
            if not np.isfinite(res.fun) or res.fun >= best - 1e-9 * max(1.0, abs(best)):
                break
            point, best = res.x, res.fun
            if np.max(np.abs(res.jac)) < gtol:
                break
    if not np.isfinite(best) or not np.all(np.isfinite(point)):
        return None
    n = len(point)
    step = 1e-5 * np.maximum(1.0, np.abs(point))
    hess = np.empty((n, n))
    for i in range(n):
        up, down = point.copy(), point.copy()
        up[i] += step[i]
        down[i] -= step[i]
        hess[:, i] = (objective(up)[1] - objective(down)[1]) / (2 * step[i])
    hess = 0.5 * (hess + hess.T)  # the Hessian of -logp: positive definite at a proper mode
    try:
        np.linalg.cholesky(hess)
        cov = np.linalg.inv(hess)
        np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(cov)):
        return None
    return Mode(point, cov, density.calls)


class Standardized:
    """nutpie's compiled model sampled in ``z`` with ``x = shift + factor @ z``.

    Build once per compiled model (it compiles two small numba functions); :meth:`at` gives
    the compiled model for one fit's mode.  The buffer holding the shift and factor belongs
    to this object: one fit at a time per compiled model (fits in one process run one after
    another; other processes have their own).
    """

    def __init__(self, compiled: Any) -> None:
        import numba
        from nutpie.compile_pymc import address_as_void_pointer

        n, n_exp = int(compiled.n_dim), int(compiled.n_expanded)
        self.n = n
        # the shift, then the factor: L row-major when dense, its diagonal above DENSE_MAX_DIM
        # (the products below then cost n, not n^2 / 2, per evaluation)
        self.dense = dense = n <= DENSE_MAX_DIM
        size = n + (n * n if dense else n)
        self.buffer = np.zeros(size)
        addr = self.buffer.ctypes.data
        inner = _PROTO(compiled.compiled_logp_func.address)
        inner_expand = _EXPAND_PROTO(compiled.compiled_expand_func.address)
        logp_sig = numba.types.int64(numba.types.uint64, numba.types.CPointer(numba.types.double),
                                     numba.types.CPointer(numba.types.double),
                                     numba.types.CPointer(numba.types.double),
                                     numba.types.voidptr)
        expand_sig = numba.types.int64(numba.types.uint64, numba.types.uint64,
                                       numba.types.CPointer(numba.types.double),
                                       numba.types.CPointer(numba.types.double),
                                       numba.types.voidptr)

        @numba.njit(inline="always")
        def to_x(z: Any) -> Any:  # pragma: no cover - compiled by numba
            buf = numba.carray(address_as_void_pointer(addr), (size,), dtype=np.float64)
            x = buf[:n].copy()
            for i in range(n):
                if not dense:
                    x[i] += buf[n + i] * z[i]
                    continue
                acc = 0.0
                for j in range(i + 1):
                    acc += buf[n + i * n + j] * z[j]
                x[i] += acc
            return x

        @numba.cfunc(logp_sig)
        def logp(dim: Any, z_: Any, grad_: Any, logp_: Any, user_data: Any) -> Any:
            if dim != n:  # pragma: no cover - compiled by numba
                return -1
            z = numba.carray(z_, (n,))
            x = to_x(z)
            gx = np.zeros(n)
            lp = np.zeros(1)
            code = inner(dim, address_as_void_pointer(x.ctypes.data),
                         address_as_void_pointer(gx.ctypes.data),
                         address_as_void_pointer(lp.ctypes.data), user_data)
            buf = numba.carray(address_as_void_pointer(addr), (size,), dtype=np.float64)
            grad = numba.carray(grad_, (n,))
            for j in range(n):  # grad_z = L^T grad_x
                if not dense:
                    grad[j] = buf[n + j] * gx[j]
                    continue
                acc = 0.0
                for i in range(j, n):
                    acc += buf[n + i * n + j] * gx[i]
                grad[j] = acc
            out = numba.carray(logp_, (1,))
            out[0] = lp[0]
            return code

        @numba.cfunc(expand_sig)
        def expand(dim: Any, expanded: Any, z_: Any, out_: Any, user_data: Any) -> Any:
            if dim != n:  # pragma: no cover - compiled by numba
                return -1
            z = numba.carray(z_, (n,))
            x = to_x(z)
            return inner_expand(dim, expanded, address_as_void_pointer(x.ctypes.data),
                                address_as_void_pointer(numba.carray(out_, (n_exp,))
                                                        .ctypes.data), user_data)

        self._logp, self._expand = logp, expand
        self._keep = (inner, inner_expand)

    def at(self, compiled: Any, mode: Mode) -> Any:
        """``compiled`` (this structure, any data) sampled around ``mode``.

        Chains start at ``z ~ N(0, I)`` seeded by nutpie's per-chain seed.
        """
        if int(compiled.n_dim) != self.n:
            raise ValueError("the compiled model does not match this standardization")
        self.buffer[:self.n] = mode.point
        factor = mode.factor()
        self.buffer[self.n:] = factor.ravel() if self.dense else np.diag(factor)
        wrapped = dataclasses.replace(compiled, compiled_logp_func=self._logp,
                                      compiled_expand_func=self._expand)
        density = LogDensity(wrapped)

        def start(seed: Any) -> np.ndarray:
            # a Laplace draw; where its density or gradient is not finite (a heavy-tailed
            # direction reaching an overflow), a draw closer to the mode, down to the mode
            z = np.random.default_rng(seed).standard_normal(self.n)
            for shrink in (1.0, 0.5, 0.25, 0.1):
                logp, grad = density(shrink * z)
                if np.isfinite(logp) and np.all(np.isfinite(grad)):
                    return shrink * z
            return np.zeros(self.n)

        return dataclasses.replace(wrapped, initial_point_func=start)
