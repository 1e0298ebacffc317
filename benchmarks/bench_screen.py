"""Quick screen of sampler settings on one table: a few seeds, one fit after another.

A screen is for finding a cause, not for reporting convergence (that is
``bench_converge.py``, 5 seeds, defaults only).  The table is a pair of ``pairs.py`` or
``small`` (the tests' 3 x 3 sweep, ``tests/conftest.py`` SMALL, with ``looped_total``).
Overrides are JSON: ``sampler`` (keys of the spec's ``[sampler]``), ``centered`` (every
effect), ``per`` (``{"b|N": true, ...}``: one effect by its param and group) and
``sigma_centered``.

    python benchmarks/bench_screen.py chinchilla_curves@misfitting '{"centered": "auto"}' 1,2,3
    python benchmarks/bench_screen.py small '{"sampler": {"target_accept": 0.99}}' 5,101

One line per fit: max R-hat and its variable, bulk / tail ESS, divergences, sampling seconds,
leapfrog steps, mean step size.  A fit that does not converge is the point of a screen, so
its ConvergenceWarning is recorded in the line (the diagnostics), not raised.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def table_and_spec(name: str):
    """The data and default spec of pair ``name`` (or of the tests' small sweep)."""
    import bayeslaw as bl
    from bayeslaw.spec.catalog import load_spec, resolve_spec

    if name == "small":
        from bayeslaw.simulate import looped_sweep
        from tests.conftest import SMALL

        return bl.load(looped_sweep(seed=11, **SMALL)[0]), load_spec(law="looped_total")
    import pairs

    data = bl.load(pairs.table(name))
    return data, resolve_spec(pairs.PAIRS[name].spec, law=None, columns=data.columns)


def with_overrides(spec, cfg: dict):
    """``spec`` with the screen's overrides applied."""
    per = dict(cfg.get("per", {}))
    effects = tuple(dataclasses.replace(
        e, centered=per.get(f"{e.param}|{e.group}", cfg.get("centered", e.centered)))
        for e in spec.effects)
    spec = dataclasses.replace(spec, effects=effects,
                               sampler=spec.sampler.replace(**cfg.get("sampler", {})))
    if "sigma_centered" in cfg:
        spec = dataclasses.replace(spec, likelihood=dataclasses.replace(
            spec.likelihood, sigma_centered=cfg["sigma_centered"]))
    return spec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", help="a pair of benchmarks/pairs.py, or 'small'")
    ap.add_argument("overrides", nargs="?", default="{}", help="JSON (see above)")
    ap.add_argument("seeds", nargs="?", default="1,2,3")
    args = ap.parse_args(argv)
    from bayeslaw.errors import ConvergenceWarning
    from bayeslaw.inference.sampling import fit
    from bayeslaw.posterior.diagnostics import Thresholds

    data, spec = table_and_spec(args.table)
    spec = with_overrides(spec, json.loads(args.overrides))
    for seed in (int(s) for s in args.seeds.split(",")):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # reported in the line
            r = fit(data, spec, seed=seed, thresholds=Thresholds(min_ess=400))
        d, p = r.diagnostics, r.provenance["sampling"]
        print(f"{args.table} {args.overrides} seed {seed}: R-hat {d.max_rhat:.4f} "
              f"({d.worst_rhat_var}), ESS {d.min_ess_bulk:.0f} / {d.min_ess_tail:.0f}, "
              f"div {d.divergences}, sample {p['sample_s']:.1f} s, steps "
              f"{p['tune_steps']} + {p['draw_steps']}, step size "
              f"{float(r.idata.sample_stats['step_size'].mean()):.3g}, "
              f"{time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
