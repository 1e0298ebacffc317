"""Model specifications: what a fit assumes, as frozen values.

The parts of a spec (priors, group effects, the likelihood), the immutable :class:`ModelSpec`
and its parser, the sampler settings and the catalog of shipped specs (``models/``). May import
:mod:`bayeslaw.data`, :mod:`bayeslaw.laws` and the core modules.
"""

from __future__ import annotations

from .catalog import load_spec, resolve_spec
from .model_spec import ModelSpec
from .parts import Effect, Likelihood, Prior
from .settings import SamplerSettings

__all__ = [
    "Effect",
    "Likelihood",
    "ModelSpec",
    "Prior",
    "SamplerSettings",
    "load_spec",
    "resolve_spec",
]
