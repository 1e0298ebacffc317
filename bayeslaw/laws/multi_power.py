r"""The multi-power law (Luo et al. 2025) and the arithmetic of the schedule terms it reads.

A schedule-aware law sees a run's learning-rate schedule through terms computed from the rate
as a share of its peak, ``eta``, on a grid of at most :data:`GRID` steps (:func:`grid`;
:func:`rate` for a schedule given by its kind).  :class:`RunSchedule` holds one run's grid and
gives, at any ``D``:

.. math::

    S_1(D) = \int_0^D \eta\,dx, \qquad
    \delta(D) = 1 - \min_{x_{peak} \le x \le D} \eta(x), \qquad
    S_2(D) = \int_0^D \left(1 - e^{-(D - x)/w}\right) d\delta(x)

the forward area (``lr_area``, tokens; ``D`` at a constant peak rate), the drop so far
(``lr_drop``, 0 to 1) and the annealing area of Tissue et al. 2024 with momentum
(``anneal_area``, the drop seen through an exponential lag of ``w`` tokens; the window is
read from a run's columns by :func:`bayeslaw.data.schedules.window`), and per run the
forward area at which the drop first reaches each of :data:`NODES` levels
(:func:`node_areas`, the columns :data:`NODE_COLUMNS`).  The multi-power law
(:func:`multi_power`, :func:`looped_multi_power` with the looped depth term) sums Luo et al.'s
loss drop over those levels (:func:`annealing_sum`); the annealing-area laws
(:func:`bayeslaw.laws.functions.annealing_area`) read ``anneal_area``.

Pure functions of arrays: reading schedules from tables (per-run columns or a logged ``lr``),
their checks and the terms of a table's rows are :mod:`bayeslaw.data.schedules`; the registry
entries are :mod:`bayeslaw.laws.registry`'s, the default spec ``models/multi_power.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..constants import ANNEAL_AREA, LR_AREA, LR_DROP, LR_NORM
from .functions import _depth, _forward

#: Levels of the drop the multi-power law's annealing sum is taken over, and the per-run
#: columns holding the forward area at which the drop first reaches each level's boundary
#: ``j / NODES`` (``j = 0``: where the decay starts).
NODES = 20
NODE_COLUMNS = tuple(f"lr_node_{j:02d}" for j in range(NODES + 1))


def drop_levels() -> np.ndarray:
    """The drop at each boundary between levels, ``j / NODES`` for ``j = 0 .. NODES``."""
    return np.arange(NODES + 1) / NODES


#: The key of :class:`LevelPairs` in a law's covariates: the model's graph
#: (:class:`bayeslaw.model.graph.LossModel`) evaluates :func:`annealing_sum` on them.
PAIRS = "lr_level_pairs"


@dataclass(frozen=True)
class LevelPairs:
    """The annealing sum's nonzero terms, one entry per observed point and level it reached.

    The dense sum takes ``K + 1`` boundaries at every cell of a ``(runs, L)`` layout
    (padded cells included), but at a point only the boundaries the drop has passed
    (``w_j > 0``) after their node (``S_1 > S_1(j)``) add anything (:func:`level_pairs`).
    Arrays of one length, numpy or symbolic: ``point`` (flat index into the layout of
    ``shape``), ``run``, ``level`` (``j``), ``since`` (``S_1 - S_1(j)``, tokens, positive)
    and ``weight`` (``w_j``).
    """

    point: Any
    run: Any
    level: Any
    since: Any
    weight: Any
    shape: tuple[Any, Any]


def _log_rates() -> np.ndarray:
    """``log eta_j`` at each boundary, ``eta_j = 1 - j/K`` floored at ``1/2K``."""
    return np.log(np.maximum(1.0 - drop_levels(), 0.5 / (len(NODE_COLUMNS) - 1)))


def level_weights(xp: Any, drop: Any) -> Any:
    """Each boundary's weight ``w_j`` at drops ``delta`` (:func:`annealing_sum`), ``(..., K+1)``."""
    k = len(NODE_COLUMNS) - 1
    covered = k * xp.expand_dims(drop, -1) - np.arange(k + 1)
    below = np.arange(k + 1) >= 1
    return (xp.clip(covered, 0.0, 1.0) + below * xp.clip(covered + 1.0, 0.0, 1.0)) / (2 * k)


def level_pairs(area: np.ndarray, drop: np.ndarray, nodes: np.ndarray,
                mask: np.ndarray) -> dict[str, np.ndarray]:
    """The arrays of :class:`LevelPairs` from a ``(runs, L)`` layout.

    ``area`` and ``drop`` are the layout's ``lr_area`` and ``lr_drop``, ``nodes`` the runs'
    node columns ``(runs, K + 1)``, ``mask`` 1 where a cell holds a point.
    """
    since = np.expand_dims(area, -1) - nodes[:, None, :]
    weight = level_weights(np, drop)
    keep = (weight > 0) & (since > 0) & (np.expand_dims(mask, -1) > 0)
    run, pos, level = np.nonzero(keep)
    return {"point": run * area.shape[1] + pos, "run": run, "level": level,
            "since": since[keep], "weight": weight[keep]}


def _sparse_sum(xp: Any, pairs: LevelPairs, theta: Mapping[str, Any],
                ref: Mapping[str, float]) -> Any:
    """:func:`annealing_sum` over :class:`LevelPairs` (PyTensor), 0 at cells without a point.

    ``kappa eta_j^-omega / D_ref`` is taken once per level (and run, where ``kappa`` or
    ``omega`` vary by run) and gathered; the terms are summed back per point by index.
    """
    rate = theta["kappa"] * xp.exp(-theta["omega"] * _log_rates()) / ref["D"]
    rate = rate[pairs.level] if rate.ndim == 1 else rate[pairs.run, pairs.level]
    zeta = theta["zeta"]
    zeta = zeta if zeta.ndim == 0 else zeta[pairs.run, 0]
    term = pairs.weight * (1.0 - xp.exp(-zeta * xp.log1p(rate * pairs.since)))
    rows, width = pairs.shape
    total = xp.inc_subtensor(xp.zeros(rows * width)[pairs.point], term)
    return theta["d"] * total.reshape((rows, width))


def annealing_sum(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                  ref: Mapping[str, float]) -> Any:
    r"""The multi-power law's loss drop ``LD``, summed over levels of the rate's drop.

    .. math::

        LD = d \sum_{j=0}^{K} w_j \left[1 - \left(\kappa\, \eta_j^{-\omega}
             \frac{\max(S_1 - S_1(j), 0)}{D_{ref}} + 1\right)^{-\zeta}\right]

    Luo et al.'s sum over steps ``k``, ``sum_k (eta_{k-1} - eta_k) G(eta_k^-omega S_k)``, is
    an integral over the drop of the rate; it is taken by the trapezoid rule over ``K``
    levels of the drop instead of over steps.  Boundary ``j`` is where the drop first
    reached ``j / K`` of the peak (the forward area there, ``S_1(j)``, is the run's column
    ``lr_node_jj``), at rate ``eta_j = 1 - j/K`` (at least ``1/2K``).  Its weight ``w_j`` is
    half the share of each adjacent level the drop ``delta`` so far has covered,
    ``c_j = clip(K delta - j, 0, 1) / K``: ``w_j = (c_j + c_{j-1}) / 2``; the partly covered
    level ends at the current step, where ``G = 0``.  Given :class:`LevelPairs` under
    :data:`PAIRS` (the model's graph), the sum is taken over those terms only, the same
    value at every point (:func:`_sparse_sum`).
    """
    if PAIRS in cov:
        return _sparse_sum(xp, cov[PAIRS], theta, ref)
    node = xp.stack([cov[name] for name in NODE_COLUMNS], axis=-1)
    since = xp.maximum(xp.expand_dims(cov["lr_area"], -1) - node, 0.0) / ref["D"]
    weight = level_weights(xp, cov["lr_drop"])
    log_eta = _log_rates()

    def along(name: str) -> Any:
        return xp.expand_dims(theta[name], -1)

    arg = along("kappa") * xp.exp(-along("omega") * log_eta) * since
    saturation = 1.0 - xp.exp(-along("zeta") * xp.log1p(arg))
    return theta["d"] * xp.sum(weight * saturation, axis=-1)


def multi_power(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                ref: Mapping[str, float]) -> Any:
    r"""Multi-power law (Luo et al. 2025, ICLR 2025) with a size term.

    From "A Multi-Power Law for Loss Curve Prediction Across Learning Rate Schedules":

    .. math::

        L(N, t) = E + \frac{A}{N^{\alpha}} + \frac{B}{(S_1(t) + S_W)^{\beta}} - LD(t),
        \quad
        LD(t) = B' \sum_{k=1}^{t} (\eta_{k-1} - \eta_k)\,
                \left[1 - (C \eta_k^{-\gamma} S_k(t) + 1)^{-\zeta}\right]

    with ``S_k(t)`` the forward area from step ``k`` to ``t``.  ``S_1 + S_W`` (the forward
    area with the warm-up's) is the column ``lr_area``; ``LD`` is :func:`annealing_sum`, with
    ``B' = d`` (the loss a whole anneal to zero can remove), ``C = kappa / D_ref`` and
    ``gamma = omega``.  With a saturation that is immediate (``kappa`` to infinity), ``LD``
    is ``d delta``: the drop term of :func:`chinchilla_anneal` for a cosine to zero without
    warm-up, which is this law's special case with ``D`` for the forward area.  Evaluated as
    ``E + a(N/N_ref)^-alpha + b(S_1/D_ref)^-beta - LD``.
    """
    return _forward(xp, cov, theta, ref) - annealing_sum(xp, cov, theta, ref)


def looped_multi_power(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                       ref: Mapping[str, float]) -> Any:
    r"""The multi-power law with the looped law's depth term.

    .. math::

        L(N, t, T_m) = E + \frac{A}{N^{\alpha}} + \frac{B}{(S_1(t) + S_W)^{\beta}}
                       + \frac{C}{T_m^{\gamma}} - LD(t)

    :func:`multi_power` plus :func:`looped_total`'s ``c (T_m / T_ref)^-gamma``.
    """
    return multi_power(xp, cov, theta, ref) + _depth(xp, cov, theta, ref)


# -- a run's schedule and its terms, from its learning rate ---------------------------------
def rate(kind: str, D: np.ndarray, *, warmup: float, horizon: float,
         decay_start: float | None = None, decay_end: float | None = None,
         decay_shape: str = "linear", final_ratio: float = 0.0) -> np.ndarray:
    """The learning rate as a share of its peak at ``D`` tokens.

    A linear warm-up from 0 over ``warmup`` tokens, then: ``constant`` 1; ``cosine``
    ``r + (1 - r)(1 + cos(pi p))/2`` and ``linear`` ``r + (1 - r)(1 - p)``, with
    ``p = (D - warmup) / (decay_end - warmup)`` clipped to [0, 1] and ``r`` the final ratio;
    ``inverse_sqrt`` ``max(sqrt(warmup / D), r)``; ``wsd`` 1 until ``decay_start``, then the
    cool-down ``decay_shape`` (``linear`` ``1 - q``, ``cosine`` ``(1 + cos(pi q))/2``,
    ``1-sqrt`` ``1 - sqrt(q)``, ``q`` the cool-down's progress) down to ``r``.
    """
    D = np.asarray(D, float)
    end = horizon if decay_end is None else decay_end
    if kind == "constant":
        eta = np.ones_like(D)
    elif kind in ("cosine", "linear"):
        p = np.clip((D - warmup) / max(end - warmup, 1e-300), 0.0, 1.0)
        shape = (1 + np.cos(np.pi * p)) / 2 if kind == "cosine" else 1 - p
        eta = final_ratio + (1 - final_ratio) * shape
    elif kind == "inverse_sqrt":
        eta = np.maximum(np.sqrt(warmup / np.maximum(D, warmup)), final_ratio)
    elif kind == "wsd":
        start = warmup if decay_start is None else decay_start
        q = np.clip((D - start) / max(end - start, 1e-300), 0.0, 1.0)
        shape = {"linear": 1 - q, "cosine": (1 + np.cos(np.pi * q)) / 2,
                 "1-sqrt": 1 - np.sqrt(q)}[decay_shape]
        eta = final_ratio + (1 - final_ratio) * shape
    else:
        raise ValueError(f"unknown schedule {kind!r}")  # bayeslaw.data.schedules checks first
    ramp = np.minimum(D / warmup, 1.0) if warmup > 0 else np.ones_like(D)
    return eta * ramp


#: Most grid steps per run: a schedule's areas are integrated on this grid (the data side's
#: logged schedules are thinned to it too: :mod:`bayeslaw.data.schedules`).
GRID = 1000


def grid(horizon: float, breaks: list[float], last: float | None = None) -> np.ndarray:
    """At most :data:`GRID` steps from 0 to ``last`` (default ``horizon``), through ``breaks``.

    Half the steps are even in ``D``, half even in ``log D`` from ``horizon / 1e4``, so a
    warm-up of 0.1% of the run is resolved.
    """
    last = horizon if last is None else last
    n = GRID // 2 - len(breaks) - 1
    even = np.linspace(0.0, last, n)
    logs = np.geomspace(max(last * 1e-4, 1e-300), last, GRID - n - len(breaks) - 1)
    nodes = np.concatenate([[0.0], even, logs, [b for b in breaks if 0 < b < last]])
    return np.unique(np.clip(nodes, 0.0, last))


#: A node's area when its level is never reached: past any point, so it adds nothing.
UNREACHED = 1e30


@dataclass(frozen=True, eq=False)
class RunSchedule:
    """One run's schedule on its grid: ``D`` (tokens, from 0) and ``eta = lr / peak``.

    ``known_to`` is the last ``D`` the schedule is known at (the horizon, or a logged table's
    last row); ``window`` the momentum window of the annealing area, in tokens.
    """

    D: np.ndarray
    eta: np.ndarray
    window: float

    @property
    def known_to(self) -> float:
        """The last ``D`` the schedule is known at."""
        return float(self.D[-1])

    def _cumulative(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Forward area, drop and annealing area at the grid's nodes.

        The annealing area is the drop less ``m``, the part of it not yet seen through the
        lag: ``m_i = m_{i-1} exp(-h_i / w) + (delta_i - delta_{i-1})``.
        """
        D, eta = self.D, self.eta
        h = np.diff(D)
        area = np.concatenate([[0.0], np.cumsum(h * (eta[1:] + eta[:-1]) / 2)])
        peak = int(np.argmax(eta))
        drop = np.zeros_like(eta)
        drop[peak:] = 1.0 - np.minimum.accumulate(eta[peak:])
        unseen = np.zeros_like(eta)
        for i in range(1, len(D)):
            unseen[i] = unseen[i - 1] * np.exp(-h[i - 1] / self.window) + drop[i] - drop[i - 1]
        return area, drop, drop - unseen

    def terms(self, D: np.ndarray) -> dict[str, np.ndarray]:
        """The schedule's terms at ``D``, by column (a node column is constant along the run).

        :data:`bayeslaw.data.schedules.TERM_COLUMNS`: ``lr_norm``, ``lr_area``, ``lr_drop``,
        ``anneal_area`` and the :data:`NODE_COLUMNS`.
        """
        D = np.asarray(D, float)
        area, drop, anneal = self._cumulative()
        out = {LR_NORM: np.interp(D, self.D, self.eta), LR_AREA: np.interp(D, self.D, area),
               LR_DROP: np.interp(D, self.D, drop), ANNEAL_AREA: np.interp(D, self.D, anneal)}
        for name, value in zip(NODE_COLUMNS, node_areas(drop, area), strict=True):
            out[name] = np.full(len(D), value)
        return out


def node_areas(drop: np.ndarray, area: np.ndarray) -> np.ndarray:
    """The forward area where the drop first reaches each level's boundary.

    Boundary 0 is where the decay starts (the last node without a drop); a boundary never
    reached gets :data:`UNREACHED`, past any point, so it adds nothing.
    """
    out = np.full(len(NODE_COLUMNS), UNREACHED)
    start = int(np.searchsorted(drop, 0.0, side="right")) - 1
    out[0] = area[start]
    for j, level in enumerate(drop_levels()[1:], start=1):
        i = int(np.searchsorted(drop, level - 1e-12, side="left"))
        if i >= len(drop):
            continue
        if i == 0 or drop[i] == drop[i - 1]:
            out[j] = area[i]
            continue
        f = (level - drop[i - 1]) / (drop[i] - drop[i - 1])
        out[j] = area[i - 1] + f * (area[i] - area[i - 1])
    return out
