"""A pilot run's block metric: each group level's coordinates sampled whitened together.

nutpie 0.16 adapts a diagonal mass matrix (or a low-rank update of one).  A population of
curves fitted at once (``curve_bend`` on a table of curves) is a product of small, strongly
correlated blocks, one per curve (its level, shape and noise trade along a ridge), tied by
a few shared parameters; with one step size for all of them the worst-conditioned curve
sets the step, and the chains ran at nutpie's maximum tree depth
(``benchmarks/results/colpret_geometry_2026-12-05/``).  A low-rank update follows a few
directions, not one per curve.

``sampler.pilot = P`` (:class:`bayeslaw.spec.settings.SamplerSettings`) runs nutpie first for
``P`` tuning steps and ``P`` draws per chain (from the start the fit would use) and takes the
draws' covariance in the unconstrained coordinates, kept within each block
(:func:`coordinate_blocks`: the coordinates of every variable indexed by one group's level
``i`` form block ``i`` of that group; every other coordinate is a global, alone in its
block) and between each block and the globals (:func:`block_factor`).  The fit then samples
``z`` with ``x = mean + L z``, ``L L^T`` that covariance, through the compiled model's affine
map (:class:`bayeslaw.inference.compiled.Density`).  The map is affine, so the posterior is
the same; nutpie still adapts its diagonal on ``z``.  The pilot's draws are discarded.
Measured in ``benchmarks/results/colpret_whiten_2026-12-05/README.md``: it follows ridges
that are nearly straight (a curve with normal noise), not a Student-t near Cauchy.
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
    """``(mean, L)``: the metric of ``draws`` (draws x coordinates), ``x = mean + L z``.

    The coordinates alone in their block are the globals ``g``: ``x_g = mean_g + L_g z_g``,
    ``L_g`` the Cholesky factor of their covariance.  Each block ``b`` of more coordinates
    is its regression on the whitened globals plus its own residual:
    ``x_b = mean_b + D_b z_g + L_b z_b``, ``D_b = cov(x_b, z_g)`` (kept for the globals
    with the largest coefficients, as many as the row fits) and ``L_b L_b^T`` the residual
    covariance.  So within a block the draws' covariance is kept, and between a block and
    the globals (a shared noise parameter and every curve's scale) too, but not between two
    blocks except through the globals.  ``L`` is block-triangular with invertible blocks,
    hence invertible.

    ``width``: the most nonzero entries a row may hold (the compiled map's), None: no limit.
    A block or a set of globals that does not fit, or whose covariance is not positive
    definite (too few distinct draws), keeps its variances only; a coordinate that did not
    move gets variance 1.
    """
    mean = draws.mean(axis=0)
    centred = draws - mean
    m, n = draws.shape
    limit = n if width is None else width
    var = centred.var(axis=0, ddof=1)
    var = np.where(var > 0, var, 1.0)
    labels, counts = np.unique(block, return_counts=True)
    glob = np.flatnonzero(np.isin(block, labels[counts == 1]))
    factor = np.zeros((n, n))
    factor[glob, glob] = np.sqrt(var[glob])
    if 1 < len(glob) <= limit:
        chol = _cholesky(np.cov(centred[:, glob], rowvar=False))
        if chol is not None:
            factor[np.ix_(glob, glob)] = chol
    whitened = (np.linalg.solve(factor[np.ix_(glob, glob)], centred[:, glob].T).T
                if len(glob) else np.zeros((m, 0)))
    for label in labels[counts > 1]:
        idx = np.flatnonzero(block == label)
        factor[idx, idx] = np.sqrt(var[idx])
        if len(idx) > limit:
            continue
        coef = centred[:, idx].T @ whitened / (m - 1)  # cov(x_b, z_g)
        keep = np.argsort(-np.linalg.norm(coef, axis=0), kind="stable")[:limit - len(idx)]
        coef = coef[:, keep]
        chol = _cholesky(np.cov(centred[:, idx], rowvar=False) - coef @ coef.T)
        if chol is not None:
            factor[np.ix_(idx, idx)] = chol
            factor[np.ix_(idx, glob[keep])] = coef
    return mean, factor


def _cholesky(cov: np.ndarray) -> np.ndarray | None:
    """The lower Cholesky factor of ``cov``, or None where it is not positive definite."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        return None


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
    shift, factor = density.current()
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
