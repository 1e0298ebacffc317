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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The prior quantile of a group sd below which the mode search does not go
#: (:func:`scale_floors`).
SCALE_FLOOR_QUANTILE = 0.01

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
    held : tuple of str
        The group sds held at their prior's median (:func:`find_mode`'s ``floors``) because
        the search put them below their floor.
    pinned : tuple of str
        The variables held at their prior's centre through the whole search
        (:class:`ScaleFloors`' ``pinned``: the checkpoint shifts).
    """

    point: np.ndarray
    cov: np.ndarray
    evaluations: int
    held: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()

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
        # user_data holds only the addresses of the shared arrays, which the compiled model
        # owns (its shared_data): keep the model, or a call after it is gone reads freed memory
        self._compiled = compiled
        self._user = compiled.user_data.ctypes.data
        self._grad = np.zeros(self.n)
        self._logp = np.zeros(1)
        self.calls = 0

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """``(logp, grad)`` at ``x``; ``logp = -inf`` where nutpie reports a failure."""
        x = np.ascontiguousarray(x, dtype=float)
        self.calls += 1
        code = self._fn(self.n, x.ctypes.data, self._grad.ctypes.data,
                        self._logp.ctypes.data, self._user)
        if code != 0:
            return -np.inf, np.zeros(self.n)
        return float(self._logp[0]), self._grad.copy()


def find_mode(compiled: Any, start: np.ndarray, *, max_iter: int = 20000, restarts: int = 50,
              gtol: float = 1e-3, floors: Any = None) -> Mode | None:
    """The mode of ``compiled``'s log density from ``start`` and the curvature there.

    ``floors`` (optional): a function of nothing returning the :class:`ScaleFloors` of the
    model's group sds (or ``None``), called once before the search.  Its ``pinned``
    coordinates (a checkpoint shock's shifts and sd) are held at their centre throughout.
    Where the point puts a group sd below its floor, in its funnel's neck, those sds are held
    at their prior's median and the other coordinates maximized given them (again while
    another sd falls below its floor); the curvature of the held and pinned ones is their
    prior's (uncorrelated with the rest).  Where nothing is pinned and no sd is below its
    floor the result is the same as without ``floors``; where the
    search given the held sds fails or its curvature is not proper, the result is ``None``
    (the chains then start from the prior's centre, not from the point in the neck).

    Returns ``None`` (the caller warns) when the optimizer ends at a non-finite point, or
    the negative Hessian is not positive definite (a mode on a ridge or at the boundary of
    the support, such as a group sd collapsing to zero).
    """
    density = LogDensity(compiled)
    found = None if floors is None else floors()
    if found is not None and len(found.lower) != len(start):
        raise ValueError(f"find_mode: the sd floors have {len(found.lower)} coordinates and "
                         f"the model's point {len(start)}: floors of another model's layout "
                         "(a bug in the caller, not in the data)")
    pinned = None if found is None or found.pinned is None or not found.pinned.any() \
        else found.pinned
    start = np.asarray(start, float)
    point = _maximize(density, start if pinned is None else np.where(pinned, found.centre, start),
                      max_iter, restarts, gtol, pinned)
    if point is None:
        return None
    if found is None:
        return _laplace(density, point)
    first = np.zeros(len(point), bool) if pinned is None else pinned
    held = first | (point < found.lower)
    if np.any(held & ~first):
        point = _hold(density, point, held, found, (max_iter, restarts, gtol))
    if not held.any():
        return _laplace(density, point)
    mode = None if point is None else _laplace(density, point, held, found.spread)
    if mode is None:
        return None
    return dataclasses.replace(mode, held=_names(found.names, held & ~first),
                               pinned=_names(found.names, first))


def _names(names: tuple[str, ...], mask: np.ndarray) -> tuple[str, ...]:
    """The variables of the coordinates in ``mask``, each once, in order."""
    return tuple(dict.fromkeys(name for name, m in zip(names, mask, strict=True) if m))


def _hold(density: LogDensity, point: np.ndarray, held: np.ndarray, found: ScaleFloors,
          search: tuple[int, int, float]) -> np.ndarray | None:
    """The maximum given the ``held`` coordinates at ``found.centre``, or None.

    Each group sd that falls below its floor is held too (``held`` is updated in place).
    """
    while point is not None:  # holding one sd may let another fall: hold it too, and again
        point = _maximize(density, np.where(held, found.centre, point), *search, held)
        fallen = point is not None and point < found.lower
        if point is None or not np.any(fallen):
            break
        held |= fallen
    return point


@dataclass(frozen=True)
class ScaleFloors:
    """Where the mode search stops a group sd, per unconstrained coordinate (log scale).

    ``lower`` is the log of the sd prior's :data:`SCALE_FLOOR_QUANTILE` quantile
    (``-inf`` for coordinates that are not group sds), ``centre`` the log of its median and
    ``spread`` half the width of its central 68% on the log scale (where a held sd starts,
    and the scale it starts with); ``names`` the variable of each coordinate.  ``pinned``
    (a mask, or None): coordinates held at ``centre`` through the whole search, with the
    curvature ``spread`` (:func:`scale_floors` says which and why).
    """

    lower: np.ndarray
    centre: np.ndarray
    spread: np.ndarray
    names: tuple[str, ...]
    pinned: np.ndarray | None = None


def scale_floors(model: Any, spec: Any, shapes: Mapping[str, Any]) -> ScaleFloors | None:
    """The :class:`ScaleFloors` of the PyMC ``model`` of ``spec`` (nutpie's coordinates).

    ``shapes`` gives each value variable's shape by name (the compiled model's
    ``shape_info``: nothing is evaluated here); the coordinates follow ``model.free_RVs``,
    as nutpie lays them out.

    The group sds are each effect's learned sd (``<effect>_sd``), with a noise scale per
    group ``sigma_spread`` and the checkpoints' ``shock``, where sampled on the log scale (a
    positive prior: not a Uniform or Beta, whose coordinate is an interval's); ``None`` when
    the spec has none.

    With a checkpoint shock the shifts' standard draws (``N(0, 1)``) and their sd are
    *pinned*: held at 0 and at the sd prior's median (for a prior sampled on the log scale;
    another's coordinate at 0) through the whole search.  Free, the
    shifts follow one curve's residuals at 3-9 rows a checkpoint, its noise scale shrinks
    toward zero and L-BFGS climbs a spike for minutes without a proper mode
    (``benchmarks/results/steps_shock_2026-12-07/mode_probe_labelled.txt``); held, the rest
    is the mode of the model without the shock, and the shifts start from their prior.

    Why: the joint mode of a centered group term of few levels can sit in the neck of its
    funnel, the sd shrunk to nothing with its levels, where the posterior holds almost no
    mass.  Chains started there with the curvature of that point never leave it, nearly
    every transition divergent (the step-wise law's prefix fits:
    ``benchmarks/results/steps_prefix_init_2026-12-04/``).
    """
    from ..model.shock import SHOCK_Z
    from ..spec.parts import Prior

    priors = {f"{e.name}_sd": e.scale for e in spec.effects if isinstance(e.scale, Prior)}
    lk = spec.likelihood
    if lk.sigma_by is not None and isinstance(lk.sigma_spread, Prior):
        priors["sigma_spread"] = lk.sigma_spread
    if lk.shock is not None:  # the checkpoints' shifts: a group of their own
        priors["shock"] = lk.shock
    if not priors:
        return None
    pin = {"shock", SHOCK_Z} if lk.shock is not None else set()
    rows, names = [], []
    for rv in model.free_RVs:
        # a floor only where the sd is sampled as its log (not an interval's logit, say)
        log = getattr(model.rvs_to_transforms.get(rv), "name", None) == "log"
        prior = priors.get(rv.name) if log else None
        row = (-np.inf, 0.0, 1.0) if prior is None else (
            np.log(prior.quantile(SCALE_FLOOR_QUANTILE)), np.log(prior.quantile(0.5)),
            0.5 * np.log(prior.quantile(0.8413) / prior.quantile(0.1587)))
        size = int(np.prod(shapes[model.rvs_to_values[rv].name], dtype=int))
        rows.extend([(*row, rv.name in pin)] * size)
        names.extend([rv.name] * size)
    lower, centre, spread, pinned = np.asarray(rows, float).T
    return ScaleFloors(lower, centre, spread, tuple(names), pinned.astype(bool))


def _negative(density: LogDensity) -> Any:
    """``x -> (-logp, -grad)``, ``(inf, 0)`` where the density is not finite."""
    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        logp, grad = density(x)
        if not np.isfinite(logp):
            return np.inf, np.zeros_like(x)
        return -logp, -grad

    return objective


def _maximize(density: LogDensity, start: np.ndarray, max_iter: int, restarts: int,
              gtol: float, held: np.ndarray | None) -> np.ndarray | None:
    """The best point of L-BFGS on ``-density`` from ``start``, or None.

    The ``held`` coordinates (a mask) stay where ``start`` has them.
    """
    from scipy.optimize import minimize

    objective = _negative(density)
    bounds = None if held is None else [(x, x) if h else (None, None)
                                        for x, h in zip(start, held, strict=True)]
    free = np.ones(len(start), bool) if held is None else ~held
    # a line search that steps into an overflow (logp = -inf) stops L-BFGS early: restart
    # from the best point until the gradient vanishes or nothing improves
    point, best = start, np.inf
    with np.errstate(all="ignore"):
        for _ in range(restarts):
            res = minimize(objective, point, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": max_iter, "maxfun": 2 * max_iter, "maxcor": 30,
                                    "ftol": 1e-13, "gtol": 1e-7})
            if not np.isfinite(res.fun) or res.fun >= best - 1e-9 * max(1.0, abs(best)):
                break
            point, best = res.x, res.fun
            if np.max(np.abs(res.jac[free])) < gtol:
                break
    if not np.isfinite(best) or not np.all(np.isfinite(point)):
        return None
    return point


def _laplace(density: LogDensity, point: np.ndarray, held: np.ndarray | None = None,
             spread: np.ndarray | None = None) -> Mode | None:
    """The curvature of ``density`` at ``point``: a :class:`Mode`, or None if not proper.

    ``held`` coordinates (a mask) get the variance ``spread**2`` and no correlation; the
    curvature of the others is taken with them fixed.
    """
    objective = _negative(density)
    n = len(point)
    free = np.flatnonzero(np.ones(n, bool) if held is None else ~held)
    step = 1e-5 * np.maximum(1.0, np.abs(point))
    hess = np.empty((len(free), len(free)))
    for k, i in enumerate(free):
        up, down = point.copy(), point.copy()
        up[i] += step[i]
        down[i] -= step[i]
        hess[:, k] = (objective(up)[1][free] - objective(down)[1][free]) / (2 * step[i])
    hess = 0.5 * (hess + hess.T)  # the Hessian of -logp: positive definite at a proper mode
    try:
        np.linalg.cholesky(hess)
        inner = np.linalg.inv(hess)
        np.linalg.cholesky(inner)
    except np.linalg.LinAlgError:
        return None
    cov = np.diag(np.zeros(n) if spread is None else np.asarray(spread, float) ** 2)
    cov[np.ix_(free, free)] = inner
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
    return standard_start(compiled)


def standard_start(compiled: Any) -> Any:
    """``compiled`` with each chain started at ``z ~ N(0, I)`` (seeded by nutpie per chain).

    Where the density or gradient is not finite there (a heavy-tailed direction reaching an
    overflow), a draw closer to ``z = 0``, down to ``z = 0`` itself.
    """
    logp = LogDensity(compiled)
    n = int(compiled.n_dim)

    def start(seed: Any) -> np.ndarray:
        z = np.random.default_rng(seed).standard_normal(n)
        for shrink in (1.0, 0.5, 0.25, 0.1):
            value, grad = logp(shrink * z)
            if np.isfinite(value) and np.all(np.isfinite(grad)):
                return shrink * z
        return np.zeros(n)

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
