"""Where specs come from: the shipped default specs, TOML files, dicts and their merge order.

A user spec is merged over the law's default spec in one documented order::

    user spec  >  law default spec (models/<law>.toml)
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from .errors import SpecError
from .laws import get_law, law_for_columns
from .spec import ModelSpec, parse_spec


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
    return parse_spec(merged)


def resolve_spec(spec: ModelSpec | str | Path | Mapping[str, Any] | None, *,
                 law: str | None, columns: frozenset[str]) -> ModelSpec:
    """The spec to fit.

    A ``ModelSpec`` is returned as given; anything else goes through :func:`load_spec`, over
    the default spec of ``law`` or, with neither a spec nor a law, of the law the data's
    columns call for (:func:`bayeslaw.laws.law_for_columns`: ``multi_power`` for curves with
    a learning-rate schedule, ``looped_total`` with ``T_m``,
    ``parallel_streams`` with ``P``, ``iso_depth`` with ``N_once`` and ``N_rec``, else
    ``chinchilla``).
    """
    if isinstance(spec, ModelSpec):
        if law is not None and law != spec.law:
            raise SpecError(f"law={law!r} contradicts the spec's law {spec.law!r}")
        return spec
    if law is None and spec is None:
        law = law_for_columns(columns)
    return load_spec(spec, law=law)
