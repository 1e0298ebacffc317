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
(:attr:`bayeslaw.laws.registry.Law.reference_keys`).  The multi-power law and the arithmetic
of the schedule terms it reads are :mod:`bayeslaw.laws.multi_power`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..constants import EXIT_ENTROPY, EXIT_LATENT, EXIT_WEIGHTS


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


def _step_terms(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                ref: Mapping[str, float]) -> Any:
    """The looped laws' size and data terms, ``E + a((N+t1)/N_ref)^-alpha + ...``.

    ``... + b((D+t2)/D_ref)^-beta``: the total law adds its T_m term, the step laws the step's.
    """
    return (
        theta["E"]
        + _power_term(xp, cov["N"], theta["t1"], ref["N"], theta["a"], theta["alpha"])
        + _power_term(xp, cov["D"], theta["t2"], ref["D"], theta["b"], theta["beta"])
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
    return (_step_terms(xp, cov, theta, ref)
            + _power_term(xp, cov["T_m"], theta["t3"], ref["T_m"], theta["c"], theta["gamma"]))


def _exit_sum(xp: Any, weights: list[Any], theta: Mapping[str, Any],
              ref: Mapping[str, float]) -> Any:
    """``sum_k weights_k c ((k + t3)/T_ref)^-gamma``: the step term under exit weights."""
    out = 0.0
    for k, w in enumerate(weights, start=1):
        # np.float64: PyTensor would make a float 1.0 a float32 constant, and log(k / T_ref)
        # of two constants then loses digits
        out = out + w * _power_term(xp, np.float64(k), theta["t3"], ref["T"], theta["c"],
                                    theta["gamma"])
    return out


def looped_steps(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                 ref: Mapping[str, float]) -> Any:
    r"""A looped LM's loss at each exit step, and its total through the logged exit distribution.

    The step-wise law (Ouro, arXiv 2510.25741, appendix E) and its link to the total loss:

    .. math::

        L_{step}(N, D, T) = E + \frac{A}{(N + t_1)^{\alpha}} + \frac{B}{(D + t_2)^{\beta}}
                              + \frac{C}{(T + t_3)^{\gamma}},
        \qquad
        L_{total} = \sum_{T=1}^{T_m} q(T)\, L_{step}(T) - \beta_H H(q)

    evaluated on a row's exit weights ``w_k`` (:data:`bayeslaw.constants.EXIT_WEIGHTS`: one-hot
    at ``T`` on a step row, the checkpoint's logged ``q`` on a total row) as
    ``E + a((N+t1)/N_ref)^-alpha + b((D+t2)/D_ref)^-beta + sum_k w_k c((k+t3)/T_ref)^-gamma
    - beta_H H``, with ``H`` the entropy of the logged ``q`` on a total row and 0 on a step
    row (:data:`bayeslaw.constants.EXIT_ENTROPY`).  Since the weights sum to 1, the total is
    the q-weighted sum of the step losses exactly.
    """
    weights = [cov[c] for c in EXIT_WEIGHTS]
    return (_step_terms(xp, cov, theta, ref) + _exit_sum(xp, weights, theta, ref)
            - theta["beta_H"] * cov[EXIT_ENTROPY])


def exit_distribution(xp: Any, allowed: list[Any], z: list[Any]) -> tuple[list[Any], Any]:
    """The exit distribution ``q_k = allowed_k e^{z_k} / sum_j allowed_j e^{z_j}`` and ``H(q)``.

    ``allowed`` marks the steps a row may exit at (1 up to its T_m, or one step only);
    ``z_k`` is the log-odds of step k against step 1 (``z_1 = 0``).  ``allowed`` may be
    numbers or arrays, ``z`` numbers or parameters.
    """
    norm = 0.0
    for a, zk in zip(allowed, z, strict=True):
        norm = norm + a * xp.exp(zk)
    log_norm = xp.log(norm)
    q = [a * xp.exp(zk - log_norm) for a, zk in zip(allowed, z, strict=True)]
    entropy = 0.0
    for qk, zk in zip(q, z, strict=True):
        entropy = entropy - qk * (zk - log_norm)
    return q, entropy


def looped_steps_latent(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                        ref: Mapping[str, float]) -> Any:
    r""":func:`looped_steps` with a latent exit distribution, learned from the total losses.

    .. math::

        q(T) = \frac{T^{\lambda_q}}{\sum_{k=1}^{T_m} k^{\lambda_q}}, \qquad
        L_{total} = \sum_{T=1}^{T_m} q(T)\, L_{step}(T) - \beta_H H(q)

    over the steps ``T <= T_m`` (log-odds ``z_T = lambda_q ln T``): a total row's weights
    mark the steps it may exit at, a step row's its one step (where ``q`` is one-hot and
    ``H(q) = 0``).  The entropy term applies on total rows
    (:data:`bayeslaw.constants.EXIT_LATENT`).  A family with one exponent, not a free
    distribution: the step term does not depend on D, so a run's totals pin one number about
    its ``q`` (their level above the steps' law) and a free ``q`` by run would rest on its
    prior.  The exponent may vary by ``T_m`` (the spec ``looped_steps_latent_depths``, an
    effect on ``lambda_q``), identified when the table's ``entropy_weight`` fixes ``beta_H``
    (``tests/laws/test_looped_steps.py`` shows the ridge otherwise).
    """
    allowed = [cov[c] for c in EXIT_WEIGHTS]
    z = [theta["lambda_q"] * np.log(np.float64(k)) for k in range(1, len(allowed) + 1)]
    q, entropy = exit_distribution(xp, allowed, z)
    return (_step_terms(xp, cov, theta, ref) + _exit_sum(xp, q, theta, ref)
            - theta["beta_H"] * cov[EXIT_LATENT] * entropy)


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
    bend = _power_term(xp, cov["D"], 0.0, ref["D"], q, -theta["beta"] / q)  # q (D/D_ref)^c
    return theta["m"] * (1.0 - theta["f"] + theta["f"] / (1.0 - q + bend))


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
    It is the special case of :func:`~bayeslaw.laws.multi_power.multi_power` for a cosine to
    zero without warm-up, with a saturation that is immediate and ``D`` for the forward area;
    with a known schedule, fit :func:`~bayeslaw.laws.multi_power.multi_power` or
    :func:`annealing_area` instead.  Evaluated as
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
    0 to 1, seen through Tissue's exponential lag; :mod:`bayeslaw.laws.multi_power`).  ``d`` is the
    loss a whole anneal to zero removes once the lag has caught up; Tissue's ``C`` is
    ``d (1 - lambda) / eta_max`` per step.  Evaluated as
    ``E + a(N/N_ref)^-alpha + b(S_1/D_ref)^-beta - d S_2``.
    """
    return _forward(xp, cov, theta, ref) - theta["d"] * cov["anneal_area"]


def looped_annealing_area(xp: Any, cov: Mapping[str, Any], theta: Mapping[str, Any],
                          ref: Mapping[str, float]) -> Any:
    r"""The annealing-area law with the looped law's depth term.

    .. math::

        L(N, s, T_m) = E + \frac{A}{N^{\alpha}} + \frac{B}{S_1(s)^{\beta}}
                       + \frac{C}{T_m^{\gamma}} - d\, S_2(s)

    :func:`annealing_area` plus :func:`looped_total`'s ``c (T_m / T_ref)^-gamma``.
    """
    return annealing_area(xp, cov, theta, ref) + _depth(xp, cov, theta, ref)
