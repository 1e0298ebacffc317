"""The plan of a model: which runs and group levels it holds and which are centered."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import LR_AREA, POINT_COLUMNS
from ..data.table import LossData
from ..errors import DataError, SpecError
from ..spec.model_spec import ModelSpec
from ..spec.settings import GRAPH_FIELDS, SamplerSettings


def level_dim(group: str) -> str:
    """Name of the dimension of a group's levels (``N_level``)."""
    return "run" if group == C.RUN else f"{group}_level"


@dataclass(frozen=True)
class Structure:
    """What must match for a compiled model to be reused: runs and group levels."""

    runs: tuple[str, ...]
    levels: tuple[tuple[str, tuple[Any, ...]], ...]


def groups_of(spec: ModelSpec) -> list[str]:
    """Group columns used by the spec's effects and noise model, in first-use order."""
    groups = [e.group for e in spec.effects]
    if spec.likelihood.sigma_by is not None:
        groups.append(spec.likelihood.sigma_by)
    return list(dict.fromkeys(groups))


def check_compatible(spec: ModelSpec, data: LossData) -> None:
    """Raise if the data cannot be fitted with this spec (columns, levels, collinearity)."""
    law = spec.law_obj
    data.require_levels(law.covariates, law.name, law.min_levels, fixed=tuple(spec.fixed))
    uses_run = [e.name for e in spec.effects if e.group == C.RUN]
    if spec.likelihood.sigma_by == C.RUN:
        uses_run.append("likelihood.sigma_by = 'run'")
    if uses_run and not data.has_runs:
        raise DataError(
            f"the table has no 'run' column (one row per run) but the spec uses per-run terms "
            f"({', '.join(uses_run)}); use a spec without them, e.g. likelihood.sigma_by = "
            "'none' (the chinchilla default)")
    if LR_AREA in law.covariates and LR_AREA in data.columns:
        require_forward_area(data.frame, law.name, data.source)
    table = data.run_table()
    for e in spec.effects:
        _, codes = data.levels(e.group)
        param = law.param(e.param)
        term = law.covariates if param.term is None else law.term_covariates(param.term)
        if param.term is not None and any(_along_runs(c, data) for c in term):
            continue  # the term changes along every run: a per-level shift changes its shape
        for cov in term:
            if _along_runs(cov, data) or (table.groupby(codes)[cov].nunique() > 1).any():
                continue
            what = ("the irreducible loss E" if param.term is None else
                    f"the {param.term} term" + (f" (a function of {cov})"
                                                if param.term != cov else ""))
            raise SpecError(
                f"effect {e.param!r} by {e.group!r} is collinear with the law: {cov} is "
                f"constant within each {e.group} level, so a per-level shift of "
                f"{e.param!r} duplicates {what}. Remove this effect or let another "
                "parameter vary")


def require_forward_area(frame: pd.DataFrame, law: str, where: str) -> None:
    """Refuse a row whose forward area is 0 for ``law``, which divides by it.

    A run whose first logged ``lr`` is 0 has no area up to that step (the rate before it is
    a ramp from 0): the law's D term is infinite there, so no loss is defined.  Such rows
    are refused by name rather than dropped or given an invented rate.
    """
    area = frame[LR_AREA].to_numpy(float)
    bad = np.flatnonzero(~(area > 0))
    if bad.size:
        i = int(bad[0])
        run = frame[C.RUN].iloc[i] if C.RUN in frame.columns else None
        D = float(frame[C.D].iloc[i])
        raise DataError(f"run {run!r}, row {i + 1} of {where}: the forward area lr_area is 0 at "
                        f"D={D:g} (the learning rate is 0 up to there, as when the first "
                        f"logged lr is 0); law {law!r} divides by the forward area (its D term "
                        f"is infinite there): drop the run's rows at D <= {D:g} (a min_D above "
                        "it in bl.load cuts them from every run)")


def _along_runs(cov: str, data: LossData) -> bool:
    """Whether covariate ``cov`` varies along each run (``D``, a schedule's point terms)."""
    return (cov == C.D or cov in POINT_COLUMNS) and data.has_runs


def level_richness(setting: bool | str, like: LossData, observed: LossData, group: str
                   ) -> np.ndarray:
    """Per level of ``group`` (in ``like``'s order), whether to build it centered.

    ``centered = "auto"`` centers a level when ``like`` (the model's full data) holds at
    least :data:`~bayeslaw.constants.CENTERED_MIN_POINTS` points of it *and* ``observed``
    holds any: a level that is in the model but not observed (a held-out T_m level, a
    held-out run) is non-centered, since a centered level with no data is a funnel.
    Observed levels are judged on ``like``, so a training split (a curve prefix) keeps the
    parameterization of the full fit.
    """
    if setting != "auto":
        return np.full(len(like.levels(group)[0]), bool(setting))
    return ((level_counts(like, like, group) >= C.CENTERED_MIN_POINTS)
            & (level_counts(like, observed, group) > 0))


def level_counts(like: LossData, data: LossData, group: str) -> np.ndarray:
    """How many rows of ``data`` each level of ``group`` holds, in ``like``'s level order."""
    levels, _ = like.levels(group)
    index = {v: i for i, v in enumerate(levels.tolist())}
    rows = np.array([index[v] for v in data.frame[group].tolist()], dtype=int)
    return np.bincount(rows, minlength=len(levels))


def own_noise_scale(spec: ModelSpec, like: LossData, observed: LossData) -> np.ndarray | None:
    """Per level of ``sigma_by``, whether it takes a noise scale of its own; None: all do.

    With ``likelihood.sigma_min_points = K`` a level observed at fewer than ``K`` points (but
    at some) takes the pooled scale; a level with no observed point (a held-out run) keeps
    its own deviation, drawn from the population.  Which levels these are is data (a
    container of the graph), so folds that observe other points share one compiled model.
    """
    lk = spec.likelihood
    if lk.sigma_by is None or lk.sigma_min_points is None:
        return None
    n = level_counts(like, observed, lk.sigma_by)
    return (n >= lk.sigma_min_points) | (n == 0)


def centering(spec: ModelSpec, like: LossData, observed: LossData
              ) -> tuple[tuple[str, np.ndarray], ...]:
    """Centered-level masks of every group term (effects, then ``sigma``).

    Part of the key of a compiled model, since they change the graph.  A noise level that
    takes the pooled scale (:func:`own_noise_scale`) is non-centered: its deviation meets no
    data, and a centered level without data is a funnel.
    """
    out = [(e.name, level_richness(e.centered, like, observed, e.group)) for e in spec.effects]
    lk = spec.likelihood
    if lk.sigma_by is not None:
        rich = level_richness(lk.sigma_centered, like, observed, lk.sigma_by)
        own = own_noise_scale(spec, like, observed)
        out.append(("sigma", rich if own is None else rich & own))
    return tuple(out)


def level_order(centered: np.ndarray) -> np.ndarray:
    """A mixed term's levels, centered ones first: the container its graph reads."""
    mask = np.asarray(centered, dtype=bool)
    return np.concatenate([np.flatnonzero(mask), np.flatnonzero(~mask)]).astype("int64")


def order_name(term: str) -> str:
    """The container of a mixed group term's :func:`level_order` (``b_by_run_order``)."""
    return f"{term}_order"


def correlated_terms(spec: ModelSpec) -> set[str]:
    """The effects of a ``[correlation]`` block: centered all together or not at all."""
    corr = spec.correlation
    if corr is None:
        return set()
    return {e.name for e in spec.effects if e.group == corr.group and e.param in corr.params}


def centering_layout(spec: ModelSpec, masks: tuple[tuple[str, tuple[bool, ...]], ...]
                     ) -> tuple[tuple[str, Any], ...]:
    """What of the centering the graph depends on, per group term.

    ``"centered"`` or ``"non-centered"`` for a term built one way at every level (a
    ``[correlation]`` block's effects are centered only when all are at every level, else
    non-centered), else the count of centered levels: *which* levels are centered is data
    (:func:`level_order`), so it is not part of a compiled model's key.
    """
    block = correlated_terms(spec)
    centered_block = all(all(mask) for name, mask in masks if name in block)
    out = []
    for name, mask in masks:
        if name in block:
            out.append((name, "centered" if centered_block else "non-centered"))
        elif all(mask) or not any(mask):
            out.append((name, "centered" if all(mask) else "non-centered"))
        else:
            out.append((name, int(sum(mask))))
    return tuple(out)


def structure_of(spec: ModelSpec, data: LossData) -> Structure:
    """The structure key of (spec, data) for model reuse."""
    levels = tuple((g, tuple(data.levels(g)[0].tolist())) for g in groups_of(spec))
    if spec.likelihood.shock is not None:  # the checkpoints' shifts (:mod:`.shock`)
        from .shock import CHECKPOINT, checkpoint_levels

        levels = (*levels, (CHECKPOINT, checkpoint_levels(data)))
    return Structure(tuple(data.runs.tolist()), levels)


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything about a model that is fixed before its graph is built, computed once.

    Built by :func:`make_plan` from the spec, the data that fixes the structure (``like``:
    runs and group levels, held-out runs included) and the rows that will be observed.  The
    graph builder (:class:`bayeslaw.model.graph.LossModel`) and the compiled-model cache
    (:mod:`bayeslaw.inference.modelcache`) both read it; neither recomputes the structure or
    centering.
    """

    spec: ModelSpec
    like: LossData
    structure: Structure
    #: per group term (effects, then ``"sigma"``): which of its levels are built centered
    centered: tuple[tuple[str, tuple[bool, ...]], ...]
    #: what the graph depends on, the compiled-model cache's key (:func:`graph_key`)
    key: tuple[Any, ...]

    def mask(self, name: str) -> np.ndarray:
        """The centered-level mask of a group term (``<param>_by_<group>`` or ``"sigma"``)."""
        return np.array(dict(self.centered)[name], dtype=bool)

    def orders(self) -> dict[str, np.ndarray]:
        """The :func:`level_order` of each mixed group term outside a ``[correlation]`` block.

        Read off the key's :func:`centering_layout` (a count of centered levels marks such a
        term), so the containers and the compiled model's key cannot disagree.
        """
        layout = dict(self.key[2])
        return {name: level_order(mask) for name, mask in self.centered
                if isinstance(layout[name], int)}

    @property
    def prefers_low_rank(self) -> bool:
        """Whether nutpie's low-rank mass matrix suits this model (``low_rank = "auto"``).

        Centered, data-rich terms leave strong linear correlations (population value vs
        level effects, E vs a vs c) that a low-rank mass matrix captures; with non-centered
        terms the diagonal one mixed better (measured at 37f6b95:
        ``benchmarks/results/looped_total_sampler_2026-11-30.md``).  With
        ``sampler.centered_values`` the diagonal one: the levels no longer trade with the
        population value, and with the low-rank one the per-curve ridges of ``curve_bend``
        mixed worst (``benchmarks/results/peers_converge_2026-12-04/README.md``).
        """
        if self.spec.sampler.centered_values:  # no population-level ridge left to follow
            return False
        return bool(self.centered) and all(any(mask) for _, mask in self.centered)


def make_plan(spec: ModelSpec, like: LossData, observed: LossData | None = None) -> Plan:
    """The :class:`Plan` of ``spec`` on the structure of ``like``, observing ``observed``.

    Checks that the data can be fitted with the spec (:func:`check_compatible`); levels are
    centered by how many points of them ``observed`` (default ``like``) holds.
    """
    check_compatible(spec, like)
    observed = observed if observed is not None else like
    masks = tuple((name, tuple(bool(v) for v in mask))
                  for name, mask in centering(spec, like, observed))
    structure = structure_of(spec, like)
    return Plan(spec, like, structure, masks, graph_key(spec, structure, masks))


def graph_key(spec: ModelSpec, structure: Structure,
              masks: tuple[tuple[str, tuple[bool, ...]], ...]) -> tuple[Any, ...]:
    """What the graph depends on: the compiled-model cache's key.

    The spec less its sampler settings (but with those that change the sampled coordinates,
    :data:`bayeslaw.spec.settings.GRAPH_FIELDS`), the structure and how many
    levels of each term are centered (:func:`centering_layout`; which ones is data).
    """
    graph = {k: v for k, v in spec.to_dict().items() if k not in ("sampler", "description")}
    graph["sum_split"] = list(spec.sampler.sum_split)
    default = SamplerSettings()
    for name in GRAPH_FIELDS[1:]:  # only when set: the keys of existing caches stay as they were
        value = getattr(spec.sampler, name)
        if value != getattr(default, name):
            graph[name] = list(value) if isinstance(value, tuple) else value
    return json.dumps(graph, sort_keys=True), structure, centering_layout(spec, masks)
