"""The law registry: each loss law with the metadata a spec needs.

The laws are :mod:`bayeslaw.laws.functions`' and :mod:`bayeslaw.laws.multi_power`'s. A
:class:`Law` holds its function, its parameters (:class:`Param`: name, unit, link, term,
fixed default), its covariates, the reference point's keys, the covariates of each term (for
the collinearity check of effects), the levels each covariate needs and the map from the
centered coefficients to the textbook ones; :data:`LAWS` registers them by name,
:func:`get_law` looks one up and :func:`law_for_columns` picks the default for a table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..constants import (
    ANNEAL_AREA,
    EXIT_ENTROPY,
    EXIT_LATENT,
    EXIT_WEIGHTS,
    LR_AREA,
    LR_DROP,
)
from ..errors import SpecError
from .functions import (
    annealing_area,
    chinchilla,
    chinchilla_anneal,
    curve_bend,
    curve_power,
    iso_depth,
    iso_depth_eff,
    looped_annealing_area,
    looped_steps,
    looped_steps_latent,
    looped_streams,
    looped_total,
    parallel_streams,
    parallel_streams_data,
    size_only,
)
from .multi_power import NODE_COLUMNS, looped_multi_power, multi_power


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
    link : {"log", "logit", "identity"}
        Scale on which group effects are added (``log`` keeps the value positive, ``logit``
        a share in (0, 1)).
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
        (``None``: :data:`bayeslaw.data.table.MIN_LEVELS` per covariate).
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
    def natural_names(self) -> tuple[str, ...]:
        """Names of the textbook coefficients :attr:`natural` returns (``A``, ``B``, ...).

        Read from one evaluation at 0.5 for every parameter (inside every parameter's
        domain: shares such as ``curve_bend``'s ``q`` lie in (0, 1)) and 1.0 for the
        reference point.
        """
        return tuple(self.natural(dict.fromkeys(self.param_names, 0.5),
                                  dict.fromkeys(self.reference_keys, 1.0)))

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


C_N = "N"
#: A power-law term's centered -> textbook map: ``(textbook, scale, exponent, covariate)``.
_Pair = tuple[str, str, str, str]
_A_N: _Pair = ("A", "a", "alpha", "N")
_B_D: _Pair = ("B", "b", "beta", "D")


def _natural(*pairs: _Pair):
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
    return {**_natural(_A_N, _B_D)(theta, ref), "C": theta["c"]}


def _natural_curve(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
    """Centered -> textbook coefficients of :func:`curve_power`.

    ``E = m (1 - f)`` and ``B = m f D_ref^beta``.
    """
    return {"E": theta["m"] * (1.0 - theta["f"]),
            "B": theta["m"] * theta["f"] * ref["D"] ** theta["beta"]}


def _natural_bend(theta: Mapping[str, Any], ref: Mapping[str, float]) -> dict[str, Any]:
    """Centered -> coefficients of :func:`curve_bend`: ``E``, ``B``, ``c`` and ``D0``.

    ``E = m (1 - f)``, ``B = m f / (1 - q)``, ``c = beta / q``,
    ``D0 = D_ref ((1 - q) / q)^(1 / c)``.
    """
    q = theta["q"]
    c = theta["beta"] / q
    return {"E": theta["m"] * (1.0 - theta["f"]), "B": theta["m"] * theta["f"] / (1.0 - q),
            "c": c, "D0": ref["D"] * ((1.0 - q) / q) ** (1.0 / c)}


def _power_params(term: str, scale: str, exponent: str,
                  at: str | None = None) -> tuple[Param, Param]:
    """The scale and exponent of the power-law term in ``term``, centered at ``at``."""
    at = at or f"{term}_ref"
    return (Param(scale, "loss", f"{term}-term's loss contribution at {at}", term=term),
            Param(exponent, "1", f"exponent of the {term} term", term=term))


def _law(fn: Callable[..., Any], params: tuple[Param, ...], covariates: tuple[str, ...],
         natural: Callable[[Mapping[str, Any], Mapping[str, float]], dict[str, Any]],
         formula: str, **more: Any) -> Law:
    """A :class:`Law` named after its function ``fn`` (``more``: the optional fields)."""
    return Law(name=fn.__name__, fn=fn, params=params, covariates=covariates,
               natural=natural, formula=formula, **more)


_E = Param("E", "loss", "irreducible loss", link="identity")
_N_TERM = _power_params("N", "a", "alpha")
_D_TERM = _power_params("D", "b", "beta")

_K = Param("k", "1", "gain per e-fold of streams: P streams act as k ln P + 1 times N",
           term="N")
_D_AREA = _power_params("D", "b", "beta")
_ANNEAL = Param("d", "loss", "loss a whole anneal of the learning rate to zero removes",
                term="anneal")
_MULTI = (_ANNEAL,
          Param("kappa", "1", "how fast the anneal's gain saturates, per D_ref of area",
                term="anneal"),
          Param("zeta", "1", "exponent of the saturation (Luo et al.'s beta)", term="anneal"),
          Param("omega", "1", "exponent of the rate in the saturation (Luo et al.'s gamma)",
                term="anneal"))
_DEPTH = _power_params("T_m", "c", "gamma", at="T_ref")
_C_T: _Pair = ("C", "c", "gamma", "T_m")
#: The schedule laws' terms: the D term is a function of the forward area, the anneal of the
#: annealing area (or of the drop and the node areas).
_AREA_TERMS = {"D": (LR_AREA,), "anneal": (ANNEAL_AREA,)}
_MULTI_TERMS = {"D": (LR_AREA,), "anneal": (LR_AREA, LR_DROP, *NODE_COLUMNS)}

#: A curve's loss at D_ref and the share of it above the asymptote: what a curve's points pin
#: (its level near D_ref) apart from what only its bend tells (the asymptote); E and b of a
#: short curve form a ridge on which the sampler does not mix.
_CURVE = (Param("m", "loss", "the curve's loss at D_ref", term="D"),
          Param("f", "1", "share of the loss at D_ref above the asymptote", link="logit",
                term="D"),
          Param("beta", "1", "exponent of the D term", term="D"))

_CURVE_BEND = (*_CURVE, Param("q", "1", "how far past its bend the curve is at D_ref (1: a "
                                  "pure power law; smaller: a plateau before it)",
                                  link="logit", term="D"))

#: The step-wise laws (Ouro, appendix E): the looped total law's terms with the exit step T in
#: place of T_m, the entropy weight of the link, and a latent exit distribution's exponent.
_STEP_TERM = (*_power_params("T", "c", "gamma", at="T_ref"),
              Param("t1", "params", "offset added to N", term="N", fixed=0.0),
              Param("t2", "tokens", "warm-up offset added to D", term="D", fixed=0.0),
              Param("t3", "steps", "offset added to the exit step T", term="T", fixed=0.0),
              Param("beta_H", "loss", "entropy weight of the link: loss per nat of the exit "
                    "distribution's entropy", term="exit"))
_EXIT_POWER = Param("lambda_q", "1", "exponent of the latent exit distribution, "
                    "q(T) proportional to T^lambda_q", link="identity", term="exit")
_STEP_NATURAL = _natural(_A_N, _B_D, ("C", "c", "gamma", "T"))
_STEP_FORMULA = ("L_step = E + A/(N+t1)^alpha + B/(D+t2)^beta + C/(T+t3)^gamma; "
                 "L_total = sum_T q(T) L_step(T) - beta_H H(q)")

_PHI = Param("phi", "1", "exponent of the reuse: T_m passes act as T_m^phi times N_rec",
             term="N")

LAWS: dict[str, Law] = {law.name: law for law in (
    _law(looped_total,
         (_E, *_N_TERM, *_D_TERM, *_power_params("T_m", "c", "gamma", at="T_ref"),
          Param("t1", "params", "offset added to N", term="N", fixed=0.0),
          Param("t2", "tokens", "warm-up offset added to D", term="D", fixed=0.0),
          Param("t3", "steps", "offset added to T_m", term="T_m", fixed=0.0)),
         ("N", "D", "T_m"), _natural(_A_N, _B_D, ("C", "c", "gamma", "T_m")),
         "L = E + A/(N+t1)^alpha + B/(D+t2)^beta + C/(T_m+t3)^gamma"),
    _law(looped_steps, (_E, *_N_TERM, *_D_TERM, *_STEP_TERM),
         ("N", "D", *EXIT_WEIGHTS, EXIT_ENTROPY), _STEP_NATURAL, _STEP_FORMULA,
         ref_keys=("N", "D", "T"), terms={"T": EXIT_WEIGHTS, "exit": (EXIT_ENTROPY,)},
         # alpha needs three sizes, gamma three exit steps (distinct weight rows)
         min_levels={"N": 3, EXIT_WEIGHTS: 3}),
    _law(looped_steps_latent, (_E, *_N_TERM, *_D_TERM, *_STEP_TERM, _EXIT_POWER),
         ("N", "D", *EXIT_WEIGHTS, EXIT_LATENT), _STEP_NATURAL,
         _STEP_FORMULA + ", q(T) latent",
         ref_keys=("N", "D", "T"),
         terms={"T": EXIT_WEIGHTS, "exit": (*EXIT_WEIGHTS, EXIT_LATENT)},
         min_levels={"N": 3, EXIT_WEIGHTS: 3}),
    _law(chinchilla, (_E, *_N_TERM, *_D_TERM), ("N", "D"), _natural(_A_N, _B_D),
         "L = E + A/N^alpha + B/D^beta"),
    _law(chinchilla_anneal,
         (_E, *_N_TERM, *_D_TERM,
          Param("c", "loss", "loss removed by the cosine schedule's anneal at the horizon",
                term="anneal")),
         ("N", "D", "horizon"), _natural_anneal,
         "L = E + A/N^alpha + B/D^beta - C (1 - cos(pi D/H))/2",
         ref_keys=("N", "D"), terms={"anneal": ("D", "horizon")},
         # the anneal term is told from the D term by where each run ends: two horizons
         min_levels={"N": 3, "D": 3, "horizon": 2}),
    _law(parallel_streams, (_E, *_N_TERM, _K), ("N", "P"), _natural_streams(with_data=False),
         "L = E + (A/(N (k ln P + 1)))^alpha",
         ref_keys=("N",), terms={"N": ("N", "P")},
         # alpha needs three sizes; k (no exponent of its own) two stream counts
         min_levels={"N": 3, "P": 2}),
    _law(parallel_streams_data, (_E, *_N_TERM, _K, *_D_TERM), ("N", "P", "D"),
         _natural_streams(with_data=True), "L = E + (A/(N (k ln P + 1)))^alpha + B/D^beta",
         ref_keys=("N", "D"), terms={"N": ("N", "P")}, min_levels={"N": 3, "P": 2, "D": 3}),
    _law(looped_streams, (_E, *_N_TERM, *_power_params("P", "c", "gamma")), ("N", "P"),
         _natural(_A_N, ("C", "c", "gamma", "P")), "L = E + A/N^alpha + C/P^gamma"),
    _law(size_only, (_E, *_N_TERM), ("N",), _natural(_A_N), "L = E + A/N^alpha"),
    _law(curve_power, _CURVE, ("D",), _natural_curve, "L = E + B/D^beta"),
    _law(curve_bend, _CURVE_BEND, ("D",), _natural_bend, "L = E + B/(1 + (D/D0)^c)"),
    _law(iso_depth, (_E, *_N_TERM, _PHI, *_D_TERM), ("N_once", "N_rec", "T_m", "D"),
         _natural(_A_N, _B_D), "L = E + A/(N_once + T_m^phi N_rec)^alpha + B/D^beta",
         ref_keys=("N", "D"), terms={"N": ("N_once", "N_rec", "T_m")},
         # alpha needs three effective sizes (counted as distinct (N_once, N_rec) pairs), phi
         # two depths
         min_levels={("N_once", "N_rec"): 3, "T_m": 2, "D": 3}),
    _law(annealing_area, (_E, *_N_TERM, *_D_AREA, _ANNEAL), (C_N, LR_AREA, ANNEAL_AREA),
         _natural(_A_N, _B_D), "L = E + A/N^alpha + B/S1^beta - d S2",
         ref_keys=(C_N, "D"), terms=_AREA_TERMS, min_levels={C_N: 3}),
    _law(multi_power, (_E, *_N_TERM, *_D_AREA, *_MULTI),
         (C_N, LR_AREA, LR_DROP, *NODE_COLUMNS), _natural(_A_N, _B_D),
         "L = E + A/N^alpha + B/S1^beta - LD(S1, eta)",
         ref_keys=(C_N, "D"), terms=_MULTI_TERMS, min_levels={C_N: 3}),
    _law(looped_annealing_area, (_E, *_N_TERM, *_D_AREA, *_DEPTH, _ANNEAL),
         (C_N, LR_AREA, ANNEAL_AREA, "T_m"), _natural(_A_N, _B_D, _C_T),
         "L = E + A/N^alpha + B/S1^beta + C/T_m^gamma - d S2",
         ref_keys=(C_N, "D", "T_m"), terms=_AREA_TERMS, min_levels={C_N: 3, "T_m": 3}),
    _law(looped_multi_power, (_E, *_N_TERM, *_D_AREA, *_DEPTH, *_MULTI),
         (C_N, LR_AREA, LR_DROP, *NODE_COLUMNS, "T_m"), _natural(_A_N, _B_D, _C_T),
         "L = E + A/N^alpha + B/S1^beta + C/T_m^gamma - LD(S1, eta)",
         ref_keys=(C_N, "D", "T_m"), terms=_MULTI_TERMS, min_levels={C_N: 3, "T_m": 3}),
    _law(iso_depth_eff, (_E, *_N_TERM, _PHI, *_D_TERM), ("N", "T_m", "D"),
         _natural(_A_N, _B_D), "L = E + A/(N T_m^phi)^alpha + B/D^beta",
         ref_keys=("N", "D"), terms={"N": ("N", "T_m")}, min_levels={"N": 3, "T_m": 2, "D": 3}),
)}


def get_law(name: str) -> Law:
    """Return the registered law ``name`` or raise a :class:`SpecError` listing the choices."""
    try:
        return LAWS[name]
    except KeyError:
        raise SpecError(f"unknown law {name!r}; choose one of {', '.join(sorted(LAWS))}") from None


#: The default law of curves with a known schedule: lower held-out MAPE than
#: ``annealing_area`` on the selection folds (benchmarks/results/schedules_select_2026-12-02.csv).
SCHEDULE_LAW = "multi_power"


#: The default law of a table of curves without a model size: a population of curves that may
#: start flat.  Chosen over ``curve_power`` on the selection splits of the peer benchmark (the
#: context of IC and DD only; benchmarks/results/peers_selection_2026-12-02.md): better RMSLE,
#: LL and MSCE on DD, and on IC a posterior NUTS crosses (curve_power's hit the tree-depth
#: limit on every draw and did not finish in 17 minutes).
CURVE_LAW = "curve_bend"

#: The step-wise laws: a point's T_m is a group level (of the step term's effects), not a
#: covariate, but a forecast needs it as much (:func:`takes_T_m`).
STEP_LAWS = frozenset({"looped_steps", "looped_steps_latent"})


def takes_T_m(law: Law) -> bool:
    """Whether a point of ``law`` needs its ``T_m``: a covariate, or a step law's depth."""
    return "T_m" in law.covariates or law.name in STEP_LAWS


#: The laws of a population of curves: ``D`` their only covariate (coefficients by curve, no
#: model size).
CURVE_LAWS = frozenset(name for name, law in LAWS.items() if law.covariates == ("D",))


def law_for_columns(columns: set[str] | frozenset[str]) -> str:
    """Default law for a table's columns.

    ``iso_depth`` with ``N_once`` and ``N_rec``; with ``P``, ``parallel_streams_data`` when
    there is a ``D`` column and ``parallel_streams`` otherwise; ``looped_total`` with
    ``T_m``; :data:`CURVE_LAW` for curves without a model size (``D`` and no ``N``); else
    ``chinchilla``.  A table whose runs carry a learning-rate schedule (the
    terms :func:`bayeslaw.load` adds) gets :data:`SCHEDULE_LAW` (``looped_`` with ``T_m``).
    A table of step-wise losses (a ``T`` column: the exit columns :func:`bayeslaw.load` adds)
    gets ``looped_steps``, or ``looped_steps_latent`` when its totals' exit distribution was
    not logged.
    """
    if EXIT_LATENT in columns:
        return "looped_steps_latent"
    if EXIT_ENTROPY in columns:
        return "looped_steps"
    if LR_AREA in columns and "N" in columns:
        return ("looped_" if "T_m" in columns else "") + SCHEDULE_LAW
    if {"N_once", "N_rec"} <= columns:
        return "iso_depth"
    if "P" in columns:
        return "parallel_streams_data" if "D" in columns else "parallel_streams"
    if "T_m" in columns:
        return "looped_total"
    return CURVE_LAW if "N" not in columns and "D" in columns else "chinchilla"


def evaluate(law: Law, cov: Mapping[str, Any], theta: Mapping[str, Any],
             ref: Mapping[str, float]) -> np.ndarray:
    """Evaluate ``law`` on numpy arrays (convenience wrapper with ``xp=numpy``)."""
    return np.asarray(law(np, cov, theta, ref))
