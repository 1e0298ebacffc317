"""Posterior draws evaluated in numpy on any table of points: parameters and the law.

This layer sits below fitting and prediction: :class:`Posterior` holds draws, spec and data,
and :class:`bayeslaw.Fit` is one.  The law is the same function as in the PyMC graph
(``xp=numpy``) and the effects go through the same :mod:`bayeslaw.model.arithmetic`, so
nothing is recompiled; the noise of the draws is :mod:`bayeslaw.posterior.noise`'s.  Group
effects are resolved per row:

* a row whose ``run`` was fitted uses that run's own posterior parameters;
* otherwise each group effect uses the fitted level's draws when the row's level was seen,
  and a fresh draw from the population (``sd * z``, ``z ~ N(0, 1)``) for a new level, one
  per new level and posterior draw - so bands for new N or T_m widen honestly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import LR, LR_AREA, PLAN_COLUMNS, SCHEDULE, TERM_COLUMNS, build, terms
from ..data.table import LossData, read_table
from ..errors import DataError
from ..laws.multi_power import NODE_COLUMNS
from ..model.arithmetic import link_value
from ..model.plan import level_dim, require_forward_area
from ..spec.model_spec import ModelSpec


@dataclass(frozen=True, eq=False)
class Posterior:
    """Posterior draws of a spec's model of some data (``idata.posterior``), read-only.

    Attributes
    ----------
    idata : arviz.InferenceData
    spec : ModelSpec
    data : LossData
        The observations the draws were conditioned on.
    """

    idata: Any
    spec: ModelSpec
    data: LossData

    @property
    def n_draws(self) -> int:
        """Total posterior draws (chains x draws)."""
        post = self.idata.posterior
        return int(post.sizes["chain"] * post.sizes["draw"])

    def draws(self, name: str) -> np.ndarray:
        """Posterior draws of a variable, chains stacked first: shape ``(S, *dims)``."""
        da = self.idata.posterior[name]
        return np.asarray(da.values).reshape(self.n_draws, *da.shape[2:])

    @property
    def model_runs(self) -> np.ndarray:
        """Runs in the model (the posterior's ``run`` dimension; held-out runs included)."""
        post = self.idata.posterior
        return np.asarray(post.coords["run"].values) if "run" in post.coords else self.data.runs


def rows_runs(post: Posterior, table: pd.DataFrame) -> np.ndarray:
    """Index of each row's run in the model, or -1 for rows of new runs."""
    runs = {r: i for i, r in enumerate(post.model_runs)}
    if C.RUN not in table.columns:
        return np.full(len(table), -1)
    return np.array([runs.get(str(r), -1) for r in table[C.RUN]], dtype=int)


def by_label(labels: Iterable[Any], eff: np.ndarray, values: np.ndarray, sd: np.ndarray,
             rng: np.random.Generator, fresh: np.ndarray | None = None) -> np.ndarray:
    """Draws ``(S, n)`` of each row's level, looked up by label.

    Column ``labels.index(v)`` of ``eff`` for a row of level ``v``, or ``sd * z`` (one fresh
    ``z`` per new level and draw, in the order the new levels first appear) for a level not
    in ``labels``; ``fresh`` ``(S, n_new)`` gives those ``z`` (correlated with another
    effect's: :func:`correlated_fresh`) instead of drawing them here.
    """
    lookup = {level: i for i, level in enumerate(labels)}
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False,
                                   use_na_sentinel=False)
    columns = np.empty((eff.shape[0], len(uniques)))
    n_new = 0
    for j, level in enumerate(uniques):
        if level in lookup:
            columns[:, j] = eff[:, lookup[level]]
            continue
        z = rng.standard_normal(eff.shape[0]) if fresh is None else fresh[:, n_new]
        columns[:, j] = sd * z
        n_new += 1
    return columns[:, codes]


def correlated_fresh(post: Posterior, table: pd.DataFrame, rng: np.random.Generator
                     ) -> dict[str, np.ndarray]:
    """Standard draws ``(S, n_new)`` of the new levels of a ``[correlation]`` block, by effect.

    Per posterior draw ``s``, a new level's standardized deviations are ``L_s z`` with ``L_s``
    the Cholesky factor of that draw's correlation matrix ``R_s`` (``<group>_corr``): the
    population's correlation carried into a new curve.  Empty without a block or new levels.
    """
    corr = post.spec.correlation
    if corr is None:
        return {}
    names = [f"{p}_by_{corr.group}" for p in corr.params]
    fitted = set(np.asarray(post.idata.posterior[names[0]][level_dim(corr.group)].values)
                 .tolist())
    values = group_values(post, table, corr.group)
    new = [v for v in pd.unique(pd.Series(values, dtype=object)) if v not in fitted]
    if not new:
        return {}
    chol = np.linalg.cholesky(post.draws(corr.name))
    z = rng.standard_normal((chol.shape[0], len(new), len(names)))
    joint = np.einsum("sij,snj->sni", chol, z)
    return {name: joint[:, :, j] for j, name in enumerate(names)}


def level_draws(post: Posterior, name: str, group: str, values: np.ndarray, sd: np.ndarray,
                rng: np.random.Generator, fresh: np.ndarray | None = None) -> np.ndarray:
    """Effect draws ``(S, n)`` for row levels ``values``; new levels from the population."""
    fitted = np.asarray(post.idata.posterior[name][level_dim(group)].values)
    return by_label(fitted.tolist(), post.draws(name), values, sd, rng, fresh)


def group_values(post: Posterior, table: pd.DataFrame, group: str) -> np.ndarray:
    """Each row's level of ``group``, typed as the fitted data's column (a run: its label)."""
    if group == C.RUN:
        if C.RUN not in table.columns:
            return np.array([f"new{i}" for i in range(len(table))], dtype=object)
        return table[C.RUN].astype(str).to_numpy()
    if group not in table.columns:
        raise DataError(f"the fit's spec varies a parameter by {group!r}: add a {group!r} "
                        "column to the prediction points")
    values = table[group].to_numpy()
    fitted = post.data.frame[group].to_numpy()
    return values.astype(float) if fitted.dtype.kind in "fiu" else values.astype(str)


def parameter_draws(post: Posterior, table: pd.DataFrame, rng: np.random.Generator, *,
                    groups: Iterable[str] | None = None) -> dict[str, Any]:
    """Law parameters per row: arrays ``(S, n)``, ``(S, 1)`` or fixed floats.

    ``groups`` limits the group effects to those groups (the others sit at their population
    value, zero on the link scale) and ignores fitted runs: a typical curve at a level.

    Rows that share their run and every group column share their parameters: they are
    computed once per distinct row of those columns and spread to the rows (a figure's 120
    points a curve cost one), with the same draws as row by row (a new level's draw is made
    once per level, in the order the levels first appear, either way).
    """
    keys = [c for c in dict.fromkeys([C.RUN, *(e.group for e in post.spec.effects)])
            if c in table.columns]
    run_effect = any(e.group == C.RUN for e in post.spec.effects)
    if keys and len(table) > 1 and (C.RUN in table.columns or not run_effect):
        # (a table without runs gives each row a new run of its own: nothing shared then)
        codes = table.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
        first = np.unique(codes, return_index=True)[1]
        if len(first) < len(table):
            theta = _parameter_draws(post, table.iloc[first], rng, groups)
            chosen = None if groups is None else set(groups)
            per_row = {e.param for e in post.spec.effects
                       if chosen is None or e.group in chosen}  # (the others: (S, 1))
            return {k: v[:, codes] if k in per_row and np.ndim(v) == 2 else v
                    for k, v in theta.items()}
    return _parameter_draws(post, table, rng, groups)


def _parameter_draws(post: Posterior, table: pd.DataFrame, rng: np.random.Generator,
                     groups: Iterable[str] | None) -> dict[str, Any]:
    """:func:`parameter_draws` row by row."""
    spec, law = post.spec, post.spec.law_obj
    known = rows_runs(post, table) if groups is None else np.full(len(table), -1)
    fresh = correlated_fresh(post, table, rng) if groups is None else {}
    theta: dict[str, Any] = {}
    for p in law.params:
        if p.name in spec.fixed:
            theta[p.name] = spec.fixed[p.name]
            continue
        pop = post.draws(p.name)[:, None]
        effects = [e for e in spec.effects if e.param == p.name
                   and (groups is None or e.group in set(groups))]
        if not effects:
            theta[p.name] = pop
            continue
        deviations = []
        for e in effects:
            sd = (post.draws(f"{e.name}_sd") if not isinstance(e.scale, float)
                  else np.full(len(pop), e.scale))
            deviations.append(level_draws(post, e.name, e.group,
                                          group_values(post, table, e.group), sd, rng,
                                          fresh.get(e.name)))
        value = np.array(link_value(np, pop, p.link, deviations), dtype=float)
        if (known >= 0).any():
            value[:, known >= 0] = post.draws(f"{p.name}_run")[:, known[known >= 0]]
        theta[p.name] = value
    return theta


def typical_parameters(post: Posterior, T_m: float | None, rng: np.random.Generator
                       ) -> dict[str, Any]:
    """Law parameters ``(S, 1)`` of a typical curve at depth ``T_m``.

    Effects by ``T_m`` use the fitted level (a new level: one population draw per posterior
    draw); every other group effect (N, run, ...) sits at its population value, because N
    varies continuously over a search grid.
    """
    table = pd.DataFrame({C.T_M: [float(T_m)]}) if T_m is not None else pd.DataFrame(index=[0])
    return parameter_draws(post, table, rng, groups=(C.T_M,) if T_m is not None else ())


#: Most cells of one block of a law's evaluation over draws (bounds its memory).
BLOCK_CELLS = 2_000_000


def mean_draws(post: Posterior, table: pd.DataFrame, rng: np.random.Generator) -> np.ndarray:
    """The law's value per posterior draw and row, ``(S, n)``."""
    law = post.spec.law_obj
    missing = [c for c in law.covariates if c not in table.columns]
    if missing:
        raise DataError(f"prediction points lack column(s) {missing} needed by law "
                        f"{law.name!r}")
    cov = {c: table[c].to_numpy(dtype=float)[None, :] for c in law.covariates}
    theta = parameter_draws(post, table, rng)
    # a law summed over the schedule's nodes makes (draws, rows, nodes) arrays: in blocks
    width = len(NODE_COLUMNS) if NODE_COLUMNS[0] in law.covariates else 1
    block = max(1, BLOCK_CELLS // max(1, len(table) * width))
    out = np.empty((post.n_draws, len(table)))
    for lo in range(0, post.n_draws, block):
        part = {k: v[lo:lo + block] if np.ndim(v) == 2 else v for k, v in theta.items()}
        out[lo:lo + block] = law(np, cov, part, post.spec.reference)
    return out


def schedules_of(post: Posterior, schedule: Any = None, points: pd.DataFrame | None = None
                 ) -> dict[str, Any]:
    """The runs' schedules a forecast uses: the fit's, overridden by ``schedule``'s.

    ``schedule`` is a logged table (``run, D, lr``), a table of one row per run with schedule
    columns, a file holding either, or ``None``; ``points`` may carry the per-run columns or
    an ``lr`` column of runs the fit does not know.  A fitted run's schedule is replaced only
    by ``schedule``: the points' own ``lr`` or schedule columns of a fitted run are its rows
    as fitted (or copies of them), so they never rebuild it from the points alone.
    """
    known = dict(post.data.schedules or {})
    frame = points if points is not None else pd.DataFrame({C.RUN: []})
    table, where = (read_table(schedule)[:2] if schedule is not None else (None, ""))
    if table is None and SCHEDULE not in frame.columns and LR not in frame.columns:
        return known
    if C.RUN not in frame.columns:
        raise DataError("the prediction points need a 'run' column to find each point's "
                        "learning-rate schedule")
    frame = frame.assign(**{C.RUN: frame[C.RUN].astype(str)})
    named = (set(frame[C.RUN]) if table is None or C.RUN not in table.columns
             else set(table[C.RUN].astype(str))) if table is not None else set()
    given: dict[str, Any] = {}
    # a run ``schedule`` does not name: a fitted run keeps the fit's, another its points' own
    rest = frame[~frame[C.RUN].isin(named | set(known))]
    if not rest.empty and (SCHEDULE in rest.columns or LR in rest.columns):
        given |= build(_with_fitted_plan(post, rest, None), None, "the prediction points",
                       "")[1] or {}
    mine = frame[frame[C.RUN].isin(named)]
    if table is not None and not mine.empty:
        if LR not in table.columns:  # a new plan replaces the points' own
            mine = mine.drop(columns=[c for c in table.columns if c != C.RUN and c in mine])
        given |= build(_with_fitted_plan(post, mine, table), table, "the prediction points",
                       where)[1] or {}
    return {**known, **given}


def _with_fitted_plan(post: Posterior, frame: pd.DataFrame, table: pd.DataFrame | None
                      ) -> pd.DataFrame:
    """``frame`` with the fitted runs' schedule columns it and ``table`` lack (a horizon)."""
    fitted = post.data.frame
    have = set(frame.columns) | set(table.columns if table is not None else ())
    cols = [c for c in PLAN_COLUMNS if c in fitted.columns and c not in have]
    if not cols or C.RUN not in frame.columns:
        return frame
    per_run = fitted.groupby(C.RUN, sort=False)[cols].first()
    return frame.assign(**{c: per_run[c].reindex(frame[C.RUN].astype(str)).to_numpy()
                           for c in cols})


def scheduled_points(post: Posterior, points: pd.DataFrame, schedule: Any = None
                     ) -> pd.DataFrame:
    """``points`` with the schedule's terms a schedule-aware law needs, computed afresh.

    Terms are recomputed from the schedules (:func:`schedules_of`) of the points' runs when
    every run has one; points that carry all the terms themselves and have no schedule are
    taken as given.  A law without schedule terms gets ``points`` unchanged.
    """
    needs = [c for c in post.spec.law_obj.covariates if c in TERM_COLUMNS]
    if not needs:
        return points
    schedules = schedules_of(post, schedule, points)
    runs = points[C.RUN].astype(str) if C.RUN in points.columns else None
    if runs is None or not set(runs) <= set(schedules):
        if all(c in points.columns for c in needs) and schedule is None:
            return points
        missing = (["run"] if runs is None else sorted(set(runs) - set(schedules))[:3])
        raise DataError(f"law {post.spec.law_obj.name!r} needs each point's learning-rate "
                        f"schedule; none is known for {missing}: give schedule= (a lr table "
                        "or per-run schedule columns) or points with run names of the fit")
    values = terms(schedules, runs.to_numpy(), points[C.D].to_numpy(float),
                   "the prediction points")
    out = points.drop(columns=[c for c in TERM_COLUMNS if c in points.columns])
    out = out.assign(**{c: values[c].to_numpy() for c in TERM_COLUMNS})
    if LR_AREA in needs:
        require_forward_area(out, post.spec.law_obj.name, "the prediction points")
    return out
