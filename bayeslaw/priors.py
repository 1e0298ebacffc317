"""Priors as objects and the declarative model spec (law + priors + hierarchy + likelihood).

A spec is plain TOML under ``models/`` (shipped inside the wheel).  A user spec is
merged over the law's default spec in one documented order::

    user spec  >  law default spec (models/<law>.toml)

Priors are fixed numbers on the centered scale, never scaled from the data, so that
simulation-based calibration can draw from exactly the prior that is fitted.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import constants as C
from .errors import SpecError
from .laws import Law, get_law

#: Parameters a distribution cannot do without (the others in :data:`_DISTS` are optional).
_REQUIRED: dict[str, frozenset[str]] = {
    "Normal": frozenset({"mu", "sigma"}),
    "LogNormal": frozenset({"mu", "sigma"}),
    "HalfNormal": frozenset({"sigma"}),
    "TruncatedNormal": frozenset({"mu", "sigma"}),
    "Gamma": frozenset({"alpha", "beta"}),
    "Exponential": frozenset({"lam"}),
    "Uniform": frozenset({"lower", "upper"}),
    "Beta": frozenset({"alpha", "beta"}),
}
#: Keys of an ``[[effects]]`` entry and of ``[sampler]``.
EFFECT_KEYS = frozenset({"param", "group", "pooling", "scale", "centered"})
SAMPLER_KEYS = frozenset({"draws", "tune", "chains", "target_accept", "backend", "low_rank",
                          "sum_split", "init"})
#: Distributions a spec may name, with the parameters each accepts.
_DISTS: dict[str, frozenset[str]] = {
    "Normal": frozenset({"mu", "sigma"}),
    "LogNormal": frozenset({"mu", "sigma"}),
    "HalfNormal": frozenset({"sigma"}),
    "TruncatedNormal": frozenset({"mu", "sigma", "lower", "upper"}),
    "Gamma": frozenset({"alpha", "beta"}),
    "Exponential": frozenset({"lam"}),
    "Uniform": frozenset({"lower", "upper"}),
    "Beta": frozenset({"alpha", "beta"}),
}
LIKELIHOODS = ("student_t", "normal")
POOLINGS = ("partial", "none")


@dataclass(frozen=True)
class Prior:
    """A named PyMC distribution with numeric parameters, serialisable to a dict.

    Examples
    --------
    >>> Prior("LogNormal", {"mu": 0.0, "sigma": 0.5}).to_dict()
    {'dist': 'LogNormal', 'mu': 0.0, 'sigma': 0.5}
    """

    dist: str
    params: Mapping[str, float]

    def __post_init__(self) -> None:
        if self.dist not in _DISTS:
            raise SpecError(f"unknown prior distribution {self.dist!r}; use one of "
                            f"{', '.join(sorted(_DISTS))}")
        bad = set(self.params) - _DISTS[self.dist]
        missing = _REQUIRED[self.dist] - set(self.params)
        if bad or missing:
            what = "; ".join(
                ([f"unknown parameter(s) {sorted(bad)}"] if bad else [])
                + ([f"missing {sorted(missing)}"] if missing else []))
            raise SpecError(
                f"prior {self.dist}: {what}; it takes {sorted(_DISTS[self.dist])} "
                f"(required: {sorted(_REQUIRED[self.dist])})"
            )
        for k, v in self.params.items():
            if not isinstance(v, int | float) or not np.isfinite(v):
                raise SpecError(f"prior {self.dist} parameter {k}={v!r} must be a finite number")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Prior:
        """Inverse of :meth:`to_dict`."""
        if "dist" not in d:
            raise SpecError(f"prior {dict(d)!r} needs a 'dist' key, e.g. dist = \"LogNormal\"")
        return cls(d["dist"], {k: float(v) for k, v in d.items() if k != "dist"})

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form, as written in a spec file."""
        return {"dist": self.dist, **dict(self.params)}

    def create(self, name: str, **kwargs: Any) -> Any:
        """Create the PyMC random variable inside the current model context."""
        import pymc as pm

        return getattr(pm, self.dist)(name, **self.params, **kwargs)

    def dist_(self) -> Any:
        """An unnamed PyMC distribution (for forward draws)."""
        import pymc as pm

        return getattr(pm, self.dist).dist(**self.params)


@dataclass(frozen=True)
class Effect:
    """A group effect: ``param`` varies by the levels of column ``group``.

    ``pooling="partial"``: effects with a learned sd whose prior is ``scale`` (partial
    pooling), centered (``effect ~ Normal(0, sd)``) or non-centered (``sd * z``); ``"auto"``
    picks centered when every level holds at least
    :data:`~bayeslaw.constants.CENTERED_MIN_POINTS` observations (the data then pin each
    level and the non-centered form becomes a curved ridge) and non-centered otherwise.
    ``pooling="none"``: the sd is fixed at the number
    ``scale`` (no information shared about the spread: effectively unpooled levels).
    Effects are added on the parameter's link scale (log for positive parameters).
    """

    param: str
    group: str
    pooling: str = "partial"
    scale: Prior | float = field(default_factory=lambda: Prior("HalfNormal", {"sigma": 0.1}))
    centered: bool | str = "auto"

    @property
    def name(self) -> str:
        """Stem of the variable names of this effect (``b_by_N``)."""
        return f"{self.param}_by_{self.group}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form."""
        scale = self.scale.to_dict() if isinstance(self.scale, Prior) else self.scale
        return {"param": self.param, "group": self.group, "pooling": self.pooling,
                "scale": scale, "centered": self.centered}


@dataclass(frozen=True)
class Likelihood:
    """Observation model: family, noise scale, per-run spread, decay with D, AR(1), dof.

    The noise of point ``i`` of run ``r`` has marginal scale
    ``s_i = sigma_r * (D_i / D_ref) ** -sigma_decay`` (``sigma_decay`` only when given a
    prior: noise that shrinks as training goes on), times the law's value ``mu_i`` when
    ``sigma_relative`` (``sigma`` is then a fraction of the loss: noise on the log-loss
    scale, as the least-squares baseline's Huber loss on log-loss assumes).  With an ``ar1``
    prior, standardised residuals of consecutive points of a run follow an AR(1) with
    correlation ``ar1``:
    ``y_i | y_(i-1) ~ family(mu_i + ar1 * s_i / s_(i-1) * e_(i-1), s_i * sqrt(1 - ar1^2))``
    (the first point of a run: scale ``s_i``), so ``s_i`` stays the marginal scale that
    predictions far from the data use.

    With a ``walk`` prior (tau, in loss units per square root of an e-fold of tokens) and a
    ``walk_start`` prior (s0), a run's residual ``e = y - mu`` drifts as a random walk in
    ``x = log D``: ``e_i | e_(i-1) ~ family(e_(i-1), sqrt(s_i^2 + tau^2 (x_i - x_(i-1))))``,
    and a run's first point ``e ~ family(0, sqrt(s_i^2 + s0^2 + tau^2 |x_i - log D_ref|))``
    (the walk starts at the reference tokens with spread s0).  A forecast of a fitted run then
    starts from its logged residual and widens with the distance in log tokens (a bridge
    between logged points); ``s_i`` is the white part of one step.  Both scales are times the
    law's value with ``sigma_relative``.  With a ``walk_hurst`` prior (h in (0, 1)), every
    distance ``g`` in log D above enters as ``g^(2h)`` (a fractional walk): h = 1/2 (the
    default) is the random walk, h near 1 a drift whose spread grows in proportion to the
    distance (a run's residual bending away from the law along a trend of its own).
    """

    family: str
    sigma: Prior
    sigma_by: str | None = "run"
    sigma_spread: Prior | None = None
    nu: Prior | None = None
    sigma_centered: bool | str = "auto"
    sigma_decay: Prior | None = None
    ar1: Prior | None = None
    sigma_relative: bool = False
    walk: Prior | None = None
    walk_start: Prior | None = None
    walk_hurst: Prior | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form."""
        out: dict[str, Any] = {"family": self.family, "sigma": self.sigma.to_dict(),
                               "sigma_by": self.sigma_by or "none",
                               "sigma_centered": self.sigma_centered}
        if self.sigma_spread is not None:
            out["sigma_spread"] = self.sigma_spread.to_dict()
        if self.nu is not None:
            out["nu"] = self.nu.to_dict()
        if self.sigma_decay is not None:
            out["sigma_decay"] = self.sigma_decay.to_dict()
        if self.ar1 is not None:
            out["ar1"] = self.ar1.to_dict()
        if self.sigma_relative:
            out["sigma_relative"] = True
        if self.walk is not None:
            out["walk"] = self.walk.to_dict()
            out["walk_start"] = self.walk_start.to_dict()
        if self.walk_hurst is not None:
            out["walk_hurst"] = self.walk_hurst.to_dict()
        return out


#: keys allowed in a spec's ``[likelihood]`` table: the fields of :class:`Likelihood`
LIKELIHOOD_KEYS = frozenset(f.name for f in fields(Likelihood))


@dataclass(frozen=True)
class ModelSpec:
    """Everything that defines a model except the data; immutable and serialisable."""

    law: str
    reference: Mapping[str, float]
    fixed: Mapping[str, float]
    priors: Mapping[str, Prior]
    effects: tuple[Effect, ...]
    likelihood: Likelihood
    sampler: Mapping[str, Any]
    description: str = ""

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
            "sampler": dict(self.sampler),
        }

    def to_json(self) -> str:
        """Canonical JSON (stored in saved fits)."""
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelSpec:
        """Build and validate a spec from its plain-dict form (no merging)."""
        return _parse(d)

    def replace_effects(self, effects: tuple[Effect, ...]) -> ModelSpec:
        """A copy with other group effects (e.g. complete pooling: ``()``)."""
        d = self.to_dict()
        d["effects"] = [e.to_dict() for e in effects]
        return _parse(d)

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
                            f"{kind!r}")
        return self.replace_effects(effects)


def link_width(prior: Prior, link: str) -> float:
    """The sd of a prior on a parameter's link scale (log or identity), as a number.

    Exact for ``LogNormal`` (log link: its ``sigma``) and ``Normal``; moment-based for the
    others; 1.0 where no closed form is at hand.  The fixed sd of unpooled levels.
    """
    q = dict(prior.params)
    if link == "log":
        if prior.dist == "LogNormal":
            return float(q["sigma"])
        if prior.dist == "Gamma":  # sd of log X ~ sqrt(trigamma(alpha))
            from scipy.special import polygamma

            return float(np.sqrt(polygamma(1, q["alpha"])))
        return 1.0
    if prior.dist in ("Normal", "TruncatedNormal"):
        return float(q["sigma"])
    if prior.dist == "LogNormal":
        mu, s = q["mu"], q["sigma"]
        return float(np.sqrt(np.expm1(s**2) * np.exp(2 * mu + s**2)))
    if prior.dist == "Gamma":
        return float(np.sqrt(q["alpha"]) / q["beta"])
    if prior.dist == "HalfNormal":
        return float(q["sigma"] * np.sqrt(1 - 2 / np.pi))
    if prior.dist == "Exponential":
        return float(1 / q["lam"])
    if prior.dist == "Uniform":
        return float((q["upper"] - q["lower"]) / np.sqrt(12))
    if prior.dist == "Beta":
        a, b = q["alpha"], q["beta"]
        return float(np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))))
    return 1.0


def _models_dir() -> Path:
    """Directory of the default specs: inside the wheel, else the source tree's ``models/``."""
    shipped = Path(str(resources.files("bayeslaw"))) / "_models"
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parent.parent / "models"


def available_specs() -> list[str]:
    """Names of the default specs shipped with the package."""
    return sorted(p.stem for p in _models_dir().glob("*.toml"))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise SpecError(f"spec file {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"spec file {str(path)!r} is not valid TOML: {exc}") from None


def _merge(base: dict[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
    """User keys override base keys table by table; ``effects`` is replaced whole."""
    out = copy.deepcopy(base)
    for key, value in user.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict) and key != "priors":
            out[key] = {**out[key], **value}
        elif key == "priors":
            out[key] = {**out.get(key, {}), **value}
        else:
            out[key] = copy.deepcopy(value)
    # a prior given by the user frees a parameter the default spec fixed
    for name in user.get("priors", {}):
        if name in out.get("fixed", {}) and name not in user.get("fixed", {}):
            del out["fixed"][name]
    return out


def load_spec(spec: str | Path | Mapping[str, Any] | None = None, *,
              law: str | None = None) -> ModelSpec:
    """Load a spec: a TOML path, a shipped spec name, or a dict, merged over the law default.

    Parameters
    ----------
    spec : str, Path, mapping or None
        ``None`` gives the default spec of ``law``.
    law : str, optional
        Law name; overrides the spec's ``law`` key (and picks the default spec to merge over).
    """
    if isinstance(spec, ModelSpec):
        return spec
    if spec is None:
        user: dict[str, Any] = {}
    elif isinstance(spec, Mapping):
        user = dict(spec)
    else:
        path = Path(spec)
        if path.suffix != ".toml" and not path.exists():
            path = _models_dir() / f"{spec}.toml"
            if not path.exists():
                raise SpecError(f"no spec file {str(spec)!r} and no shipped spec of that name; "
                                f"shipped specs: {', '.join(available_specs())}")
        user = _read_toml(path)
    law_name = law or user.get("law") or "looped_total"
    get_law(law_name)
    base_path = _models_dir() / f"{law_name}.toml"
    base = _read_toml(base_path) if base_path.exists() else {}
    merged = _merge(base, user)
    merged["law"] = law_name
    return _parse(merged)


def resolve_spec(spec: ModelSpec | str | Path | Mapping[str, Any] | None, *,
                 law: str | None, columns: frozenset[str]) -> ModelSpec:
    """The spec to fit.

    A ``ModelSpec`` is returned as given; anything else goes through :func:`load_spec`, over
    the default spec of ``law`` or, with neither a spec nor a law, of the law the data's
    columns call for (:func:`bayeslaw.laws.law_for_columns`: ``looped_total`` with ``T_m``,
    ``parallel_streams`` with ``P``, ``iso_depth`` with ``N_once`` and ``N_rec``, else
    ``chinchilla``).
    """
    from .laws import law_for_columns

    if isinstance(spec, ModelSpec):
        if law is not None and law != spec.law:
            raise SpecError(f"law={law!r} contradicts the spec's law {spec.law!r}")
        return spec
    if law is None and spec is None:
        law = law_for_columns(columns)
    return load_spec(spec, law=law)


def _prior(value: Any, where: str) -> Prior:
    if not isinstance(value, Mapping):
        raise SpecError(f"{where} must be a table like {{ dist = \"LogNormal\", mu = 0, "
                        f"sigma = 1 }}, got {value!r}")
    try:
        return Prior.from_dict(value)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None


def _centered(value: Any, where: str) -> bool | str:
    if value == "auto" or isinstance(value, bool):
        return value
    raise SpecError(f"{where} must be true, false or \"auto\", got {value!r}")


def _flag(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    raise SpecError(f"{where} must be true or false, got {value!r}")


def _sum_split(names: Any, priors: Mapping[str, Prior]) -> list[str]:
    """Check ``sampler.sum_split``: two or more sampled parameters with LogNormal priors."""
    how = ('e.g. sum_split = ["E", "c"]: sampled parameters with LogNormal priors, sampled as '
           "the log of their sum and the logs of their ratios to the first; [] turns it off")
    if not isinstance(names, list | tuple) or len(set(names)) != len(names) or len(names) == 1:
        raise SpecError(f"sampler.sum_split must name two or more different parameters, got "
                        f"{names!r}; {how}")
    for name in names:
        if name not in priors:
            raise SpecError(f"sampler.sum_split: {name!r} is not a sampled parameter with a "
                            f"prior in [priors]; {how}")
        if priors[name].dist != "LogNormal":
            raise SpecError(f"sampler.sum_split: the prior of {name!r} is {priors[name].dist}, "
                            f"not LogNormal; {how}")
    return [str(n) for n in names]


def _check_keys(table: Any, allowed: frozenset[str], where: str) -> None:
    """Raise naming every key of ``table`` (a section of ``where``) outside ``allowed``."""
    if not isinstance(table, Mapping):
        raise SpecError(f"{where} must be a table of keys, got {table!r}")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise SpecError(f"unknown key(s) {unknown} in {where}; allowed keys: "
                        f"{sorted(allowed)} (a misspelt key would be silently ignored)")


def _parse(d: Mapping[str, Any]) -> ModelSpec:
    known = {"law", "description", "reference", "fixed", "priors", "effects", "likelihood",
             "sampler"}
    unknown = set(d) - known
    if unknown:
        raise SpecError(f"unknown spec section(s) {sorted(unknown)}; allowed: {sorted(known)}")
    law = get_law(d.get("law", "looped_total"))
    names = set(law.param_names)
    given = d.get("priors", {})
    fixed = {k: float(v) for k, v in
             {**{p.name: p.fixed for p in law.params
                 if p.fixed is not None and p.name not in given},
              **d.get("fixed", {})}.items()}
    for k in fixed:
        law.param(k)
    priors = {}
    for k, v in d.get("priors", {}).items():
        law.param(k)
        priors[k] = _prior(v, f"priors.{k}")
    both = set(fixed) & set(priors)
    if both:
        raise SpecError(f"parameter(s) {sorted(both)} are both fixed and given a prior; "
                        "remove one of the two")
    missing = names - set(fixed) - set(priors)
    if missing:
        raise SpecError(f"sampled parameter(s) {sorted(missing)} of law {law.name!r} need a "
                        "prior in [priors] (or a value in [fixed])")
    _check_keys(d.get("reference", {}), frozenset(law.reference_keys) | set(law.covariates),
                f"[reference] of law {law.name!r}")
    _check_keys(d.get("sampler", {}), SAMPLER_KEYS, "[sampler]")
    reference = {k: float(v) for k, v in d.get("reference", {}).items()}
    for cov in law.reference_keys:
        if cov not in reference or reference[cov] <= 0:
            raise SpecError(f"[reference] needs a positive {cov} (the centering point of the "
                            f"{cov} term)")
    effects = []
    for i, e in enumerate(d.get("effects", [])):
        _check_keys(e, EFFECT_KEYS, f"effects[{i}] (the [[effects]] entry number {i + 1})")
        if "param" not in e or "group" not in e:
            raise SpecError(f"effects[{i}] needs 'param' and 'group' keys")
        law.param(e["param"])
        if e["param"] in fixed:
            raise SpecError(f"effects[{i}]: {e['param']!r} is fixed, it cannot vary by group")
        pooling = e.get("pooling", "partial")
        if pooling not in POOLINGS:
            raise SpecError(f"effects[{i}].pooling must be one of {POOLINGS}, got {pooling!r}")
        raw = e.get("scale", {"dist": "HalfNormal", "sigma": 0.1})
        if pooling == "none":
            if not isinstance(raw, int | float) or raw <= 0:
                raise SpecError(f"effects[{i}]: pooling='none' needs a positive number "
                                f"'scale' (the fixed sd of the levels), got {raw!r}")
            scale: Prior | float = float(raw)
        else:
            scale = _prior(raw, f"effects[{i}].scale")
        effects.append(Effect(e["param"], str(e["group"]), pooling, scale,
                              _centered(e.get("centered", "auto"), f"effects[{i}].centered")))
    keys = [(e.param, e.group) for e in effects]
    if len(set(keys)) != len(keys):
        raise SpecError("an effect (param, group) pair is listed twice in [[effects]]")
    lk = dict(d.get("likelihood", {}))
    unknown = set(lk) - LIKELIHOOD_KEYS
    if unknown:
        raise SpecError(f"unknown [likelihood] key(s) {sorted(unknown)}; allowed: "
                        f"{sorted(LIKELIHOOD_KEYS)}")
    family = lk.get("family", "student_t")
    if family not in LIKELIHOODS:
        raise SpecError(f"likelihood.family must be one of {LIKELIHOODS}, got {family!r}")
    if "sigma" not in lk:
        raise SpecError("[likelihood] needs a 'sigma' prior (the noise scale of the loss)")
    sigma_by = lk.get("sigma_by", "run")
    sigma_by = None if sigma_by in (None, "none", "") else sigma_by
    if sigma_by is not None and "sigma_spread" not in lk:
        raise SpecError("likelihood.sigma_by needs a 'sigma_spread' prior (sd of log sigma "
                        "across groups)")
    if family == "student_t" and "nu" not in lk:
        raise SpecError("likelihood.family = 'student_t' needs a 'nu' prior")
    likelihood = Likelihood(
        family=family,
        sigma=_prior(lk["sigma"], "likelihood.sigma"),
        sigma_by=sigma_by,
        sigma_spread=_prior(lk["sigma_spread"], "likelihood.sigma_spread")
        if sigma_by is not None else None,
        nu=_prior(lk["nu"], "likelihood.nu") if family == "student_t" else None,
        sigma_centered=_centered(lk.get("sigma_centered", "auto"), "likelihood.sigma_centered"),
        sigma_decay=_prior(lk["sigma_decay"], "likelihood.sigma_decay")
        if lk.get("sigma_decay") is not None else None,
        ar1=_prior(lk["ar1"], "likelihood.ar1") if lk.get("ar1") is not None else None,
        sigma_relative=_flag(lk.get("sigma_relative", False), "likelihood.sigma_relative"),
        walk=_prior(lk["walk"], "likelihood.walk") if lk.get("walk") is not None else None,
        walk_start=_prior(lk["walk_start"], "likelihood.walk_start")
        if lk.get("walk_start") is not None else None,
        walk_hurst=_prior(lk["walk_hurst"], "likelihood.walk_hurst")
        if lk.get("walk_hurst") is not None else None,
    )
    if likelihood.sigma_decay is not None and "D" not in law.covariates:
        raise SpecError(f"likelihood.sigma_decay makes the noise fall with D, but law "
                        f"{law.name!r} has no D: remove sigma_decay")
    for key, what in (("ar1", "a correlation"), ("walk_hurst", "an exponent")):
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
    sampler = {"draws": C.DEFAULT_DRAWS, "tune": C.DEFAULT_TUNE, "chains": C.DEFAULT_CHAINS,
               "target_accept": C.DEFAULT_TARGET_ACCEPT, "backend": "nutpie",
               **d.get("sampler", {})}
    if sampler.get("init", "mode") not in ("mode", "prior"):
        raise SpecError(f"sampler.init must be \"mode\" (chains start near the posterior's "
                        f"mode) or \"prior\" (at the prior's centre), got {sampler['init']!r}")
    if sampler.get("low_rank", "auto") not in ("auto", True, False):
        raise SpecError(f"sampler.low_rank must be true, false or \"auto\", got "
                        f"{sampler['low_rank']!r}")
    if sampler["backend"] not in ("nutpie", "pymc"):
        raise SpecError(f"sampler.backend must be 'nutpie' or 'pymc', got {sampler['backend']!r}")
    if "sum_split" in sampler:
        sampler["sum_split"] = _sum_split(sampler["sum_split"], priors)
    return ModelSpec(
        law=law.name,
        reference=reference,
        fixed=fixed,
        priors=priors,
        effects=tuple(effects),
        likelihood=likelihood,
        sampler=sampler,
        description=str(d.get("description", "")),
    )
