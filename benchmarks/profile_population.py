"""One pooled fit of a peer-benchmark selection table, with nutpie's step counts.

Fits the context of one of NSL-PFN's data sets as ``bench_peers.py --selection`` splits it
(each curve's first half), with short chains, and prints R-hat, ESS, divergences, compile and
sampling seconds, leapfrog steps per draw and microseconds per gradient (2 chains on 2 cores):
what tells a slow gradient from a hard geometry.  Used for issue 35's choices
(``benchmarks/results/peers_selection_2026-12-02.md``); the figures there came from this
script as ``/tmp/prof.py`` before it was committed here, unchanged but for its arguments::

    python benchmarks/profile_population.py IC --spec default --draws 100 --tune 200 \
        --max-context 24 --overrides '{"correlation": null}'

``--spec default`` is curve_power's shipped spec; a path or shipped name otherwise.  Each
``--overrides`` key is ``section`` (the whole section, ``null`` drops it) or
``section.key`` (``null`` drops the key).  The reference D is 1 (each curve's last context
point), as in ``bench_peers.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_peers as bp  # noqa: E402

import bayeslaw as bl  # noqa: E402


def spec_of(name: str, overrides: dict) -> bl.ModelSpec:
    """The spec ``name`` with the reference at D = 1 and ``overrides`` applied."""
    spec = (bl.load_spec(None, law="curve_power") if name == "default"
            else bl.load_spec(name)).to_dict()
    spec["reference"] = {"D": 1.0}
    for k, v in overrides.items():
        section, _, key = k.partition(".")
        if not key:
            if v is None:
                spec.pop(section, None)
            else:
                spec[section] = v
        elif v is None:
            spec[section].pop(key, None)
        else:
            spec[section][key] = v
    return bl.ModelSpec.from_dict(spec)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset")
    p.add_argument("--spec", default="default")
    p.add_argument("--draws", type=int, default=100)
    p.add_argument("--tune", type=int, default=200)
    p.add_argument("--max-context", type=int, default=None)
    p.add_argument("--overrides", default="{}")
    p.add_argument("--data", type=Path, default=bp.DATA)
    args = p.parse_args(argv)
    split = argparse.Namespace(selection=True, max_context=args.max_context)
    frame = bp.prepared(args.data, args.dataset, split)
    context = bp.one_row_per_point(frame[frame["role"] == "context"])
    spec = spec_of(args.spec, json.loads(args.overrides))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = bl.fit(bl.load(context), spec, seed=1, draws=args.draws, tune=args.tune, chains=2,
                   progress=False)
    d, s = r.diagnostics, r.provenance["sampling"]
    steps = s["tune_steps"] + s["draw_steps"]
    print(f"{args.dataset} {args.spec} {args.overrides}: rows {len(context)}, R-hat "
          f"{d.max_rhat:.3f} ({d.worst_rhat_var}), ESS {d.min_ess_bulk:.0f}, div "
          f"{d.divergences}, compile {s['compile_s']:.1f} s, sample {s['sample_s']:.1f} s, "
          f"steps {s['tune_steps']} + {s['draw_steps']} "
          f"({s['draw_steps'] / (2 * args.draws):.0f} per draw), "
          f"{1e6 * s['sample_s'] / steps * 2:.0f} us per gradient (2 chains on 2 cores), "
          f"step size {float(r.idata.sample_stats['step_size'].mean()):.3g}, "
          f"total {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
