"""A pilot run's block metric: each group level's coordinates sampled whitened together.

nutpie 0.16 adapts a diagonal mass matrix (or a low-rank update of one).  A population of
curves fitted at once (``curve_bend`` on a table of curves) is a product of small, strongly
correlated blocks, one per curve (its level, shape and noise trade along a ridge), tied by
a few shared parameters; with one step size for all of them the worst-conditioned curve
sets the step, and the chains ran at nutpie's maximum tree depth
(``benchmarks/results/colpret_geometry_2026-12-05/``).  A low-rank update follows a few
directions, not one per curve.

``sampler.pilot = P`` (:class:`bayeslaw.spec.settings.SamplerSettings`) runs nutpie first for
``P`` tuning steps and ``P`` draws per chain (from the start the fit would use), takes the
draws' covariance in the unconstrained coordinates, keeps only the covariances within a
block (:func:`coordinate_blocks`: the coordinates of every variable indexed by one group's
level ``i`` form block ``i`` of that group; every other coordinate is a block of its own),
and has the fit sample ``z`` with ``x = mean + L z``, ``L L^T`` that block covariance,
through the compiled model's affine map (:class:`bayeslaw.inference.compiled.Density`): the
dense Stan-style metric restricted to blocks.  The map is affine, so the posterior is the
same; nutpie still adapts its diagonal on ``z``.  The pilot's draws are discarded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Seed offset of the pilot run (its chains differ from the fit's).
PILOT_SEED_OFFSET = 7919


@dataclass(frozen=True)
class Pilot:
    """What the pilot run did: seconds, mean leapfrog steps and step size per chain."""

    seconds: float
    steps: tuple[float, ...]
    step_size: tuple[float, ...]
    largest_block: int


def coordinate_blocks(compiled: Any) -> np.ndarray:
    """The block of each unconstrained coordinate of ``compiled`` (nutpie's model).

    Coordinates of a free variable with exactly one dimension, named by the model's dims
    (``compiled.dims``, e.g. ``run``), go to the block of that dimension's level; all others
    get a block of their own.  Returns one integer label per coordinate.
    """
    names, slices, _ = compiled.shape_info
    n = int(compiled.n_dim)
    labels: dict[tuple[Any, ...], int] = {}
    block = np.empty(n, dtype=int)
    for name, where in zip(names, slices, strict=True):
        if where.start >= n:  # the expanded (derived) variables follow the free ones
            continue
        dims = tuple(compiled.dims.get(name, ()) or ())
        for offset, i in enumerate(range(where.start, where.stop)):
            key = (dims[0], offset) if len(dims) == 1 else (name, offset)
            block[i] = labels.setdefault(key, len(labels))
    return block


def block_factor(draws: np.ndarray, block: np.ndarray, width: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, L)`` of ``draws`` (draws x coordinates) with covariance kept within blocks.

    A block of more than ``width`` coordinates (the compiled map's row limit, None: no
    limit) keeps only its variances.  A block whose covariance is not positive definite (too
    few distinct draws) keeps its variances too; a coordinate that did not move gets
    variance 1.
    """
    mean = draws.mean(axis=0)
    n = draws.shape[1]
    factor = np.zeros((n, n))
    var = draws.var(axis=0, ddof=1)
    var = np.where(var > 0, var, 1.0)
    for label in np.unique(block):
        idx = np.flatnonzero(block == label)
        part = np.diag(np.sqrt(var[idx]))
        if len(idx) > 1 and (width is None or len(idx) <= width):
            cov = np.cov(draws[:, idx], rowvar=False)
            try:
                part = np.linalg.cholesky(cov)
            except np.linalg.LinAlgError:
                pass
        factor[np.ix_(idx, idx)] = part
    return mean, factor


def current_map(density: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(shift, L)`` of ``density``'s affine map as written now (identity: zeros, I)."""
    from .compiled import SPARSE_WIDTH

    n, buf = density.n, density.buffer
    if buf[0] == 0.0:
        return np.zeros(n), np.eye(n)
    shift = buf[1:n + 1].copy()
    if density.dense:
        return shift, buf[n + 1:].reshape(n, n).copy()
    values = buf[n + 1:n + 1 + n * SPARSE_WIDTH].reshape(n, SPARSE_WIDTH)
    columns = buf[n + 1 + n * SPARSE_WIDTH:].reshape(n, SPARSE_WIDTH).astype(int)
    factor = np.zeros((n, n))
    for i in range(n):
        for k in range(SPARSE_WIDTH):
            factor[i, columns[i, k]] += values[i, k]
    return shift, factor


def pilot_metric(density: Any, compiled: Any, seed: int, length: int, chains: int,
                 target_accept: float, cores: int | None) -> tuple[Any, Pilot]:
    """Run the pilot, write its block metric into ``density``; the model to sample.

    ``compiled`` is the model as the fit would sample it (its affine map already written:
    the identity, or the warm start's).  Returns the compiled model with chains started at
    ``z ~ N(0, I)`` (the pilot's mean, spread as its draws), and what the pilot did.
    """
    import time

    import nutpie

    from .compiled import SPARSE_WIDTH
    from .warmstart import standard_start

    t0 = time.perf_counter()
    shift, factor = current_map(density)
    trace = nutpie.sample(compiled, tune=length, draws=length, chains=chains, cores=cores,
                          seed=int(seed) + PILOT_SEED_OFFSET, progress_bar=False,
                          target_accept=float(target_accept), store_unconstrained=True,
                          save_warmup=False)
    stats = trace.sample_stats
    z = stats["unconstrained_draw"].values.reshape(-1, density.n)
    block = coordinate_blocks(compiled)
    mean, new = block_factor(shift + z @ factor.T, block,
                             None if density.dense else SPARSE_WIDTH)
    density.standardize(mean, new)
    sizes = np.bincount(block)
    pilot = Pilot(seconds=time.perf_counter() - t0,
                  steps=tuple(float(v) for v in stats["n_steps"].values.mean(axis=1)),
                  step_size=tuple(float(v) for v in stats["step_size"].values.mean(axis=1)),
                  largest_block=int(sizes.max()))
    return standard_start(compiled), pilot
