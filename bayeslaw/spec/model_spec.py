"""The declarative model spec (law + priors + hierarchy + likelihood + sampler settings).

A spec is plain TOML under ``models/`` (shipped inside the wheel; :mod:`bayeslaw.spec.catalog`
finds and merges them).  Priors are fixed numbers on the centered scale, never scaled from
the data, so that simulation-based calibration can draw from exactly the prior that is
fitted.  Every key of
every section is checked against the section's allowed keys, which are the fields of its
dataclass (:class:`~bayeslaw.spec.parts.Effect`, :class:`~bayeslaw.spec.parts.Likelihood`,
:class:`~bayeslaw.spec.settings.SamplerSettings`, :class:`~bayeslaw.spec.settings.DataSettings`)
or the law's reference keys.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .. import constants as C
from ..data.validation import LARGEST
from ..errors import SpecError, plain
from ..laws.registry import Law, get_law
from .parts import (
    FAMILY_PARAMS,
    LIKELIHOODS,
    POOLINGS,
    Correlation,
    Effect,
    Likelihood,
    Prior,
    link_width,
    parse_centered,
    parse_flag,
    parse_prior,
)
from .settings import WINDOW_LAW, WINDOW_PARAMS, DataSettings, SamplerSettings, splits_clash

#: Finite floats are below this (float64's largest is 1.8e308).
LARGEST_NUMBER = 1.7e308


def keys_of(cls: type) -> frozenset[str]:
    """The keys a spec section may hold: the fields of its dataclass."""
    return frozenset(f.name for f in fields(cls))


@dataclass(frozen=True)
class ModelSpec:
    """Everything that defines a model except the data; immutable and serialisable."""

    law: str
    reference: Mapping[str, float]
    fixed: Mapping[str, float]
    priors: Mapping[str, Prior]
    effects: tuple[Effect, ...]
    likelihood: Likelihood
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    description: str = ""
    correlation: Correlation | None = None
    data: DataSettings = field(default_factory=DataSettings)
    # the parameters whose prior or value came from a default (the law's default spec or a
    # shipped spec named as the spec), not from the user: values the data fix (a step
    # table's entropy weight) replace exactly these (:func:`bayeslaw.spec.catalog.load_spec`
    # sets it; a spec built otherwise has none, and is fitted as given)
    defaulted: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def law_obj(self) -> Law:
        """The registered :class:`Law`."""
        return get_law(self.law)

    @property
    def free_params(self) -> tuple[str, ...]:
        """Law parameters that are sampled (in law order)."""
        return tuple(n for n in self.law_obj.param_names if n not in self.fixed)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (the TOML layout)."""
        return {
            "law": self.law,
            "description": self.description,
            "reference": dict(self.reference),
            "fixed": dict(self.fixed),
            "priors": {k: v.to_dict() for k, v in self.priors.items()},
            "effects": [e.to_dict() for e in self.effects],
            "likelihood": self.likelihood.to_dict(),
            "sampler": self.sampler.to_dict(),
            **({"correlation": self.correlation.to_dict()} if self.correlation else {}),
            **({"data": self.data.to_dict()} if self.data != DataSettings() else {}),
        }

    def to_json(self) -> str:
        """Canonical JSON (stored in saved fits)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelSpec:
        """Build and validate a spec from its plain-dict form (no merging)."""
        return parse_spec(d)

    def replace_effects(self, effects: tuple[Effect, ...]) -> ModelSpec:
        """A copy with other group effects (e.g. complete pooling: ``()``)."""
        d = self.to_dict()
        d["effects"] = [e.to_dict() for e in effects]
        kept = {(e.param, e.group) for e in effects}
        if self.correlation and not all((p, self.correlation.group) in kept
                                        for p in self.correlation.params):
            d.pop("correlation")  # its effects are gone (complete or changed pooling)
        if self.sampler.shape_at == "window" and not all(
                sum(e.param == p for e in effects) == 1 for p in WINDOW_PARAMS):
            d["sampler"]["shape_at"] = "reference"  # nothing left to sample at the window
        return parse_spec(d)

    def with_pooling(self, kind: str) -> ModelSpec:
        """The same model with complete, partial or no pooling of its group effects.

        Parameters
        ----------
        kind : {"complete", "partial", "none"}
            ``complete``: no group effects (one value of every parameter for all groups).
            ``partial``: the spec's effects, each with a learned sd (an effect given
            ``pooling = "none"`` gets the prior ``HalfNormal(sigma=its fixed sd)``).
            ``none``: the same effects with ``pooling = "none"``: independent level values
            with a fixed sd and no shared spread; an effect with a learned sd gets, as its
            fixed sd, the width of its parameter's population prior on the link scale
            (:func:`link_width`).  The noise model (``sigma_by``) is left as it is.
        """
        if kind == "complete":
            return self.replace_effects(())
        law = self.law_obj
        if kind == "partial":
            effects = tuple(
                e if e.pooling == "partial" else
                Effect(e.param, e.group, "partial", Prior("HalfNormal", {"sigma": e.scale}),
                       e.centered)
                for e in self.effects)
        elif kind == "none":
            effects = tuple(
                e if e.pooling == "none" else
                Effect(e.param, e.group, "none",
                       link_width(self.priors[e.param], law.param(e.param).link), e.centered)
                for e in self.effects)
        else:
            raise SpecError(f"pooling kind must be one of 'complete', 'partial', 'none'; got "
                            f"{plain(kind)}")
        return self.replace_effects(effects)


def check_keys(table: Any, allowed: frozenset[str], where: str) -> None:
    """Raise naming every key of ``table`` (a section of ``where``) outside ``allowed``."""
    if not isinstance(table, Mapping):
        raise SpecError(f"{where} must be a table of keys, got {plain(table)}")
    unknown = sorted(set(table) - allowed, key=str)
    if unknown:
        raise SpecError(f"unknown key(s) {unknown} in {where}; allowed keys: "
                        f"{sorted(allowed)} (a misspelt key would be silently ignored)")


def parse_spec(d: Mapping[str, Any]) -> ModelSpec:
    """Build and validate a spec from its merged plain-dict form."""
    sections = keys_of(ModelSpec) - {"defaulted"}  # where values came from: not a section
    unknown = set(d) - sections
    if unknown:
        raise SpecError(f"unknown spec section(s) {sorted(unknown, key=str)}; allowed: "
                        f"{sorted(sections)}")
    if not isinstance(d.get("law", ""), str):
        raise SpecError(f"the spec's law must be a law's name (text), got {plain(d['law'])}")
    law = get_law(d.get("law", "looped_total"))
    fixed, priors = _parse_params(law, d)
    effects = _parse_effects(law, d.get("effects", []), fixed)
    sampler = _parse_sampler(d.get("sampler", {}), priors)
    correlation = _parse_correlation(d.get("correlation"), effects)
    split, slope = sampler.sum_split, sampler.slope_split
    if splits_clash(split, slope):
        raise SpecError(f"sampler.sum_split {list(split)} and sampler.slope_split "
                        f"{list(slope)} may share the floor and the coefficient (both, then "
                        f"the exponent is sampled as a slope beside the sum), not "
                        f"{sorted(set(split) & set(slope))}; drop a name from one of them")
    _check_window(law, sampler, effects, correlation)
    shared = (set(split) | set(slope)) & set(correlation.params if correlation else ())
    if shared:
        raise SpecError(f"correlation.params and sampler.sum_split / slope_split share "
                        f"{sorted(shared)}: a parameter is sampled one way; drop it from one "
                        "of them")
    return ModelSpec(
        law=law.name,
        reference=_parse_reference(law, d.get("reference", {})),
        fixed=fixed,
        priors=priors,
        effects=effects,
        likelihood=_parse_likelihood(law, d.get("likelihood", {})),
        sampler=sampler,
        description=str(d.get("description", "")),
        correlation=correlation,
        data=_parse_data(d.get("data", {})),
    )


def number(value: Any, need: str, *, positive: bool = False) -> float:
    """``value`` as a float, else a :class:`SpecError` saying ``need`` and the value given.

    It must be finite (not text, not true / false) and, if ``positive``, in
    ``(0, LARGEST]`` (:data:`bayeslaw.data.validation.LARGEST`, the bound of the data's covariates).
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            -LARGEST_NUMBER < value < LARGEST_NUMBER):  # not nan, inf nor an int beyond float
        raise SpecError(f"{need}, got {plain(value)}")
    if positive and not 0 < value <= LARGEST:
        raise SpecError(f"{need} (at most {LARGEST:g}), got {plain(value)}")
    return float(value)


def _table(d: Mapping[str, Any], key: str, default: Any) -> Any:
    """Section ``key`` of ``d``, which must be a table (``[[effects]]``: a list of tables)."""
    value = d.get(key, default)
    kind = list if isinstance(default, list) else Mapping
    if not isinstance(value, kind):
        raise SpecError(f"spec section {key!r} must be "
                        f"{'a list of [[effects]] tables' if kind is list else 'a table'}, "
                        f"got {plain(value)}")
    return value


def _parse_params(law: Law, d: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, Prior]]:
    """The fixed values (the law's own fixed offsets unless given a prior) and the priors."""
    given = _table(d, "priors", {})
    user_fixed = _table(d, "fixed", {})
    for k in (*user_fixed, *given):
        law.param(k)
    fixed = {k: number(v, f"fixed.{k} must be a finite number") for k, v in
             {**{p.name: p.fixed for p in law.params
                 if p.fixed is not None and p.name not in given},
              **user_fixed}.items()}
    priors = {k: parse_prior(v, f"priors.{k}") for k, v in given.items()}
    both = set(fixed) & set(priors)
    if both:
        raise SpecError(f"parameter(s) {sorted(both)} are both fixed and given a prior; "
                        "remove one of the two")
    missing = set(law.param_names) - set(fixed) - set(priors)
    if missing:
        raise SpecError(f"sampled parameter(s) {sorted(missing)} of law {law.name!r} need a "
                        "prior in [priors] (or a value in [fixed])")
    return fixed, priors


def _parse_reference(law: Law, table: Any) -> dict[str, float]:
    """``[reference]``: the law's reference keys (and covariates), each positive."""
    check_keys(table, frozenset(law.reference_keys) | set(law.covariates),
               f"[reference] of law {law.name!r}")
    need = "[reference] needs a positive {0} (the centering point of the {0} term)"
    for cov in law.reference_keys:
        if cov not in table:
            raise SpecError(need.format(cov))
    return {k: number(v, need.format(k), positive=True) for k, v in table.items()}


def _parse_effects(law: Law, entries: Any, fixed: Mapping[str, float]) -> tuple[Effect, ...]:
    """``[[effects]]``: each entry's keys are the fields of :class:`Effect`."""
    if not isinstance(entries, list | tuple):
        raise SpecError(f"[[effects]] must be a list of tables, got {plain(entries)}")
    effects = [_parse_effect(law, i, e, fixed) for i, e in enumerate(entries)]
    keys = [(e.param, e.group) for e in effects]
    if len(set(keys)) != len(keys):
        raise SpecError("an effect (param, group) pair is listed twice in [[effects]]")
    return tuple(effects)


def _parse_effect(law: Law, i: int, e: Any, fixed: Mapping[str, float]) -> Effect:
    check_keys(e, keys_of(Effect), f"effects[{i}] (the [[effects]] entry number {i + 1})")
    if "param" not in e or "group" not in e:
        raise SpecError(f"effects[{i}] needs 'param' and 'group' keys")
    for key in ("param", "group"):
        if not isinstance(e[key], str):
            raise SpecError(f"effects[{i}].{key} must be a name (text), got {plain(e[key])}")
    law.param(e["param"])
    if e["param"] in fixed:
        raise SpecError(f"effects[{i}]: {e['param']!r} is fixed, it cannot vary by group")
    pooling = e.get("pooling", "partial")
    if pooling not in POOLINGS:
        raise SpecError(f"effects[{i}].pooling must be one of {POOLINGS}, got {plain(pooling)}")
    raw = e.get("scale", {"dist": "HalfNormal", "sigma": 0.1})
    if pooling == "none":
        scale: Prior | float = number(
            raw, f"effects[{i}]: pooling='none' needs a positive number 'scale' (the fixed sd "
            "of the levels)", positive=True)
    else:
        scale = parse_prior(raw, f"effects[{i}].scale")
    return Effect(e["param"], str(e["group"]), pooling, scale,
                  parse_centered(e.get("centered", "auto"), f"effects[{i}].centered"))


def _parse_correlation(table: Any, effects: tuple[Effect, ...]) -> Correlation | None:
    """``[correlation]``: its group, parameters and LKJ shape.

    ``params`` are two or more, each with a partially pooled effect by ``group``; ``eta`` (the
    LKJ prior's shape) is positive.
    """
    if table is None:
        return None
    check_keys(table, keys_of(Correlation), "[correlation]")
    group, params = table.get("group"), table.get("params")
    if not isinstance(group, str):
        raise SpecError(f"correlation.group must be a column name (text), got {plain(group)}")
    if (not isinstance(params, list | tuple) or len(params) < 2
            or not all(isinstance(p, str) for p in params) or len(set(params)) != len(params)):
        raise SpecError("correlation.params must list two or more distinct parameter names, "
                        f"got {plain(params)}")
    pooled = {e.param for e in effects if e.group == group and e.pooling == "partial"}
    missing = [p for p in params if p not in pooled]
    if missing:
        raise SpecError(f"correlation.params {missing} have no partially pooled effect by "
                        f"{group!r}: add an [[effects]] entry (param, group = {group!r}) for each")
    eta = number(table.get("eta", 2.0), "correlation.eta must be a positive number",
                 positive=True)
    return Correlation(group, tuple(params), eta)


def _optional_prior(lk: Mapping[str, Any], key: str) -> Prior | None:
    return parse_prior(lk[key], f"likelihood.{key}") if lk.get(key) is not None else None


#: What each family's own parameter is, for the error that asks for its prior.
FAMILY_KEYS = {
    "nu": "the Student-t's degrees of freedom",
    "outlier_share": "the share of outlying points, in (0, 1): a Beta prior",
    "outlier_scale": "the outliers' scale over the bulk's, minus 1: a positive prior",
}


def _family_of(name: str) -> str:
    return next(f for f, names in FAMILY_PARAMS.items() if name in names)


def _parse_likelihood(law: Law, table: Any) -> Likelihood:
    """``[likelihood]``: its keys are the fields of :class:`Likelihood`."""
    check_keys(table, keys_of(Likelihood), "[likelihood]")
    lk = dict(table)
    family = lk.get("family", "student_t")
    if family not in LIKELIHOODS:
        raise SpecError(f"likelihood.family must be one of {LIKELIHOODS}, got {plain(family)}")
    if "sigma" not in lk:
        raise SpecError("[likelihood] needs a 'sigma' prior (the noise scale of the loss)")
    sigma_by = lk.get("sigma_by", "run")
    sigma_by = None if sigma_by in (None, "none", "") else sigma_by
    if sigma_by is not None and not isinstance(sigma_by, str):
        raise SpecError(f"likelihood.sigma_by must name a group column (or be \"none\"), got "
                        f"{plain(sigma_by)}")
    if sigma_by is not None and "sigma_spread" not in lk:
        raise SpecError("likelihood.sigma_by needs a 'sigma_spread' prior (sd of log sigma "
                        "across groups)")
    for name in FAMILY_PARAMS[family]:
        if name not in lk:
            raise SpecError(f"likelihood.family = {family!r} needs a prior on {name!r} "
                            f"({FAMILY_KEYS[name]})")
    for name in FAMILY_KEYS:
        if lk.get(name) is not None and name not in FAMILY_PARAMS[family]:
            raise SpecError(f"likelihood.{name} belongs to family "
                            f"{_family_of(name)!r}, not {family!r}: remove it or set "
                            f"likelihood.family = {_family_of(name)!r}")
    likelihood = Likelihood(
        family=family,
        sigma=parse_prior(lk["sigma"], "likelihood.sigma"),
        sigma_by=sigma_by,
        sigma_spread=_optional_prior(lk, "sigma_spread") if sigma_by is not None else None,
        nu=_optional_prior(lk, "nu"),
        sigma_centered=parse_centered(lk.get("sigma_centered", "auto"),
                                      "likelihood.sigma_centered"),
        sigma_decay=_optional_prior(lk, "sigma_decay"),
        ar1=_optional_prior(lk, "ar1"),
        sigma_relative=parse_flag(lk.get("sigma_relative", False), "likelihood.sigma_relative"),
        walk=_optional_prior(lk, "walk"),
        walk_start=_optional_prior(lk, "walk_start"),
        walk_hurst=_optional_prior(lk, "walk_hurst"),
        outlier_share=_optional_prior(lk, "outlier_share"),
        outlier_scale=_optional_prior(lk, "outlier_scale"),
        sigma_min_points=_min_points(lk, sigma_by),
        shock=_optional_prior(lk, "shock"),
    )
    _check_noise_model(law, likelihood)
    return likelihood


def _min_points(lk: Mapping[str, Any], sigma_by: str | None) -> int | None:
    """``likelihood.sigma_min_points``: a whole number of points, only with ``sigma_by``."""
    value = lk.get("sigma_min_points")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise SpecError("likelihood.sigma_min_points must be a whole number of fitted points "
                        f"(at least 1) a level needs for a noise scale of its own, got "
                        f"{plain(value)}")
    if sigma_by is None:
        raise SpecError("likelihood.sigma_min_points says which levels of sigma_by get a noise "
                        "scale of their own, but sigma_by is \"none\": set sigma_by (and "
                        "sigma_spread) or remove sigma_min_points")
    return int(value)


def _check_noise_model(law: Law, likelihood: Likelihood) -> None:
    """The likelihood's terms must fit together and fit the law."""
    if likelihood.sigma_decay is not None and "D" not in law.covariates:
        raise SpecError(f"likelihood.sigma_decay makes the noise fall with D, but law "
                        f"{law.name!r} has no D: remove sigma_decay")
    for key, what in (("ar1", "a correlation"), ("walk_hurst", "an exponent"),
                      ("outlier_share", "a probability")):
        prior = getattr(likelihood, key)
        if prior is not None and prior.dist not in ("Beta", "Uniform"):
            raise SpecError(f"likelihood.{key} is {what} in (0, 1): give it a Beta or Uniform "
                            f"prior, not {prior.dist}")
    if (likelihood.walk is None) != (likelihood.walk_start is None):
        raise SpecError("likelihood.walk (the drift scale per sqrt of an e-fold of tokens) and "
                        "likelihood.walk_start (the spread of a run's residual at the reference "
                        "D) go together: give both or neither")
    if likelihood.walk is not None and "D" not in law.covariates:
        raise SpecError(f"likelihood.walk is a drift along log D, but law {law.name!r} has no "
                        "D: remove walk and walk_start")
    if likelihood.walk_hurst is not None and likelihood.walk is None:
        raise SpecError("likelihood.walk_hurst shapes the random walk: give walk and walk_start "
                        "too, or remove walk_hurst")
    if likelihood.walk is not None and likelihood.ar1 is not None:
        raise SpecError("likelihood.walk and likelihood.ar1 are two models of the within-run "
                        "residual: keep one")
    if likelihood.shock is not None and not set(C.EXIT_WEIGHTS) & set(law.covariates):
        raise SpecError(f"likelihood.shock is shared by the exit steps of one checkpoint, but "
                        f"law {law.name!r} is not a step-wise law (a table with a 'T' column): "
                        "remove shock")
    if likelihood.shock is not None and (likelihood.walk is not None
                                         or likelihood.ar1 is not None):
        raise SpecError("likelihood.shock (shared across a checkpoint's curves) is not "
                        "combined with ar1 or walk (along a curve): keep one")


def _parse_data(table: Any) -> DataSettings:
    """``[data]``: its keys are the fields of :class:`DataSettings`."""
    check_keys(table, keys_of(DataSettings), "[data]")
    return DataSettings.from_dict(table)


def _parse_sampler(table: Any, priors: Mapping[str, Prior]) -> SamplerSettings:
    """``[sampler]``: its keys are the fields of :class:`SamplerSettings`."""
    check_keys(table, SamplerSettings.keys(), "[sampler]")
    for key in _SPLITS:
        if key in table:
            _check_split(key, table[key], priors)
    return SamplerSettings.from_dict(table)


def _check_window(law: Law, sampler: SamplerSettings, effects: tuple[Effect, ...],
                  correlation: Correlation | None) -> None:
    """``sampler.shape_at = "window"``: what :mod:`bayeslaw.model.window` maps."""
    if sampler.shape_at != "window":
        return
    own = {p: [e for e in effects if e.param == p] for p in WINDOW_PARAMS}
    problem = (f"the law is {law.name!r}, not {WINDOW_LAW!r}" if law.name != WINDOW_LAW else
               next((f"{p!r} needs exactly one [[effects]] entry, by 'run'"
                     for p, es in own.items() if len(es) != 1 or es[0].group != C.RUN), None)
               or ("the [correlation] block samples them already" if correlation else None)
               or ("a sampler split samples them already"
                   if set(WINDOW_PARAMS) & set(sampler.sum_split + sampler.slope_split) else None))
    if problem:
        raise SpecError(f"sampler.shape_at = \"window\": {problem}; set shape_at = "
                        "\"reference\" for the spec's own coordinates")


#: Each sampler split: how many names it takes (None: two or more) and how to write it.
_SPLITS = {
    "sum_split": (None, 'e.g. sum_split = ["E", "c"]: sampled parameters with LogNormal '
                        "priors, sampled as the log of their sum and the logs of their ratios "
                        "to the first; [] turns it off"),
    "slope_split": (3, 'e.g. slope_split = ["E", "a", "alpha"] for E + a (N/N_ref)^-alpha: '
                       "three sampled parameters with LogNormal priors (floor, coefficient, "
                       "exponent), sampled as the level log(E + a), the share log(a / E) and "
                       "the slope log(a alpha); [] turns it off"),
}


def _check_split(key: str, names: Any, priors: Mapping[str, Prior]) -> None:
    """``sampler.<key>``, ``sum_split`` or ``slope_split``: names checked.

    Different sampled parameters with LogNormal priors, as many as the split takes.
    """
    count, how = _SPLITS[key]
    if names == [] or names == ():
        return
    need = "two or more different parameters" if count is None else "three different parameters"
    if (not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names)
            or len(set(names)) != len(names)
            or (len(names) < 2 if count is None else len(names) != count)):
        raise SpecError(f"sampler.{key} must name {need}, got {names!r}; {how}")
    for name in names:
        if name not in priors:
            raise SpecError(f"sampler.{key}: {name!r} is not a sampled parameter with a "
                            f"prior in [priors]; {how}")
        if priors[name].dist != "LogNormal":
            raise SpecError(f"sampler.{key}: the prior of {name!r} is {priors[name].dist}, "
                            f"not LogNormal; {how}")
