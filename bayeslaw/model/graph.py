"""The PyMC model of a plan (:class:`bayeslaw.model.plan.Plan`: spec + data, centering, structure).

:class:`LossModel` owns a ``pm.Model`` (it never subclasses it and never samples).
Observations enter through ``pm.Data`` containers, so a compiled model is reused for
another data set of the same *structure* (same runs and group levels) with
:meth:`LossModel.data_values` - that is how refits avoid recompiling.

Graph layout (names used in the posterior):

* ``<p>`` for every sampled law parameter (population value on the centered scale);
* ``<p>_by_<g>_sd`` / ``<p>_by_<g>``: group effects added on the link scale of ``p``
  (log for positive parameters); centered, or non-centered through ``<p>_by_<g>_z``
  (``centered = false`` in the spec), or with ``sampler.centered_values`` sampled as the
  levels' values ``<p>_by_<g>_value`` (the deviations derived); with ``sampler.shape_at =
  "window"`` ``curve_bend``'s as ``<p>_by_run_mid`` at each curve's window
  (:mod:`bayeslaw.model.window`, the container ``window_mid_log``);
* ``<p>_run``: the parameter per run when it has effects;
* ``sigma`` (and ``sigma_spread``, ``sigma_log_dev`` or ``sigma_z``, ``sigma_run`` per
  run; with ``sigma_min_points`` the deviations are ``sigma_own_dev`` and ``sigma_log_dev``
  is them times the container ``sigma_own``, zero at levels with too few points; a
  fraction of the law's value with ``sigma_relative``), ``nu`` (Student-t) or
  ``outlier_share`` / ``outlier_scale`` (contaminated normal); ``sigma_decay``
  (noise falling with D) and ``ar1`` (within-run residual correlation) or ``walk`` /
  ``walk_start`` / ``walk_hurst`` (a run's residual drifting as a random walk in log D) when
  the spec asks;
* ``A``, ``B``, ``C``: textbook coefficients derived from the centered ones;
* ``loss``: the observed loss, dims ``(run, pos)``: one draw per run's curve;
* the ``pm.Data`` containers: ``N_run``, ``T_m_run``, ``P_run``, ... (one value per run),
  ``D_log`` (``log(D / D_ref)`` per point), ``loss_obs``, ``mask`` (the padding) and, with
  AR(1) or a walk, ``follows`` (1 where a point follows another of its run), with
  ``sigma_min_points`` ``sigma_own`` (one value per level of ``sigma_by``); each declared of
  ``mask``'s runs (and positions), so that the graph, and its numba cache key, is the same in
  every process (:meth:`LossModel._container`).

The arithmetic is shared with the numpy side: effects on the link scale are
:mod:`bayeslaw.model.arithmetic`'s; the noise model's scale, conditional terms, density and
draws are :mod:`bayeslaw.model.noise`'s (whose docstring describes the noise model in full;
the graph's part of it is :meth:`LossModel._noise`, :meth:`LossModel._observation`,
:func:`curve_logp` and :func:`curve_likelihood` below).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import constants as C
from ..data.schedules import POINT_COLUMNS
from ..data.table import LossData
from ..errors import SpecError
from ..laws.multi_power import NODE_COLUMNS, PAIRS, LevelPairs, level_pairs
from ..spec.settings import WINDOW_PARAMS
from .arithmetic import correlation_cholesky, link_of, link_value, mvn_chol_logp, vine_shapes
from .levels import effect_sd, group_deviations, mean_shift, mvn_random
from .noise import (
    FAMILY_PARAMS,
    conditional_terms,
    curve_random,
    density_terms,
    noise_scale,
    walk_variance,
)
from .plan import Plan, groups_of, level_dim, order_name, own_noise_scale
from .shock import CHECKPOINT, checkpoint_codes, shock_shift
from .transforms import (
    offset_logp,
    offset_random,
    offset_support_point,
    offset_transform,
    split_vector,
)
from .window import window_middles, window_parameters


def cov_data_name(cov: str) -> str:
    """Name of the ``pm.Data`` container of a covariate.

    ``D_log`` holds ``log(D / D_ref)`` per point; every other covariate is one value per run
    (``N_run``, ``T_m_run``, ``P_run``, ``horizon_run``).
    """
    if cov == C.D:
        return "D_log"
    return f"{cov}_point" if cov in POINT_COLUMNS else f"{cov}_run"


class LossModel:
    """A compiled-once PyMC model of a loss law over a sweep.

    Parameters
    ----------
    plan : Plan
        The spec, the data that fixes the structure (runs and group levels, held-out runs
        included) and which levels are centered (:func:`bayeslaw.model.plan.make_plan`).
    """

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.spec = plan.spec
        self.structure = plan.structure
        law, lk = plan.spec.law_obj, plan.spec.likelihood
        self._uses_D = C.D in law.covariates or lk.sigma_decay is not None or lk.walk is not None
        self._D_ref = float(plan.spec.reference.get(C.D, 1.0))
        #: the schedule's terms vary along a run, as D does; every other covariate is per run
        self._point_covariates = tuple(c for c in law.covariates if c in POINT_COLUMNS)
        self._run_covariates = tuple(c for c in law.covariates
                                     if c != C.D and c not in POINT_COLUMNS)
        #: the annealing sum is taken over its nonzero terms (:class:`LevelPairs`)
        self._pairs = NODE_COLUMNS[0] in law.covariates
        #: curve_bend's curves sampled at their windows' middles (:mod:`.window`)
        self._window = plan.spec.sampler.shape_at == "window"
        #: the checkpoints whose rows share a shift (likelihood.shock; :mod:`.shock`), or None
        self._checkpoints = dict(plan.structure.levels).get(CHECKPOINT)
        table = plan.like.run_table()
        self._built_run_values = {c: table[c].to_numpy(dtype=float) for c in
                                  (*self._run_covariates, *self._point_covariates)}
        #: the containers' values now in the PyMC model (``set_data`` skips an equal swap)
        self.held: dict[str, np.ndarray] = self.data_values(plan.like)
        self.model = self._build(plan.like)

    # ------------------------------------------------------------------------------------
    def layout(self, data: LossData) -> tuple[np.ndarray, np.ndarray, int]:
        """Where each row of ``data`` sits in the model's run-major layout.

        Returns each row's run (index into :attr:`Structure.runs`), its position along the
        run's curve and the width ``L`` of the layout (the most rows of any run, at least 1).
        Observations are held as a ``(runs, L)`` matrix padded at the end of each run, so
        that terms constant within a run are computed once per run and broadcast, and a
        run's sum over its points needs no scatter.
        """
        index = {r: i for i, r in enumerate(self.structure.runs)}
        unknown = [r for r in data.runs if r not in index]
        if unknown:
            raise SpecError(f"run(s) {unknown[:3]} are not in the compiled model; build a "
                            "LossModel from data that include them")
        runs = data.frame[C.RUN].to_numpy()
        rows = np.array([index[r] for r in runs], dtype="int64")
        first = np.ones(len(runs), bool)
        first[1:] = runs[1:] != runs[:-1]
        start = np.maximum.accumulate(np.where(first, np.arange(len(runs)), 0))
        pos = np.arange(len(runs)) - start
        return rows, pos.astype("int64"), int(pos.max(initial=0)) + 1

    def flatten(self, values: np.ndarray, data: LossData) -> np.ndarray:
        """Values laid out as ``(..., runs, L)`` (a prior predictive draw) -> ``(..., rows)``."""
        rows, pos, _ = self.layout(data)
        return np.asarray(values)[..., rows, pos]

    def run_sums(self, pointwise: np.ndarray, data: LossData) -> np.ndarray:
        """Per-row values ``(..., rows)`` summed into the model's runs ``(..., runs)``.

        The graph's ``loss`` is one draw per run's curve, so its log density is per run: this
        puts a pointwise log-likelihood on the same footing (a run without rows sums to 0).
        """
        rows, _, _ = self.layout(data)
        pointwise = np.asarray(pointwise)
        out = np.zeros((*pointwise.shape[:-1], len(self.structure.runs)))
        np.add.at(out, (..., rows), pointwise)
        return out

    def data_values(self, data: LossData) -> dict[str, np.ndarray]:
        """Values of every ``pm.Data`` container for ``data``.

        ``data`` may be a row subset of the data the model was built from (a training split):
        runs without observations keep their parameters in the model, where they are drawn
        from the population - exactly what a forecast for a held-out run needs.  Their
        covariates are those of the data the model was built from (they have no points, so
        they enter no likelihood term).
        """
        rows, pos, width = self.layout(data)
        n_runs = len(self.structure.runs)
        vals: dict[str, np.ndarray] = {}
        for c in self._run_covariates:
            per_run = self._built_run_values[c].copy()
            per_run[rows] = data.values(c)
            vals[cov_data_name(c)] = per_run

        def padded(column: np.ndarray) -> np.ndarray:
            out = np.zeros((n_runs, width))
            out[rows, pos] = column
            return out

        mask = padded(np.ones(len(rows)))
        vals["mask"] = mask
        vals["loss_obs"] = padded(data.values(C.LOSS))
        # padded cells repeat their run's last value, so that every per-point term stays
        # finite there (a gap of 0 to the previous point for the walk), masked or not
        last = np.zeros(n_runs, dtype="int64")
        np.maximum.at(last, rows, pos)

        observed = np.zeros(n_runs, bool)
        observed[rows] = True

        def along(column: np.ndarray, fill: np.ndarray | None = None) -> np.ndarray:
            values = padded(column)
            ends = values[np.arange(n_runs), last]
            if fill is not None:  # a run without rows: its first value in the built data
                ends = np.where(observed, ends, fill)
            return np.where(mask > 0, values, ends[:, None])

        if self._uses_D:
            vals[cov_data_name(C.D)] = along(np.log(data.values(C.D) / self._D_ref))
        for c in self._point_covariates:  # (a forward area of 0 would be a power of 0)
            vals[cov_data_name(c)] = along(data.values(c), self._built_run_values[c])
        if self._pairs:
            nodes = np.stack([vals[cov_data_name(c)] for c in NODE_COLUMNS], axis=-1)
            pairs = level_pairs(vals[cov_data_name(C.LR_AREA)], vals[cov_data_name(C.LR_DROP)],
                                nodes, mask)
            vals.update({f"pair_{k}": v for k, v in pairs.items()})
        if self.spec.likelihood.ar1 is not None or self.spec.likelihood.walk is not None:
            follows = mask.copy()
            follows[:, 0] = 0.0
            vals["follows"] = follows
        if self._checkpoints is not None:  # each cell's checkpoint (:mod:`.shock`)
            vals["checkpoint_code"] = checkpoint_codes(self._checkpoints, data, rows, pos,
                                                       mask.shape)
        if self._window:  # each curve's window middle (sampler.shape_at = "window")
            vals["window_mid_log"] = window_middles(vals[cov_data_name(C.D)], mask)
        return {**vals, **self._level_values(data)}

    def _level_values(self, data: LossData) -> dict[str, np.ndarray]:
        """The containers of which levels are centered and which have a noise scale of their own.

        The latter with ``sigma_min_points``; both are data, not graph.
        """
        vals = {order_name(term): order for term, order in self.plan.orders().items()}
        own = own_noise_scale(self.spec, self.plan.like, data)
        if own is not None:
            vals["sigma_own"] = own.astype(float)
        return vals

    def set_data(self, data: LossData) -> None:
        """Swap the observations in the PyMC model (a row subset of its structure data)."""
        import pymc as pm

        values = self.data_values(data)
        if values.keys() == self.held.keys() and all(
                np.array_equal(v, self.held[k]) for k, v in values.items()):
            return  # already held: pm.set_data re-evaluates the length of every dim, seconds
        with self.model:
            pm.set_data(values, coords={"pos": np.arange(values["mask"].shape[1])})
        self.held = values

    # ------------------------------------------------------------------------------------
    def _build(self, data: LossData) -> Any:
        import pymc as pm
        import pytensor.tensor as pt

        values = self.held
        coords: dict[str, Any] = {"run": data.runs.tolist(),
                                  "pos": np.arange(values["mask"].shape[1])}
        codes: dict[str, np.ndarray] = {}
        for g in groups_of(self.spec):
            levels, codes[g] = data.levels(g)
            coords.setdefault(level_dim(g), levels.tolist())
        if self._checkpoints is not None:
            coords[CHECKPOINT] = list(self._checkpoints)
        with pm.Model(coords=coords) as model:
            mask = pm.Data("mask", values["mask"], dims=("run", "pos"))
            # every other container is declared of mask's shape, these very two variables:
            # PyTensor otherwise merges the containers' unknown lengths in the order of a set
            # of variables (hashed by address), and the compiled graph, its numba cache key
            # and so the cache differed from process to process (issue 34, item 2)
            self._shape = (mask.shape[0], mask.shape[1])
            cov, log_d = self._covariates(pm, pt, values)
            loss_obs = self._container(pm, pt, "loss_obs", values, ("run", "pos"))
            theta = self._law_parameters(pm, pt, codes)
            mu = self.spec.law_obj(pt, cov, theta, self.spec.reference)
            if mu.type.broadcastable[-1] or mu.ndim < 2:  # no per-point covariate
                mu = pt.broadcast_to(mu, loss_obs.shape)
            if self._checkpoints is not None:
                mu = mu + shock_shift(pm, pt, self.spec.likelihood.shock, self._checkpoints,
                                      values["checkpoint_code"], self._shape)
            loc, sigma, process = self._observation(pm, pt, mu, self._noise(pm, pt, codes),
                                                    log_d, loss_obs, values)
            curve_likelihood(pm, self.spec.likelihood, loc, sigma, mask, loss_obs, process)
        return model

    def _covariates(self, pm: Any, pt: Any, values: dict[str, np.ndarray]
                    ) -> tuple[dict[str, Any], Any]:
        """The law's covariates as containers, and ``log(D / D_ref)`` per point (or None).

        Run-level covariates are one value per run, broadcast along the curve ``(R, 1)``; D
        enters as ``log(D / D_ref)`` per point ``(R, L)``: the law's log of D then simplifies
        away instead of being taken at every evaluation.
        """
        cov: dict[str, Any] = {
            c: self._container(pm, pt, cov_data_name(c), values, ("run",))[:, None]
            for c in self._run_covariates}
        for c in self._point_covariates:
            cov[c] = self._container(pm, pt, cov_data_name(c), values, ("run", "pos"))
        if self._pairs:  # one length for all, as the mask's (see _build)
            point = pm.Data("pair_point", values["pair_point"])
            box = {k: pt.specify_shape(pm.Data(f"pair_{k}", values[f"pair_{k}"]),
                                       (point.shape[0],))
                   for k in ("run", "level", "since", "weight")}
            cov[PAIRS] = LevelPairs(point=point, shape=self._shape, **box)
        if not self._uses_D:
            return cov, None
        log_d = self._container(pm, pt, cov_data_name(C.D), values, ("run", "pos"))
        if C.D in self.spec.law_obj.covariates:
            cov[C.D] = self._D_ref * pt.exp(log_d)
        return cov, log_d

    def _container(self, pm: Any, pt: Any, name: str, values: dict[str, np.ndarray],
                   dims: tuple[str, ...]) -> Any:
        """The ``pm.Data`` container ``name``, declared of the mask's runs (and positions)."""
        box = pm.Data(name, values[name], dims=dims)
        return pt.specify_shape(box, self._shape[:len(dims)])

    def _law_parameters(self, pm: Any, pt: Any, codes: dict[str, np.ndarray]
                        ) -> dict[str, Any]:
        """Every law parameter: fixed, a scalar, or one value per run ``(R, 1)`` with effects.

        Also adds the textbook coefficients (``A``, ``B``, ...) as Deterministics.
        """
        spec, law = self.spec, self.spec.law_obj
        theta: dict[str, Any] = {}
        scalars: dict[str, Any] = {}
        joint = spec.sampler.joint_names()
        block: dict[str, Any] = {}
        offsets: dict[str, Any] = {}  # deviations from a joint with their population value
        if spec.correlation is not None:  # the block's population values first: its levels'
            for name in spec.correlation.params:  # centre
                scalars[name] = spec.priors[name].create(name)
            block = self._correlated(pm, pt, scalars)
        for p in law.params:
            if p.name in spec.fixed:
                theta[p.name] = scalars[p.name] = pt.as_tensor(spec.fixed[p.name])
                continue
            effects = [e for e in spec.effects if e.param == p.name]
            valued = next((e for e in effects
                           if e.name not in block and self._samples_values(e)), None)
            if p.name not in scalars:
                if p.name in joint:  # every split parameter at once
                    scalars.update(split_vector(pm, spec))
                elif valued is not None and self._offsets(valued):
                    shift = self._shift(pm, pt, effects, valued, block, offsets)
                    scalars[p.name], offsets[valued.name] = self._offset(pm, pt, valued, p.link,
                                                                         shift)
                else:
                    scalars[p.name] = spec.priors[p.name].create(p.name)
            if not effects or (self._window and p.name in WINDOW_PARAMS):
                theta[p.name] = scalars[p.name]  # the window's are replaced below
                continue
            given = {**block, **offsets}
            deviations = [(given[e.name] if e.name in given else
                           self._valued(pm, pt, e, link_of(pt, scalars[p.name], p.link))
                           if e is valued else
                           self._deviations(pm, pt, e.name, e.scale, e.group))[codes[e.group]]
                          for e in effects]
            per_run = link_value(pt, scalars[p.name], p.link, deviations)
            theta[p.name] = pm.Deterministic(f"{p.name}_run", per_run, dims="run")[:, None]
        if self._window:
            log_x1 = self._container(pm, pt, "window_mid_log", self.held, ("run",))
            theta.update(window_parameters(pm, pt, spec, scalars, log_x1, codes))
        for name, value in law.natural(scalars, spec.reference).items():
            pm.Deterministic(name, value)
        return theta

    def _samples_values(self, effect: Any) -> bool:
        """Whether ``effect`` may be sampled as values (``centered_values``).

        It must be centered at every level; a parameter's first such effect outside a block is.
        """
        return self.spec.sampler.centered_values and bool(self.plan.mask(effect.name).all())

    def _valued(self, pm: Any, pt: Any, effect: Any, centre: Any) -> Any:
        """A centered term's levels sampled as values on the link scale (``centered_values``).

        The free variable ``<name>_value ~ Normal(centre, sd)`` per level (``centre`` the
        population value on the link scale) and the deviations ``<name> = <name>_value -
        centre``: a shift of the centered ``Normal(0, sd)`` levels with unit Jacobian, so the
        model's density is the same.  The data pin each level's value; as deviations, every
        level traded with the population value along a ridge of as many dimensions as levels,
        which a diagonal mass matrix cannot follow
        (``benchmarks/results/peers_converge_2026-12-04/README.md``).
        """
        sd = effect_sd(pt, effect.name, effect.scale)
        dim = level_dim(effect.group)
        value = pm.Normal(f"{effect.name}_value", centre, sd, dims=dim)
        return pm.Deterministic(effect.name, value - centre, dims=dim)

    def _offsets(self, effect: Any) -> bool:
        """Whether ``effect``'s levels and its population value are one joint variable.

        With ``sampler.centered_values = "offset"`` or ``"shifted"``, for a term sampled as values
        whose population value (a parameter with its own prior: the caller has left out the sampler
        splits' and the fixed ones) has a Normal prior on the link scale (LogNormal with the
        log link, Normal with the identity); other terms sampled as values keep
        ``centered_values = true``'s coordinates.
        """
        link = self.spec.law_obj.param(effect.param).link
        return (self.spec.sampler.centered_values in ("offset", "shifted")
                and (self.spec.priors[effect.param].dist, link) in (("LogNormal", "log"),
                                                                    ("Normal", "identity")))

    def _offset(self, pm: Any, pt: Any, effect: Any, link: str, shift: Any = None
                ) -> tuple[Any, Any]:
        """The population value and ``effect``'s deviations from the joint ``<name>_joint``.

        The population value on the link scale and the levels' values, sampled as the levels
        and the population's offset from their mean
        (:func:`~bayeslaw.model.transforms.offset_transform`: no funnel with the term's sd).
        Deterministics: the population value ``<param>``, the levels ``<name>_value`` and the
        deviations ``<name>``; the joint holds them plus ``shift`` (:meth:`_shift`).
        """
        prior = self.spec.priors[effect.param]
        sd = effect_sd(pt, effect.name, effect.scale)
        dim = level_dim(effect.group)
        k = len(self.plan.mask(effect.name))
        mu = np.full(k + 1, prior.params["mu"])
        joint = pm.CustomDist(f"{effect.name}_joint", mu if shift is None else mu + shift,
                              prior.params["sigma"], sd, logp=offset_logp, random=offset_random,
                              support_point=offset_support_point,
                              signature="(j),(),()->(j)", transform=offset_transform(k))
        joint = joint if shift is None else joint - shift
        centre = joint[0]
        population = pm.Deterministic(effect.param, pt.exp(centre) if link == "log" else centre)
        value = pm.Deterministic(f"{effect.name}_value", joint[1:], dims=dim)
        return population, pm.Deterministic(effect.name, value - centre, dims=dim)

    def _shift(self, pm: Any, pt: Any, effects: list[Any], valued: Any, block: dict[str, Any],
               given: dict[str, Any]) -> Any:
        """:func:`~bayeslaw.model.levels.mean_shift` of the parameter's other full terms."""
        if self.spec.sampler.centered_values != "shifted":
            return None
        terms = [(e.name, effect_sd(pt, e.name, e.scale), level_dim(e.group),
                  len(self.plan.mask(e.name))) for e in effects
                 if e is not valued and e.name not in block and self._samples_values(e)]
        return mean_shift(pm, pt, terms, given)

    def _deviations(self, pm: Any, pt: Any, name: str, scale: Any, group: str) -> Any:
        """A group term's level deviations, its sd learned (a prior) or fixed (a number)."""
        sd = effect_sd(pt, name, scale)
        return group_deviations(pm, pt, name, f"{name}_z", sd, level_dim(group),
                                 self.plan.mask(name), order_name(name))

    def _correlated(self, pm: Any, pt: Any, scalars: dict[str, Any]) -> dict[str, Any]:
        """The level deviations of a ``[correlation]`` block, by effect name.

        Jointly normal per level with sds ``s`` (each effect's own, ``<e>_sd``) and correlation
        ``R ~ LKJ(eta)`` (``<group>_corr``). Centered when every effect of the block is centered
        at every level: the levels' values on the link scale are sampled,
        ``MvNormal(link(population), diag(s) L)`` (no ridge between the population value and
        the levels' mean when each level is pinned by its data); else ``z @ (diag(s) L)^T``.
        Each effect's deviation is the Deterministic ``<e>`` the posterior reads.
        """
        corr = self.spec.correlation
        if corr is None:
            return {}
        effects = [next(e for e in self.spec.effects if e.param == p and e.group == corr.group)
                   for p in corr.params]
        dim, k = level_dim(corr.group), len(effects)
        sds = pt.stack([e.scale.create(f"{e.name}_sd") for e in effects])
        # LKJ through its vine: independent partial correlations 2 Beta(b, b) - 1 (pm.LKJCorr's
        # density checks positive definiteness in an op numba runs in object mode, and
        # LKJCholeskyCov's norms did not mix)
        partials = {(level, row): 2.0 * pm.Beta(f"{corr.name}_w{level}{row}", b, b) - 1.0
                    for level, row, b in vine_shapes(k, corr.eta)}
        unit = correlation_cholesky(pt, partials, k)
        # products written as broadcast sums, not `@` with a transpose: numba's np.dot warns
        # (NumbaPerformanceWarning) on the transposed, non-contiguous operand when it compiles
        # the density or the draws' expansion, which a fresh compile cache showed in the suite
        pm.Deterministic(corr.name, (unit[:, None, :] * unit[None, :, :]).sum(axis=-1))
        chol = sds[:, None] * unit
        n_levels = len(self.plan.mask(effects[0].name))
        if all(self.plan.mask(e.name).all() for e in effects):
            law = self.spec.law_obj
            centre = pt.stack([link_of(pt, scalars[p], law.param(p).link) for p in corr.params])
            # MvNormal's density written out (arithmetic.mvn_chol_logp): with pm.MvNormal's
            # triangular solve a gradient cost 504 us instead of 149 us on IC's selection
            # table (benchmarks/results/peers_selection_2026-12-02.md)
            levels = pm.CustomDist(f"{corr.name}_levels", centre, chol,
                                   logp=lambda v, mu, c: mvn_chol_logp(pt, v - mu, c, k),
                                   random=mvn_random, signature="(k),(k,k)->(k)",
                                   shape=(n_levels, k))
            joint = levels - centre
        else:
            z = pm.Normal(f"{corr.name}_z", 0.0, 1.0, shape=(n_levels, k))
            joint = (z[:, None, :] * chol[None, :, :]).sum(axis=-1)  # z @ chol^T
        return {e.name: pm.Deterministic(e.name, joint[:, j], dims=dim)
                for j, e in enumerate(effects)}

    def _noise(self, pm: Any, pt: Any, codes: dict[str, np.ndarray]) -> Any:
        """The noise scale: a scalar, or one per run (``sigma_run``) with ``sigma_by``.

        With ``sigma_min_points`` the levels' deviations (``sigma_own_dev``) are multiplied
        by the container ``sigma_own`` (1 for a level with a scale of its own, 0 for one at
        the pooled scale) into ``sigma_log_dev``, which every forecast reads.
        """
        lk = self.spec.likelihood
        sigma = lk.sigma.create("sigma")
        if lk.sigma_by is None:
            return sigma
        dim = level_dim(lk.sigma_by)
        spread = lk.sigma_spread.create("sigma_spread")
        mask = self.plan.mask("sigma")
        if lk.sigma_min_points is None:
            dev = group_deviations(pm, pt, "sigma_log_dev", "sigma_z", spread, dim, mask,
                                    order_name("sigma"))
        else:
            own = pt.specify_shape(pm.Data("sigma_own", self.held["sigma_own"], dims=dim),
                                   (len(mask),))
            free = group_deviations(pm, pt, "sigma_own_dev", "sigma_z", spread, dim, mask,
                                     order_name("sigma"))
            dev = pm.Deterministic("sigma_log_dev", free * own, dims=dim)
        per_run = link_value(pt, sigma, "log", [dev[codes[lk.sigma_by]]])
        return pm.Deterministic("sigma_run", per_run, dims="run")

    def _observation(self, pm: Any, pt: Any, mu: Any, sigma: Any, log_d: Any, loss_obs: Any,
                     values: dict[str, np.ndarray]) -> tuple[Any, Any, tuple[Any, ...]]:
        """Location, scale and (AR(1), walk) generative inputs of each point.

        The location and scale are conditional on the run's previous point; the inputs are
        :func:`~bayeslaw.model.noise.curve_random`'s (the law's value, marginal scale, ``ar1``
        or walk).
        """
        lk = self.spec.likelihood
        decay = lk.sigma_decay.create("sigma_decay") if lk.sigma_decay is not None else None
        scale = sigma
        if decay is not None or lk.sigma_relative:
            scale = noise_scale(pt, _per_point(pt, sigma), log_d=log_d, decay=decay,
                                mu=mu if lk.sigma_relative else None)
        if lk.ar1 is None and lk.walk is None:
            return mu, scale, ()
        follows = self._container(pm, pt, "follows", values, ("run", "pos"))
        resid_prev = _previous(pt, loss_obs - mu)
        marginal = pt.broadcast_to(_per_point(pt, scale), mu.shape)
        if lk.ar1 is not None:  # conditional on the previous point of the run
            ratio = scale / _previous(pt, scale) if scale.ndim == 2 else 1.0
            ar1 = lk.ar1.create("ar1")
            return (*conditional_terms(pt, mu, _per_point(pt, scale), resid_prev, follows,
                                       ar1=ar1, ratio=ratio), (mu, marginal, ar1))
        hurst = lk.walk_hurst.create("walk_hurst") if lk.walk_hurst is not None else 0.5
        var = walk_variance(pt, log_d, _previous(pt, log_d), follows, lk.walk.create("walk"),
                            lk.walk_start.create("walk_start"), 0.0, hurst,
                            mu=mu if lk.sigma_relative else None)
        return (*conditional_terms(pt, mu, _per_point(pt, scale), resid_prev, follows,
                                   walk_var=var), (mu, marginal, var))


def _per_point(pt: Any, sigma: Any) -> Any:
    """A noise scale of one value per run ``(R,)`` as a column ``(R, 1)``; others as they are."""
    return sigma[:, None] if sigma.ndim == 1 else sigma


def _previous(pt: Any, x: Any) -> Any:
    """Each point's previous point along its run's curve (a run's first point: itself)."""
    return pt.concatenate([x[:, :1], x[:, :-1]], axis=1)


def curve_logp(family: str) -> Any:
    """The log density of each run's curve, written for the run-major layout.

    ``value``, ``loc`` and ``mask`` are ``(R, L)``; ``sigma`` is a scalar, one per run or one
    per point.  Each run's density is the sum over its (unmasked) points of the family's log
    density; the terms that do not depend on the point (the normalizing constant in
    ``nu``, the log of a per-run scale) are computed once per run and multiplied by its number
    of points, not evaluated at every point (inputs after ``mask``: ``noise.curve_random``'s).
    """
    import pytensor.tensor as pt
    from pytensor.tensor.special import gammaln

    k = len(FAMILY_PARAMS[family])

    def logp(value: Any, loc: Any, sigma: Any, *rest: Any) -> Any:
        mask = rest[k]
        count = pt.sum(mask, axis=-1)
        per_point = sigma.ndim == value.ndim
        z = (value - loc) / (sigma if per_point else sigma[..., None])
        log_sigma = (pt.sum(mask * pt.log(sigma), axis=-1) if per_point
                     else count * pt.log(sigma))
        const, factor, core = density_terms(pt, gammaln, family, z, *rest[:k])
        return count * const - log_sigma + factor * pt.sum(mask * core, axis=-1)

    return logp


def curve_likelihood(pm: Any, lk: Any, loc: Any, sigma: Any, mask: Any, loss_obs: Any,
                     process: tuple[Any, ...] = ()) -> Any:
    """The observed ``loss``, dims ``(run, pos)``: one multivariate draw per run's curve.

    ``process``: :func:`~bayeslaw.model.noise.curve_random`'s generative inputs (the
    density ignores them).
    """
    params = [loc, sigma]
    sig = ["(l)", "(l)" if sigma.ndim == 2 else "()"]
    for name in FAMILY_PARAMS[lk.family]:
        params.append(getattr(lk, name).create(name))
        sig.append("()")
    params.append(mask)
    sig.append("(l)")
    kind = "" if not process else "ar1" if lk.ar1 is not None else "walk_var"
    for value in process:
        params.append(value)
        sig.append("(l)" if value.ndim == 2 else "()")
    return pm.CustomDist("loss", *params, logp=curve_logp(lk.family),
                         random=curve_random(lk.family, kind), observed=loss_obs,
                         signature=",".join(sig) + "->(l)", dims=("run", "pos"))
