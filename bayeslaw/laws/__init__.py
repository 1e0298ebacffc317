"""The loss laws: their math and their registry.

Each law is a pure function written once against a math namespace ``xp`` (numpy in the
posterior and the simulator, pytensor in the graph), with its parameters, units, links and
covariates in the registry, and the default law for a table's columns. Imports only the core
modules (:mod:`bayeslaw.constants`, :mod:`bayeslaw.errors`) and numpy.
"""

from __future__ import annotations

from .registry import LAWS, Law, get_law, law_for_columns

__all__ = [
    "LAWS",
    "Law",
    "get_law",
    "law_for_columns",
]
