"""Reparameterizations of the graph.

``sampler.sum_split``'s sum-and-ratios transform and ``sampler.slope_split``'s level, share
and slope transform. Each is a bijection of positive parameters onto the real line carrying its
log-Jacobian, so the priors and the law are unchanged: only the coordinates NUTS moves in differ.
"""

from __future__ import annotations

from typing import Any

from ..spec.model_spec import ModelSpec


def sum_split_transform() -> Any:
    """A PyMC transform of positive ``(x_0, ..., x_{n-1})`` to their log sum and log ratios.

    The unconstrained coordinates are ``v = log(x_0 + ... + x_{n-1})`` and
    ``w_i = log(x_i / x_0)`` (i >= 1).  Used by ``sampler.sum_split``: when the data pin the
    sum of some parameters (E and c, with only two T_m levels observed; E + a + c, the loss
    floor at the reference point), their posterior lies along a curved ridge in the default
    ``log x_i`` coordinates; in these the sum is one coordinate and the ridge runs along the
    ratios.  The priors are unchanged: the transform carries its log-Jacobian
    ``n v + sum_i log p_i`` (``p = x / sum(x)``, the softmax of ``(0, w_1, ...)``).
    """
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    class SumSplit(Transform):
        name = "sumsplit"  # no underscore: PyMC strips "_<name>__" from value names

        def forward(self, value: Any, *inputs: Any) -> Any:
            logs = pt.log(value)
            total = pt.log(pt.sum(value, axis=-1, keepdims=True))
            return pt.concatenate([total, logs[..., 1:] - pt.shape_padright(logs[..., 0])], axis=-1)

        @staticmethod
        def _logits(value: Any) -> Any:
            return pt.concatenate([pt.zeros_like(value[..., :1]), value[..., 1:]], axis=-1)

        def backward(self, value: Any, *inputs: Any) -> Any:
            total = pt.exp(pt.shape_padright(value[..., 0]))
            return total * pt.special.softmax(self._logits(value), axis=-1)

        def log_jac_det(self, value: Any, *inputs: Any) -> Any:
            logits = self._logits(value)
            n = logits.shape[-1]
            return (n * value[..., 0] + pt.sum(logits, axis=-1)
                    - n * pt.logsumexp(logits, axis=-1))

    return SumSplit()


def slope_split_transform() -> Any:
    """A PyMC transform of positive ``(E, a, alpha)`` to their level, share and slope.

    For a term ``E + a (x / x_ref)^-alpha`` the data pin the level at the reference point,
    ``E + a``, and the slope there, ``d L / d log x = -a alpha``, while E, a and alpha
    themselves trade along a curved ridge (a larger exponent with a smaller coefficient and a
    lower floor; rank correlations of E and a from -0.99 to -1.00 in the failed fits' diagnoses
    of ``benchmarks/results/converge_select_{noslope,steps_default}_2026-12-03.csv``).
    The unconstrained coordinates are

        v = log(E + a),  l = log(a / E),  s = log(a alpha),

    so the level and the slope are one coordinate each and the ridge runs along ``l`` alone.
    Backward, with ``p = a / (E + a) = sigmoid(l)``: ``E = (1 - p) e^v``, ``a = p e^v``,
    ``alpha = e^(s - v) / p``. Any positive triple maps to a point and back, so the transform
    holds for any three positive parameters; it helps where they play these roles.

    The log-Jacobian of the backward map is ``v + s + log(1 - p)``: the map from ``(v, l, s)``
    to ``(log E, log a, log alpha)`` has determinant 1 (its matrix is lower block-triangular
    with ``[[1, -p], [1, 1 - p]]`` and 1 on the diagonal) and ``log E + log a + log alpha`` is
    ``v + s + log(1 - p)``.
    """
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    class SlopeSplit(Transform):
        name = "slopesplit"  # no underscore: PyMC strips "_<name>__" from value names

        def forward(self, value: Any, *inputs: Any) -> Any:
            logs = pt.log(value)
            level = pt.log(value[..., 0] + value[..., 1])
            return pt.stack([level, logs[..., 1] - logs[..., 0], logs[..., 1] + logs[..., 2]],
                            axis=-1)

        def backward(self, value: Any, *inputs: Any) -> Any:
            v, share, s = value[..., 0], value[..., 1], value[..., 2]
            log_p = -pt.softplus(-share)  # log sigmoid(share), stable for large |share|
            log_q = -pt.softplus(share)  # log (1 - p)
            return pt.exp(pt.stack([log_q + v, log_p + v, s - v - log_p], axis=-1))

        def log_jac_det(self, value: Any, *inputs: Any) -> Any:
            return value[..., 0] + value[..., 2] - pt.softplus(value[..., 1])

    return SlopeSplit()


def sum_slope_transform(coef: int) -> Any:
    """``sum_split`` of ``(x_0, ..., x_{n-1})`` with an exponent sampled as a slope.

    For ``sampler.sum_split`` and ``sampler.slope_split`` together (the floor and the
    coefficient in both; e.g. ``sum_split = ["E", "a", "b"]`` and ``slope_split = ["E", "a",
    "alpha"]``): the value is ``(x_0, ..., x_{n-1}, alpha)``, the first ``n`` sampled as
    :func:`sum_split_transform` does and the exponent as the slope ``s = log(x_coef alpha)``
    (``coef`` is the coefficient's index among the ``x``). The backward map gives the ``x``
    from their coordinates alone and then ``alpha = e^s / x_coef``, so its Jacobian is
    triangular: the log-Jacobian is the sum split's plus ``s - log x_coef``.
    """
    import pytensor.tensor as pt

    inner = sum_split_transform()
    from pymc.logprob.transforms import Transform

    class SumSlope(Transform):
        name = "sumslope"  # no underscore: PyMC strips "_<name>__" from value names

        def forward(self, value: Any, *inputs: Any) -> Any:
            x, alpha = value[..., :-1], value[..., -1]
            slope = pt.log(x[..., coef]) + pt.log(alpha)
            return pt.concatenate([inner.forward(x), pt.shape_padright(slope)], axis=-1)

        @staticmethod
        def _log_coef(head: Any) -> Any:
            """The coefficient's log, from the sum split's coordinates.

            Not exp then log, which underflows when the coefficient's share is tiny.
            """
            logits = pt.concatenate([pt.zeros_like(head[..., :1]), head[..., 1:]], axis=-1)
            return head[..., 0] + logits[..., coef] - pt.logsumexp(logits, axis=-1)

        def backward(self, value: Any, *inputs: Any) -> Any:
            head = value[..., :-1]
            alpha = pt.exp(value[..., -1] - self._log_coef(head))
            return pt.concatenate([inner.backward(head), pt.shape_padright(alpha)], axis=-1)

        def log_jac_det(self, value: Any, *inputs: Any) -> Any:
            head = value[..., :-1]
            return inner.log_jac_det(head) + value[..., -1] - self._log_coef(head)

    return SumSlope()


def joint_vector(pm: Any, spec: ModelSpec, names: tuple[str, ...], suffix: str,
                 transform: Any) -> dict[str, Any]:
    """The LogNormal parameters ``names`` as one variable ``<x>_<y>..._<suffix>``.

    It is sampled through ``transform`` (a split's), with a Deterministic per parameter.
    """
    mu = [spec.priors[n].params["mu"] for n in names]
    sd = [spec.priors[n].params["sigma"] for n in names]
    joint = pm.LogNormal("_".join(names) + "_" + suffix, mu=mu, sigma=sd, shape=len(names),
                         default_transform=None, transform=transform)
    return {n: pm.Deterministic(n, joint[i]) for i, n in enumerate(names)}


def split_vector(pm: Any, spec: ModelSpec) -> dict[str, Any]:
    """Every parameter of the spec's sampler splits, through its joint variable.

    ``sum_split`` as ``<names>_sum`` (:func:`sum_split_transform`), ``slope_split`` as
    ``<names>_slope`` (:func:`slope_split_transform`), both at once, when they share the
    floor and the coefficient, as ``<sum names>_<exponent>_slope``
    (:func:`sum_slope_transform`); the names as
    :meth:`~bayeslaw.spec.settings.SamplerSettings.joint_names` gives them.
    """
    split, slope = spec.sampler.sum_split, spec.sampler.slope_split
    out: dict[str, Any] = {}
    if split and slope and set(split) & set(slope):
        return joint_vector(pm, spec, (*split, slope[2]), "slope",
                            sum_slope_transform(split.index(slope[1])))
    if split:
        out.update(joint_vector(pm, spec, split, "sum", sum_split_transform()))
    if slope:
        out.update(joint_vector(pm, spec, slope, "slope", slope_split_transform()))
    return out


def offset_transform(k: int) -> Any:
    """A population value and its ``k`` levels' values, sampled as the levels and an offset.

    For ``sampler.centered_values = "offset"``: the value is ``(m, v_1, ..., v_k)`` on the
    link scale, the population value ``m ~ Normal(mu_0, s_0)`` (its prior) and the levels
    ``v_j ~ Normal(m, sd)`` (:func:`offset_logp`).  The unconstrained coordinates are the
    levels themselves and the population's offset from their mean in units of its conditional
    sd, ``z = sqrt(k) (mean(v) - m) / sd``.  Given the levels, ``m`` has the conditional sd
    ``sd / sqrt(k)`` (times a prior far wider than it): sampled as ``m`` (``centered_values
    = true``) or through centered deviations, it shrinks with ``sd`` - a funnel that the data
    cannot open, since they pin the levels and not how far their mean lies from ``m``; with
    few levels (three depths), nutpie diverged there (the diagnoses of
    ``benchmarks/results/steps_tune_2026-12-04/``).  In ``(v, z)``, ``z`` is close to a
    standard normal whatever ``sd`` is, and the data pin ``v``.

    ``sd`` is the distribution's last input.  The backward map is ``m = mean(v) - sd z /
    sqrt(k)``; its log-Jacobian is ``log(sd / sqrt(k))`` (triangular: the levels map to
    themselves), so the model's density is the same in the new coordinates.
    """
    import numpy as np
    import pytensor.tensor as pt
    from pymc.logprob.transforms import Transform

    root = float(np.sqrt(k))

    class Offset(Transform):
        name = "offset"  # no underscore: PyMC strips "_<name>__" from value names

        def forward(self, value: Any, *inputs: Any) -> Any:
            sd, levels = inputs[-1], value[..., 1:]
            z = root * (pt.mean(levels, axis=-1) - value[..., 0]) / sd
            return pt.concatenate([levels, pt.shape_padright(z)], axis=-1)

        def backward(self, value: Any, *inputs: Any) -> Any:
            sd, levels = inputs[-1], value[..., :-1]
            centre = pt.mean(levels, axis=-1) - sd * value[..., -1] / root
            return pt.concatenate([pt.shape_padright(centre), levels], axis=-1)

        def log_jac_det(self, value: Any, *inputs: Any) -> Any:
            return pt.log(inputs[-1]) - np.log(root) + pt.zeros_like(value[..., 0])

    return Offset()


def offset_logp(value: Any, centre: Any, scale: Any, sd: Any) -> Any:
    """The density of the joint ``(m, v_1, ..., v_k)`` of :func:`offset_transform`.

    ``m ~ Normal(centre[0], scale)`` and ``v_j ~ Normal(m, sd)``.

    ``centre`` has the value's length (``centre[0]`` is used; the length fixes the
    variable's size); the terms are PyMC's own Normal densities, so the model's density is
    term for term the one of the population value and its centered levels.
    """
    import pymc as pm
    import pytensor.tensor as pt

    m = value[..., 0]
    own = pm.logp(pm.Normal.dist(centre[..., 0], scale), m)
    return own + pt.sum(pm.logp(pm.Normal.dist(pt.shape_padright(m), sd), value[..., 1:]),
                        axis=-1)


def offset_support_point(rv: Any, size: Any, centre: Any, scale: Any, sd: Any) -> Any:
    """Where :func:`offset_logp`'s variable starts without a warm start.

    Every entry at the prior's centre: the population value at its prior's median, the levels
    on it (``init = "prior"``, and the fallback where no mode is found).
    """
    import pytensor.tensor as pt
    from pymc.distributions.shape_utils import rv_size_is_none

    if rv_size_is_none(size):
        return centre
    return pt.broadcast_to(centre, pt.concatenate([size, centre.shape[-1:]]))


def offset_random(centre: Any, scale: Any, sd: Any, rng: Any = None, size: Any = None) -> Any:
    """Draws of :func:`offset_logp`'s variable (prior draws: the population, then its levels)."""
    import numpy as np

    centre, scale, sd = np.asarray(centre), np.asarray(scale), np.asarray(sd)
    shape = (np.broadcast_shapes(centre.shape[:-1], scale.shape, sd.shape) if size is None
             else tuple(np.atleast_1d(size)))
    m = np.asarray(centre[..., 0] + scale * rng.standard_normal(shape))
    levels = m[..., None] + sd[..., None] * rng.standard_normal((*shape, centre.shape[-1] - 1))
    return np.concatenate([m[..., None], levels], axis=-1)
