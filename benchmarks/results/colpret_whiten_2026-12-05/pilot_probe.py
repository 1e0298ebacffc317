"""ColPret's context (a subset) fitted pooled through the library's ``sampler.pilot``.

Run from the repository root::

    [SPEC_PILOT=P] [SPEC_NU=V] python \
        benchmarks/results/colpret_whiten_2026-12-05/pilot_probe.py SUBSET

``SUBSET`` as in ``whiten.py`` (``worst``, a numpy seed drawing 24 curves, or ``all``); each
curve's context only, thinned to 24 points, no target row read.  ``SPEC_PILOT``: the
shipped ``curve_bend`` with ``sampler.pilot = P`` (:mod:`bayeslaw.inference.metric`).
With ``nu_by_run_hack.patch`` applied and ``BAYESLAW_NU_BY_RUN=1``: a scratch
diagnosis, nu per curve (log nu_r ~ N(log nu, nu_spread), nu_spread ~ HalfNormal(0.5)),
the graph only (the fit's log-likelihood and forecasts still read the one ``nu``).
``SPEC_WALK=1``: a residual random walk in log D added (``walk`` ~ LogNormal(-4.6, 1), about 1%
of the normalised loss per square root of an e-fold, ``walk_start`` ~ LogNormal(-4, 1), as
``../candidate_curve_bend_walk.toml`` without its Hurst exponent).
``SPEC_NU_LOGNORMAL=M,S``: nu ~ LogNormal(log M, S) (a prior change, for a diagnosis).
``SPEC_NU``: a diagnosis only, the Student-t's ``nu`` held near ``V`` (a Gamma prior of sd
0.005 V: the spec takes no fixed nu).  Prints the fit's diagnostics, step sizes, leapfrog
steps and the posterior median of ``nu``.
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

which = sys.argv[1]
args, ctx, keep = common.subset(which)
d = bp.bench_spec("curve_bend").to_dict()
if os.environ.get("SPEC_PILOT"):
    d["sampler"]["pilot"] = int(os.environ["SPEC_PILOT"])
if os.environ.get("SPEC_NU"):
    v = float(os.environ["SPEC_NU"])
    d["likelihood"]["nu"] = {"dist": "Gamma", "alpha": 40000.0, "beta": 40000.0 / v}
if os.environ.get("SPEC_NU_LOGNORMAL"):  # "MEDIAN,SIGMA": nu ~ LogNormal(log MEDIAN, SIGMA)
    median, sd = (float(v) for v in os.environ["SPEC_NU_LOGNORMAL"].split(","))
    d["likelihood"]["nu"] = {"dist": "LogNormal", "mu": float(np.log(median)), "sigma": sd}
if os.environ.get("SPEC_WALK"):  # a residual random walk in log D (a model change)
    d["likelihood"]["walk"] = {"dist": "LogNormal", "mu": -4.6, "sigma": 1.0}
    d["likelihood"]["walk_start"] = {"dist": "LogNormal", "mu": -4.0, "sigma": 1.0}
spec = bp.bl.ModelSpec.from_dict(d)
t0 = time.perf_counter()
fit = bp.fit_context(ctx, spec, args)
print(f"fit seconds {time.perf_counter() - t0:.1f}; curves {len(keep)}; "
      f"pilot {d['sampler'].get('pilot', 0)}; nu {d['likelihood']['nu']}")
sampling = fit.provenance["sampling"]
print({k: v for k, v in sampling.items() if k.startswith("pilot")})
for name in ("walk", "walk_start"):
    if name in fit.idata.posterior:
        print(name, "median", float(fit.idata.posterior[name].median()))
common.print_sampler(fit)
if "nu" in fit.idata.posterior:
    print("nu median", float(fit.idata.posterior["nu"].median()))
if "nu_run" in fit.idata.posterior:  # nu_by_run_hack.patch applied, BAYESLAW_NU_BY_RUN=1
    per_run = fit.idata.posterior["nu_run"].median(("chain", "draw")).values
    print("nu_run medians: quartiles", np.round(np.quantile(per_run, [0, 0.25, 0.5, 0.75, 1]),
                                                 2).tolist(),
          "nu_spread median", float(fit.idata.posterior["nu_spread"].median()))
