"""The model's effects arithmetic, written once against a math namespace ``xp``.

The PyMC graph (``xp`` = ``pytensor.tensor``), the numpy evaluation of posterior draws
(:mod:`bayeslaw.posterior.draws`) and the simulator (:mod:`bayeslaw.simulate`) all call these: the
link-scale effects of a law parameter (:func:`link_value`, :func:`link_of`) and the correlated
effects of a ``[correlation]`` block through the LKJ vine (:func:`vine_shapes`,
:func:`correlation_cholesky`).  The noise model's arithmetic is :mod:`bayeslaw.model.noise`.
"""

from __future__ import annotations

import math
from typing import Any


def link_value(xp: Any, population: Any, link: str, deviations: Any = ()) -> Any:
    """A parameter's value given its population value and group deviations on the link scale.

    ``link(value) = link(population) + sum(deviations)``; ``link`` is ``"log"`` (a positive
    parameter, and every noise scale: ``population * exp(sum)``, defined at 0), ``"logit"``
    (a share in (0, 1): ``1 / (1 + (1 / population - 1) exp(-sum))``) or ``"identity"``.  The
    graph passes one deviation per group term, indexed to runs; the numpy side passes draws
    ``(S, n)``.
    """
    total = None
    for deviation in deviations:
        total = deviation if total is None else total + deviation
    if total is None:
        return population
    if link == "log":
        return population * xp.exp(total)
    if link == "logit":
        return 1.0 / (1.0 + (1.0 / population - 1.0) * xp.exp(-total))
    return population + total


def link_of(xp: Any, value: Any, link: str) -> Any:
    """A parameter's value on its link scale: ``log``, ``logit`` or ``identity``."""
    if link == "log":
        return xp.log(value)
    if link == "logit":
        return xp.log(value) - xp.log1p(-value)
    return value


def vine_shapes(k: int, eta: float) -> list[tuple[int, int, float]]:
    """The partial correlations of a ``k x k`` correlation matrix under ``LKJ(eta)``.

    ``(level, row, b)`` for each: the partial correlation of ``row`` with ``level`` given the
    levels before it (a C-vine), distributed as ``2 Beta(b, b) - 1`` with
    ``b = eta + (k - 2 - level) / 2``, all independent (Lewandowski, Kurowicka and Joe 2009,
    the vine method): the density of the matrix they build is then ``det(R)^(eta - 1)``.
    """
    return [(level, row, eta + (k - 2 - level) / 2.0)
            for level in range(k - 1) for row in range(level + 1, k)]


def correlation_cholesky(xp: Any, partials: dict[tuple[int, int], Any], k: int) -> Any:
    """The lower Cholesky factor of the correlation matrix of C-vine partial correlations.

    Row ``i``: ``L[i, 0] = z[0, i]``, ``L[i, j] = z[j, i] sqrt(1 - sum_{l<j} L[i, l]^2)`` and
    ``L[i, i] = sqrt(1 - sum_{l<i} L[i, l]^2)`` (Stan's canonical partial correlations), each
    ``z`` in (-1, 1), keyed ``(level, row)`` as :func:`vine_shapes` lists them; unit rows.
    """
    rows = []
    zero = 0.0 * partials[(0, 1)] if k > 1 else 0.0
    for i in range(k):
        entries, used = [], 0.0
        for j in range(i):
            value = partials[(j, i)] * xp.sqrt(1.0 - used) if j else partials[(0, i)]
            entries.append(value)
            used = used + value ** 2
        entries.append(xp.sqrt(1.0 - used) if i else 1.0 + zero)
        entries += [zero] * (k - 1 - i)
        rows.append(xp.stack(entries, axis=-1))
    return xp.stack(rows, axis=-2)


def mvn_chol_logp(xp: Any, delta: Any, chol: Any, k: int) -> Any:
    """Log density of each row of ``delta`` (levels x k) under ``MvNormal(0, chol chol^T)``.

    ``chol`` is lower triangular with a positive diagonal; the solve ``chol z = delta`` is
    written out by forward substitution over the ``k`` columns (``k`` is a handful: a
    ``[correlation]`` block's effects), so that the compiled density needs no triangular
    solve of a linear-algebra library: ``-|z|^2 / 2 - sum(log diag chol) - k log(2 pi) / 2``.
    """
    z: list[Any] = []
    for i in range(k):
        part = delta[..., i]
        for j in range(i):
            part = part - chol[..., i, j] * z[j]
        z.append(part / chol[..., i, i])
    square = sum(zi ** 2 for zi in z)
    log_det = sum(xp.log(chol[..., i, i]) for i in range(k))
    return -0.5 * square - log_det - 0.5 * k * math.log(2.0 * math.pi)

