"""A model graph's log density and gradient, compiled for a test with JAX.

Tests that check a graph's values (the logp references, reparameterized specs, the shipped
specs' start) used PyMC's default, PyTensor's C backend: on a machine with an empty compile
cache that costs up to 40 s a model (g++ over every fused operation). Five test files
went from 614 s to 435 s on empty caches with JAX, the whole suite much less
(``benchmarks/results/suite_jax_density_2026-12-04/README.md``). Fits use neither backend
(nutpie compiles the density with numba), so the backend here only evaluates the graph
under test; on the 18 shipped specs JAX can trace, the values agree with the C backend's to
within 6.3e-16 (logp, relative) and 2.0e-11 (gradient, relative to its largest entry), well
inside the references' rtol 1e-9.

Where JAX is not installed (a user's clone without the test extra) the default backend is
used, slower but the same check; in CI (``CI=true``) JAX must be there.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .extras import need

#: Free variables of graphs whose gradient JAX cannot trace: the random-walk noise's
#: (``walk``) builds an array whose length is a traced value (``ConcretizationTypeError``);
#: those models use the default backend.
JAX_CANNOT = frozenset({"walk"})


def compile_kwargs(model: Any) -> dict[str, str]:
    """``{"mode": "JAX"}`` when JAX can evaluate ``model``'s graph here, else ``{}``."""
    if importlib.util.find_spec("jax") is None:
        if os.environ.get("CI") == "true":  # the test extra's rule: fails in CI
            need("jax", "graph densities compiled in seconds in tests")
        return {}
    if JAX_CANNOT & {var.name for var in model.free_RVs}:
        return {}
    import jax

    jax.config.update("jax_enable_x64", True)  # PyTensor's float64 graph, not float32
    return {"mode": "JAX"}


def compile_logp(model: Any, **kwargs: Any) -> Callable[[dict], np.ndarray]:
    """``model.compile_logp(**kwargs)`` with JAX where it can (:func:`compile_kwargs`), returning
    numpy arrays as the default backend does."""
    return _as_numpy(model.compile_logp(**kwargs, **compile_kwargs(model)))


def compile_logp_dlogp(model: Any) -> Callable[[dict], tuple[np.ndarray, np.ndarray]]:
    """``model``'s log density and its gradient as one function of a point: the graphs of
    ``model.compile_logp()`` and ``model.compile_dlogp()`` (PyMC's own steps: the gradient of
    the pre-gradient-rewritten log density with respect to the continuous value variables),
    built, rewritten and compiled once instead of twice.  Used where a test needs both: the
    four tests that do took 13-20% less (``benchmarks/results/suite_density_2026-12-05/``)."""
    from pymc.pytensorf import gradient, rewrite_pregrad

    logp = model.logp()
    grad = gradient(rewrite_pregrad(logp), model.continuous_value_vars)
    function = model.compile_fn(inputs=model.value_vars, outs=[logp, grad],
                                on_unused_input="ignore", **compile_kwargs(model))
    return lambda point: tuple(np.asarray(out) for out in function(point))


def _as_numpy(function: Any) -> Callable[[dict], np.ndarray]:
    return lambda point: np.asarray(function(point))


def to_offset(point: dict, spec: Any, model: Any) -> float:
    """A point of the centered model moved, in place, into ``model``'s offset coordinates.

    ``sampler.centered_values = "offset"``: each joint ``<term>_joint`` gets its population
    value's log and its term's deviations, popped from ``point``, as the levels ``v = log p +
    d`` and the offset ``z = sqrt(k) (mean(v) - log p) / sd`` (written from the transform's
    definition, not with it). Returns the transform's log-Jacobian, ``sum log(sd / sqrt(k))``
    (:func:`bayeslaw.model.transforms.offset_transform`): the offset model's log density at
    the moved point is the centered model's at ``point`` plus it. 0 where nothing is joined.
    A term of ``point`` stored non-centered (``<term>_z``) is centered on the way: its
    deviations are ``sd z``, and the log-Jacobian also holds ``-log sd`` per level.
    """
    jacobian = 0.0
    for var in model.value_vars:
        if not var.name.endswith("_joint_offset__"):
            continue
        name = var.name[:-len("_joint_offset__")]
        param = next(e.param for e in spec.effects if e.name == name)
        sd = np.exp(point[f"{name}_sd_log__"])
        if name in point:
            d = point.pop(name)
        else:  # stored non-centered: d = sd z, whose density is z's less log sd per level
            d = sd * np.asarray(point.pop(f"{name}_z"), float)
            jacobian -= len(d) * np.log(sd)
        centre = point.pop(f"{param}_log__")
        levels = centre + d
        root = np.sqrt(len(levels))
        point[var.name] = np.r_[levels, root * (levels.mean() - centre) / sd]
        jacobian += np.log(sd / root)
    return jacobian
