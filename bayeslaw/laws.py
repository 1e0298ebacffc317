r"""Pure loss-law functions and their registry.

Every law is written once against a math namespace ``xp`` (``numpy`` or
``pytensor.tensor``), so the same code evaluates posterior draws in numpy and
builds the PyMC graph.  Laws are written in a *centered* parameterization:
each power-law term is expressed as its loss contribution at a reference point,

.. math::

    \frac{A}{(N + t_1)^{\alpha}} = a \left(\frac{N + t_1}{N_{ref}}\right)^{-\alpha},
    \qquad A = a N_{ref}^{\alpha},

which decorrelates scale and exponent and lets NUTS mix (the textbook ``A``,
``alpha`` pair on raw ``N`` gave R-hat 1.1-1.8, measured at ad5077f, not saved).  The
textbook coefficients ``A``, ``B``, ``C`` are available as derived quantities
(:meth:`Law.natural`).  A term of several covariates is centered at a reference value of
its effective size: ParScale's ``N (k ln P + 1)`` and the iso-depth
``N_once + T_m^phi N_rec`` are both compared with ``N_ref`` (:attr:`Law.reference_keys`).
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
    """A registered loss law: a pure function plus the metadata a spec needs.

    Attributes
    ----------
    name, fn, params, covariates, natural, formula
        The law's name, function, parameters, covariate columns, the map from centered to
        textbook coefficients and a one-line formula.
    ref_keys : tuple of str or None
        Keys the spec's ``[reference]`` must give (``None``: one per covariate).  A term of
        several covariates (an effective size ``N_once + T_m^phi N_rec``) is centered at one
        reference value of that size.
    terms : mapping
        Covariates each term depends on, keyed by :attr:`Param.term` (a term not listed
        depends on the covariate of its own name); used by the collinearity check of effects.
    min_levels : mapping or None
        Distinct values needed per covariate, or per tuple of covariates counted jointly
        (``None``: :data:`bayeslaw.data.MIN_LEVELS` per covariate).
    """

    name: str
    fn: Callable[..., Any]
    params: tuple[Param, ...]
    covariates: tuple[str, ...]
    natural: Callable[[Mapping[str, Any], Mapping[str, float]], dict[str, Any]] = field(
        repr=False
    )
    formula: str = ""
    ref_keys: tuple[str, ...] | None = None
    terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict, repr=False,
                                                 compare=False)
    min_levels: Mapping[str | tuple[str, ...], int] | None = field(default=None, repr=False,
                                                                   compare=False)

    def __call__(self, xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                 ref: Mapping[str, float]) -> Any:
        """Evaluate the law: ``cov`` holds covariates, ``theta`` parameters."""
        return self.fn(xp, cov, theta, ref)

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names of every parameter, sampled or fixed."""
        return tuple(p.name for p in self.params)

    @property
    def reference_keys(self) -> tuple[str, ...]:
        """Keys of the reference point (the centering value of each term)."""
        return self.ref_keys if self.ref_keys is not None else self.covariates

    def term_covariates(self, term: str) -> tuple[str, ...]:
        """Covariates the term ``term`` depends on."""
        return tuple(self.terms.get(term, (term,)))

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


def cosine_progress(xp: Any, D: Any, horizon: Any) -> Any:
    """How far a cosine schedule has annealed at ``D`` of ``horizon`` tokens: 0 to 1.

    ``(1 - cos(pi p)) / 2`` with ``p = min(D / horizon, 1)``, the drop of a cosine learning
    rate from its peak as a share of its whole drop (warm-up ignored).
    """
    p = xp.minimum(D / horizon, 1.0)
    return 0.5 * (1.0 - xp.cos(np.pi * p))


def chinchilla_anneal(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                      ref: Mapping[str, float]) -> Any:
    r"""Chinchilla law on the curve of a run with a cosine learning-rate schedule.

    .. math::

        L(N, D, H) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}
                       - C\,\frac{1 - \cos(\pi D / H)}{2}

    ``H`` (the column ``horizon``) is the run's planned tokens, where its cosine schedule
    ends.  The last term is the loss the schedule's anneal removes: zero at the start, ``C``
    at the horizon.  It is the annealing-area term of Tissue et al. 2024 ("Scaling law with
    learning rate annealing", arXiv 2408.11029) without its momentum, and lets the curve of
    a run bend below the power law as its learning rate falls.  A run trained to ``D``
    (``H = D``) has lost all ``C``: its final loss is ``E - C + A/N^alpha + B/D^beta``.
    Evaluated as ``E + a(N/N_ref)^-alpha + b(D/D_ref)^-beta - c (1 - cos(pi D/H))/2``.
    """
    return (chinchilla(xp, cov, theta, ref)
            - theta["c"] * cosine_progress(xp, cov["D"], cov["horizon"]))


def _streams_size(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any]) -> Any:
    """ParScale's effective size ``N (k ln P + 1)``."""
    return cov["N"] * (theta["k"] * xp.log(cov["P"]) + 1.0)


def parallel_streams(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                     ref: Mapping[str, float]) -> Any:
    r"""Parallel-scaling law (ParScale, Chen et al. 2025, arXiv 2505.10475).

    .. math::

        L(N, P) = E + \left(\frac{A}{N (k \ln P + 1)}\right)^{\alpha}

    with ``P`` parallel streams sharing (almost) all ``N`` parameters: ``P`` streams act as
    ``k ln P + 1`` times as many parameters.  Evaluated as
    ``E + a(N (k ln P + 1) / N_ref)^-alpha``, so ``A = N_ref a^(1/alpha)``.
    """
    return theta["E"] + _power_term(xp, _streams_size(xp, cov, theta), 0.0, ref["N"],
                                    theta["a"], theta["alpha"])


def parallel_streams_data(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                          ref: Mapping[str, float]) -> Any:
    r"""Parallel-scaling law with a data term (ParScale's effective size, Chinchilla's D term).

    .. math::

        L(N, P, D) = E + \left(\frac{A}{N (k \ln P + 1)}\right)^{\alpha}
                       + \frac{B}{D^{\beta}}

    evaluated as ``E + a(N (k ln P + 1) / N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    return (parallel_streams(xp, cov, theta, ref)
            + _power_term(xp, cov["D"], 0.0, ref["D"], theta["b"], theta["beta"]))


def looped_streams(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                   ref: Mapping[str, float]) -> Any:
    r"""A looped-style law for parallel streams: a separate power-law term in ``P``.

    .. math::

        L(N, P) = E + \frac{A}{N^{\alpha}} + \frac{C}{P^{\gamma}}

    The alternative to :func:`parallel_streams` in which ``P`` plays the role ``T_m`` plays
    in :func:`looped_total` (an additive ``C/P^gamma`` term instead of a larger effective
    size).  Evaluated as ``E + a(N/N_ref)^-alpha + c(P/P_ref)^-gamma``.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["P"], 0.0, ref["P"], theta["c"], theta["gamma"])
    )


def size_only(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
              ref: Mapping[str, float]) -> Any:
    r"""Chinchilla at a fixed token budget: only model size matters.

    .. math::

        L(N) = E + \frac{A}{N^{\alpha}}

    The null model of a sweep of final losses at one ``D`` (the data term is a constant,
    absorbed by ``E``) in which any other column (parallel streams ``P``, depth ``T_m``) is
    ignored.  Evaluated as ``E + a(N/N_ref)^-alpha``.
    """
    return theta["E"] + _power_term(xp, cov["N"], 0.0, ref["N"], theta["a"], theta["alpha"])


def iso_depth(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
              ref: Mapping[str, float]) -> Any:
    r"""Looped LM with unshared and recurrent (shared) parameters.

    .. math::

        L(N_{once}, N_{rec}, r, D) = E + \frac{A}{(N_{once} + r^{\phi} N_{rec})^{\alpha}}
                                       + \frac{B}{D^{\beta}}

    ``N_once`` parameters are applied once per token, the ``N_rec`` recurrent ones ``r``
    times (``r`` is the column ``T_m``); ``phi`` in (0, 1] says what a reuse is worth
    (``phi = 1``: as much as fresh parameters, ``phi = 0``: nothing).  Evaluated as
    ``E + a((N_once + T_m^phi N_rec) / N_ref)^-alpha + b(D/D_ref)^-beta``, with ``N_ref`` the
    reference *effective* size.  With ``N_once = 0`` and ``N_rec = N`` it is
    :func:`iso_depth_eff`.
    """
    size = cov["N_once"] + cov["N_rec"] * xp.exp(theta["phi"] * xp.log(cov["T_m"]))
    return (
        theta["E"]
        + _power_term(xp, size, 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], 0.0, ref["D"], theta["b"], theta["beta"])
    )


def iso_depth_eff(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                  ref: Mapping[str, float]) -> Any:
    r"""The iso-depth law on tables with only a total ``N`` (every parameter recurrent).

    .. math::

        L(N, T_m, D) = E + \frac{A}{(N\, T_m^{\phi})^{\alpha}} + \frac{B}{D^{\beta}}

    :func:`iso_depth` with ``N_once = 0`` and ``N_rec = N``: applying ``N`` parameters
    ``T_m`` times is worth ``T_m^phi N`` parameters.  Evaluated as
    ``E + a(N T_m^phi / N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    size = cov["N"] * xp.exp(theta["phi"] * xp.log(cov["T_m"]))
    return (
        theta["E"]
        + _power_term(xp, size, 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], 0.0, ref["D"], theta["b"], theta["beta"])
    )


def _natural(pairs: tuple[tuple[str, str, str, str], ...]):
    """Build the map centered -> textbook coefficients (``A = a * N_ref ** alpha``)."""

    def natural(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
        return {big: theta[small] * ref[cov] ** theta[expo] for big, small, expo, cov in pairs}

    return natural


def _natural_streams(with_data: bool):
    """Centered -> ParScale's ``A`` (``(A / N_eff)^alpha = a (N_eff / N_ref)^-alpha``)."""

    def natural(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
        out = {"A": ref["N"] * theta["a"] ** (1.0 / theta["alpha"])}
        if with_data:
            out["B"] = theta["b"] * ref["D"] ** theta["beta"]
        return out

    return natural


def _natural_anneal(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
    """Centered -> textbook coefficients of :func:`chinchilla_anneal` (``C`` is ``c``)."""
    return {**_natural((("A", "a", "alpha", "N"), ("B", "b", "beta", "D")))(theta, ref),
            "C": theta["c"]}


_E = Param("E", "loss", "irreducible loss", link="identity")
_N_TERM = (
    Param("a", "loss", "N-term's loss contribution at N_ref", term="N"),
    Param("alpha", "1", "exponent of the N term", term="N"),
)
_D_TERM = (
    Param("b", "loss", "D-term's loss contribution at D_ref", term="D"),
    Param("beta", "1", "exponent of the D term", term="D"),
)

_K = Param("k", "1", "gain per e-fold of streams: P streams act as k ln P + 1 times N",
           term="N")
_PHI = Param("phi", "1", "exponent of the reuse: T_m passes act as T_m^phi times N_rec",
             term="N")

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
    "chinchilla_anneal": Law(
        name="chinchilla_anneal",
        fn=chinchilla_anneal,
        params=(_E, *_N_TERM, *_D_TERM,
                Param("c", "loss", "loss removed by the cosine schedule's anneal at the horizon",
                      term="anneal")),
        covariates=("N", "D", "horizon"),
        natural=_natural_anneal,
        formula="L = E + A/N^alpha + B/D^beta - C (1 - cos(pi D/H))/2",
        ref_keys=("N", "D"),
        terms={"anneal": ("D", "horizon")},
        # the anneal term is told from the D term by where each run ends: two horizons
        min_levels={"N": 3, "D": 3, "horizon": 2},
    ),
    "parallel_streams": Law(
        name="parallel_streams",
        fn=parallel_streams,
        params=(_E, *_N_TERM, _K),
        covariates=("N", "P"),
        natural=_natural_streams(with_data=False),
        formula="L = E + (A/(N (k ln P + 1)))^alpha",
        ref_keys=("N",),
        terms={"N": ("N", "P")},
        # alpha needs three sizes; k (no exponent of its own) two stream counts
        min_levels={"N": 3, "P": 2},
    ),
    "parallel_streams_data": Law(
        name="parallel_streams_data",
        fn=parallel_streams_data,
        params=(_E, *_N_TERM, _K, *_D_TERM),
        covariates=("N", "P", "D"),
        natural=_natural_streams(with_data=True),
        formula="L = E + (A/(N (k ln P + 1)))^alpha + B/D^beta",
        ref_keys=("N", "D"),
        terms={"N": ("N", "P")},
        min_levels={"N": 3, "P": 2, "D": 3},
    ),
    "looped_streams": Law(
        name="looped_streams",
        fn=looped_streams,
        params=(
            _E,
            *_N_TERM,
            Param("c", "loss", "P-term's loss contribution at P_ref", term="P"),
            Param("gamma", "1", "exponent of the P term", term="P"),
        ),
        covariates=("N", "P"),
        natural=_natural((("A", "a", "alpha", "N"), ("C", "c", "gamma", "P"))),
        formula="L = E + A/N^alpha + C/P^gamma",
    ),
    "size_only": Law(
        name="size_only",
        fn=size_only,
        params=(_E, *_N_TERM),
        covariates=("N",),
        natural=_natural((("A", "a", "alpha", "N"),)),
        formula="L = E + A/N^alpha",
    ),
    "iso_depth": Law(
        name="iso_depth",
        fn=iso_depth,
        params=(_E, *_N_TERM, _PHI, *_D_TERM),
        covariates=("N_once", "N_rec", "T_m", "D"),
        natural=_natural((("A", "a", "alpha", "N"), ("B", "b", "beta", "D"))),
        formula="L = E + A/(N_once + T_m^phi N_rec)^alpha + B/D^beta",
        ref_keys=("N", "D"),
        terms={"N": ("N_once", "N_rec", "T_m")},
        # alpha needs three effective sizes (counted as distinct (N_once, N_rec) pairs), phi
        # two depths
        min_levels={("N_once", "N_rec"): 3, "T_m": 2, "D": 3},
    ),
    "iso_depth_eff": Law(
        name="iso_depth_eff",
        fn=iso_depth_eff,
        params=(_E, *_N_TERM, _PHI, *_D_TERM),
        covariates=("N", "T_m", "D"),
        natural=_natural((("A", "a", "alpha", "N"), ("B", "b", "beta", "D"))),
        formula="L = E + A/(N T_m^phi)^alpha + B/D^beta",
        ref_keys=("N", "D"),
        terms={"N": ("N", "T_m")},
        min_levels={"N": 3, "T_m": 2, "D": 3},
    ),
}


def get_law(name: str) -> Law:
    """Return the registered law ``name`` or raise a :class:`SpecError` listing the choices."""
    try:
        return LAWS[name]
    except KeyError:
        raise SpecError(f"unknown law {name!r}; choose one of {', '.join(sorted(LAWS))}") from None


def law_for_columns(columns: set[str] | frozenset[str]) -> str:
    """Default law for a table's columns.

    ``iso_depth`` with ``N_once`` and ``N_rec``; with ``P``, ``parallel_streams_data`` when
    there is a ``D`` column and ``parallel_streams`` otherwise; ``looped_total`` with
    ``T_m``; else ``chinchilla``.
    """
    if {"N_once", "N_rec"} <= columns:
        return "iso_depth"
    if "P" in columns:
        return "parallel_streams_data" if "D" in columns else "parallel_streams"
    return "looped_total" if "T_m" in columns else "chinchilla"


def evaluate(law: Law, cov: Mapping[str, Any], theta: Mapping[str, Any],
             ref: Mapping[str, float]) -> np.ndarray:
    """Evaluate ``law`` on numpy arrays (convenience wrapper with ``xp=numpy``)."""
    return np.asarray(law(np, cov, theta, ref))
