"""Regenerate tests/data/small_fit.nc: a small stored posterior for plumbing tests.

Run from the repository root: ``python tests/data/make_small_fit.py``.  Short chains on a
3 x 3 sweep of 10 points per curve: not converged (and not meant to be); plots, reports and
save/load are tested on it without sampling.
"""

import warnings
from pathlib import Path

import bayeslaw as bl
from bayeslaw.inference.sampling import fit
from bayeslaw.simulate import looped_sweep

frame, _ = looped_sweep(seed=2, points=10, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8),
                        D_range=(3e7, 2e10))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    result = fit(bl.load(frame), seed=3, draws=100, tune=300, chains=2)
result.save(Path(__file__).with_name("small_fit.nc"))
print(result.diagnostics)
