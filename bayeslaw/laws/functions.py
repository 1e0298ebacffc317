r"""The loss laws as pure functions, written once against a math namespace ``xp``.

``xp`` is ``numpy`` or ``pytensor.tensor``, so the same code evaluates posterior draws in
numpy and builds the PyMC graph; :mod:`bayeslaw.laws.registry` registers each function with its
parameters.  Laws are written in a *centered* parameterization: each power-law term is
expressed as its loss contribution at a reference point,

.. math::

    \frac{A}{(N + t_1)^{\alpha}} = a \left(\frac{N + t_1}{N_{ref}}\right)^{-\alpha},
    \qquad A = a N_{ref}^{\alpha},

which decorrelates scale and exponent and lets NUTS mix (the textbook ``A``, ``alpha``
pair on raw ``N`` did not converge; that measurement was not saved).  The
textbook coefficients ``A``, ``B``, ``C`` are available as derived quantities
(:attr:`bayeslaw.laws.registry.Law.natural`).  A term of several covariates is centered at a
reference value of its effective size: ParScale's ``N (k ln P + 1)`` and the iso-depth
``N_once + T_m^phi N_rec`` are both compared with ``N_ref``
(:attr:`bayeslaw.laws.registry.Law.reference_keys`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def _power_term(xp: Any, x: Any, offset: Any, ref: float, scale: Any, exponent: Any) -> Any:
    """``scale * ((x + offset) / ref) ** -exponent`` written with exp/log (stable in graphs)."""
    return scale * xp.exp(-exponent * xp.log((x + offset) / ref))


def _size_and_data(xp: Any, size: Any, D: Any, theta: Mapping[str, Any],
                   ref: Mapping[str, float]) -> Any:
    """``E + a(size/N_ref)^-alpha + b(D/D_ref)^-beta``: a size term and Chinchilla's D term."""
    return (
        theta["E"]
        + _power_term(xp, size, 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, D, 0.0, ref["D"], theta["b"], theta["beta"])
    )


def looped_total(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                 ref: Mapping[str, float]) -> Any:
    r"""Total loss of a looped LM (Ouro, arXiv 2510.25741, appendix D).

    .. math::

        L(N, D, T_m) = E + \frac{A}{(N + t_1)^{\alpha}} + \frac{B}{(D + t_2)^{\beta}}
                         + \frac{C}{(T_m + t_3)^{\gamma}}

    evaluated as ``E + a((N+t1)/N_ref)^-alpha + b((D+t2)/D_ref)^-beta
    + c((T_m+t3)/T_ref)^-gamma``.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], theta["t1"], ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], theta["t2"], ref["D"], theta["b"], theta["beta"])
        + _power_term(xp, cov["T_m"], theta["t3"], ref["T_m"], theta["c"], theta["gamma"])
    )


def chinchilla(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
               ref: Mapping[str, float]) -> Any:
    r"""Chinchilla law (Hoffmann et al. 2022, approach 3).

    .. math::

        L(N, D) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}

    evaluated as ``E + a(N/N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    return _size_and_data(xp, cov["N"], cov["D"], theta, ref)


def curve_power(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                ref: Mapping[str, float]) -> Any:
    r"""A saturating power law of one curve along its scale axis, with no model size.

    .. math::

        L(D) = E + \frac{B}{D^{\beta}}

    evaluated as ``m ((1 - f) + f (D/D_ref)^-beta)``: ``m`` is the loss at ``D_ref``, ``f`` the
    share of it above the asymptote (``E = m (1 - f)``, ``B = m f D_ref^beta``). Fitted to a
    set of curves, each curve's ``m``, ``f`` and ``beta`` come from a population (partially
    pooled effects by ``run``).
    """
    bend = _power_term(xp, cov["D"], 0.0, ref["D"], theta["f"], theta["beta"])
    return theta["m"] * (1.0 - theta["f"] + bend)


def curve_bend(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
               ref: Mapping[str, float]) -> Any:
    r"""A saturating power law of one curve that may still bend down: a plateau before it.

    .. math::

        L(D) = E + \frac{B}{1 + (D / D_0)^{c}}

    evaluated as ``m ((1 - f) + f / ((1 - q) + q (D/D_ref)^(beta/q)))``: ``m``, ``f`` and
    ``beta`` mean what they mean in :func:`curve_power` (the loss at ``D_ref``, its share above
    the asymptote, the curve's log-slope there), and ``q`` in (0, 1) says how far past its
    bend the curve is at ``D_ref``.  ``q -> 1`` is :func:`curve_power`; a smaller ``q`` puts a
    plateau of ``E + m f / (1 - q)`` before the bend and steepens the curve towards its
    asymptotic exponent ``c = beta / q`` (curves that start flat, such as a model still at
    its initial loss or an error rate near chance: the M4 family of Alabdulmohsin et al.,
    2022, in closed form).  ``E = m (1 - f)``, ``c = beta / q``,
    ``D_0 = D_ref ((1 - q) / q)^(1 / c)`` and ``B = m f / (1 - q)``.
    """
    q = theta["q"]
    drop = xp.exp(theta["beta"] / q * xp.log(cov["D"] / ref["D"]))
    return theta["m"] * (1.0 - theta["f"] + theta["f"] / (1.0 - q + q * drop))


def cosine_progress(xp: Any, D: Any, horizon: Any) -> Any:
    """How far a cosine schedule has annealed at ``D`` of ``horizon`` tokens: 0 to 1.

    ``(1 - cos(pi p)) / 2`` with ``p = min(D / horizon, 1)``, the drop of a cosine learning
    rate from its peak as a share of its whole drop (warm-up ignored).
    """
    p = xp.minimum(D / horizon, 1.0)
    return 0.5 * (1.0 - xp.cos(np.pi * p))


def chinchilla_anneal(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                      ref: Mapping[str, float]) -> Any:
    r"""Chinchilla law on the curve of a run with a cosine learning-rate schedule.

    .. math::

        L(N, D, H) = E + \frac{A}{N^{\alpha}} + \frac{B}{D^{\beta}}
                       - C\,\frac{1 - \cos(\pi D / H)}{2}

    ``H`` (the column ``horizon``) is the run's planned tokens, where its cosine schedule
    ends.  The last term is the loss the schedule's anneal removes: zero at the start, ``C``
    at the horizon.  It is the annealing-area term of Tissue et al. 2024 ("Scaling law with
    learning rate annealing", arXiv 2408.11029) without its momentum, and lets the curve of
    a run bend below the power law as its learning rate falls.  A run trained to ``D``
    (``H = D``) has lost all ``C``: its final loss is ``E - C + A/N^alpha + B/D^beta``.
    It is the special case of :func:`multi_power` for a cosine to zero without warm-up, with
    a saturation that is immediate and ``D`` for the forward area; with a known schedule,
    fit :func:`multi_power` or :func:`annealing_area` instead.  Evaluated as
    ``E + a(N/N_ref)^-alpha + b(D/D_ref)^-beta - c (1 - cos(pi D/H))/2``.
    """
    return (chinchilla(xp, cov, theta, ref)
            - theta["c"] * cosine_progress(xp, cov["D"], cov["horizon"]))


def _streams_size(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any]) -> Any:
    """ParScale's effective size ``N (k ln P + 1)``."""
    return cov["N"] * (theta["k"] * xp.log(cov["P"]) + 1.0)


def parallel_streams(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                     ref: Mapping[str, float]) -> Any:
    r"""Parallel-scaling law (ParScale, Chen et al. 2025, arXiv 2505.10475).

    .. math::

        L(N, P) = E + \left(\frac{A}{N (k \ln P + 1)}\right)^{\alpha}

    with ``P`` parallel streams sharing (almost) all ``N`` parameters: ``P`` streams act as
    ``k ln P + 1`` times as many parameters.  Evaluated as
    ``E + a(N (k ln P + 1) / N_ref)^-alpha``, so ``A = N_ref a^(1/alpha)``.
    """
    return theta["E"] + _power_term(xp, _streams_size(xp, cov, theta), 0.0, ref["N"],
                                    theta["a"], theta["alpha"])


def parallel_streams_data(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                          ref: Mapping[str, float]) -> Any:
    r"""Parallel-scaling law with a data term (ParScale's effective size, Chinchilla's D term).

    .. math::

        L(N, P, D) = E + \left(\frac{A}{N (k \ln P + 1)}\right)^{\alpha}
                       + \frac{B}{D^{\beta}}

    evaluated as ``E + a(N (k ln P + 1) / N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    return (parallel_streams(xp, cov, theta, ref)
            + _power_term(xp, cov["D"], 0.0, ref["D"], theta["b"], theta["beta"]))


def looped_streams(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                   ref: Mapping[str, float]) -> Any:
    r"""A looped-style law for parallel streams: a separate power-law term in ``P``.

    .. math::

        L(N, P) = E + \frac{A}{N^{\alpha}} + \frac{C}{P^{\gamma}}

    The alternative to :func:`parallel_streams` in which ``P`` plays the role ``T_m`` plays
    in :func:`looped_total` (an additive ``C/P^gamma`` term instead of a larger effective
    size).  Evaluated as ``E + a(N/N_ref)^-alpha + c(P/P_ref)^-gamma``.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], 0.0, ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["P"], 0.0, ref["P"], theta["c"], theta["gamma"])
    )


def size_only(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
              ref: Mapping[str, float]) -> Any:
    r"""Chinchilla at a fixed token budget: only model size matters.

    .. math::

        L(N) = E + \frac{A}{N^{\alpha}}

    The null model of a sweep of final losses at one ``D`` (the data term is a constant,
    absorbed by ``E``) in which any other column (parallel streams ``P``, depth ``T_m``) is
    ignored.  Evaluated as ``E + a(N/N_ref)^-alpha``.
    """
    return theta["E"] + _power_term(xp, cov["N"], 0.0, ref["N"], theta["a"], theta["alpha"])


def iso_depth(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
              ref: Mapping[str, float]) -> Any:
    r"""Looped LM with unshared and recurrent (shared) parameters.

    .. math::

        L(N_{once}, N_{rec}, r, D) = E + \frac{A}{(N_{once} + r^{\phi} N_{rec})^{\alpha}}
                                       + \frac{B}{D^{\beta}}

    ``N_once`` parameters are applied once per token, the ``N_rec`` recurrent ones ``r``
    times (``r`` is the column ``T_m``); ``phi`` in (0, 1] says what a reuse is worth
    (``phi = 1``: as much as fresh parameters, ``phi = 0``: nothing).  Evaluated as
    ``E + a((N_once + T_m^phi N_rec) / N_ref)^-alpha + b(D/D_ref)^-beta``, with ``N_ref`` the
    reference *effective* size.  With ``N_once = 0`` and ``N_rec = N`` it is
    :func:`iso_depth_eff`.
    """
    size = cov["N_once"] + cov["N_rec"] * xp.exp(theta["phi"] * xp.log(cov["T_m"]))
    return _size_and_data(xp, size, cov["D"], theta, ref)


def iso_depth_eff(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                  ref: Mapping[str, float]) -> Any:
    r"""The iso-depth law on tables with only a total ``N`` (every parameter recurrent).

    .. math::

        L(N, T_m, D) = E + \frac{A}{(N\, T_m^{\phi})^{\alpha}} + \frac{B}{D^{\beta}}

    :func:`iso_depth` with ``N_once = 0`` and ``N_rec = N``: applying ``N`` parameters
    ``T_m`` times is worth ``T_m^phi N`` parameters.  Evaluated as
    ``E + a(N T_m^phi / N_ref)^-alpha + b(D/D_ref)^-beta``.
    """
    size = cov["N"] * xp.exp(theta["phi"] * xp.log(cov["T_m"]))
    return _size_and_data(xp, size, cov["D"], theta, ref)


#: Levels of the drop the multi-power law's annealing sum is taken over, and the per-run
#: columns holding the forward area at which the drop first reaches each level's boundary
#: ``j / NODES`` (``j = 0``: where the decay starts).
NODES = 20
NODE_COLUMNS = tuple(f"lr_node_{j:02d}" for j in range(NODES + 1))


def drop_levels() -> np.ndarray:
    """The drop at each boundary between levels, ``j / NODES`` for ``j = 0 .. NODES``."""
    return np.arange(NODES + 1) / NODES


def _forward(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
             ref: Mapping[str, float]) -> Any:
    """``E + a(N/N_ref)^-alpha + b(S_1/D_ref)^-beta``: Chinchilla with the forward area for D."""
    return _size_and_data(xp, cov["N"], cov["lr_area"], theta, ref)


def _depth(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
           ref: Mapping[str, float]) -> Any:
    """The looped law's depth term ``c (T_m / T_ref)^-gamma``."""
    return _power_term(xp, cov["T_m"], 0.0, ref["T_m"], theta["c"], theta["gamma"])


def annealing_area(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                   ref: Mapping[str, float]) -> Any:
    r"""Annealing-area law (Tissue et al. 2024, arXiv 2408.11029) with a size term.

    .. math::

        L(N, s) = E + \frac{A}{N^{\alpha}} + \frac{B}{S_1(s)^{\beta}} - d\, S_2(s)

    ``S_1`` is the forward area (the column ``lr_area``: the integral of the learning rate
    as a share of its peak over tokens, so ``S_1 = D`` at a constant peak rate) and ``S_2``
    the annealing area with momentum (``anneal_area``: the drop of the rate from its peak,
    0 to 1, seen through Tissue's exponential lag; :mod:`bayeslaw.data.schedules`).  ``d`` is the
    loss a whole anneal to zero removes once the lag has caught up; Tissue's ``C`` is
    ``d (1 - lambda) / eta_max`` per step.  Evaluated as
    ``E + a(N/N_ref)^-alpha + b(S_1/D_ref)^-beta - d S_2``.
    """
    return _forward(xp, cov, theta, ref) - theta["d"] * cov["anneal_area"]


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
    level ends at the current step, where ``G = 0``.
    """
    k = len(NODE_COLUMNS) - 1
    node = xp.stack([cov[name] for name in NODE_COLUMNS], axis=-1)
    since = xp.maximum(xp.expand_dims(cov["lr_area"], -1) - node, 0.0) / ref["D"]
    covered = k * xp.expand_dims(cov["lr_drop"], -1) - np.arange(k + 1)
    below = np.arange(k + 1) >= 1
    weight = (xp.clip(covered, 0.0, 1.0) + below * xp.clip(covered + 1.0, 0.0, 1.0)) / (2 * k)
    log_eta = np.log(np.maximum(1.0 - drop_levels(), 0.5 / k))

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


def looped_annealing_area(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                          ref: Mapping[str, float]) -> Any:
    r"""The annealing-area law with the looped law's depth term.

    .. math::

        L(N, s, T_m) = E + \frac{A}{N^{\alpha}} + \frac{B}{S_1(s)^{\beta}}
                       + \frac{C}{T_m^{\gamma}} - d\, S_2(s)

    :func:`annealing_area` plus :func:`looped_total`'s ``c (T_m / T_ref)^-gamma``.
    """
    return annealing_area(xp, cov, theta, ref) + _depth(xp, cov, theta, ref)


def looped_multi_power(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                       ref: Mapping[str, float]) -> Any:
    r"""The multi-power law with the looped law's depth term.

    .. math::

        L(N, t, T_m) = E + \frac{A}{N^{\alpha}} + \frac{B}{(S_1(t) + S_W)^{\beta}}
                       + \frac{C}{T_m^{\gamma}} - LD(t)

    :func:`multi_power` plus :func:`looped_total`'s ``c (T_m / T_ref)^-gamma``.
    """
    return multi_power(xp, cov, theta, ref) + _depth(xp, cov, theta, ref)


# -- the schedule of a run from its columns ------------------------------------------------
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
