"""Where specs come from: the shipped default specs, TOML files, dicts and their merge order.

A user spec is merged over the law's default spec in one documented order::

    user spec  >  law default spec (models/<law>.toml)
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import SpecError
from ..laws.registry import LAWS, get_law, law_for_columns
from .model_spec import ModelSpec, parse_spec
from .parts import FAMILY_PARAMS
from .settings import splits_clash


def _models_dir() -> Path:
    """Directory of the default specs: inside the wheel, else the source tree's ``models/``."""
    shipped = Path(str(resources.files("bayeslaw"))) / "_models"
    if shipped.is_dir():
        return shipped
    return Path(__file__).resolve().parents[2] / "models"


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
    """The user spec over the law's default: the user's keys win, table by table.

    ``effects`` is replaced whole, and with it the default's ``[correlation]`` (defined on the
    default's effects) unless the user gives one.  A parameter the user gives a prior is no
    longer fixed by
    the default, and one the user fixes loses the default's prior, the default's group
    effects on it and its place in the default's sampler splits (the user wrote none of them;
    :func:`_merge_splits`).  A section of the wrong type is passed on as given, for the
    parser to name.
    """
    out = copy.deepcopy(base)
    for key, value in user.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **copy.deepcopy(dict(value))}
        else:
            out[key] = copy.deepcopy(value)
    user_priors, user_fixed = _section(user, "priors"), _section(user, "fixed")
    for name in user_priors:  # a prior given by the user frees a parameter the default fixed
        if name not in user_fixed and isinstance(out.get("fixed"), dict):
            out["fixed"].pop(name, None)
    for name in user_fixed:  # a value fixed by the user overrides the default's prior
        if name not in user_priors and isinstance(out.get("priors"), dict):
            out["priors"].pop(name, None)
    if "effects" in user and "correlation" not in user:
        out.pop("correlation", None)
    freed = set(user_fixed) - set(user_priors)
    if freed and "effects" not in user and isinstance(out.get("effects"), list):
        out["effects"] = [e for e in out["effects"]
                          if not (isinstance(e, Mapping) and e.get("param") in freed)]
        corr = out.get("correlation")
        if isinstance(corr, dict) and isinstance(corr.get("params"), list):
            kept = [n for n in corr["params"] if n not in freed]
            if len(kept) > 1:
                corr["params"] = kept
            else:
                out.pop("correlation")
    _merge_splits(out, user, freed)
    return out


def _merge_splits(out: dict[str, Any], user: Mapping[str, Any], freed: set[str]) -> None:
    """The default's ``sum_split`` and ``slope_split`` give way to what the user wrote.

    A parameter the user fixed, or gave a prior other than LogNormal, leaves the default's
    splits (``sum_split`` keeps the rest if two or more remain; ``slope_split`` needs all
    three and is dropped). A split the user set that cannot stand beside the default's other
    split (they may share only the floor and the coefficient) drops the default's.  A split
    the user wrote is never changed: the parser names what is wrong with it.
    """
    sampler = out.get("sampler")
    if not isinstance(sampler, dict):
        return
    given = _section(user, "sampler")
    off = set(freed) | {n for n, p in _section(user, "priors").items()
                        if isinstance(p, Mapping) and p.get("dist") != "LogNormal"}
    split, slope = sampler.get("sum_split"), sampler.get("slope_split")
    if off and isinstance(split, list) and "sum_split" not in given:
        kept = [n for n in split if n not in off]
        sampler["sum_split"] = split = kept if len(kept) > 1 else []
    if off and isinstance(slope, list) and set(slope) & off and "slope_split" not in given:
        sampler["slope_split"] = slope = []
    if not (isinstance(split, list) and isinstance(slope, list) and splits_clash(split, slope)):
        return
    if "sum_split" in given and "slope_split" not in given:
        sampler["slope_split"] = []
    elif "slope_split" in given and "sum_split" not in given:
        sampler["sum_split"] = []


def _section(spec: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """Section ``key`` of ``spec`` if it is a table, else an empty one."""
    value = spec.get(key, {})
    return value if isinstance(value, Mapping) else {}


def load_spec(spec: str | Path | Mapping[str, Any] | None = None, *,
              law: str | None = None, fallback: str = "looped_total",
              data_fixed: Mapping[str, float] | None = None) -> ModelSpec:
    """Load a spec: a TOML path, a shipped spec name, or a dict, merged over the law default.

    Parameters
    ----------
    spec : str, Path, mapping or None
        ``None`` gives the default spec of ``law``.
    law : str, optional
        Law name; overrides the spec's ``law`` key (and picks the default spec to merge over).
    fallback : str
        The law of a spec that names none, when ``law`` is not given either.
    data_fixed : mapping, optional
        Parameters the data fix (a step table's ``entropy_weight`` fixes ``beta_H``), merged
        over the law's default and under the user spec: a prior or value the user gives wins.
        Names the law lacks are ignored.
    """
    if isinstance(spec, ModelSpec):
        return with_data_fixed(spec, data_fixed)
    shipped = False
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
        shipped = path.resolve().parent == _models_dir().resolve()
    law_name = law or user.get("law") or fallback
    if not isinstance(law_name, str):
        raise SpecError(f"the spec's law must be a law's name, got {law_name!r}; choose one "
                        f"of {', '.join(sorted(LAWS))}")
    get_law(law_name)
    base_path = _models_dir() / f"{law_name}.toml"
    base = _read_toml(base_path) if base_path.exists() else {}
    merged = _family_keys_of(_merge(base, user), _section(user, "likelihood"))
    # what the data fix, unless the user's own spec gives that parameter a prior or a value
    # (a shipped spec named as the spec is not the user's)
    explicit = (set() if shipped else
                set(_section(user, "priors")) | set(_section(user, "fixed")))
    defaulted = frozenset(get_law(law_name).param_names) - explicit
    merged["law"] = law_name
    return with_data_fixed(replace(parse_spec(merged), defaulted=defaulted), data_fixed)


def with_data_fixed(spec: ModelSpec, data_fixed: Mapping[str, float] | None) -> ModelSpec:
    """``spec`` with the values the data fix in place of its defaulted priors or values.

    Only parameters in ``spec.defaulted`` (their prior or value came from a default, not from
    the user) are replaced, each as a user's ``[fixed]`` value replaces a default's prior
    (:func:`_merge`: its prior, effects and place in a sampler split go); names the law lacks
    are ignored.  A spec with nothing to replace is returned as it is.
    """
    known = {k: float(v) for k, v in (data_fixed or {}).items()
             if k in spec.defaulted and spec.fixed.get(k) != float(v)}
    if not known:
        return spec
    return replace(parse_spec(_merge(spec.to_dict(), {"fixed": known})),
                   defaulted=spec.defaulted)


def _family_keys_of(merged: dict[str, Any], user_lk: Mapping[str, Any]) -> dict[str, Any]:
    """The merged spec without the default's keys of another noise family than the one set.

    A user who sets ``likelihood.family = "normal"`` over a Student-t default means the
    default's ``nu`` to go; a family key the user gives themselves stays (and is an error
    if it belongs to another family).
    """
    lk = merged.get("likelihood")
    if not isinstance(lk, Mapping) or lk.get("family") not in FAMILY_PARAMS:
        return merged
    own = set(FAMILY_PARAMS[lk["family"]])
    other = {k for names in FAMILY_PARAMS.values() for k in names} - own
    merged["likelihood"] = {k: v for k, v in lk.items() if k not in other or k in user_lk}
    return merged


def resolve_spec(spec: ModelSpec | str | Path | Mapping[str, Any] | None, *,
                 law: str | None, columns: frozenset[str],
                 data_fixed: Mapping[str, float] | None = None) -> ModelSpec:
    """The spec to fit.

    A ``ModelSpec`` is returned as given, except that the values the data fix replace its
    defaulted priors (:func:`with_data_fixed`); anything else goes through :func:`load_spec`, over
    the default spec of ``law`` or, with neither a spec nor a law, of the law the data's
    columns call for (:func:`bayeslaw.laws.registry.law_for_columns`: ``multi_power`` for curves
    with a learning-rate schedule, ``looped_total`` with ``T_m``,
    ``parallel_streams`` with ``P``, ``iso_depth`` with ``N_once`` and ``N_rec``,
    ``curve_bend`` for curves without ``N``, else ``chinchilla``).  A spec that names no law
    (a dict or TOML file of overrides) is merged over the default spec of that same law.
    """
    if isinstance(spec, ModelSpec):
        if law is not None and law != spec.law:
            raise SpecError(f"law={law!r} contradicts the spec's law {spec.law!r}")
        return with_data_fixed(spec, data_fixed)
    return load_spec(spec, law=law, fallback=law_for_columns(columns), data_fixed=data_fixed)
