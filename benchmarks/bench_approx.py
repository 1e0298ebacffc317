"""Approximate posteriors against NUTS, per coefficient, in one run (issue 19).

For each table, in one process: the default NUTS fit (``fit(data, spec, seed=1)``), then
``method="laplace"`` and ``method="pathfinder"`` with the same spec and seed.  Per coefficient
of the NUTS fit's table (``Fit.coefficient_names``: the law's sampled and textbook
coefficients, the noise parameters, the group sds):

* mean difference in NUTS posterior sds: ``(mean_approx - mean_nuts) / sd_nuts``;
* width ratio: the approximation's central 90% interval width / NUTS's.

And the wall times: the NUTS fit (its compile included, since it runs first), the NUTS fit less
its compile, and each approximate fit less its compile (Laplace reuses the compiled model in
memory; pathfinder compiles its own functions, reported apart).  Targets (issue 19, bundled
sweep): |mean difference| <= 0.3 sd and width ratio 0.7-1.4 for every coefficient; wall time
after compiling at most 1/10 of the NUTS fit's.

    python benchmarks/bench_approx.py                    # bundled, chinchilla_epoch, misfitting
    python benchmarks/bench_approx.py --pairs bundled --methods laplace

Rows go to ``benchmarks/results/approx_<date>.csv``, the tables to the ``.md`` beside it
(both rewritten after every table).  Never run beside another MCMC job on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
RESULTS = ROOT / "benchmarks" / "results"
PAIRS = ("looped_total@bundled", "chinchilla@chinchilla_epoch", "chinchilla_curves@misfitting")
MAX_SHIFT, WIDTH_RANGE, WALL_SHARE = 0.3, (0.7, 1.4), 0.1


def timed_fit(data: Any, spec: Any, method: str, seed: int) -> tuple[Any, float]:
    """One fit and its wall seconds; its warnings are recorded, not raised."""
    from bayeslaw.inference.sampling import fit

    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        result = fit(data, spec, seed=seed, method=method)
        return result, time.perf_counter() - t0


def compare(nuts: Any, approx: Any) -> pd.DataFrame:
    """Per coefficient: the mean shift in NUTS sds and the 90% width ratio."""
    rows = []
    for name in nuts.coefficient_names():
        if name not in approx.idata.posterior:
            continue
        a, b = nuts.draws(name).ravel(), approx.draws(name).ravel()
        sd = a.std(ddof=1)
        wa = np.subtract(*np.quantile(a, [0.95, 0.05]))
        wb = np.subtract(*np.quantile(b, [0.95, 0.05]))
        rows.append({"coefficient": name, "nuts_mean": a.mean(), "nuts_sd": sd,
                     "approx_mean": b.mean(), "shift_sd": (b.mean() - a.mean()) / sd,
                     "width_ratio": wb / wa if wa > 0 else np.nan})
    return pd.DataFrame(rows)


def run_pair(name: str, methods: list[str], seed: int) -> tuple[list[dict], pd.DataFrame]:
    """The NUTS fit and each approximation of one pair: timing rows and coefficient rows."""
    import pairs

    import bayeslaw as bl
    from bayeslaw.spec.catalog import resolve_spec

    data = bl.load(pairs.table(name))
    spec = resolve_spec(pairs.PAIRS[name].spec, law=None, columns=data.columns)
    print(f"{name}: NUTS", flush=True)
    nuts, nuts_wall = timed_fit(data, spec, "nuts", seed)
    info = nuts.provenance["sampling"]
    timing = [{"pair": name, "method": "nuts", "points": len(data), "wall_s": nuts_wall,
               "compile_s": info.get("compile_s", np.nan),
               "after_compile_s": nuts_wall - info.get("compile_s", 0.0),
               "converged": bool(nuts.diagnostics.ok), "max_rhat": nuts.diagnostics.max_rhat,
               "pareto_k": np.nan}]
    coefs = []
    for method in methods:
        print(f"{name}: {method}", flush=True)
        try:
            approx, wall = timed_fit(data, spec, method, seed)
        except Exception as exc:  # a method that fails on a table is a row, not a crash
            timing.append({"pair": name, "method": method, "points": len(data),
                           "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        ainfo = approx.provenance["sampling"]
        # Laplace's compile is the in-memory model NUTS compiled (about 0 s); pathfinder's is
        # what pymc-extras reports for its own functions
        compile_s = ainfo.get("compile_s", 0.0)
        after = wall - compile_s
        timing.append({"pair": name, "method": method, "points": len(data), "wall_s": wall,
                       "compile_s": compile_s, "after_compile_s": after,
                       "start_s": ainfo.get("start_s", np.nan),
                       "sample_s": ainfo.get("sample_s", np.nan),
                       "after_share_of_nuts": after / nuts_wall,
                       "after_share_of_nuts_after_compile": after / timing[0]["after_compile_s"],
                       "pareto_k": ainfo.get("pareto_k", np.nan)})
        table = compare(nuts, approx)
        table.insert(0, "method", method)
        table.insert(0, "pair", name)
        coefs.append(table)
    return timing, (pd.concat(coefs, ignore_index=True) if coefs else pd.DataFrame())


def markdown(command: str, timing: pd.DataFrame, coefs: pd.DataFrame) -> str:
    """The tables: timing, per-table verdicts, every coefficient."""
    import subprocess

    from bayeslaw.report.document import markdown_table

    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    lines = [f"# Approximate posteriors against NUTS ({dt.date.today().isoformat()})", "",
             "    " + command, "", f"At {head} (working tree), one process per run.", "",
             "Each table fitted in one process: NUTS (default spec and settings, seed 1) first, "
             "then each approximation with the same spec and seed. shift = (approximate mean - "
             "NUTS mean) / NUTS sd; width = the approximation's 90% interval width / NUTS's. "
             f"Targets (bundled sweep): |shift| <= {MAX_SHIFT}, width {WIDTH_RANGE[0]}-"
             f"{WIDTH_RANGE[1]}, wall after compiling <= {WALL_SHARE} of the NUTS fit's.",
             "", "## Wall time", "", markdown_table(timing.set_index(["pair", "method"])), ""]
    if not coefs.empty:
        verdict = []
        for (pair, method), g in coefs.groupby(["pair", "method"], sort=False):
            bad_shift = g[g["shift_sd"].abs() > MAX_SHIFT]["coefficient"].tolist()
            bad_width = g[(g["width_ratio"] < WIDTH_RANGE[0]) | (g["width_ratio"] >
                                                                 WIDTH_RANGE[1])]
            verdict.append({"pair": pair, "method": method, "coefficients": len(g),
                            "max |shift|": g["shift_sd"].abs().max(),
                            "width min": g["width_ratio"].min(),
                            "width max": g["width_ratio"].max(),
                            "shift misses": ", ".join(bad_shift) or "none",
                            "width misses": ", ".join(bad_width["coefficient"]) or "none"})
        lines += ["## Per table", "",
                  markdown_table(pd.DataFrame(verdict).set_index(["pair", "method"])), "",
                  "## Every coefficient", "",
                  markdown_table(coefs.set_index(["pair", "method", "coefficient"])), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the selected pairs and methods; write the CSV and the Markdown after each."""
    from bayeslaw.files import atomic_write_text

    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", help="comma-separated substrings of the pair names")
    ap.add_argument("--methods", default="laplace,pathfinder")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    wanted = [p for p in PAIRS if not args.pairs or any(s in p for s in args.pairs.split(","))]
    methods = [m for m in args.methods.split(",") if m]
    stem = RESULTS / f"approx_{dt.date.today().isoformat()}"
    command = "python benchmarks/bench_approx.py " + shlex.join(argv)
    timing, coefs = [], []
    for name in wanted:
        t, c = run_pair(name, methods, args.seed)
        timing += t
        coefs.append(c)
        tframe = pd.DataFrame(timing)
        cframe = pd.concat(coefs, ignore_index=True)
        atomic_write_text(stem.with_suffix(".csv"), cframe.to_csv(index=False))
        atomic_write_text(Path(f"{stem}_timing.csv"), tframe.to_csv(index=False))
        atomic_write_text(stem.with_suffix(".md"), markdown(command, tframe, cframe))
    print(stem.with_suffix(".md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
