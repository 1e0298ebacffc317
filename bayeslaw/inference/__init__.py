"""Sampling: fits, the warm start, the compiled model and fleets.

:func:`fit` and :func:`fit_many`, the warm start, nutpie's compiled model and its
per-process cache, approximate posteriors and fleets of tasks on Dask. The only home of nutpie,
numba and dask; may import :mod:`bayeslaw.posterior`, :mod:`bayeslaw.model` and below.
"""

from __future__ import annotations

from .sampling import fit, fit_many, sample_prior_predictive

__all__ = [
    "fit",
    "fit_many",
    "sample_prior_predictive",
]
