"""Reparameterizations of the graph: ``sampler.sum_split``'s sum-and-ratios transform."""

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


def sum_split_vector(pm: Any, spec: ModelSpec, names: tuple[str, ...]) -> dict[str, Any]:
    """The LogNormal parameters ``names`` as one variable ``<x>_<y>..._sum``.

    It is sampled through :func:`sum_split_transform`, with a Deterministic per parameter.
    """
    mu = [spec.priors[n].params["mu"] for n in names]
    sd = [spec.priors[n].params["sigma"] for n in names]
    joint = pm.LogNormal("_".join(names) + "_sum", mu=mu, sigma=sd, shape=len(names),
                         default_transform=None, transform=sum_split_transform())
    return {n: pm.Deterministic(n, joint[i]) for i, n in enumerate(names)}
