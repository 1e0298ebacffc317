"""nutpie's normalizing-flow adaptation (issue 37, item 2) on a convergence pair, beside its
default adaptation, the same PyMC model, both from nutpie's own initialization (no warm start).

Run from the repository root, in a venv with bayeslaw, jax and flowjax::

    python flow_probe.py PAIR SEED [flow|default] [draws] [tune]

The PyMC model is bayeslaw's (``get_model(spec, data).model``, the pair's spec and table, as
``benchmarks/bench_converge.py`` fits them); ``flow`` compiles it with nutpie's JAX backend and
samples with ``transform_adapt=True`` (``with_transform_adapt()`` at nutpie's defaults);
``default`` compiles it with numba and samples with the spec's own settings (its low-rank
choice, target accept). Prints the wall seconds of compile and sampling, and bayeslaw's
diagnostics of the draws (every posterior variable, as a fit's).
"""
import sys
import time
import warnings

sys.path.insert(0, "benchmarks")
warnings.filterwarnings("ignore")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import nutpie  # noqa: E402
import pairs  # noqa: E402

import bayeslaw as bl  # noqa: E402
from bayeslaw.inference.modelcache import get_model  # noqa: E402
from bayeslaw.posterior.diagnostics import diagnose  # noqa: E402
from bayeslaw.spec import load_spec  # noqa: E402

name, seed, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
draws = int(sys.argv[4]) if len(sys.argv) > 4 else None
tune = int(sys.argv[5]) if len(sys.argv) > 5 else None
pair = pairs.PAIRS[name]
data = bl.load(pair.load())
spec = load_spec(pair.fitted_spec)
s = spec.sampler
model = get_model(spec, data).model
t0 = time.perf_counter()
if mode == "flow":
    compiled = nutpie.compile_pymc_model(model, backend="jax", gradient_backend="jax")
    compiled = compiled.with_transform_adapt()
    extra = {"transform_adapt": True}
else:
    compiled = nutpie.compile_pymc_model(model)
    extra = {"low_rank_modified_mass_matrix": s.low_rank is True}
t1 = time.perf_counter()
idata = nutpie.sample(compiled, draws=draws or s.draws, tune=tune or s.tune, chains=s.chains,
                      seed=seed, progress_bar=False, target_accept=float(s.target_accept),
                      **extra)
t2 = time.perf_counter()
steps = idata.sample_stats["n_steps"].values
print(f"{name} seed {seed} {mode}: compile {t1 - t0:.1f} s, sampling {t2 - t1:.1f} s, "
      f"leapfrog steps a draw median {float(__import__('numpy').median(steps)):.0f}")
print("  ", diagnose(idata))
