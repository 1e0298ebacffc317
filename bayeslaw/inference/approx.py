"""Approximate posteriors for a first look: Laplace at the mode, or pathfinder.

``fit(..., method="laplace")`` draws from the warm start's Laplace approximation
(:func:`bayeslaw.inference.warmstart.find_mode`: the mode and the inverse of the negative Hessian
there, in nutpie's unconstrained coordinates), pushed through the compiled model's expansion
to every variable, exactly as NUTS draws are.  ``method="pathfinder"`` runs pymc-extras'
``fit_pathfinder`` (the optional extra ``bayeslaw[approx]``) on the same PyMC model.

Both give independent draws, not a Markov chain, stored as one chain: R-hat, ESS and
divergences do not apply.  Each reports the Pareto k of its importance ratios (pathfinder's
own; for Laplace, posterior / approximation at its draws) as the approximation's own check.
:class:`bayeslaw.Fit` labels such a fit approximate in its summary, figures, report and
saved file, and ``bayeslaw check`` refuses it.  How close
each approximation comes to NUTS is measured in ``benchmarks/bench_approx.py``.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from ..errors import BayeslawError

#: Laplace's point may lie at most this many posterior sds (the Newton step) from the mode.
MAX_MODE_OFFSET_SD = 0.05

_EXPAND = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_void_p)


def _posterior(compiled: Any, expanded: np.ndarray) -> Any:
    """The ``posterior`` group of draws ``(S, n_expanded)`` in nutpie's layout (one chain)."""
    import xarray as xr

    names, slices, shapes = compiled.shape_info
    dims, coords = dict(compiled.dims or {}), dict(compiled.coords or {})
    data, used = {}, {}
    for name, sl, shape in zip(names, slices, shapes, strict=True):
        values = expanded[:, sl].reshape(1, len(expanded), *shape)
        var_dims = list(dims.get(name, []))
        if len(var_dims) != len(shape):  # no named dims: numbered ones, as ArviZ names them
            var_dims = [f"{name}_dim_{i}" for i in range(len(shape))]
        for d, size in zip(var_dims, shape, strict=True):
            used[d] = coords.get(d, np.arange(size))
        data[name] = (("chain", "draw", *var_dims), values)
    return xr.Dataset(data, coords={"chain": [0], "draw": np.arange(len(expanded)),
                                    **{d: np.asarray(v) for d, v in used.items()}})


def laplace(compiled: Any, density: Any, seed: int, n_draws: int) -> tuple[Any, dict]:
    """``n_draws`` draws of the Laplace approximation, as ``InferenceData``.

    ``compiled`` is the compiled model with the fit's data (:mod:`bayeslaw.inference.compiled`),
    ``density`` its :class:`~bayeslaw.inference.compiled.Density` (set to the identity here).
    """
    import arviz as az

    from .warmstart import find_mode

    t0 = time.perf_counter()
    density.identity()
    mode = find_mode(compiled, compiled.initial_point_func(int(seed)))
    if mode is None:
        raise BayeslawError(
            "method='laplace' needs a proper mode of the posterior, and the optimizer found "
            "none (it failed, or the curvature is flat along some parameter, e.g. a group sd "
            "at zero); use method='pathfinder' or the default method='nuts'")
    _check_stationary(compiled, mode)
    t1 = time.perf_counter()
    factor = np.linalg.cholesky(mode.cov)  # dense at any size: this runs once
    z = np.random.default_rng(int(seed)).standard_normal((n_draws, len(mode.point)))
    points = mode.point + z @ factor.T
    expand = _EXPAND(compiled.compiled_expand_func.address)
    out = np.zeros((n_draws, int(compiled.n_expanded)))
    user = compiled.user_data.ctypes.data
    for i in range(n_draws):
        x = np.ascontiguousarray(points[i])
        code = expand(compiled.n_dim, compiled.n_expanded, x.ctypes.data,
                      out[i].ctypes.data, user)
        if code != 0:
            raise BayeslawError(f"the compiled model failed to expand Laplace draw {i} "
                                f"(code {code}); use method='nuts'")
    idata = az.InferenceData(posterior=_posterior(compiled, out))
    k = _pareto_k(compiled, points, z)
    return idata, {"start_s": t1 - t0, "sample_s": time.perf_counter() - t1,
                   "start_evaluations": mode.evaluations, "pareto_k": k}


def _check_stationary(compiled: Any, mode: Any) -> None:
    """Refuse a Laplace approximation at a point where the gradient has not vanished.

    The optimizer may stop short of the mode (an iteration limit, a line search stuck at an
    overflow). The gradient ``g`` there is judged on the posterior's own scale: the Newton
    step ``H^-1 g`` to the mode, measured in posterior standard deviations
    (``sqrt(g' H^-1 g)``), must stay below :data:`MAX_MODE_OFFSET_SD`.
    """
    from .warmstart import LogDensity

    logp, grad = LogDensity(compiled)(mode.point)
    offset = float(np.sqrt(max(grad @ mode.cov @ grad, 0.0))) if np.isfinite(logp) else np.inf
    if not offset <= MAX_MODE_OFFSET_SD:
        norm = float(np.max(np.abs(grad))) if np.isfinite(logp) else np.nan
        raise BayeslawError(
            f"method='laplace': the optimizer stopped short of the posterior's mode (gradient "
            f"norm {norm:.3g} (largest coordinate), a Newton step of {offset:.3g} posterior "
            f"sds to the mode, above {MAX_MODE_OFFSET_SD}); its draws would be centred off "
            "the mode: use the default method='nuts' or method='pathfinder'")


def _pareto_k(compiled: Any, points: np.ndarray, z: np.ndarray) -> float:
    """Pareto k of the importance ratios posterior / Laplace at the draws (Yao et al. 2018).

    The draws are kept as they are (not reweighted); k says how far the posterior is from
    the approximation's normal shape: below 0.7 the approximation is usable for a first look,
    above it the posterior's tails or skew differ (hierarchical sds often do).
    """
    import arviz as az

    from .warmstart import LogDensity

    density = LogDensity(compiled)
    logp = np.array([density(x)[0] for x in points])
    log_ratio = logp + 0.5 * np.sum(z * z, axis=1)  # log q up to a constant
    log_ratio = np.where(np.isfinite(log_ratio), log_ratio, -np.inf)
    with np.errstate(all="ignore"):
        _, k = az.psislw(log_ratio - np.max(log_ratio))
    return float(k)


def pathfinder(model: Any, seed: int, n_draws: int) -> tuple[Any, dict]:
    """``n_draws`` pathfinder draws (pymc-extras) of the PyMC ``model``, as ``InferenceData``."""
    try:
        import pymc_extras as pmx
    except ImportError:
        raise BayeslawError(
            "method='pathfinder' needs pymc-extras, an optional extra: pip install "
            "\"bayeslaw[approx]\" (or use method='laplace', which needs nothing more)"
        ) from None
    import warnings

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # pymc-extras reports the paths it drops as warnings; its diagnostics are kept below
        # (Pareto k, paths), and the fit is labelled approximate
        warnings.simplefilter("ignore")
        idata = pmx.fit_pathfinder(model=model, num_draws=int(n_draws), random_seed=int(seed),
                                   inference_backend="pymc", progressbar=False,
                                   display_summary=False, concurrent=None)
    stats = idata.sample_stats

    def stat(name: str) -> float:
        return float(np.asarray(stats[name].values).ravel()[0]) if name in stats else np.nan

    info = {"start_s": 0.0, "compile_s": stat("compile_time"), "sample_s": stat("compute_time"),
            "pareto_k": stat("pareto_k"), "successful_paths": stat("num_successful_paths"),
            "wall_s": time.perf_counter() - t0}
    for group in [g for g in idata.groups() if g != "posterior"]:
        del idata[group]
    return idata, info
