r"""Pure loss-law functions and their registry.

Every law is written once against a math namespace ``xp`` (``numpy`` or
``pytensor.tensor``), so the same code evaluates posterior draws in numpy and
builds the PyMC graph.  Laws are written in a *centered* parameterization:
each power-law term is expressed as its loss contribution at a reference point,

.. math::

    \frac{A}{(N + t_1)^{\alpha}} = a \left(\frac{N + t_1}{N_{ref}}\right)^{-\alpha},
    \qquad A = a N_{ref}^{\alpha},

which decorrelates scale and exponent and lets NUTS mix (the textbook ``A``,
``alpha`` pair on raw ``N`` gives R-hat 1.1-1.8).  The textbook coefficients
``A``, ``B``, ``C`` are available as derived quantities (:meth:`Law.natural`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import SpecError


@dataclass(frozen=True)
class Param:
    """One law parameter.

    Attributes
    ----------
    name : str
        Name used in specs, posteriors and tables.
    unit : str
        Physical unit (``"loss"``, ``"1"``, ``"params"``, ``"tokens"``, ...).
    description : str
        One line for tables and reports.
    link : {"log", "identity"}
        Scale on which group effects are added (``log`` keeps the value positive).
    term : str or None
        Covariate of the law term this parameter belongs to (``None`` for the
        irreducible loss ``E``, which belongs to no term).
    fixed : float or None
        Default fixed value (offsets); ``None`` means sampled by default.
    """

    name: str
    unit: str
    description: str
    link: str = "log"
    term: str | None = None
    fixed: float | None = None


@dataclass(frozen=True)
class Law:
    """A registered loss law: a pure function plus the metadata a spec needs."""

    name: str
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    covariates: tuple[str, ...]
    natural: Callable[[Mapping[str, Any], Mapping[str, float]], dict[str, Any]] = field(
        repr=False
    )
    formula: str = ""

    def __call__(self, xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                 ref: Mapping[str, float]) -> Any:
        """Evaluate the law: ``cov`` holds covariates, ``theta`` parameters."""
        return self.fn(xp, cov, theta, ref)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of every parameter, sampled or fixed."""
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        """Look up a parameter, with a clear error for an unknown name."""
        for p in self.params:
            if p.name == name:
                return p
        raise SpecError(
            f"law {self.name!r} has no parameter {name!r}; its parameters are "
            f"{', '.join(self.param_names)}"
        )


def _power_term(xp: Any, x: Any, offset: Any, ref: float, scale: Any, exponent: Any) -> Any:
    """``scale * ((x + offset) / ref) ** -exponent`` written with exp/log (stable in graphs)."""
    return scale * xp.exp(-exponent * xp.log((x + offset) / ref))


def looped_total(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                 ref: Mapping[str, float]) -> Any:
    r"""Total loss of a looped LM (Ouro, arXiv 2510.25741, appendix D).

    .. math::

        L(N, D, T_m) = E + \frac{A}{(N + t_1)^{\alpha}} + \frac{B}{(D + t_2)^{\beta}}
                         + \frac{C}{(T_m + t_3)^{\gamma}}

    evaluated as ``E + a((N+t1)/N_ref)^-alpha + b((D+t2)/D_ref)^-beta
    + c((T_m+t3)/T_ref)^-gamma``.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], theta["t1"], ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], theta["t2"], ref["D"], theta["b"], theta["beta"])
        + _power_term(xp, cov["T_m"], theta["t3"], ref["T_m"], theta["c"], theta["gamma"])
    )


def chinchilla(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
               ref: Mapping[str, float]) -> Any:
    r"""Chinchilla law (Hoffmann et al. 2022, approach 3).

    .. math::

        L(N, D) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}

    evaluated as ``E + a(N/N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], 0.0, ref["D"], theta["b"], theta["beta"])
    )


def _natural(pairs: tuple[tuple[str, str, str, str], ...]):
    """Build the map centered -> textbook coefficients (``A = a * N_ref ** alpha``)."""

    def natural(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
        return {big: theta[small] * ref[cov] ** theta[expo] for big, small, expo, cov in pairs}

    return natural


_E = Param("E", "loss", "irreducible loss", link="identity")
_N_TERM = (
    Param("a", "loss", "N-term's loss contribution at N_ref", term="N"),
    Param("alpha", "1", "exponent of the N term", term="N"),
)
_D_TERM = (
    Param("b", "loss", "D-term's loss contribution at D_ref", term="D"),
    Param("beta", "1", "exponent of the D term", term="D"),
)

LAWS: dict[str, Law] = {
    "looped_total": Law(
        name="looped_total",
        fn=looped_total,
        params=(
            _E,
            *_N_TERM,
            *_D_TERM,
            Param("c", "loss", "T_m-term's loss contribution at T_ref", term="T_m"),
            Param("gamma", "1", "exponent of the T_m term", term="T_m"),
            Param("t1", "params", "offset added to N", term="N", fixed=0.0),
            Param("t2", "tokens", "warm-up offset added to D", term="D", fixed=0.0),
            Param("t3", "steps", "offset added to T_m", term="T_m", fixed=0.0),
        ),
        covariates=("N", "D", "T_m"),
        natural=_natural((("A", "a", "alpha", "N"), ("B", "b", "beta", "D"),
                          ("C", "c", "gamma", "T_m"))),
        formula="L = E + A/(N+t1)^alpha + B/(D+t2)^beta + C/(T_m+t3)^gamma",
    ),
    "chinchilla": Law(
        name="chinchilla",
        fn=chinchilla,
        params=(_E, *_N_TERM, *_D_TERM),
        covariates=("N", "D"),
        natural=_natural((("A", "a", "alpha", "N"), ("B", "b", "beta", "D"))),
        formula="L = E + A/N^alpha + B/D^beta",
    ),
}


def get_law(name: str) -> Law:
    """Return the registered law ``name`` or raise a :class:`SpecError` listing the choices."""
    try:
        return LAWS[name]
    except KeyError:
        raise SpecError(f"unknown law {name!r}; choose one of {', '.join(sorted(LAWS))}") from None


def law_for_columns(columns: set[str] | frozenset[str]) -> str:
    """Default law for a table: ``looped_total`` when it has ``T_m``, else ``chinchilla``."""
    return "looped_total" if "T_m" in columns else "chinchilla"


def evaluate(law: Law, cov: Mapping[str, Any], theta: Mapping[str, Any],
             ref: Mapping[str, float]) -> np.ndarray:
    """Evaluate ``law`` on numpy arrays (convenience wrapper with ``xp=numpy``)."""
    return np.asarray(law(np, cov, theta, ref))
