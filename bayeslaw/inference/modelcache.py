"""The per-process cache of compiled models, keyed by the model's plan.

One entry per graph (:attr:`bayeslaw.model.plan.Plan.key`: the spec's graph, the structure and
how many levels of each term are centered) holds the PyMC model and, once a fit needs it, its
nutpie-compiled density.  Refitting data of the same structure swaps the data into the entry's
model instead of recompiling (which levels are centered is data too: the folds of a backtest
share one entry); :data:`COMPILES` logs every compile (what a test counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..data.table import LossData
from ..model.graph import LossModel
from ..model.plan import Plan, make_plan
from ..spec.model_spec import ModelSpec


@dataclass
class Entry:
    """One cache entry: the PyMC model and, on first use, its compiled density.

    ``density`` is the model compiled for nutpie with the warm start's affine map
    (:class:`bayeslaw.inference.compiled.Density`).
    """

    model: LossModel
    density: Any = None
    built: Plan | None = None  # the plan the graph was built from (the child rebuilds it)


CACHE: dict[tuple[Any, ...], Entry] = {}
#: Whether a model numba has not cached is compiled in a child process and then loaded
#: (:mod:`bayeslaw.inference.coldcompile`); ``False`` compiles it in this process, whose
#: draws then differ in the last bits from a process that loads it (for measuring that).
COMPILE_IN_CHILD = True
#: The cache key of every compile in this process, in order (what a test counts).
COMPILES: list[tuple[Any, ...]] = []


def entry_for(plan: Plan, data: LossData) -> Entry:
    """The cache entry of ``plan``, ``data`` (a row subset of its structure) swapped in."""
    if plan.key not in CACHE:
        CACHE[plan.key] = Entry(LossModel(plan), built=plan)
    entry = CACHE[plan.key]
    entry.model.plan = plan  # the same graph; its centered levels are data (Plan.orders)
    entry.model.set_data(data)
    return entry


def get_model(spec: ModelSpec, data: LossData, like: LossData | None = None) -> LossModel:
    """The (cached) :class:`LossModel` of ``spec`` with ``data`` swapped in.

    The model's structure (runs and group levels) is that of ``like`` (default ``data``);
    levels are centered or not by how many points of them ``data`` holds.
    """
    return entry_for(make_plan(spec, like if like is not None else data, data), data).model


def compiled_for(plan: Plan, data: LossData) -> tuple[Entry, Any]:
    """The cache entry with ``data`` swapped in, and its nutpie-compiled form for ``data``."""
    from .coldcompile import compile_elsewhere
    from .compiled import compile_model

    entry = entry_for(plan, data)
    if entry.density is None:
        # a model numba has not cached is compiled in a child process and loaded here, so
        # that the fit runs loaded code (bayeslaw.inference.coldcompile; its fallbacks there)
        cold = ((lambda: compile_elsewhere(entry.built, plan, data)) if COMPILE_IN_CHILD
                else None)
        entry.density = compile_model(entry.model.model, cold=cold)
        COMPILES.append(plan.key)
    compiled = entry.density.compiled
    # containers the graph does not use (a covariate no term needs) are pruned from the
    # compiled graph: pass only the ones it kept
    values = {k: v for k, v in entry.model.held.items() if k in compiled.shared_data}
    return entry, compiled.with_data(**values)


def origin(entry: Entry, compiles_before: int) -> str:
    """Where a fit's compiled model came from, given ``len(COMPILES)`` before the lookup."""
    if len(COMPILES) == compiles_before:
        return "in memory"
    if entry.density.in_child:
        return "in a child process, then loaded"
    return "loaded from disk" if entry.density.from_disk else "now"
