"""A model graph's log density and gradient, evaluated for a test by PyTensor's Python linker.

Tests that check a graph's values (the logp references, reparameterized specs, the shipped
specs' start, the compiled density against its graph) need the graph evaluated once or a few
times, not fast code.  Fits use none of this (nutpie compiles the density with numba), so the
backend here only evaluates the graph under test.  PyMC's default (PyTensor's C backend: g++
over every fused operation, tens of seconds a model on an empty cache) and JAX (0d33845 to
d2ca627: PyTensor's full rewriting, then XLA) both spent their seconds
making code that then ran once.  The Python linker runs each node's numpy ``perform``: no
compiler, no compile cache, no rewriting beyond what PyMC's ``compile`` always adds
(``random_make_inplace`` and its bounds check to a switch).  On the 22 reference entries the
values agree with the stored references as closely as JAX's did (logp 2.1e-15 relative at
most, gradient 2.8e-11 of its largest entry), and the time to build, compile and evaluate
one falls from 1.9-10.0 s to 0.4-3.7 s a model; the six files that use this module took 0.52
and 0.53 of their time (``benchmarks/results/suite_pydensity_2026-12-05/``).

PyTensor's ``Elemwise.perform`` cannot run a node of more than 32 operands (numpy's ufunc
limit; the C backend would have fused it away): a model's log density is one ``Add`` over
every term, 33 on ``iso_depth``.  :func:`narrow` rewrites such sums and products into a tree
of nodes of at most :data:`WIDEST` operands first, the same value up to the order of the
additions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: The most operands :func:`narrow` leaves on one ``Add`` or ``Mul`` node (numpy's limit is
#: 32 operands, outputs included).
WIDEST = 16


def compile_kwargs() -> dict[str, Any]:
    """``{"mode": <the Python linker, no rewriting>}`` for PyMC's ``compile_kwargs``."""
    from pytensor.compile.mode import Mode

    return {"mode": Mode(linker="py", optimizer=None)}


def narrow(outputs: Sequence[Any]) -> list[Any]:
    """``outputs`` with every ``Add`` or ``Mul`` of more than :data:`WIDEST` operands
    rewritten into a tree of narrower ones (in place, as ``pytensor.graph.rewrite_graph``
    does with ``clone=False``)."""
    from pytensor.graph.rewriting.basic import in2out, node_rewriter
    from pytensor.graph.rewriting.utils import rewrite_graph
    from pytensor.scalar.basic import Add, Mul
    from pytensor.tensor.elemwise import Elemwise

    @node_rewriter([Elemwise])
    def split_wide(fgraph: Any, node: Any) -> list[Any] | None:
        if len(node.inputs) <= WIDEST or not isinstance(node.op.scalar_op, (Add, Mul)):
            return None

        def tree(inputs: list[Any]) -> Any:
            if len(inputs) <= WIDEST:
                return node.op(*inputs)
            return node.op(*[tree(inputs[i:i + WIDEST]) for i in range(0, len(inputs), WIDEST)])

        return [tree(list(node.inputs))]

    return list(rewrite_graph(list(outputs), include=(), custom_rewrite=in2out(split_wide)))


def compile_logp(model: Any, **kwargs: Any) -> Callable[[dict], np.ndarray]:
    """``model.compile_logp(**kwargs)`` evaluated by the Python linker, returning a numpy
    array."""
    (logp,) = narrow([model.logp(**kwargs)])
    function = model.compile_fn(logp, **compile_kwargs())
    return lambda point: np.asarray(function(point))


def compile_logp_dlogp(model: Any) -> Callable[[dict], tuple[np.ndarray, np.ndarray]]:
    """``model``'s log density and its gradient as one function of a point: the graphs of
    ``model.compile_logp()`` and ``model.compile_dlogp()`` (PyMC's own steps: the gradient of
    the pre-gradient-rewritten log density with respect to the continuous value variables),
    built once and evaluated by the Python linker."""
    from pymc.pytensorf import gradient, rewrite_pregrad

    logp = model.logp()
    grad = gradient(rewrite_pregrad(logp), model.continuous_value_vars)
    function = model.compile_fn(inputs=model.value_vars, outs=narrow([logp, grad]),
                                on_unused_input="ignore", **compile_kwargs())
    return lambda point: tuple(np.asarray(out) for out in function(point))
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
