"""The model's arithmetic, written once against a math namespace ``xp``.

The PyMC graph (``xp`` = ``pytensor.tensor``), the numpy evaluation of posterior draws
(:mod:`bayeslaw.posterior`) and the simulator (:mod:`bayeslaw.simulate`) all call these: the
link-scale effects of a law parameter, the noise scale, the AR(1) / random-walk conditional
terms and the likelihood's log density.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def previous_rows(runs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows sorted by run then D: the previous row of the same run, and first-row flags.

    A run's first row points at itself (its flag is 1.0, so the AR(1) term drops out).
    """
    runs = np.asarray(runs)
    first = np.ones(len(runs), bool)
    first[1:] = runs[1:] != runs[:-1]
    prev = np.arange(len(runs)) - 1
    prev[first] = np.flatnonzero(first)
    return prev.astype("int64"), first.astype(float)



def walk_power(gap: Any, hurst: Any) -> Any:
    """``gap^(2 hurst)`` for distances ``gap >= 0`` in log D (finite gradient at 0)."""
    return (gap + 1e-12) ** (2.0 * hurst)



def walk_variance(xp: Any, log_d: Any, log_d_prev: Any, follows: Any, tau: Any, start: Any,
                  log_d_ref: float, hurst: Any = 0.5) -> Any:
    """Variance the random-walk residual adds to a point, given the run's previous point.

    A point that follows another of its run: ``tau^2 (x - x_prev)^(2h)`` (``x = log D``,
    ``h = hurst``, 1/2 for a random walk); a run's first point:
    ``start^2 + tau^2 |x - log D_ref|^(2h)`` (the walk starts at the reference).  Written once
    for numpy and PyTensor (``xp``).
    """
    return (follows * tau**2 * walk_power(log_d - log_d_prev, hurst)
            + (1.0 - follows) * (start**2 + tau**2 * walk_power(xp.abs(log_d - log_d_ref), hurst)))
