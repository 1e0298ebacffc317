"""Build the PyMC model from a spec (law + priors + hierarchy + likelihood) and data.

:class:`LossModel` owns a ``pm.Model`` (it never subclasses it and never samples).
Observations enter through ``pm.Data`` containers, so a compiled model is reused for
another data set of the same *structure* (same runs and group levels) with
:meth:`LossModel.data_values` - that is how refits avoid recompiling.

Graph layout (names used in the posterior):

* ``<p>`` for every sampled law parameter (population value on the centered scale);
* ``<p>_by_<g>_sd`` / ``<p>_by_<g>``: group effects added on the link scale of ``p``
  (log for positive parameters); centered, or non-centered through ``<p>_by_<g>_z``
  (``centered = false`` in the spec);
* ``<p>_run``: the parameter per run when it has effects;
* ``sigma`` (and ``sigma_spread``, ``sigma_log_dev`` or ``sigma_z``, ``sigma_run`` per
  run; a fraction of the law's value with ``sigma_relative``), ``nu``; ``sigma_decay``
  (noise falling with D) and ``ar1`` (within-run residual correlation, with the containers
  ``prev_idx`` and ``is_first``) or ``walk`` / ``walk_start`` / ``walk_hurst`` (a run's
  residual drifting as a random walk in log D, same containers) when the spec asks;
* ``A``, ``B``, ``C``: textbook coefficients derived from the centered ones;
* ``loss``: the observed loss, dims ``obs``;
* ``<c>_obs`` (``N_obs``, ``D_obs``, ``T_m_obs``, ``P_obs``, ...), ``run_idx``, ``loss_obs``:
  the ``pm.Data`` containers, one per covariate of the law.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import constants as C
from .data import LossData
from .errors import DataError, SpecError
from .priors import ModelSpec


def cov_data_name(cov: str) -> str:
    """Name of the ``pm.Data`` container of a covariate (``N_obs``, ``T_m_obs``, ``P_obs``)."""
    return f"{cov}_obs"


def previous_rows(runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows sorted by run then D: the previous row of the same run, and first-row flags.

    A run's first row points at itself (its flag is 1.0, so the AR(1) term drops out).
    """
    runs = np.asarray(runs)
    first = np.ones(len(runs), bool)
    first[1:] = runs[1:] != runs[:-1]
    prev = np.arange(len(runs)) - 1
    prev[first] = np.flatnonzero(first)
    return prev.astype("int64"), first.astype(float)


def walk_power(gap: Any, hurst: Any) -> Any:
    """``gap^(2 hurst)`` for distances ``gap >= 0`` in log D (finite gradient at 0)."""
    return (gap + 1e-12) ** (2.0 * hurst)


def walk_variance(xp: Any, log_d: Any, log_d_prev: Any, follows: Any, tau: Any, start: Any,
                  log_d_ref: float, hurst: Any = 0.5) -> Any:
    """Variance the random-walk residual adds to a point, given the run's previous point.

    A point that follows another of its run: ``tau^2 (x - x_prev)^(2h)`` (``x = log D``,
    ``h = hurst``, 1/2 for a random walk); a run's first point:
    ``start^2 + tau^2 |x - log D_ref|^(2h)`` (the walk starts at the reference).  Written once
    for numpy and PyTensor (``xp``).
    """
    return (follows * tau**2 * walk_power(log_d - log_d_prev, hurst)
            + (1.0 - follows) * (start**2 + tau**2 * walk_power(xp.abs(log_d - log_d_ref), hurst)))


def sum_split_transform() -> Any:
    """A PyMC transform of positive ``(x_0, ..., x_{n-1})`` to their log sum and log ratios.

    The unconstrained coordinates are ``v = log(x_0 + ... + x_{n-1})`` and
    ``w_i = log(x_i / x_0)`` (i >= 1).  Used by ``sampler.sum_split``: when the data pin the
    sum of some parameters (E and c, with only two T_m levels observed; E + a + c, the loss
    floor at the reference point), their posterior lies along a curved ridge in the default
    ``log x_i`` coordinates; in these the sum is one coordinate and the ridge runs along the
    ratios.  The priors are unchanged: the transform carries its log-Jacobian
    ``n v + sum_i log p_i`` (``p = x / sum(x)``, the softmax of ``(0, w_1, ...)``).
    """
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    class SumSplit(Transform):
        name = "sumsplit"  # no underscore: PyMC strips "_<name>__" from value names

        def forward(self, value: Any, *inputs: Any) -> Any:
            logs = pt.log(value)
            total = pt.log(pt.sum(value, axis=-1, keepdims=True))
            return pt.concatenate([total, logs[..., 1:] - pt.shape_padright(logs[..., 0])], axis=-1)

        @staticmethod
        def _logits(value: Any) -> Any:
            return pt.concatenate([pt.zeros_like(value[..., :1]), value[..., 1:]], axis=-1)

        def backward(self, value: Any, *inputs: Any) -> Any:
            total = pt.exp(pt.shape_padright(value[..., 0]))
            return total * pt.special.softmax(self._logits(value), axis=-1)

        def log_jac_det(self, value: Any, *inputs: Any) -> Any:
            logits = self._logits(value)
            n = logits.shape[-1]
            return (n * value[..., 0] + pt.sum(logits, axis=-1)
                    - n * pt.logsumexp(logits, axis=-1))

    return SumSplit()


def sum_split_vector(pm: Any, spec: ModelSpec, names: tuple[str, ...]) -> dict[str, Any]:
    """The LogNormal parameters ``names`` as one variable ``<x>_<y>..._sum``.

    It is sampled through :func:`sum_split_transform`, with a Deterministic per parameter.
    """
    mu = [spec.priors[n].params["mu"] for n in names]
    sd = [spec.priors[n].params["sigma"] for n in names]
    joint = pm.LogNormal("_".join(names) + "_sum", mu=mu, sigma=sd, shape=len(names),
                         default_transform=None, transform=sum_split_transform())
    return {n: pm.Deterministic(n, joint[i]) for i, n in enumerate(names)}


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
    data.require_levels(law.covariates, law.name, law.min_levels)
    uses_run = [e.name for e in spec.effects if e.group == C.RUN]
    if spec.likelihood.sigma_by == C.RUN:
        uses_run.append("likelihood.sigma_by = 'run'")
    if uses_run and not data.has_runs:
        raise DataError(
            f"the table has no 'run' column (one row per run) but the spec uses per-run terms "
            f"({', '.join(uses_run)}); use a spec without them, e.g. likelihood.sigma_by = "
            "'none' (the chinchilla default)")
    table = data.run_table()
    for e in spec.effects:
        _, codes = data.levels(e.group)
        param = law.param(e.param)
        term = () if param.term is None else law.term_covariates(param.term)
        for cov in law.covariates:
            if cov == C.D and data.has_runs:
                continue
            within = table.groupby(codes)[cov].nunique()
            if (within <= 1).all() and (param.term is None or cov in term):
                what = ("the irreducible loss E" if param.term is None else
                        f"the {param.term} term" + (f" (a function of {cov})"
                                                    if param.term != cov else ""))
                raise SpecError(
                    f"effect {e.param!r} by {e.group!r} is collinear with the law: {cov} is "
                    f"constant within each {e.group} level, so a per-level shift of "
                    f"{e.param!r} duplicates {what}. Remove this effect or let another "
                    "parameter vary")


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
    levels, _ = like.levels(group)
    if setting != "auto":
        return np.full(len(levels), bool(setting))
    index = {v: i for i, v in enumerate(levels.tolist())}

    def counts(data: LossData) -> np.ndarray:
        rows = np.array([index[v] for v in data.frame[group].tolist()], dtype=int)
        return np.bincount(rows, minlength=len(levels))

    return (counts(like) >= C.CENTERED_MIN_POINTS) & (counts(observed) > 0)


def centering(spec: ModelSpec, like: LossData, observed: LossData
              ) -> tuple[tuple[str, np.ndarray], ...]:
    """Centered-level masks of every group term (effects, then ``sigma``).

    Part of the key of a compiled model, since they change the graph.
    """
    out = [(e.name, level_richness(e.centered, like, observed, e.group)) for e in spec.effects]
    lk = spec.likelihood
    if lk.sigma_by is not None:
        out.append(("sigma", level_richness(lk.sigma_centered, like, observed, lk.sigma_by)))
    return tuple(out)


def _group_deviations(pm: Any, pt: Any, name: str, z_name: str, sd: Any, dim: str,
                      centered: np.ndarray) -> Any:
    """Level deviations ``~ N(0, sd)``, centered and non-centered as the mask says.

    Centered levels are ``name`` (``name_c`` when mixed), the others ``sd * z_name``.
    """
    if centered.all():
        return pm.Normal(name, 0.0, sd, dims=dim)
    if not centered.any():
        return pm.Deterministic(name, sd * pm.Normal(z_name, 0.0, 1.0, dims=dim), dims=dim)
    rich, poor = np.flatnonzero(centered), np.flatnonzero(~centered)
    c = pm.Normal(f"{name}_c", 0.0, sd, shape=len(rich))
    z = pm.Normal(z_name, 0.0, 1.0, shape=len(poor))
    eff = pt.zeros(len(centered))
    eff = pt.set_subtensor(eff[rich], c)
    eff = pt.set_subtensor(eff[poor], sd * z)
    return pm.Deterministic(name, eff, dims=dim)


def structure_of(spec: ModelSpec, data: LossData) -> Structure:
    """The structure key of (spec, data) for model reuse."""
    levels = tuple((g, tuple(data.levels(g)[0].tolist())) for g in groups_of(spec))
    return Structure(tuple(data.runs.tolist()), levels)


class LossModel:
    """A compiled-once PyMC model of a loss law over a sweep.

    Parameters
    ----------
    spec : ModelSpec
        Law, priors, hierarchy and likelihood.
    data : LossData
        The data that fixes the structure (runs and group levels) and initial values.
    """

    def __init__(self, spec: ModelSpec, data: LossData, observed: LossData | None = None
                 ) -> None:
        check_compatible(spec, data)
        self.spec = spec
        self.structure = structure_of(spec, data)
        #: which levels of each group term are built centered (``centered = "auto"`` resolved
        #: on the rows that will be ``observed``, default ``data``)
        self.centered: dict[str, np.ndarray] = dict(
            centering(spec, data, observed if observed is not None else data))
        self.model = self._build(data)

    @property
    def prefers_low_rank(self) -> bool:
        """Whether nutpie's low-rank mass matrix suits this model (``low_rank = "auto"``).

        Centered, data-rich terms leave strong linear correlations (population value vs
        level effects, E vs a vs c) that a low-rank mass matrix captures (tree depth 4 vs 9 on
        the bundled sweep); with non-centered terms the diagonal one mixed better (R-hat 1.002
        vs 1.016 on a 3 x 3 sweep of 25 points per curve). Measured at 37f6b95, not saved:
        ``benchmarks/results/looped_total_sampler_2026-11-30.md``.
        """
        return bool(self.centered) and all(v.any() for v in self.centered.values())

    # ------------------------------------------------------------------------------------
    def data_values(self, data: LossData) -> dict[str, np.ndarray]:
        """Values of every ``pm.Data`` container for ``data``.

        ``data`` may be a row subset of the data the model was built from (a training split):
        runs without observations keep their parameters in the model, where they are drawn
        from the population - exactly what a forecast for a held-out run needs.
        """
        index = {r: i for i, r in enumerate(self.structure.runs)}
        unknown = [r for r in data.runs if r not in index]
        if unknown:
            raise SpecError(f"run(s) {unknown[:3]} are not in the compiled model; build a "
                            "LossModel from data that include them")
        vals = {cov_data_name(c): data.values(c).astype(float)
                for c in self.spec.law_obj.covariates}
        vals["run_idx"] = np.array([index[r] for r in data.frame[C.RUN]], dtype="int64")
        vals["loss_obs"] = data.values(C.LOSS).astype(float)
        if self.spec.likelihood.ar1 is not None or self.spec.likelihood.walk is not None:
            vals["prev_idx"], vals["is_first"] = previous_rows(data.frame[C.RUN].to_numpy())
        return vals

    def set_data(self, data: LossData) -> None:
        """Swap the observations in the PyMC model (a row subset of its structure data)."""
        import pymc as pm

        with self.model:
            pm.set_data(self.data_values(data), coords={"obs": np.arange(len(data))})

    # ------------------------------------------------------------------------------------
    def _build(self, data: LossData) -> Any:
        import pymc as pm
        import pytensor.tensor as pt

        spec, law = self.spec, self.spec.law_obj
        coords: dict[str, Any] = {"obs": np.arange(len(data)), "run": data.runs.tolist()}
        codes: dict[str, np.ndarray] = {}
        for g in groups_of(spec):
            levels, codes[g] = data.levels(g)
            coords.setdefault(level_dim(g), levels.tolist())
        n_runs = len(data.runs)
        with pm.Model(coords=coords) as model:
            values = self.data_values(data)
            cov = {c: pm.Data(cov_data_name(c), values[cov_data_name(c)], dims="obs")
                   for c in law.covariates}
            run_idx = pm.Data("run_idx", values["run_idx"], dims="obs")
            loss_obs = pm.Data("loss_obs", values["loss_obs"], dims="obs")
            theta: dict[str, Any] = {}
            scalars: dict[str, Any] = {}
            split = tuple(spec.sampler.get("sum_split", ()))
            for p in law.params:
                if p.name in spec.fixed:
                    theta[p.name] = scalars[p.name] = pt.as_tensor(spec.fixed[p.name])
                    continue
                if p.name not in split:
                    scalars[p.name] = spec.priors[p.name].create(p.name)
                elif p.name not in scalars:  # all of sum_split's parameters at once
                    scalars.update(sum_split_vector(pm, spec, split))
                effects = [e for e in spec.effects if e.param == p.name]
                if not effects:
                    theta[p.name] = scalars[p.name]
                    continue
                link = pt.log(scalars[p.name]) if p.link == "log" else scalars[p.name]
                eta = pt.zeros(n_runs) + link
                for e in effects:
                    dim = level_dim(e.group)
                    sd = (e.scale.create(f"{e.name}_sd") if not isinstance(e.scale, float)
                          else pt.as_tensor(e.scale))
                    eff = _group_deviations(pm, pt, e.name, f"{e.name}_z", sd, dim,
                                            self.centered[e.name])
                    eta = eta + eff[codes[e.group]]
                per_run = pt.exp(eta) if p.link == "log" else eta
                per_run = pm.Deterministic(f"{p.name}_run", per_run, dims="run")
                theta[p.name] = per_run[run_idx]
            for name, value in law.natural(scalars, spec.reference).items():
                pm.Deterministic(name, value)
            mu = law(pt, cov, theta, spec.reference)
            sigma = pt.ones_like(mu) * self._noise(pm, pt, data, codes, run_idx)
            lk = spec.likelihood
            if lk.sigma_decay is not None:
                decay = lk.sigma_decay.create("sigma_decay")
                sigma = sigma * pt.exp(-decay * pt.log(cov[C.D] / spec.reference[C.D]))
            if lk.sigma_relative:  # a fraction of the law's value: noise on log-loss
                sigma = sigma * mu
            loc = mu
            if lk.ar1 is not None or lk.walk is not None:  # the run's previous point
                prev = pm.Data("prev_idx", values["prev_idx"], dims="obs")
                follows = 1.0 - pm.Data("is_first", values["is_first"], dims="obs")
            if lk.ar1 is not None:  # conditional on the previous point of the run
                phi = lk.ar1.create("ar1")
                loc = mu + follows * phi * sigma / sigma[prev] * (loss_obs - mu)[prev]
                sigma = sigma * pt.sqrt(1.0 - follows * phi**2)
            if lk.walk is not None:  # the residual drifts from the run's previous point
                log_d = pt.log(cov[C.D])
                hurst = (lk.walk_hurst.create("walk_hurst") if lk.walk_hurst is not None
                         else 0.5)
                var = walk_variance(pt, log_d, log_d[prev], follows, lk.walk.create("walk"),
                                    lk.walk_start.create("walk_start"),
                                    float(np.log(spec.reference[C.D])), hurst)
                if lk.sigma_relative:
                    var = var * mu**2
                loc = mu + follows * (loss_obs - mu)[prev]
                sigma = pt.sqrt(sigma**2 + var)
            if lk.family == "student_t":
                nu = lk.nu.create("nu")
                pm.StudentT("loss", nu=nu, mu=loc, sigma=sigma, observed=loss_obs, dims="obs")
            else:
                pm.Normal("loss", mu=loc, sigma=sigma, observed=loss_obs, dims="obs")
        return model


    def _noise(self, pm: Any, pt: Any, data: LossData, codes: dict[str, np.ndarray],
               run_idx: Any) -> Any:
        lk = self.spec.likelihood
        sigma = lk.sigma.create("sigma")
        if lk.sigma_by is None:
            return sigma
        dim = level_dim(lk.sigma_by)
        spread = lk.sigma_spread.create("sigma_spread")
        dev = _group_deviations(pm, pt, "sigma_log_dev", "sigma_z", spread, dim,
                                self.centered["sigma"])
        per_level = sigma * pt.exp(dev)
        per_run = pm.Deterministic("sigma_run", per_level[codes[lk.sigma_by]], dims="run")
        return per_run[run_idx]
