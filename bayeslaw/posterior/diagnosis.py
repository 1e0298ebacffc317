"""Why a fit did not converge: a diagnosis beside the verdict.

When a NUTS fit fails a threshold, :func:`diagnose_failure` says

* which elements mix worst (the highest R-hat, the lowest bulk ESS);
* **where the divergences sit**: for every element, the mean rank of the divergent draws among
  all draws. With no link between divergences and an element, that mean rank is uniform's,
  0.5 with standard error ``sqrt(1 / (12 n))`` for ``n`` divergent draws; an element whose
  divergent draws sit at its low (high) values by more than :data:`DIVERGENCE_Z` standard
  errors is named, with the side. A funnel shows as a group sd whose divergent draws are its
  smallest values;
* **the strongest posterior correlations** (Spearman's, so the same on any monotone
  transform: log, logit or the natural scale) among the population-level parameters and the
  worst-mixing elements, of magnitude at least :data:`RIDGE_RHO`. A ridge shows as a pair
  near +-1;
* **the remedies that apply**, each with the spec key to set: the warm start (``init`` in
  ``[sampler]``) for chains that never left their start (most transitions divergent), a
  funnel's centering switch (``centered`` in its ``[[effects]]`` entry, ``sigma_centered`` in
  ``[likelihood]``), a tighter prior on a named parameter, ``slope_split`` (a ridge within a
  floor, a coefficient and its exponent), a term's reference inside the data (``[reference]``,
  where a coefficient and its exponent rise together), ``low_rank`` or ``tune`` in
  ``[sampler]``, an ``[[effects]]`` entry to remove where two terms of one level form a
  ridge (one curve's share and slope), and ``sigma_min_points`` in ``[likelihood]`` where the
  worst-mixing elements belong to a level with about as many points as coefficients
  (:class:`NoiseLevels`).  A funnel is a group sd whose divergent draws sit at its small
  values or, as nutpie often shows one (few divergences, poor mixing), the group sd that
  mixes worst.

Variables' names follow :mod:`bayeslaw.model.graph` (``<p>_by_<g>_sd``, ``<p>_by_<g>_z``, ...),
which is how a remedy finds the effect a group sd belongs to and whether it is centered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import constants as C
from ..spec.settings import splits_clash

#: divergences "sit" at an element's low or high values past this many standard errors of the
#: mean rank (two-sided, about one element in 16,000 passes by chance: few in a large model)
DIVERGENCE_Z = 4.0
#: a pair of parameters with a rank correlation at least this strong is reported (a ridge)
RIDGE_RHO = 0.9
#: how many elements each list names
TOP = 3
#: the most elements whose correlations are computed (the matrix is elements x elements)
MAX_CORRELATED = 200
#: a share of divergent transitions this large says the chains never left their start
STUCK_SHARE = 0.5
#: (floor, coefficient, exponent) of the laws' power terms ``E + a (x / x_ref)^-alpha``, by
#: the laws' names (:mod:`bayeslaw.laws.functions`): a ridge within one is what
#: ``sampler.slope_split`` resolves
SLOPE_TRIPLES = (("E", "a", "alpha"), ("E", "b", "beta"), ("E", "c", "gamma"))


@dataclass(frozen=True)
class NoiseLevels:
    """The levels of a likelihood's ``sigma_by`` group, for the remedy ``sigma_min_points``.

    A level fitted from about as many points as it has coefficients of its own can pass its
    curve through them: its own noise scale then shrinks toward zero and holds its shape in a
    narrow, curved region the chains do not cross (Nano's curves of four points:
    ``benchmarks/results/few_points_convergence_2026-12-06/``).  Where such a level's elements
    mix worst, the remedy is ``sigma_min_points = coefficients + 2`` (the rule ``curve_bend``
    ships by), under which it takes the pooled scale.

    Attributes
    ----------
    group : str
        The likelihood's ``sigma_by``.
    counts : dict of str to int
        The fitted points of each level.
    coefficients : int
        The coefficients each level has of its own (the spec's effects over ``group``).
    min_points : int, optional
        The spec's ``sigma_min_points`` (a level with fewer points already takes the pooled
        scale).
    """

    group: str
    counts: dict[str, int]
    coefficients: int
    min_points: int | None = None

    @property
    def enough(self) -> int:
        """The fewest points a level needs to keep a noise scale of its own, by the rule."""
        return self.coefficients + 2

    def short(self, level: str) -> int | None:
        """The points of ``level`` if short, else None.

        Short: a noise scale of its own on fewer than :attr:`enough` points (and some).
        """
        n = self.counts.get(level, 0)
        own = self.min_points is None or n >= self.min_points
        return n if own and 0 < n < self.enough else None


@dataclass(frozen=True)
class LevelFacts:
    """What the fitted data say about the model's levels, for the remedies that depend on them.

    :func:`~bayeslaw.posterior.result.level_facts` reads them off a spec and its data.

    Attributes
    ----------
    noise : NoiseLevels, optional
        The noise's levels and their points (for the remedy ``sigma_min_points``).
    rich : frozenset of str, optional
        The effects rich in data (``<param>_by_<group>``: every level at
        ``CENTERED_MIN_POINTS`` fitted points or more), for the funnel remedy's centering
        switch; None where unknown (the switch is then advised conditionally).
    """

    noise: NoiseLevels | None = None
    rich: frozenset[str] | None = None


@dataclass(frozen=True)
class Diagnosis:
    """What a failed fit's draws show, and what to change.

    Attributes
    ----------
    worst_rhat, worst_ess : tuple of (element, value)
        The elements with the highest R-hat and the lowest bulk ESS.
    divergent_at : tuple of (element, side, z)
        Elements whose divergent draws sit at their ``"low"`` or ``"high"`` values, ``z``
        standard errors of the mean rank from 0.5 (the most extreme first).
    correlations : tuple of (element, element, rho)
        The strongest rank correlations between draws (``|rho| >= RIDGE_RHO``).
    remedies : tuple of str
        What to change, naming the spec key.
    """

    worst_rhat: tuple[tuple[str, float], ...] = ()
    worst_ess: tuple[tuple[str, float], ...] = ()
    divergent_at: tuple[tuple[str, str, float], ...] = ()
    correlations: tuple[tuple[str, str, float], ...] = ()
    remedies: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The diagnosis as lines of text (the warning and ``bayeslaw fit`` print them)."""
        out = []
        if self.worst_rhat:
            out.append("worst R-hat: " + ", ".join(f"{n} {v:.3f}" for n, v in self.worst_rhat))
        if self.worst_ess:
            out.append("lowest bulk ESS: " + ", ".join(f"{n} {v:.0f}" for n, v in self.worst_ess))
        if self.divergent_at:
            out.append("divergences sit at: " + ", ".join(
                f"{side} {n} (z {z:+.1f})" for n, side, z in self.divergent_at))
        if self.correlations:
            out.append("strongest correlations: " + ", ".join(
                f"{a} ~ {b} {r:+.2f}" for a, b, r in self.correlations))
        out += [f"remedy: {r}" for r in self.remedies]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (``diagnostics.json``)."""
        return {"worst_rhat": [list(p) for p in self.worst_rhat],
                "worst_ess": [list(p) for p in self.worst_ess],
                "divergent_at": [list(p) for p in self.divergent_at],
                "correlations": [list(p) for p in self.correlations],
                "remedies": list(self.remedies)}


def _labels(da: Any, dims: tuple[str, ...], shape: tuple[int, ...]) -> list[str]:
    """``name[coord,...]`` for every element of variable ``da`` over ``dims``.

    ``name`` alone for a scalar: the draws and ArviZ's statistics are labelled alike.
    """
    if not dims:
        return [str(da.name)]
    return [f"{da.name}[" + ",".join(str(da.coords[d].values[i]) if d in da.coords else str(i)
                                     for d, i in zip(dims, index, strict=True)) + "]"
            for index in np.ndindex(*shape)]


def _elements(idata: Any, names: list[str]) -> tuple[list[str], np.ndarray]:
    """Every element of ``names`` as a label and its draws, ``(elements, chains * draws)``."""
    labels, rows = [], []
    for name in names:
        da = idata.posterior[name]
        values = np.asarray(da.values, float)
        labels += _labels(da, da.dims[2:], values.shape[2:])
        rows.append(values.reshape(values.shape[0] * values.shape[1], -1).T)
    if not rows:
        return [], np.empty((0, 0))
    return labels, np.concatenate(rows, axis=0)


def _ranks(draws: np.ndarray) -> np.ndarray:
    """Each row's draws as ranks in (0, 1) (ties averaged)."""
    from scipy.stats import rankdata

    return (rankdata(draws, axis=1) - 0.5) / draws.shape[1]


def _stat(ds: Any, names: list[str]) -> dict[str, float]:
    """An ArviZ statistic (R-hat or ESS) per element label, labelled as :func:`_elements`."""
    out: dict[str, float] = {}
    for name in (n for n in names if n in ds):
        arr = np.asarray(ds[name].values, float)
        out.update(zip(_labels(ds[name], ds[name].dims, arr.shape), arr.ravel().tolist(),
                       strict=True))
    return out


def _divergent_at(ranks: np.ndarray, labels: list[str], divergent: np.ndarray
                  ) -> list[tuple[str, str, float]]:
    """Elements whose divergent draws sit at their low or high values (see the module)."""
    n = int(divergent.sum())
    if n == 0 or ranks.size == 0:
        return []
    z = (ranks[:, divergent].mean(axis=1) - 0.5) / np.sqrt(1.0 / (12.0 * n))
    order = np.argsort(-np.abs(z))
    return [(labels[i], "low" if z[i] < 0 else "high", float(z[i]))
            for i in order[:TOP] if abs(z[i]) >= DIVERGENCE_Z]


def _correlations(ranks: np.ndarray, labels: list[str]) -> list[tuple[str, str, float]]:
    """The strongest rank correlations between elements (``|rho| >= RIDGE_RHO``)."""
    if len(labels) < 2:
        return []
    rho = np.corrcoef(ranks)
    rows, cols = np.triu_indices(len(labels), k=1)
    values = rho[rows, cols]
    order = np.argsort(-np.abs(values))
    return [(labels[rows[i]], labels[cols[i]], float(values[i]))
            for i in order[:TOP] if abs(values[i]) >= RIDGE_RHO]


def _effect_of(label: str) -> tuple[str, str, str] | None:
    """``(effect, param, group)`` of a group sd's element label, else None."""
    name = label.split("[")[0]
    if not name.endswith("_sd") or "_by_" not in name:
        return None
    effect = name[:-3]
    param, group = effect.rsplit("_by_", 1)
    return effect, param, group


#: where non-centering levels rich in data was measured to mix worse (the remedy says so)
RICH_EVIDENCE = "benchmarks/results/steps_funnel_2026-12-06/"


def _funnel_remedy(name: str, names: set[str], why: str,
                   rich: frozenset[str] | None = None) -> str | None:
    """The centering switch of the group sd (or noise spread) ``name``, else None.

    ``rich``: the effects every level of which holds at least
    :data:`~bayeslaw.constants.CENTERED_MIN_POINTS` fitted points (None: not known).  Where it
    is known, the switch is advised only where it applies: a centered effect whose levels are
    all rich keeps its centering (the data pin each level; non-centered it mixed far worse),
    and a non-centered one with a level short of points stays non-centered; the tighter prior
    on its scale is then the remedy.
    """
    found = _effect_of(name)
    if found is not None:
        effect, param, group = found
        noncentered = f"{effect}_z" in names or f"{group}_corr_z" in names
        entry = f"the [[effects]] entry with param = \"{param}\", group = \"{group}\""
        tighter = "give its scale a tighter prior there"
        if rich is None:
            condition = ("if its levels are rich in data" if noncentered
                         else "if its levels hold few points")
        elif (effect in rich) != noncentered:  # the switch does not apply
            points = (f"every level holds {C.CENTERED_MIN_POINTS} points or more"
                      if effect in rich else
                      f"a level holds fewer than {C.CENTERED_MIN_POINTS} points")
            keep = ("; non-centering levels this rich mixed far worse: " + RICH_EVIDENCE
                    if effect in rich else "")
            return (f"a funnel ({why}, {'non-' if noncentered else ''}centered, {points}): "
                    f"{tighter} (in {entry}){keep}")
        else:
            condition = (f"(every level holds {C.CENTERED_MIN_POINTS} points or more)"
                         if noncentered else
                         f"(a level holds fewer than {C.CENTERED_MIN_POINTS} points)")
        switch = "true" if noncentered else "false"
        return (f"a funnel ({why}, {'non-' if noncentered else ''}centered): set centered = "
                f"{switch} in {entry} {condition}, or {tighter}")
    if name == "sigma_spread":
        switch = "true" if "sigma_z" in names else "false"
        return (f"a funnel ({why}): set sigma_centered = {switch} in [likelihood], or give "
                "sigma_spread a tighter prior there")
    return None


def _few_points_remedy(suspects: list[tuple[str, str]], levels: NoiseLevels | None
                       ) -> str | None:
    """The remedy ``sigma_min_points``, where a suspect is of a short level, else None.

    ``suspects``: ``(label, why)`` of the worst-mixing elements and where divergences sit; a
    short level has a noise scale of its own and about as many points as coefficients (see
    :class:`NoiseLevels`).
    """
    if levels is None:
        return None
    for label, why in suspects:
        level = label.split("[", 1)[1][:-1] if label.endswith("]") else None
        n = levels.short(level) if level is not None else None
        if n is not None:
            return (f"{why}, and {levels.group} {level!r} is fitted from {n} points, about as "
                    f"many as its {levels.coefficients} coefficients, with a noise scale of "
                    f"its own (which shrinks toward zero as its curve passes through its "
                    f"points): set sigma_min_points = {levels.enough} in [likelihood] (a "
                    f"{levels.group} with fewer points then takes the pooled scale sigma)")
    return None


#: an element of a group term: ``<param>_by_<group>`` (or its ``_z``, ``_value`` or ``_mid``
#: coordinates) at one level, as :mod:`bayeslaw.model.graph` names them
_LEVEL_ELEMENT = re.compile(r"^(.+)_by_(.+?)(?:_z|_value|_mid)?\[([^\]]+)\]$")


def _within_level_remedy(correlations: list[tuple[str, str, float]]) -> str | None:
    """The remedy for a ridge between two parameters' terms at one level, else None.

    One curve's share and slope, say: that level's points pin a combination of the two, not
    each, and the chains travel along it (with many such levels, at the maximum tree depth).
    Neither a narrower fixed scale of either term nor a pilot's block metric removed such
    ridges on ColPret's curves (``benchmarks/results/colpret_noise_scale_2026-12-06/``); what
    removes one by construction is one of the two no longer free per level.  None when no
    such pair is among the strongest correlations.
    """
    for a, b, rho in correlations:
        ma, mb = _LEVEL_ELEMENT.match(a), _LEVEL_ELEMENT.match(b)
        if ma is None or mb is None or ma.group(1) == mb.group(1):
            continue
        if ma.group(2, 3) != mb.group(2, 3):
            continue
        group, level = ma.group(2, 3)
        pa, pb = ma.group(1), mb.group(1)
        return (f"a ridge between {pa} and {pb} within {group} {level!r} (rank correlation "
                f"{rho:+.2f}): its points pin a combination of the two, not each. Removing "
                f"the [[effects]] entry with param = \"{pb}\", group = \"{group}\" (every "
                f"{group} then shares {pb}; or param = \"{pa}\") removes it by construction, "
                "a change of the model to check on held-out data; a narrower scale there or "
                "a pilot metric did not on ColPret's curves "
                "(benchmarks/results/colpret_noise_scale_2026-12-06/)")
    return None


def _reference_remedy(ridge: list[tuple[str, str, float]]) -> str | None:
    """A coefficient and its exponent that rise together: the term's reference lies below the data.

    For a term ``a (x / x_ref)^-alpha`` the data pin its log value near the centre of their
    ``x``, ``log a - alpha log(x_c / x_ref)``; with ``x_c`` above ``x_ref`` that holds with
    ``a`` and ``alpha`` rising together: a positive rank correlation (the ridge of a power
    term whose reference sits at its data's centre, a floor trading with the curvature, is
    negative).  ``a`` is then an extrapolation, and ``slope_split``, which samples the level
    and the slope at the reference, does not help (GPT-3's curves under ``multi_power``,
    D_ref 10-300x below the data: ``benchmarks/results/converge_multi_power_2026-12-05/``).
    A reference above the data's centre gives a negative correlation, which this rule cannot
    tell from that ridge, so it is left to ``slope_split``.
    """
    for a, b, rho in ridge:
        for _, coef, exponent in SLOPE_TRIPLES:
            if {a, b} == {coef, exponent} and rho > 0:
                return (f"{coef} and {exponent} rise together (rank correlation {rho:+.2f}): "
                        f"the reference point of {coef}'s term lies below where the data pin "
                        f"the term, so {coef} is an extrapolation and slope_split, which "
                        "samples at that reference, does not help; set the term's reference in "
                        "[reference] inside the data's range, restating every prior given "
                        f"relative to it ({coef}'s; under multi_power also kappa's, a rate per "
                        "D_ref)")
    return None


def _slope_remedy(ridge: list[tuple[str, str]], scalars: set[str], settings: Any
                  ) -> str | None:
    """``sampler.slope_split`` for a ridge within a floor, a coefficient and its exponent.

    The names follow the laws' convention (:data:`SLOPE_TRIPLES`); the remedy applies when
    the fit did not already use the split and all three are population-level parameters.
    """
    if getattr(settings, "slope_split", ()):
        return None
    for a, b in ridge:
        for triple in SLOPE_TRIPLES:
            if {a, b} <= set(triple) and set(triple) <= scalars:
                names = ", ".join(f'"{n}"' for n in triple)
                if splits_clash(getattr(settings, "sum_split", ()), triple):
                    continue  # not a slope_split this sum_split allows
                return (f"a ridge between {a} and {b}: set slope_split = [{names}] in "
                        f"[sampler] (samples the level {triple[0]} + {triple[1]}, the share "
                        f"{triple[1]} / {triple[0]} and the slope {triple[1]} {triple[2]}: "
                        "the same model in coordinates along the ridge)")
    return None


#: A chain tuned for fewer steps than this is short before anything else: where the chains
#: have not mixed, :func:`_remedies` then puts more tuning first (nutpie's own default tunes
#: 300 steps; the shipped specs 1,000 or more).
SHORT_TUNE = 300


def _funnel_remedies(divergent_at: list[tuple[str, str, float]], worst: list[str],
                     names: set[str], rich: frozenset[str] | None) -> list[str]:
    """The funnels' remedies, once each (see :func:`_funnel_remedy`).

    A funnel: a group sd whose divergent draws sit at its small values, or one that mixes
    worst.
    """
    out, seen = [], set()
    candidates = [(label.split("[")[0], f"divergences at small {label}")
                  for label, side, _ in divergent_at if side == "low"]
    candidates += [(label.split("[")[0], f"{label} mixes worst") for label in worst]
    for name, why in candidates:
        remedy = _funnel_remedy(name, names, why, rich) if name not in seen else None
        if remedy is not None:
            seen.add(name)
            out.append(remedy)
    return out


def _shift_remedy(worst: list[str], names: set[str], settings: Any) -> str | None:
    """The remedy ``centered_values = "shifted"`` where it applies, else None.

    It applies where a worst-mixing element belongs to a parameter's term joined with its
    population value (``"offset"``) or to another of its terms centered at every level.  The
    data pin each run's sum of the two terms' levels, not how it splits: the centered
    term's mean slides with every level of the joined one (posterior correlation -0.99 in the
    checkpoint shock's fits, ``benchmarks/results/steps_shock_trades_2026-12-07/``).
    """
    if getattr(settings, "centered_values", False) != "offset":
        return None
    for label in worst:
        name = label.split("[")[0]
        for suffix in ("_value", "_joint"):
            name = name[:-len(suffix)] if name.endswith(suffix) else name
        if "_by_" not in name:
            continue
        param = name.rsplit("_by_", 1)[0]
        terms = {n[:-3] for n in names if n.startswith(f"{param}_by_") and n.endswith("_sd")}
        joined = sorted(n for n in terms if f"{n}_joint" in names)
        centered = sorted(n for n in terms if n not in joined and not any(
            f"{n}{x}" in names for x in ("_z", "_c", "_value", "_rot", "_mid")))
        if joined and centered and name in joined + centered:
            return (f"{centered[0]}'s levels trade with {joined[0]}'s values (the data pin "
                    "each run's sum of the two, not how it splits): set centered_values = "
                    "\"shifted\" in [sampler] (their mean moved into the values: the same "
                    "model; benchmarks/results/steps_shock_trades_2026-12-07/)")
    return None


def _remedies(divergent_at: list[tuple[str, str, float]], worst: list[str],
              correlations: list[tuple[str, str, float]], names: set[str],
              scalars: set[str], settings: Any, failed_mixing: bool,
              stuck: float = 0.0, facts: LevelFacts | None = None) -> list[str]:
    """The remedies that apply, each naming the spec key (see the module).

    A funnel is a group sd (or the noise scale's spread) whose divergent draws sit at its
    small values, or, as nutpie often shows one, with few divergences and poor mixing, the
    group sd that mixes worst (``worst``: the elements of the highest R-hat and the lowest
    ESS).
    """
    out: list[str] = []
    if (stuck >= STUCK_SHARE and getattr(settings, "init", "mode") == "mode"
            and getattr(settings, "backend", "nutpie") == "nutpie"):  # pymc: no warm start
        out.append(f"chains that never left their start ({stuck:.0%} of the transitions "
                   "divergent): set init = \"prior\" in [sampler] (the warm start's mode "
                   "can sit in a funnel's neck or on a ridge where no step size works)")
    suspects = [(label, f"{label} mixes worst") for label in worst]
    suspects += [(label, f"divergences sit at {side} {label}") for label, side, _ in divergent_at]
    facts = facts or LevelFacts()
    few = _few_points_remedy(suspects, facts.noise)
    if few is not None:
        out.append(few)
    out += _funnel_remedies(divergent_at, worst, names, facts.rich)
    shift = _shift_remedy(worst, names, settings)
    out += [shift] if shift is not None else []
    signed = [(a, b, rho) for a, b, rho in correlations if a in scalars and b in scalars]
    ridge = [(a, b) for a, b, _ in signed]
    split = _reference_remedy(signed) or _slope_remedy(ridge, scalars, settings)
    if split is not None:
        out.append(split)
    elif ridge:
        a, b = ridge[0]
        # levels sampled as values go with the diagonal mass matrix (Plan.prefers_low_rank)
        low_rank = (getattr(settings, "low_rank", "auto") is True
                    or getattr(settings, "centered_values", False))
        fix = f"a tighter prior on {a} or {b} in [priors] (or a value in [fixed])"
        out.append(f"a ridge between {a} and {b}: "
                   + (fix if low_rank else "set low_rank = true in [sampler] (nutpie adapts "
                      "a low-rank mass matrix to correlated parameters), or " + fix))
    within = _within_level_remedy(correlations)
    if within is not None:
        out.append(within)
    if failed_mixing:
        tune = getattr(settings, "tune", None)
        more = f"tune = {2 * tune}" if isinstance(tune, int) and tune > 0 else "a longer tune"
        remedy = f"chains that have not mixed: set {more} in [sampler] (bayeslaw fit --tune)"
        if isinstance(tune, int) and 0 < tune < SHORT_TUNE:
            # too short to trust what the draws say about funnels and ridges: first
            out.insert(0, remedy + f" (a tune of {tune} steps is short before anything else)")
        else:
            out.append(remedy)
    return out[:TOP]


def diagnose_failure(idata: Any, rhat: Any, ess_bulk: Any, *, derived: tuple[str, ...] = (),
                     settings: Any = None, failed_mixing: bool = True,
                     facts: LevelFacts | None = None) -> Diagnosis:
    """The diagnosis of a fit's draws (see the module).

    Parameters
    ----------
    idata : arviz.InferenceData
        The draws, with ``sample_stats.diverging`` where the sampler records it.
    rhat, ess_bulk : xarray.Dataset
        ArviZ's R-hat and bulk ESS of the posterior's variables (computed once by the caller).
    derived : tuple of str
        Variables that are functions of others (the textbook coefficients, per-run values):
        left out of the divergences and correlations, where they would repeat what their
        inputs show.
    settings : SamplerSettings, optional
        The sampler settings the draws were made with (for the remedies' values).
    failed_mixing : bool
        Whether R-hat or ESS failed (a remedy for mixing applies only then).
    facts : LevelFacts, optional
        The points of the noise's and the effects' levels (for the remedies that depend on
        them).
    """
    every = set(idata.posterior.data_vars)
    # a sampler's unconstrained copies (``sd_log__``) repeat their variable's draws
    names = [n for n in idata.posterior.data_vars if n not in set(derived)
             and not (n.endswith("__") and n.rsplit("_", 3)[0] in every)]
    labels, draws = _elements(idata, names)
    varying = np.isfinite(draws).all(axis=1) & (np.ptp(draws, axis=1) > 0) if draws.size \
        else np.zeros(0, bool)
    labels = [lab for lab, keep in zip(labels, varying, strict=True) if keep]
    draws = draws[varying]
    kept = set(labels)
    r = {k: v for k, v in _stat(rhat, names).items() if np.isfinite(v) and k in kept}
    e = {k: v for k, v in _stat(ess_bulk, names).items() if np.isfinite(v) and k in kept}
    worst_r = sorted(r.items(), key=lambda kv: -kv[1])[:TOP]
    worst_e = sorted(e.items(), key=lambda kv: kv[1])[:TOP]
    ranks = _ranks(draws) if draws.size else draws
    stats = idata.sample_stats if "sample_stats" in idata.groups() else {}
    divergent = (np.ravel(np.asarray(stats["diverging"].values, bool)) if "diverging" in stats
                 else np.zeros(ranks.shape[1] if ranks.size else 0, bool))
    at = _divergent_at(ranks, labels, divergent) if divergent.size == ranks.shape[-1] else []
    # correlations among the scalars (population values, sds, noise) and the worst-mixing
    # elements, at most MAX_CORRELATED of them
    scalars = {n for n in names if idata.posterior[n].ndim == 2}
    picked = [lab for lab in labels if lab in scalars]
    picked += [lab for lab, _ in sorted(r.items(), key=lambda kv: -kv[1])
               if lab not in scalars][:max(0, MAX_CORRELATED - len(picked))]
    index = {lab: i for i, lab in enumerate(labels)}
    chosen = [index[lab] for lab in picked[:MAX_CORRELATED]]
    corr = _correlations(ranks[chosen], [labels[i] for i in chosen]) if chosen else []
    worst = [label for label, _ in worst_r[:1] + worst_e[:1]] if failed_mixing else []
    stuck = float(divergent.mean()) if divergent.size else 0.0
    remedies = _remedies(at, worst, corr, every, scalars, settings, failed_mixing, stuck,
                         facts)
    return Diagnosis(tuple((k, float(v)) for k, v in worst_r),
                     tuple((k, float(v)) for k, v in worst_e), tuple(at), tuple(corr),
                     tuple(remedies))
