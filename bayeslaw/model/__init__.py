"""The statistical model: the plan of a fit, its arithmetic and its PyMC graph.

The plan (structure, centering, checks), the arithmetic written once against ``xp`` (group
effects on the link scale in :mod:`~bayeslaw.model.arithmetic`; the noise model, the curves'
conditional terms and draws in :mod:`~bayeslaw.model.noise`), the reparameterizations and the
graph. Only :mod:`bayeslaw.model.graph` imports pymc; it is not
loaded with the package, so the posterior side can use the rest without pymc. May import
:mod:`bayeslaw.spec`, :mod:`bayeslaw.data`, :mod:`bayeslaw.laws` and the core modules.
"""

from __future__ import annotations

from .plan import Plan, make_plan

__all__ = [
    "Plan",
    "make_plan",
]
