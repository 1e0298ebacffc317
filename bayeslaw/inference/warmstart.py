"""A warm start for nutpie: chains start near the posterior, in coordinates scaled to it.

Without it, nutpie starts each chain at the prior's centre with a unit mass matrix, and on
the bundled sweep warm-up spent 82% of the leapfrog steps (issue 18).  Here:

1. :func:`find_mode` maximizes the log density (L-BFGS on the compiled nutpie function,
   called through ``ctypes``) and takes the curvature there by central differences of the
   gradient: a Laplace approximation ``N(mode, H^-1)``.
2. :func:`standardized` has the compiled log density and its expansion to the draws
   (:mod:`bayeslaw.inference.compiled`) evaluated through the affine map ``x = mode + L z`` (``L``
   the Cholesky factor of ``H^-1``, or its diagonal for models of more than
   :data:`DENSE_MAX_DIM` coordinates, where the dense product would cost as much as the
   gradient).  nutpie 0.16 takes no starting mass matrix, so this is how
   the curvature reaches it: it samples ``z``, which is about standard normal, and adapts
   from there.  The map is affine, so its Jacobian is a constant and the posterior of ``x``
   is unchanged.  Each chain starts at ``z ~ N(0, I)``: a draw of the Laplace approximation,
   so chains are dispersed about as much as the posterior.

The map is compiled into the model's callbacks (:mod:`bayeslaw.inference.compiled`); a new fit
writes its mode and factor into their buffer, so refits of the same structure compile
nothing.
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


def standardized(density: Any, compiled: Any, mode: Mode) -> Any:
    """``compiled`` (``density``'s model with any data) sampled around ``mode``.

    Writes the mode and :meth:`Mode.factor` into ``density``'s buffer
    (:class:`bayeslaw.inference.compiled.Density`: one fit at a time per compiled model), so that
    nutpie samples ``z`` with ``x = mode + L z``.  Chains start at ``z ~ N(0, I)`` seeded by
    nutpie's per-chain seed.
    """
    if int(compiled.n_dim) != density.n:
        raise ValueError("the compiled model does not match this density")
    density.standardize(mode.point, mode.factor())
    logp = LogDensity(compiled)

    def start(seed: Any) -> np.ndarray:
        # a Laplace draw; where its density or gradient is not finite (a heavy-tailed
        # direction reaching an overflow), a draw closer to the mode, down to the mode
        z = np.random.default_rng(seed).standard_normal(density.n)
        for shrink in (1.0, 0.5, 0.25, 0.1):
            value, grad = logp(shrink * z)
            if np.isfinite(value) and np.all(np.isfinite(grad)):
                return shrink * z
        return np.zeros(density.n)

    return dataclasses.replace(compiled, initial_point_func=start)


def check_start(start: np.ndarray, density: Any, error: Any) -> None:
    """Raise ``error()`` unless the log density and its gradient are finite at ``start``.

    ``density`` is a :class:`LogDensity` (or any function ``x -> (logp, grad)``).  A sampler
    started where they are not fails every initialization (nutpie then crashed the process).
    """
    logp, grad = density(start)
    if not (np.isfinite(logp) and np.all(np.isfinite(grad))):
        raise error()


def start_problem(model: Any, runs: Any, seed: int) -> tuple[str, str] | None:
    """What is not finite at a PyMC model's initial point: ``(kind, message)`` or None.

    ``kind`` is ``"spec"`` for parameters whose prior density, value or gradient is not
    finite there (named with the first bad value), ``"data"`` for the runs whose likelihood
    (the observed ``loss``, one term per run of ``runs``) is not.
    """
    point = model.initial_point(int(seed))
    with np.errstate(all="ignore"):
        logps = model.point_logps(point)
        outs = model.unobserved_value_vars
        values = dict(zip([v.name for v in outs], model.compile_fn(outs)(point), strict=True))
    bad = [n for n, v in logps.items() if n != "loss" and not np.isfinite(v)]
    bad += [f"{n} = {_first_bad(v)}" for n, v in values.items() if not np.all(np.isfinite(v))]
    if bad:
        return "spec", (f"at its initial point (the priors' centres) "
                        f"{', '.join(dict.fromkeys(bad))} is not finite (prior density or "
                        "value); check those priors and [fixed] values in the spec")
    if "loss" in logps and not np.isfinite(logps["loss"]):
        with np.errstate(all="ignore"):
            per_run = model.compile_fn(model.logp(vars=[model["loss"]], sum=False)[0])(point)
        names = [str(r) for r, v in zip(runs, np.ravel(per_run), strict=False)
                 if not np.isfinite(v)]
        return "data", (f"the likelihood of run(s) {names[:5]} is not finite at the model's "
                        "initial point: check their loss and covariate values (extreme values, "
                        "units)")
    return _gradient_problem(model, point)


def _first_bad(value: Any) -> str:
    """The first non-finite entry of ``value``, printed plainly (``inf``, not a repr)."""
    flat = np.ravel(np.asarray(value, dtype=float))
    return str(float(flat[~np.isfinite(flat)][0]))


def _gradient_problem(model: Any, point: dict[str, Any]) -> tuple[str, str] | None:
    """The parameters whose log-density gradient is not finite at ``point``, or None."""
    with np.errstate(all="ignore"):
        grad = np.asarray(model.compile_dlogp()(point))
    names, start = [], 0
    for value in model.value_vars:
        size = int(np.size(point[value.name]))
        if not np.all(np.isfinite(grad[start:start + size])):
            names.append(model.values_to_rvs[value].name)
        start += size
    if not names:
        return None
    return "spec", (f"the gradient of its log density in {', '.join(names)} is not finite at "
                    "its initial point (the priors' centres); check those priors in the spec")
