"""Sampler settings: a frozen dataclass read from a spec's ``[sampler]`` table.

The same object flows through the spec, :func:`bayeslaw.fit` (where keyword arguments
override it), the fit's provenance, the report and refits.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .. import constants as C
from ..errors import SpecError

BACKENDS = ("nutpie", "pymc")
INITS = ("mode", "prior")
#: Where a curve law's per-curve coefficients are sampled (``shape_at``).
SHAPE_AT = ("reference", "window")
#: The settings that change the sampled coordinates, so the graph: the compiled-model cache's
#: key holds them (:func:`bayeslaw.model.plan.graph_key`); every other setting is how the
#: graph is sampled (:data:`SAMPLING_ONLY`). A new setting goes in one of the two (a test
#: checks that they cover every field).
GRAPH_FIELDS = ("sum_split", "slope_split", "centered_values", "shape_at")
SAMPLING_ONLY = ("draws", "tune", "chains", "target_accept", "backend", "low_rank", "init",
                 "pilot")
#: The law ``shape_at = "window"`` maps, and its per-curve parameters
#: (:mod:`bayeslaw.model.window`).
WINDOW_LAW, WINDOW_PARAMS = "curve_bend", ("m", "f", "beta", "q")
#: The settings that sample some parameters in other coordinates (a tuple of names each).
SPLITS = ("sum_split", "slope_split")


def splits_clash(sum_split: Any, slope_split: Any) -> bool:
    """Whether a ``sum_split`` and a ``slope_split`` share names they may not share.

    They may share the slope split's floor and coefficient, both (the exponent is then
    sampled as a slope beside the sum); any other overlap samples a parameter two ways.
    """
    shared = set(sum_split) & set(slope_split)
    if not shared:
        return False
    slope = tuple(slope_split)
    return not (len(slope) == 3 and shared == set(slope[:2]))


@dataclass(frozen=True)
class SamplerSettings:
    """How a spec is sampled.

    Attributes
    ----------
    draws, tune, chains : int
        Draws kept and tuning steps per chain, and the number of chains.
    target_accept : float
        NUTS's target acceptance rate, in (0, 1).
    backend : {"nutpie", "pymc"}
    low_rank : bool or "auto"
        nutpie's low-rank modified mass matrix; ``"auto"`` decides from the model's plan
        (:attr:`bayeslaw.model.plan.Plan.prefers_low_rank`).
    sum_split : tuple of str
        LogNormal parameters sampled as the log of their sum and the logs of their ratios
        (:func:`bayeslaw.model.transforms.sum_split_transform`); ``()`` turns it off.
    slope_split : tuple of str
        Three LogNormal parameters, a floor, a coefficient and its exponent (``E``, ``a``,
        ``alpha`` of ``E + a (N / N_ref)^-alpha``), sampled as the level ``log(E + a)``, the
        share ``log(a / E)`` and the slope ``log(a alpha)``
        (:func:`bayeslaw.model.transforms.slope_split_transform`); ``()`` turns it off.
    centered_values : bool, "offset" or "shifted"
        Sample each centered group term's levels as values on the link scale (population
        value plus deviation) rather than as deviations: the same model in other coordinates
        (unit Jacobian), without the ridge between the population value and every level
        (:meth:`bayeslaw.model.graph.LossModel._valued`): a parameter's first effect that is
        centered at every level, outside a ``[correlation]`` block.  ``low_rank = "auto"``
        then picks the diagonal mass matrix.  ``"offset"``: the same, and where the
        population value has a Normal prior on the link scale it is sampled with the levels
        as its offset from their mean, non-centered
        (:func:`bayeslaw.model.transforms.offset_transform`): no funnel between it and the
        term's sd when the levels are few.  ``"shifted"``: ``"offset"``, and the parameter's
        other terms centered at every level sampled with their mean as one coordinate, that
        mean moved into the first term's values (:meth:`bayeslaw.model.graph.LossModel._shift`:
        the same density): the data pin a run's sum of levels, not how it splits.
    shape_at : {"reference", "window"}
        ``"window"`` (``curve_bend`` with one effect by ``run`` on each of ``m``, ``f``,
        ``beta`` and ``q``): each curve's coefficients sampled at the middle of its fitted
        points, its slope there one coordinate (:mod:`bayeslaw.model.window`: the same model,
        the priors still at the spec's reference, unit Jacobian); the effects' ``centered``
        keys and ``centered_values`` then do not apply to them.  ``"reference"``: the spec's
        own coordinates.
    init : {"mode", "prior"}
        Start the chains at the posterior's mode (:mod:`bayeslaw.inference.warmstart`) or at the
        prior's centre.
    pilot : int
        ``0``: none.  ``P > 0``: a pilot run of ``P`` tuning steps and ``P`` draws per chain
        first, whose draws' covariance (within each group level's coordinates, and
        between them and the global ones) becomes the fit's metric
        (:mod:`bayeslaw.inference.metric`); nutpie only.
    """

    draws: int = C.DEFAULT_DRAWS
    tune: int = C.DEFAULT_TUNE
    chains: int = C.DEFAULT_CHAINS
    target_accept: float = C.DEFAULT_TARGET_ACCEPT
    backend: str = "nutpie"
    low_rank: bool | str = "auto"
    sum_split: tuple[str, ...] = ()
    slope_split: tuple[str, ...] = ()
    centered_values: bool | str = False
    shape_at: str = "reference"
    init: str = "mode"
    pilot: int = 0

    def __post_init__(self) -> None:
        for name in ("draws", "tune", "chains", "pilot"):
            value, least = getattr(self, name), 0 if name in ("tune", "pilot") else 1
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
                raise SpecError(f"sampler.{name} must be a whole number >= {least}, got "
                                f"{value!r}")
            object.__setattr__(self, name, int(value))
        for name in SPLITS:
            object.__setattr__(self, name, tuple(str(n) for n in getattr(self, name)))
        if not isinstance(self.target_accept, int | float) or not 0 < self.target_accept < 1:
            raise SpecError(f"sampler.target_accept must lie in (0, 1), got "
                            f"{self.target_accept!r}")
        if self.backend not in BACKENDS:
            raise SpecError(f"sampler.backend must be 'nutpie' or 'pymc', got {self.backend!r}")
        if not isinstance(self.centered_values, bool) and self.centered_values not in (
                "offset", "shifted"):
            raise SpecError(f"sampler.centered_values must be true, false, \"offset\" or "
                            f"\"shifted\", got "
                            f"{self.centered_values!r}")
        if self.pilot and self.backend != "nutpie":
            raise SpecError(f"sampler.pilot = {self.pilot} needs backend = \"nutpie\" (the "
                            f"pilot's metric is written into nutpie's compiled model); set "
                            f"pilot = 0 for backend {self.backend!r}")
        if self.shape_at not in SHAPE_AT:
            raise SpecError(f"sampler.shape_at must be \"reference\" (the spec's own "
                            f"coordinates) or \"window\" (each curve's coefficients at the "
                            f"middle of its points), got {self.shape_at!r}")
        if self.init not in INITS:
            raise SpecError(f"sampler.init must be \"mode\" (chains start near the posterior's "
                            f"mode) or \"prior\" (at the prior's centre), got {self.init!r}")
        if self.low_rank not in ("auto", True, False):
            raise SpecError(f"sampler.low_rank must be true, false or \"auto\", got "
                            f"{self.low_rank!r}")

    def joint_names(self) -> dict[str, str]:
        """The joint variable each split parameter is sampled in, by parameter.

        The graph's names: ``<names>_sum`` for ``sum_split``, ``<names>_slope`` for
        ``slope_split`` or for both at once, when they share the floor and the coefficient.
        """
        split, slope = self.sum_split, self.slope_split
        if split and slope and set(split) & set(slope):
            names = (*split, slope[2])
            return dict.fromkeys(names, "_".join(names) + "_slope")
        return {**dict.fromkeys(split, "_".join(split) + "_sum"),
                **dict.fromkeys(slope, "_".join(slope) + "_slope")}

    @classmethod
    def keys(cls) -> frozenset[str]:
        """The keys a spec's ``[sampler]`` table may hold: the fields of this class."""
        return frozenset(f.name for f in fields(cls))

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> SamplerSettings:
        """Settings from a ``[sampler]`` table (keys checked by the spec parser)."""
        values = dict(table)
        for name in SPLITS:
            if name in values and isinstance(values[name], list):
                values[name] = tuple(values[name])
        return cls(**values)

    def replace(self, **overrides: Any) -> SamplerSettings:
        """A copy with the settings given (``None`` keeps a setting as it is), validated."""
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = sorted(set(given) - self.keys())
        if unknown:
            raise SpecError(f"unknown sampler setting(s) {unknown}; allowed: "
                            f"{sorted(self.keys())}")
        return dataclasses.replace(self, **given)

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (the TOML layout), every setting written.

        A spec written out and read back is the same spec, whatever the law's default sets.
        """
        return {f.name: list(getattr(self, f.name)) if f.name in SPLITS
                else getattr(self, f.name) for f in fields(self)}


#: How many of each run's last points a spec's ``data.min_portion`` keeps by default.
MIN_KEPT = 3


@dataclass(frozen=True)
class DataSettings:
    """Which of a table's points a spec is fitted to: a spec's ``[data]`` table.

    Attributes
    ----------
    min_portion : float
        Each run's points below this share of its last D are left out of the fit, its last
        ``min_kept`` points always kept (:meth:`bayeslaw.data.table.LossData.from_portion`):
        an early transient the law does not describe, such as a warm-up or the first fast
        drop.  ``0`` (the default) fits every point.  The fit says how many points it left
        out (one stderr line, and the fit's data notes); forecasts are made at any D.
    min_kept : int
        How many of each run's last points ``min_portion`` always keeps (default
        :data:`MIN_KEPT`, at least 1): a law with a coefficient per run and a noise scale per
        run needs more points a run than it has coefficients, else the run's curve can pass
        through every point and its noise scale has nothing to go on.
    """

    min_portion: float = 0.0
    min_kept: int = MIN_KEPT

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> DataSettings:
        """Settings from a ``[data]`` table (keys checked by the spec parser)."""
        portion = table.get("min_portion", 0.0)
        if isinstance(portion, bool) or not isinstance(portion, numbers.Real) or not (
                0.0 <= float(portion) < 1.0):
            raise SpecError(f"data.min_portion must be a share of each run's last D in [0, 1) "
                            f"(0 fits every point), got {portion!r}")
        kept = table.get("min_kept", MIN_KEPT)
        if isinstance(kept, bool) or not isinstance(kept, numbers.Integral) or kept < 1:
            raise SpecError(f"data.min_kept must be a whole number of each run's last points "
                            f"kept, at least 1, got {kept!r}")
        return cls(float(portion), int(kept))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form (the TOML layout)."""
        out: dict[str, Any] = {"min_portion": self.min_portion}
        if self.min_kept != MIN_KEPT:  # specs that keep the default keep their old JSON
            out["min_kept"] = self.min_kept
        return out
