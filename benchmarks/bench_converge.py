"""Convergence matrix of the current code: every (spec, table) pair, seeds 1 to 5.

Each pair of ``benchmarks/pairs.py`` is fitted with the spec's default settings
(``bl.fit(bl.load(frame), spec, seed=seed)``, no overrides), one fit after
another in this process (pairs sharing a spec and a table structure reuse the compiled
model).  Warnings raised during a fit are recorded, not printed.  One row per fit: pair,
spec, seed, points, runs, tune, draws, chains, max R-hat, min bulk / tail ESS, divergences,
min BFMI, converged (every check of ``fit.diagnostics`` passed), the failed checks and the
diagnosis of a failed fit (``fit.diagnostics.diagnosis``, its lines joined by `` | ``), fit
seconds, compile and sample seconds where the fit's provenance has them, warnings.

    python benchmarks/bench_converge.py                       # every pair, seeds 1-5
    python benchmarks/bench_converge.py --pairs misfitting --seeds 1,2
    python benchmarks/bench_converge.py --resume              # skip (pair, seed) rows done
    python benchmarks/bench_converge.py --pairs iso_depth --seeds 6,7,8 \
        --sampler 'slope_split=[]' --csv benchmarks/results/x.csv  # a setting, on selection seeds

Rows go to ``benchmarks/results/converge_<date>.csv``, rewritten atomically after every fit
(an interrupted run keeps its rows; rows of other pairs and seeds already in the file are
kept, a rerun (pair, seed) replaces its row).  The summary per pair (seeds converged, worst
R-hat, min ESS, divergences, median fit seconds) is printed and written to the ``.md`` beside
it with the command line.  Never run it beside another MCMC job on a 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import shlex
import sys
import time
import traceback
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
COLUMNS = ("pair", "spec", "seed", "points", "runs", "tune", "draws", "chains", "max_rhat",
           "min_ess_bulk", "min_ess_tail", "divergences", "min_bfmi", "converged", "failures",
           "diagnosis", "fit_s", "compile_s", "sample_s", "warnings", "error")


def load_pairs() -> ModuleType:
    """``benchmarks/pairs.py`` (it needs pandas only, so any bayeslaw version can use it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import pairs

    return pairs


def with_sampler(spec: str | dict, sampler: dict[str, Any],
                 sections: dict[str, dict[str, Any]] | None = None) -> str | dict:
    """``spec`` (a shipped name or a dict over one) with the ``[sampler]`` keys ``sampler``
    and, from ``sections``, each section's keys (``{"priors": {"alpha": {...}}}``)."""
    if not sampler and not sections:
        return spec
    from bayeslaw.spec import load_spec

    d = load_spec(spec).to_dict()  # a shipped spec's name is not always its law's
    for section, keys in {**(sections or {}), "sampler": sampler}.items():
        d[section] = {**(d.get(section) or {}), **keys}
    return d


def parse_overrides(sampler_items: list[str], set_items: list[str]
                    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``--sampler KEY=JSON`` and ``--set SECTION.KEY=JSON`` items as :func:`with_sampler`'s
    ``sampler`` and ``sections``; a malformed item exits with its message."""
    sampler: dict[str, Any] = {}
    for item in sampler_items:
        key, _, value = item.partition("=")
        try:
            sampler[key.strip()] = json.loads(value)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"--sampler {item!r}: the value is not JSON ({exc})") from None
    sections: dict[str, dict[str, Any]] = {}
    for item in set_items:
        key, _, value = item.partition("=")
        section, dot, name = key.strip().partition(".")
        try:
            if not dot or not name:
                raise ValueError("the key is not SECTION.KEY")
            sections.setdefault(section, {})[name] = json.loads(value)
        except (ValueError, json.JSONDecodeError) as exc:
            raise SystemExit(f"--set {item!r}: {exc}") from None
    return sampler, sections


def fit_one(pair: Any, seed: int, sampler: dict[str, Any] | None = None,
            sections: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Fit ``pair`` with ``seed`` (and the ``[sampler]`` keys ``sampler`` and the other
    sections' keys ``sections`` over its spec's) and return its row (an ``error`` row if it
    raises)."""
    import bayeslaw as bl
    from bayeslaw.inference.sampling import fit

    row: dict[str, Any] = {"pair": pair.name, "spec": pair.spec, "seed": seed}
    try:
        data = bl.load(pair.load())
        row.update(points=len(data), runs=len(data.runs))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            result = fit(data, with_sampler(pair.fitted_spec, sampler or {}, sections),
                         seed=seed)
            row["fit_s"] = time.perf_counter() - t0
    except Exception as exc:  # one failed fit is a row, not the end of the matrix
        row["error"] = f"{type(exc).__name__}: {exc}"[:500]
        print(traceback.format_exc(), file=sys.stderr)
        return row
    diag, settings = result.diagnostics, result.provenance.get("sampler", {})
    sampling = result.provenance.get("sampling") or {}
    row.update(tune=settings.get("tune"), draws=settings.get("draws"),
               chains=settings.get("chains"), max_rhat=diag.max_rhat,
               min_ess_bulk=diag.min_ess_bulk, min_ess_tail=diag.min_ess_tail,
               divergences=diag.divergences, min_bfmi=diag.min_bfmi, converged=bool(diag.ok),
               failures="; ".join(diag.failures),
               diagnosis="" if diag.diagnosis is None else " | ".join(diag.diagnosis.lines()),
               compile_s=sampling.get("compile_s"),
               sample_s=sampling.get("sample_s"))
    row["warnings"] = " | ".join(dict.fromkeys(
        f"{w.category.__name__}: {str(w.message).splitlines()[0][:300]}" for w in caught
        if not issubclass(w.category, (DeprecationWarning, FutureWarning))))
    return row


def atomic_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (this bayeslaw's writer: the matrix always runs
    the working tree's code)."""
    from bayeslaw.files import atomic_write_text

    atomic_write_text(path, text)


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows already in ``path`` (none when it does not exist)."""
    if not path.is_file():
        return []
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return [{k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))}
            for row in frame.to_dict("records")]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """All rows, in :data:`COLUMNS` order, atomically."""
    frame = pd.DataFrame(rows)
    cols = [c for c in COLUMNS if c in frame.columns]
    frame = frame[cols + [c for c in frame.columns if c not in cols]].convert_dtypes()
    atomic_text(path, frame.to_csv(index=False))


def _converged(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "1.0")


def summary(rows: list[dict[str, Any]], names: list[str]) -> list[str]:
    """Markdown: per pair, seeds converged, worst R-hat, min ESS, divergences, fit seconds."""
    out = ["| pair | spec | points | seeds converged | worst R-hat | min ESS bulk | "
           "min ESS tail | divergences | median fit s | errors |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    frame = pd.DataFrame(rows)
    for name in names:
        part = frame.loc[frame["pair"] == name] if len(frame) else frame
        if part.empty:
            continue
        done = part.loc[part["error"].isna()] if "error" in part else part
        conv = sum(_converged(v) for v in done.get("converged", []))

        def num(col: str, how: str, fmt: str, rows: pd.DataFrame = done) -> str:
            vals = pd.to_numeric(rows[col], errors="coerce").dropna() if col in rows else []
            return format(getattr(vals, how)(), fmt) if len(vals) else "-"

        errors = len(part) - len(done)
        points = num("points", "max", ".0f")
        out.append(f"| {name} | {part['spec'].iloc[0]} | {points} | {conv}/{len(part)} | "
                   f"{num('max_rhat', 'max', '.4f')} | {num('min_ess_bulk', 'min', '.0f')} | "
                   f"{num('min_ess_tail', 'min', '.0f')} | {num('divergences', 'sum', '.0f')} "
                   f"| {num('fit_s', 'median', '.1f')} | {errors or ''} |")
    return out


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", help="comma-separated pair names or substrings of them "
                   "(a whole name selects that pair only; default: all)")
    p.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (default 1-5)")
    p.add_argument("--resume", action="store_true",
                   help="skip the (pair, seed) rows already in the file (errors are retried)")
    p.add_argument("--summarize", action="store_true",
                   help="fit nothing: rewrite the summary (.md) from every row in the file")
    p.add_argument("--sampler", action="append", default=[], metavar="KEY=JSON",
                   help="a [sampler] key over every pair's spec, its value as JSON, e.g. "
                        "'slope_split=[\"E\", \"a\", \"alpha\"]' or 'tune=2000' (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=JSON",
                   help="a key of another section over every pair's spec, e.g. "
                        "'priors.alpha={\"dist\": \"LogNormal\", \"mu\": -1.05, "
                        "\"sigma\": 0.3}' (a change of the model: say so; repeatable)")
    p.add_argument("--csv", type=Path,
                   default=RESULTS / f"converge_{dt.date.today().isoformat()}.csv",
                   help="rows file (default benchmarks/results/converge_<date>.csv)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Fit every selected (pair, seed), write rows after each, then the summary."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    pairs = load_pairs()
    chosen = pairs.select(args.pairs)
    seeds = [int(s) for s in args.seeds.split(",") if s]
    sampler, sections = parse_overrides(args.sampler, args.set)
    rows = read_rows(args.csv)
    done = {(r["pair"], int(r["seed"])) for r in rows if not r.get("error")}
    print(f"rows -> {args.csv}", flush=True)
    for pair in [] if args.summarize else chosen:
        for seed in seeds:
            if args.resume and (pair.name, seed) in done:
                continue
            print(f"{pair.name} seed {seed} ({pair.spec})", flush=True)
            row = fit_one(pair, seed, sampler, sections)
            rows = [r for r in rows if (r["pair"], int(r["seed"])) != (pair.name, seed)]
            rows.append(row)
            write_rows(args.csv, rows)
            print("   " + (f"error: {row['error']}" if row.get("error") else
                           f"R-hat {row['max_rhat']:.4f}, ESS {row['min_ess_bulk']:.0f} / "
                           f"{row['min_ess_tail']:.0f}, div {row['divergences']}, "
                           f"{'converged' if row['converged'] else 'NOT converged'}, "
                           f"{row['fit_s']:.1f} s"), flush=True)
    table = summary([r for r in rows if int(r["seed"]) in seeds], [p.name for p in chosen])
    command = "python benchmarks/bench_converge.py " + shlex.join(argv)
    unavailable = [f"- {spec}: {why}" for spec, why in pairs.UNAVAILABLE.items()]
    text = "\n".join([f"# Convergence matrix ({dt.date.today().isoformat()})", "",
                      "    " + command.rstrip(), "",
                      f"Rows: `{args.csv.name}`; seeds {args.seeds}.", "", *table, "",
                      "Shipped specs without a table:", "", *unavailable])
    atomic_text(args.csv.with_suffix(".md"), text + "\n")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
