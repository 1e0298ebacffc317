"""Does a per-curve dense metric fix ColPret's pooled geometry? (issue 35 / 37, a probe)

Run from the repository root::

    python benchmarks/results/colpret_whiten_2026-12-05/whiten.py SUBSET [PILOT_TUNE PILOT_DRAWS]

``SUBSET`` as in ``../colpret_geometry_2026-12-05/subset.py`` (``worst``, or a numpy seed
drawing 24 curves, or ``all``); each curve's context only, thinned to 24 points, no target
row read.  Without pilot sizes: the shipped fit (nutpie's diagonal metric).  With them: a
pilot run of nutpie (diagonal metric, ``PILOT_TUNE`` + ``PILOT_DRAWS`` per chain) gives the
posterior's covariance in the unconstrained coordinates; every covariance between two
different curves, and between a curve and the global parameters, is set to zero (a block
per curve: its level, shape and noise coordinates; one block for the rest); the fit then
samples ``z`` with ``x = mean + L z``, ``L L^T`` that block covariance (the library's affine
map of the warm start, :class:`bayeslaw.inference.compiled.Density`).  The same model and
density: only the coordinates nutpie moves in change (a constant Jacobian).
"""

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/
sys.path.insert(0, str(Path(__file__).resolve().parent))  # common.py
import bench_peers as bp  # noqa: E402
import common  # noqa: E402
import nutpie  # noqa: E402

from bayeslaw.inference import sampling  # noqa: E402
from bayeslaw.inference.warmstart import standard_start  # noqa: E402

which = sys.argv[1]
pilot = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else None
args, ctx, keep = common.subset(which)
spec = bp.bench_spec("curve_bend")
if os.environ.get("SPEC_FAMILY"):  # a diagnosis only: the noise family swapped
    d = spec.to_dict()
    d["likelihood"]["family"] = os.environ["SPEC_FAMILY"]
    d["likelihood"].pop("nu", None)
    spec = bp.bl.ModelSpec.from_dict(d)
R = len(keep)
INFO = {}
ROUNDS = int(os.environ.get('WHITEN_ROUNDS', '1'))


def blocks(compiled):
    """Block id of each unconstrained coordinate: its curve (0..R-1), or R (global)."""
    names, slices, shapes = compiled.shape_info
    block = np.full(int(compiled.n_dim), R)
    for _name, sl, shape in zip(names, slices, shapes, strict=True):
        if sl.stop <= len(block) and tuple(shape) == (R,):  # free coordinates come first
            block[sl] = np.arange(R)
    return block


def whitened_start(entry, compiled, seed, settings):
    density = entry.density
    density.identity()
    n = density.n
    if not density.dense:
        raise SystemExit(f"{n} coordinates: the compiled map is diagonal above 150")
    block = blocks(compiled)
    mask = block[:, None] == block[None, :]
    shift, factor = np.zeros(n), np.eye(n)
    for round_ in range(ROUNDS):
        t0 = time.perf_counter()
        trace = nutpie.sample(compiled, tune=pilot[0], draws=pilot[1], chains=settings.chains,
                              seed=int(seed) + 7919 + round_, progress_bar=False,
                              target_accept=float(settings.target_accept),
                              store_unconstrained=True)
        z = trace.sample_stats["unconstrained_draw"].values.reshape(-1, n)
        x = shift + z @ factor.T  # the pilot's draws in the model's coordinates
        st = trace.sample_stats
        INFO[f"pilot{round_}_s"] = round(time.perf_counter() - t0, 1)
        INFO[f"pilot{round_}_steps"] = np.round(st["n_steps"].values.mean(axis=1), 1).tolist()
        INFO[f"pilot{round_}_step_size"] = np.round(
            st["step_size"].values.mean(axis=1), 4).tolist()
        cov = np.cov(x.T) * mask
        cov[np.diag_indices(n)] += 1e-10
        shift, factor = x.mean(axis=0), np.linalg.cholesky(cov)
        density.standardize(shift, factor)
    return standard_start(compiled), None


if pilot is not None:
    sampling._nutpie_start = whitened_start
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"fit seconds {time.perf_counter() - t0:.1f}; curves {R}; pilot {pilot}; {INFO}")
common.print_sampler(fit)
