"""The loss laws: their math and their registry.

Each law is a pure function written once against a math namespace ``xp`` (numpy in the
posterior and the simulator, pytensor in the graph), with its parameters, units, links and
covariates in the registry, and the default law for a table's columns. The multi-power law
lives with the arithmetic of its learning-rate schedule terms (:class:`RunSchedule`) in
:mod:`~bayeslaw.laws.multi_power`. Imports only the core modules (:mod:`bayeslaw.constants`,
:mod:`bayeslaw.errors`) and numpy.
"""

from __future__ import annotations

from .multi_power import RunSchedule
from .registry import LAWS, Law, get_law, law_for_columns

__all__ = [
    "LAWS",
    "Law",
    "RunSchedule",
    "get_law",
    "law_for_columns",
]
