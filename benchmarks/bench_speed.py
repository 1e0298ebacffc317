"""Fit speed of the old code (5d06e18) and the current code, side by side in one run.

For every (spec, table) pair of ``benchmarks/pairs.py`` the same DataFrame is fitted by both
versions with each version's default settings (``fit(bayeslaw.load(frame), spec,
seed=seed)``, no overrides), each fit in a fresh Python process (compile time is a
cold process's; PyTensor's and numba's on-disk caches are shared unless ``--cold-cache``).
"old" is a git worktree of 5d06e18 at ``/tmp/bayeslaw_5d06e18`` (created when absent) on
``PYTHONPATH``; "new" is this working tree.

Measured in the child, by wrapping ``nutpie.compile_pymc_model`` (the old code's compile),
``bayeslaw.inference.compiled.compile_model`` (the current code's) and ``nutpie.sample``:

* compile s (the compile of the model for nutpie), sample s (nutpie's sampling, warm-up
  included), total s (the ``fit()`` call: compile, warm start where the version has one,
  sampling, diagnostics, pointwise log-likelihood); other s = total - compile - sample;
* leapfrog steps of warm-up and of the draws (nutpie's ``n_steps``, warm-up saved for that and
  dropped again unless the version asked for it);
* us/grad: one log density + gradient of the object handed to ``nutpie.sample`` (the current
  code's standardized wrapper included), called through ``ctypes``: 2,000 calls after 50
  warm-up calls, the fastest of 5 repeats; us/grad sampling = sample s x min(chains, cores) /
  all steps (what sampling paid per gradient, sampler overhead included);
* min bulk ESS per sample s and per total s; max R-hat, divergences, converged.

Sections (default: every pair with seed 1, then ``--cli``)::

    python benchmarks/bench_speed.py                          # every pair, seed 1, and --cli
    python benchmarks/bench_speed.py --pairs misfitting,parscale --seeds 1,2 --skip-old
    python benchmarks/bench_speed.py --scaling                # misfitting sizes, new code
    python benchmarks/bench_speed.py --scaling --scaling-old  # ... and the old code
    python benchmarks/bench_speed.py --cli                    # only the README's command
    python benchmarks/bench_speed.py --cli --skip-old --methods nuts,laplace --repeats 3
    python benchmarks/bench_speed.py --compile --pairs bundled  # compile: 1st vs 2nd process

``--scaling``: the whole misfitting curves (``misfitting_all``: 4,816 points, 240 runs)
thinned within runs (log-spaced, last point kept; the largest cap per run whose total stays
under the target: 461, 995, 1,917 points) and all, every run kept, fitted with
``chinchilla_curves``; the least-squares slope of log sample s (and log us/grad)
on log points.  ``--scaling-scope 1e9`` uses the benchmark scope (checkpoints past 10% of
their run and 1e9 tokens: 408, 929, 1,998 and 3,567 points, 151 runs) instead.

``--compile``: for each selected pair and version, two fresh processes that only build the
model and compile it for nutpie, sharing one cache folder that was empty before the first
(``PYTENSOR_FLAGS=base_compiledir=...``: PyTensor's C and numba caches both live there, and
``NUMBA_CACHE_DIR``): the first process's compile is cold, the second's is what every later
``bayeslaw fit``, notebook kernel or test process of the same model pays.

``--cli``: wall time of ``python -m bayeslaw.cli fit <bundled csv> --out <tmp>`` for both
versions, with the fit's own stage seconds (its ``bayeslaw fit: compile ...`` line);
``--methods nuts,laplace --repeats 3`` times each method in turn in every repeat and prints
each method's median wall over the NUTS command's (issue 34's first look: at most 0.25).

``--targets`` (issue 34's table in one run; use with ``--old 23aba32``): for each version,
the README's command (``bayeslaw fit`` on the bundled sweep, the install not included) with an
empty compile cache, then again with that cache warm, then ``--method nuts,laplace,pathfinder``
once each untimed (their functions compiled) and ``--repeats`` times each timed, interleaved;
every CLI run in a wrapper that times ``write_fit_outputs`` (figures and files);
then each version's own ``benchmarks/bench_schedule_gradient.py`` (``multi_power``'s density +
gradient against ``chinchilla``'s on every checkpoint of misfitting; ``../shared/data`` beside
the worktree needed).  The last table judges each row against the issue's target; the suite's
600 s is read from ``--suite-file`` (a fresh clone's ``.ci/run``, measured apart), if given.

Rows go to ``benchmarks/results/speed_<date>[_<tag>].csv`` (rewritten atomically after every
child), the tables to the ``.md`` beside it with the command line at the top.  A child that
fails (a spec or table the old code does not support) becomes a row with an ``error``.
Fits run one after another: never run this beside another MCMC job on a 2-core machine.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime as dt
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
OLD_COMMIT = "5d06e18"
OLD_ROOT = Path("/tmp/bayeslaw_5d06e18")
MARK = "BENCH_JSON "
SCALING_PAIR = "chinchilla_curves@misfitting"
SCALING_POINTS = (500, 1000, 2000, 0)  # 0: every point
SCALING_TABLES = {"all": "misfitting_all", "1e9": "misfitting_1e9"}
LOGP_CALLS, LOGP_WARMUP, LOGP_REPEATS = 2000, 50, 5


def load_pairs() -> ModuleType:
    """``benchmarks/pairs.py`` (it needs pandas only, so any bayeslaw version can use it)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import pairs

    return pairs


def child_frame(pairs: ModuleType, pair: str, table: str | None, points: int
                ) -> tuple[pd.DataFrame, int]:
    """The frame a child fits: the pair's table (or ``table``), thinned to ``points``."""
    frame = pairs.table(table or pair)
    if points > 0:
        return pairs.thin_to_points(frame, points)
    return frame, 0


# -- child ----------------------------------------------------------------------------------
def install_probe(nutpie: ModuleType) -> dict[str, Any]:
    """Wrap nutpie's compile and sample; the returned dict fills in as the fit runs."""
    probe: dict[str, Any] = {"compile_s": 0.0, "compiles": 0, "sample_s": 0.0, "samples": 0,
                             "warmup_steps": 0, "draw_steps": 0, "compiled": None}
    compile_orig, sample_orig = nutpie.compile_pymc_model, nutpie.sample

    def compile_pymc_model(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = compile_orig(*args, **kwargs)
        probe["compile_s"] += time.perf_counter() - t0
        probe["compiles"] += 1
        return out

    def sample(compiled: Any, *args: Any, **kwargs: Any) -> Any:
        asked = kwargs.get("save_warmup", True)  # nutpie's default
        kwargs["save_warmup"] = True
        probe["compiled"] = compiled  # after with_data (and any wrapper): what is sampled
        t0 = time.perf_counter()
        idata = sample_orig(compiled, *args, **kwargs)
        probe["sample_s"] += time.perf_counter() - t0
        probe["samples"] += 1
        probe["warmup_steps"] += int(idata.warmup_sample_stats["n_steps"].values.sum())
        probe["draw_steps"] += int(idata.sample_stats["n_steps"].values.sum())
        if not asked:
            for group in [g for g in idata.groups() if g.startswith("warmup")]:
                del idata[group]
        return idata

    nutpie.compile_pymc_model = compile_pymc_model
    nutpie.sample = sample
    try:  # the current code compiles through its own module, not nutpie's compile
        import bayeslaw.inference.compiled as own
    except ImportError:
        try:  # the flat layout before the subpackages
            import bayeslaw.compiled as own  # type: ignore[no-redef]
        except ImportError:
            return probe
    own_orig = own.compile_model

    def compile_model(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = own_orig(*args, **kwargs)
        probe["compile_s"] += time.perf_counter() - t0
        probe["compiles"] += 1
        probe["from_disk"] = out.from_disk
        return out

    own.compile_model = compile_model
    return probe


def time_logp(compiled: Any) -> dict[str, Any]:
    """Microseconds per log density + gradient of ``compiled`` at its initial point."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    fn = proto(compiled.compiled_logp_func.address)
    n = int(compiled.n_dim)
    x = np.ascontiguousarray(compiled.initial_point_func(0), dtype=float)
    grad, logp, user_data = np.zeros(n), np.zeros(1), compiled.user_data
    args = (n, x.ctypes.data, grad.ctypes.data, logp.ctypes.data, user_data.ctypes.data)
    code = int(fn(*args))
    for _ in range(LOGP_WARMUP):
        fn(*args)
    best = math.inf
    for _ in range(LOGP_REPEATS):
        t0 = time.perf_counter()
        for _ in range(LOGP_CALLS):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / LOGP_CALLS)
    return {"us_per_grad": best * 1e6, "logp_code": code, "logp_at_start": float(logp[0]),
            "n_dim": n}


def fit_row(fit_result: Any, probe: dict[str, Any], total_s: float) -> dict[str, Any]:
    """The measured columns of one fit."""
    diag, settings = fit_result.diagnostics, fit_result.provenance.get("sampler", {})
    chains = int(settings.get("chains", 0))
    steps = probe["warmup_steps"] + probe["draw_steps"]
    parallel = max(1, min(chains, os.cpu_count() or 1))
    row = {"draws": settings.get("draws"), "tune": settings.get("tune"), "chains": chains,
           "cores": os.cpu_count(), "compile_s": probe["compile_s"],
           "sample_s": probe["sample_s"], "total_s": total_s,
           "other_s": total_s - probe["compile_s"] - probe["sample_s"],
           "compiles": probe["compiles"], "warmup_steps": probe["warmup_steps"],
           "draw_steps": probe["draw_steps"],
           "us_per_grad_sampling": (probe["sample_s"] * parallel / steps * 1e6 if steps
                                    else math.nan),
           "max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
           "min_ess_tail": diag.min_ess_tail, "divergences": diag.divergences,
           "min_bfmi": diag.min_bfmi, "converged": bool(diag.ok),
           "failures": "; ".join(diag.failures)}
    sample_s = probe["sample_s"]
    row["ess_per_s_sample"] = diag.min_ess_bulk / sample_s if sample_s else math.nan
    row["ess_per_s_total"] = diag.min_ess_bulk / total_s
    for key, value in (fit_result.provenance.get("sampling") or {}).items():
        if isinstance(value, (int, float, bool, str)):
            row[f"prov_{key}"] = value
    return row


def version_api() -> tuple[Any, Any, Any]:
    """``fit``, ``get_model`` and ``resolve_spec`` of the bayeslaw on ``sys.path``.

    This tree's layout (``bl.fit``, :mod:`bayeslaw.inference.modelcache`,
    :mod:`bayeslaw.spec.catalog`), the flat one before the subpackages (23aba32:
    ``bayeslaw.modelcache``, ``bayeslaw.catalog``) or the old one of 5d06e18 (the module
    ``bayeslaw.fit``, ``bayeslaw.priors``).
    """
    import importlib

    import bayeslaw

    if callable(getattr(bayeslaw, "fit", None)):
        try:
            cache = importlib.import_module("bayeslaw.inference.modelcache")
            catalog = importlib.import_module("bayeslaw.spec.catalog")
        except ImportError:  # the flat layout
            cache = importlib.import_module("bayeslaw.modelcache")
            catalog = importlib.import_module("bayeslaw.catalog")
        return bayeslaw.fit, cache.get_model, catalog.resolve_spec
    fitting = importlib.import_module("bayeslaw.fit")
    resolve_spec = importlib.import_module("bayeslaw.priors").resolve_spec

    return fitting.fit, fitting.get_model, resolve_spec


def child_load(args: argparse.Namespace, row: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Import the version (timed into ``row``), load the pair's frame; its api, pairs, data."""
    t0 = time.perf_counter()
    import nutpie  # noqa: F401  (timed with the version's own imports)

    import bayeslaw

    api = version_api()
    row.update(import_s=time.perf_counter() - t0, bayeslaw_file=bayeslaw.__file__)
    pairs = load_pairs()
    frame, cap = child_frame(pairs, args.pair, args.table, args.points)
    data = bayeslaw.load(frame)
    row.update(points=len(data), runs=len(data.runs), thin_cap=cap)
    return api, pairs, data


def child_measure(args: argparse.Namespace, row: dict[str, Any]) -> None:
    """Load the frame, fit with the version's defaults, time one gradient (into ``row``)."""
    import nutpie

    (fit, _, _), pairs, data = child_load(args, row)
    probe = install_probe(nutpie)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        result = fit(data, pairs.PAIRS[args.pair].spec, seed=args.seed)
        total = time.perf_counter() - t0
    row.update(fit_row(result, probe, total))
    row["warnings"] = " | ".join(dict.fromkeys(
        str(w.message).splitlines()[0][:200] for w in caught
        if not issubclass(w.category, (DeprecationWarning, FutureWarning))))
    if probe["compiled"] is not None:
        row.update(time_logp(probe["compiled"]))


def own_compiler() -> Any:
    """bayeslaw's own compile of this version (this layout's or the flat one's), else None."""
    import importlib

    for name in ("bayeslaw.inference.compiled", "bayeslaw.compiled"):
        try:
            return importlib.import_module(name).compile_model
        except ImportError:
            continue
    return None


def child_compile(args: argparse.Namespace, row: dict[str, Any]) -> None:
    """Build the pair's model and compile it for nutpie, nothing more (into ``row``).

    The old code compiles with ``nutpie.compile_pymc_model``, the current one with
    ``bayeslaw.inference.compiled.compile_model`` (its warm-start buffer included), as each one's
    ``fit`` does; model s is building the PyMC model (both versions' ``get_model``).
    """
    import nutpie

    (_, get_model, resolve_spec), pairs, data = child_load(args, row)
    spec = resolve_spec(pairs.PAIRS[args.pair].spec, law=None, columns=data.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = get_model(spec, data).model
        t1 = time.perf_counter()
        own = own_compiler()
        if own is None:
            nutpie.compile_pymc_model(model)
            row["from_disk"] = None
        else:
            row["from_disk"] = own(model).from_disk
        t2 = time.perf_counter()
    row.update(points=len(data), runs=len(data.runs), model_s=t1 - t0, compile_s=t2 - t1)


def child_main(args: argparse.Namespace) -> int:
    """Print one JSON line (prefixed ``BENCH_JSON``) with the results or the error."""
    row: dict[str, Any] = {}
    try:
        (child_compile if args.compile_only else child_measure)(args, row)
    except BaseException as exc:  # a child reports every failure as a row
        row.update(error=f"{type(exc).__name__}: {exc}"[:500],
                   traceback=traceback.format_exc()[-2000:])
    print(MARK + json.dumps(row, default=str), flush=True)
    return 0


# -- parent: running children ---------------------------------------------------------------
def ensure_worktree() -> Path:
    """The worktree of the old commit at :data:`OLD_ROOT`, created when absent."""
    if (OLD_ROOT / "bayeslaw" / "__init__.py").is_file():
        head = subprocess.run(["git", "-C", str(OLD_ROOT), "rev-parse", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
        if not head.startswith(OLD_COMMIT):
            raise SystemExit(f"{OLD_ROOT} is at {head or 'no commit'}, not {OLD_COMMIT}: "
                             f"remove it (git worktree remove {OLD_ROOT}) and rerun")
        return OLD_ROOT
    subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(OLD_ROOT),
                    OLD_COMMIT], check=True)
    return OLD_ROOT


def version_env(version: str, cold: bool, cache: Path | None = None) -> dict[str, str]:
    """The environment of a child: PYTHONPATH at the version, optionally empty caches
    (``cold``: a new empty folder; ``cache``: that folder, shared by the children given it).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = str(OLD_ROOT if version == "old" else ROOT)
    if cold or cache is not None:
        cache = cache or Path(tempfile.mkdtemp(prefix=f"bench_speed_cache_{version}_"))
        flags = env.get("PYTENSOR_FLAGS", "")
        env["PYTENSOR_FLAGS"] = ",".join(filter(None, [flags,
                                                       f"base_compiledir={cache / 'pt'}"]))
        env["NUMBA_CACHE_DIR"] = str(cache / "numba")
    return env


def run_child(version: str, pair: str, seed: int, args: argparse.Namespace, *,
              section: str = "pairs", table: str | None = None, points: int = 0,
              cache: Path | None = None, process: int = 0) -> dict[str, Any]:
    """One measurement in a fresh process; failures become a row with ``error``."""
    pairs = load_pairs()
    base = {"section": section, "pair": pair, "spec": pairs.PAIRS[pair].spec,
            "table": table or pair.split("@", 1)[1], "version": version, "seed": seed,
            "points_target": points, **({"process": process} if process else {})}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--pair", pair,
           "--seed", str(seed), "--points", str(points), *(["--table", table] if table else []),
           *(["--compile-only"] if section == "compile" else [])]
    print(f"[{version}] {pair} seed {seed}" + (f" points {points or 'all'}" if section ==
                                                "scaling" else ""), flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=version_env(version, args.cold_cache, cache),
                              capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {**base, "error": f"timed out after {args.timeout} s"}
    found = [ln[len(MARK):] for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    if not found:
        tail = " / ".join(proc.stderr.strip().splitlines()[-5:])
        return {**base, "error": f"exit {proc.returncode}, no result: {tail}"[:500]}
    row = {**base, **json.loads(found[-1]), "child_wall_s": time.perf_counter() - t0}
    if section == "compile":
        print("   " + (f"error: {row['error']}" if row.get("error") else
                       f"process {process}: compile {row['compile_s']:.1f} s, model "
                       f"{row['model_s']:.1f} s"), flush=True)
        return row
    print("   " + (f"error: {row['error']}" if row.get("error") else
                   f"total {row['total_s']:.1f} s, sample {row['sample_s']:.1f} s, "
                   f"{row.get('us_per_grad', math.nan):.0f} us/grad, "
                   f"R-hat {row['max_rhat']:.4f}"), flush=True)
    return row


def _stages(stderr: str) -> dict[str, float]:
    """The fit's own stage seconds from its ``bayeslaw fit...: compile 3.7 s, ...`` line."""
    line = next((ln for ln in stderr.splitlines() if ln.startswith("bayeslaw fit")), "")
    found = re.findall(r"(compile|warm start|sampling|mode|laplace|pathfinder) ([0-9.]+) s",
                       line)
    return {f"{name.replace(' ', '_')}_s": float(value) for name, value in found}


OUTPUTS_MARK = "BENCH_OUTPUTS_S "


def cli_child(argv: list[str]) -> int:
    """``--cli-child ARGS``: ``bayeslaw.cli.main(ARGS)`` with ``write_fit_outputs`` timed.

    The figures and files of ``bayeslaw fit`` (``bayeslaw.report.folders`` now,
    ``bayeslaw.outputs`` in the flat layout); their seconds go to stderr after
    :data:`OUTPUTS_MARK`.
    """
    import importlib

    for name in ("bayeslaw.report.folders", "bayeslaw.outputs"):
        try:
            module = importlib.import_module(name)
            break
        except ImportError:
            continue
    else:
        raise SystemExit("neither bayeslaw.report.folders nor bayeslaw.outputs imports")
    original = module.write_fit_outputs

    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            print(f"{OUTPUTS_MARK}{time.perf_counter() - t0:.3f}", file=sys.stderr, flush=True)

    module.write_fit_outputs = timed
    from bayeslaw.cli import main as cli_main

    return int(cli_main(argv) or 0)


def run_cli(version: str, args: argparse.Namespace, method: str = "nuts",
            repeat: int = 1, *, cache: Path | None = None, label: str = "cli",
            wrapped: bool = False) -> dict[str, Any]:
    """Wall time of the README's main command on the bundled sweep (``--method``)."""
    pairs = load_pairs()
    flags = ["--method", method] if method != "nuts" else []
    shown = ["python", "-m", "bayeslaw.cli", "fit", "bayeslaw/datasets/looped_sweep.csv",
             "--out", "<tmp>", *flags]
    row: dict[str, Any] = {"section": label, "version": version, "pair": "cli@bundled",
                           "method": method, "repeat": repeat, "command": shlex.join(shown)}
    print(f"[{version}] {row['command']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_speed_cli_") as tmp:
        cli = ([str(Path(__file__).resolve()), "--cli-child"] if wrapped
               else ["-m", "bayeslaw.cli"])
        cmd = [sys.executable, *cli, "fit", str(pairs.BUNDLED), "--out",
               str(Path(tmp) / "out"), *flags]
        t0 = time.perf_counter()
        try:  # cwd = tmp: "python -m" puts the cwd first on sys.path
            proc = subprocess.run(cmd, cwd=tmp, env=version_env(version, args.cold_cache,
                                                                  cache),
                                  capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {**row, "error": f"timed out after {args.timeout} s"}
        row.update(wall_s=time.perf_counter() - t0, rc=proc.returncode)
    row.update(_stages(proc.stderr))
    outputs = [ln[len(OUTPUTS_MARK):] for ln in proc.stderr.splitlines()
               if ln.startswith(OUTPUTS_MARK)]
    if outputs:
        row["outputs_s"] = float(outputs[-1])
    if proc.returncode != 0:
        row["error"] = " / ".join(proc.stderr.strip().splitlines()[-5:])[:500]
    print(f"   wall {row['wall_s']:.1f} s, exit {proc.returncode}", flush=True)
    return row


def run_gradient(version: str, args: argparse.Namespace) -> dict[str, Any]:
    """``bench_schedule_gradient.py`` on the version's library: ``multi_power`` / ``chinchilla``."""
    root = OLD_ROOT if version == "old" else ROOT
    # this tree's script for both (it keeps every law's model alive, and reads either layout)
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_schedule_gradient.py")]
    row: dict[str, Any] = {"section": "gradient", "version": version,
                           "pair": "multi_power@misfitting_schedule",
                           "command": "python benchmarks/bench_schedule_gradient.py"}
    print(f"[{version}] {row['command']}", flush=True)
    try:
        proc = subprocess.run(cmd, cwd=root, env=version_env(version, False),
                              capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {**row, "error": f"timed out after {args.timeout} s"}
    for law in ("chinchilla", "multi_power"):
        found = re.findall(rf"^\| {law} \| ([0-9.]+) \| ([0-9.]+) \|", proc.stdout, re.M)
        if found:
            row[f"{law}_us"] = float(found[-1][0])
    if proc.returncode != 0 or "multi_power_us" not in row:
        row["error"] = " / ".join(proc.stderr.strip().splitlines()[-5:])[:500]
    print("   " + (f"error: {row['error']}" if row.get("error") else
                   f"multi_power {row['multi_power_us']:.0f} us, chinchilla "
                   f"{row['chinchilla_us']:.0f} us"), flush=True)
    return row


def run_targets(args: argparse.Namespace, rec: Recorder, versions: list[str]) -> None:
    """``--targets``: issue 34's measurements, every version in turn (see the docstring)."""
    methods = ("nuts", "laplace", "pathfinder")
    caches = {v: Path(tempfile.mkdtemp(prefix=f"bench_speed_targets_{v}_")) for v in versions}
    for version in versions:  # the same empty folder: cold first, then warm
        rec.add(run_cli(version, args, cache=caches[version], label="cold", wrapped=True))
        rec.add(run_cli(version, args, cache=caches[version], label="warm", wrapped=True))
        for method in methods[1:]:  # their own functions compiled once, untimed
            rec.add(run_cli(version, args, method, cache=caches[version], label="warm-up",
                            wrapped=True))
    for repeat in range(1, args.repeats + 1):
        shift = (repeat - 1) % len(methods)
        for version in versions:
            for method in methods[shift:] + methods[:shift]:
                rec.add(run_cli(version, args, method, repeat, cache=caches[version],
                                label="method", wrapped=True))
    for version in versions:
        rec.add(run_gradient(version, args))


def suite_seconds(path: str | None) -> tuple[float | None, str]:
    """The first ``NNN s`` after "pytest" in ``--suite-file`` (a measured ``.ci/run``)."""
    if not path:
        return None, "not measured in this run (no --suite-file)"
    text = Path(path).read_text(encoding="utf-8")
    found = re.search(r"pytest[^0-9]{0,40}([0-9][0-9,]*(?:\.[0-9]+)?) s", text)
    if not found:
        raise SystemExit(f"--suite-file {path}: no 'pytest ... NNN s' in it")
    return float(found.group(1).replace(",", "")), f"from {path}"


def targets_tables(rows: list[dict[str, Any]], suite_file: str | None = None) -> list[str]:
    """Issue 34's rows: old and new side by side, each judged against its target."""
    mine = [r for r in rows if r["section"] in ("cold", "warm", "warm-up", "method",
                                                 "gradient")]
    if not mine:
        return []
    stages = ("compile_s", "warm_start_s", "sampling_s", "laplace_s", "pathfinder_s",
              "outputs_s")
    out = ["## Issue 34's targets", "",
           "Every CLI row: `python -m bayeslaw.cli fit bayeslaw/datasets/looped_sweep.csv --out "
           "<tmp>` (`--method` where not nuts) through the `--cli-child` wrapper, which times "
           "`write_fit_outputs` (outputs_s); the install is not included.", "",
           "| kind | version | method | repeat | wall s | " + " | ".join(stages)
           + " | exit | error |",
           "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in stages)
           + " | --- | --- |"]
    out += [f"| {r['section']} | {r['version']} | {r.get('method', '-')} | "
            f"{r.get('repeat', '-')} | {fmt(r.get('wall_s'), '.1f')} | "
            + " | ".join(fmt(r.get(k), ".2f") for k in stages)
            + f" | {r.get('rc', '-')} | {r.get('error', '')} |"
            for r in mine if r["section"] != "gradient"]
    grads = [r for r in mine if r["section"] == "gradient"]
    if grads:
        out += ["", "| gradient | version | multi_power us | chinchilla us | ratio | error |",
                "| --- | --- | --- | --- | --- | --- |"]
        out += [f"| misfitting, every checkpoint | {r['version']} | "
                f"{fmt(r.get('multi_power_us'), '.0f')} | {fmt(r.get('chinchilla_us'), '.0f')}"
                f" | {fmt(_ratio(r.get('multi_power_us'), r.get('chinchilla_us')), '.2f')} | "
                f"{r.get('error', '')} |" for r in grads]

    def value(version: str, key: str, section: str, method: str = "nuts") -> float | None:
        vals = [r[key] for r in mine if r["version"] == version and r["section"] == section
                and r.get("method", "nuts") == method and _ok(r) and key in r]
        return float(np.median(vals)) if vals else None

    def per(version: str) -> dict[str, float | None]:
        nuts = value(version, "wall_s", "method")
        grad = next((r for r in grads if r["version"] == version and _ok(r)), {})
        return {
            "cold": value(version, "wall_s", "cold"),
            "warm": value(version, "wall_s", "warm"),
            "outputs": value(version, "outputs_s", "method"),
            "laplace": _ratio(value(version, "wall_s", "method", "laplace"), nuts),
            "pathfinder": _ratio(value(version, "wall_s", "method", "pathfinder"), nuts),
            "gradient": _ratio(grad.get("multi_power_us"), grad.get("chinchilla_us"))}

    have = {v: per(v) for v in ("old", "new") if any(r["version"] == v for r in mine)}
    suite, source = suite_seconds(suite_file)
    judged = (("README's fit, compile cache empty (s)", "cold", 30.0),
              ("README's fit, compile cache warm (s)", "warm", 10.0),
              ("figures and outputs, median of the nuts repeats (s)", "outputs", 2.0),
              ("Laplace wall / NUTS wall (medians)", "laplace", 0.25),
              ("pathfinder wall / NUTS wall (medians)", "pathfinder", 1.0),
              ("multi_power / chinchilla per density + gradient", "gradient", 2.0))
    out += ["", "| row | old | new | new / old | target (new) | met |",
            "| --- | --- | --- | --- | --- | --- |"]
    for label, key, target in judged:
        old, new = (have.get(v, {}).get(key) for v in ("old", "new"))
        met = "-" if new is None else ("yes" if new <= target else "NO")
        out.append(f"| {label} | {fmt(old, '.2f')} | {fmt(new, '.2f')} | "
                   f"{fmt(_ratio(new, old), '.2f')} | <= {target:g} | {met} |")
    out.append(f"| `.ci/run` on a fresh clone, pytest (s): {source} | - | {fmt(suite, '.0f')} "
               f"| - | <= 600 | {'-' if suite is None else 'yes' if suite <= 600 else 'NO'} |")
    return out


def _ratio(num: float | None, den: float | None) -> float | None:
    """``num / den``, or None where either is missing."""
    return None if num is None or den is None or not den else num / den


# -- parent: tables -------------------------------------------------------------------------
VALUES = (("compile s", "compile_s", ".1f"), ("sample s", "sample_s", ".1f"),
          ("total s", "total_s", ".1f"), ("other s", "other_s", ".1f"),
          ("us/grad", "us_per_grad", ".0f"), ("us/grad sampling", "us_per_grad_sampling", ".0f"),
          ("warm-up steps", "warmup_steps", ".0f"), ("draw steps", "draw_steps", ".0f"),
          ("min bulk ESS", "min_ess_bulk", ".0f"), ("ESS/s sample", "ess_per_s_sample", ".2f"),
          ("ESS/s total", "ess_per_s_total", ".2f"), ("max R-hat", "max_rhat", ".4f"),
          ("divergences", "divergences", ".0f"), ("converged", "converged", "yn"))
#: (label, numerator column, denominator column, numerator version): ratio = num / den.
RATIOS = (("speed-up total = old total / new total", "total_s", "total_s", "old"),
          ("speed-up sample = old sample / new sample", "sample_s", "sample_s", "old"),
          ("speed-up compile = old compile / new compile", "compile_s", "compile_s", "old"),
          ("speed-up per gradient = old us/grad / new us/grad", "us_per_grad", "us_per_grad",
           "old"),
          ("steps new / old (warm-up + draws)", "steps", "steps", "new"),
          ("ESS/s sample new / old", "ess_per_s_sample", "ess_per_s_sample", "new"),
          ("ESS/s total new / old", "ess_per_s_total", "ess_per_s_total", "new"))


def fmt(value: Any, spec: str) -> str:
    """One table cell ('-' for a missing value)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if spec == "yn":
        return "yes" if bool(value) else "no"
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return str(value)


def _ok(row: dict[str, Any] | None) -> bool:
    return row is not None and not row.get("error")


def _steps(row: dict[str, Any]) -> float:
    return float(row.get("warmup_steps", 0)) + float(row.get("draw_steps", 0))


def pairs_tables(rows: list[dict[str, Any]]) -> list[str]:
    """The old / new values table and the ratio table of the pairs section."""
    keyed = {(r["pair"], r["seed"], r["version"]): r for r in rows if r["section"] == "pairs"}
    keys = list(dict.fromkeys((p, s) for p, s, _ in keyed))
    if not keys:
        return []
    out = ["## Pairs (cells: old / new)", "",
           "| pair | seed | points | " + " | ".join(v[0] for v in VALUES) + " |",
           "| --- " * (3 + len(VALUES)) + "|"]
    errors = []
    for pair, seed in keys:
        old, new = keyed.get((pair, seed, "old")), keyed.get((pair, seed, "new"))
        cells = []
        for _, col, spec in VALUES:
            cells.append(" / ".join(fmt(r.get(col), spec) if _ok(r) else
                                    ("error" if r else "-") for r in (old, new)))
        points = next((r.get("points") for r in (new, old) if _ok(r)), None)
        out.append(f"| {pair} | {seed} | {fmt(points, '.0f')} | " + " | ".join(cells) + " |")
        errors += [f"- {pair} seed {seed} ({r['version']}): {r['error']}"
                   for r in (old, new) if r and r.get("error")]
    out += ["", "## Ratios", "", "| pair | seed | " + " | ".join(r[0] for r in RATIOS) + " |",
            "| --- " * (2 + len(RATIOS)) + "|"]
    for pair, seed in keys:
        old, new = keyed.get((pair, seed, "old")), keyed.get((pair, seed, "new"))
        cells = []
        for _, num, den, first in RATIOS:
            if not (_ok(old) and _ok(new)):
                cells.append("-")
                continue
            a, b = (old, new) if first == "old" else (new, old)
            x = _steps(a) if num == "steps" else float(a.get(num, math.nan))
            y = _steps(b) if den == "steps" else float(b.get(den, math.nan))
            cells.append(fmt(x / y if y else math.nan, ".2f"))
        out.append(f"| {pair} | {seed} | " + " | ".join(cells) + " |")
    return out + ([""] + ["Errors:", ""] + errors if errors else [])


def slope(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y on log x (NaN with fewer than two finite points)."""
    pts = [(math.log(a), math.log(b)) for a, b in zip(x, y, strict=True)
           if a > 0 and b is not None and math.isfinite(b) and b > 0]
    if len(pts) < 2:
        return math.nan
    return float(np.polyfit([p[0] for p in pts], [p[1] for p in pts], 1)[0])


def scaling_tables(rows: list[dict[str, Any]]) -> list[str]:
    """Sample s and us/grad per size, and their log-log slopes against points."""
    rows = [r for r in rows if r["section"] == "scaling"]
    if not rows:
        return []
    cols = (("points", "points", ".0f"), ("runs", "runs", ".0f"),
            ("cap per run", "thin_cap", ".0f"), ("sample s", "sample_s", ".1f"),
            ("total s", "total_s", ".1f"), ("us/grad", "us_per_grad", ".0f"),
            ("us/grad sampling", "us_per_grad_sampling", ".0f"),
            ("steps", "steps", ".0f"), ("min bulk ESS", "min_ess_bulk", ".0f"),
            ("max R-hat", "max_rhat", ".4f"), ("converged", "converged", "yn"))
    out = [f"## Scaling ({rows[0]['pair']} on {rows[0]['table']}, thinned within runs)", "",
           "| version | seed | target | " + " | ".join(c[0] for c in cols) + " |",
           "| --- " * (3 + len(cols)) + "|"]
    for r in rows:
        # steps: warm-up + draws
        cells = [(fmt(_steps(r) if c == "steps" else r.get(c), s) if _ok(r) else "error")
                 for _, c, s in cols]
        out.append(f"| {r['version']} | {r['seed']} | {r['points_target'] or 'all'} | "
                   + " | ".join(cells) + " |")
    out += ["", "Least-squares slope of log y on log points:", "",
            "| version | sample s | us/grad | us/grad sampling |", "| --- | --- | --- | --- |"]
    for version in dict.fromkeys(r["version"] for r in rows):
        ok = [r for r in rows if r["version"] == version and _ok(r)]
        x = [float(r["points"]) for r in ok]
        out.append(f"| {version} | " + " | ".join(
            fmt(slope(x, [r.get(c) for r in ok]), ".2f")
            for c in ("sample_s", "us_per_grad", "us_per_grad_sampling")) + " |")
    errors = [f"- {r['version']} {r['points_target']}: {r['error']}" for r in rows
              if r.get("error")]
    return out + ([""] + errors if errors else [])


def compile_tables(rows: list[dict[str, Any]]) -> list[str]:
    """Compile seconds of a first and a second process sharing one empty cache folder."""
    rows = [r for r in rows if r["section"] == "compile"]
    if not rows:
        return []
    out = ["## Compile: a first and a second process (one empty cache folder per version)", "",
           "Each child builds the pair's model and compiles it for nutpie, nothing else; "
           "both processes of a version share a cache folder that was empty before the "
           "first (PyTensor's compiledir with its numba cache).", "",
           "| pair | version | points | compile s, 1st | compile s, 2nd | 2nd / 1st | "
           "2nd from disk | model s, 2nd |", "| --- " * 8 + "|"]
    keyed = {(r["pair"], r["version"], r.get("process")): r for r in rows}
    for pair, version in dict.fromkeys((r["pair"], r["version"]) for r in rows):
        first, second = keyed.get((pair, version, 1)), keyed.get((pair, version, 2))
        a = first.get("compile_s") if _ok(first) else None
        b = second.get("compile_s") if _ok(second) else None
        points = next((r.get("points") for r in (first, second) if _ok(r)), None)
        out.append(f"| {pair} | {version} | {fmt(points, '.0f')} | {fmt(a, '.1f')} | "
                   f"{fmt(b, '.1f')} | {fmt(b / a if a and b else None, '.2f')} | "
                   f"{fmt(second.get('from_disk') if _ok(second) else None, 'yn')} | "
                   f"{fmt(second.get('model_s') if _ok(second) else None, '.1f')} |")
    new = {r["pair"]: r for r in rows if r["version"] == "new" and r.get("process") == 2}
    old = {r["pair"]: r for r in rows if r["version"] == "old" and r.get("process") == 2}
    both = [p for p in new if p in old and _ok(new[p]) and _ok(old[p])]
    if both:
        out += ["", "Second process, old compile / new compile: " + ", ".join(
            f"{p} {old[p]['compile_s'] / new[p]['compile_s']:.1f}x" for p in both)]
    errors = [f"- {r['pair']} {r['version']} process {r.get('process')}: {r['error']}"
              for r in rows if r.get("error")]
    return out + ([""] + errors if errors else [])


def cli_tables(rows: list[dict[str, Any]]) -> list[str]:
    """Wall time of the README command by version and method, and their ratios (medians)."""
    rows = [r for r in rows if r["section"] == "cli"]
    if not rows:
        return []
    stages = ("compile_s", "warm_start_s", "sampling_s", "mode_s", "laplace_s", "pathfinder_s")
    out = ["## CLI", "", "`python -m bayeslaw.cli fit bayeslaw/datasets/looped_sweep.csv "
           "--out <tmp>` (with `--method` where not nuts; runs interleaved, the methods' "
           "order rotated by one each repeat)", "",
           "| version | method | repeat | wall s | " + " | ".join(stages) + " | exit | error |",
           "| --- | --- | --- | --- | " + " | ".join("---" for _ in stages) + " | --- | --- |"]
    out += [f"| {r['version']} | {r.get('method', 'nuts')} | {r.get('repeat', 1)} | "
            f"{fmt(r.get('wall_s'), '.1f')} | "
            + " | ".join(fmt(r.get(k), ".1f") for k in stages)
            + f" | {r.get('rc', '-')} | {r.get('error', '')} |" for r in rows]
    wall: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if _ok(r):
            wall.setdefault((r["version"], r.get("method", "nuts")), []).append(r["wall_s"])
    median = {k: float(np.median(v)) for k, v in wall.items()}
    if ("old", "nuts") in median and ("new", "nuts") in median:
        out += ["", "speed-up = old wall / new wall (nuts, medians) = "
                f"{median[('old', 'nuts')] / median[('new', 'nuts')]:.2f}"]
    for (version, method), value in sorted(median.items()):
        if method != "nuts" and (version, "nuts") in median:
            out += ["", f"{version}: {method} wall / nuts wall (medians) = "
                    f"{value:.1f} / {median[(version, 'nuts')]:.1f} = "
                    f"{value / median[(version, 'nuts')]:.2f} (the issue's target: 0.25)"]
    return out


# -- parent: recording ----------------------------------------------------------------------
def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                          text=True).stdout.strip()


def atomic_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


class Recorder:
    """This invocation's rows: the CSV and the Markdown rewritten after every measurement."""

    FIRST = ("section", "pair", "spec", "table", "version", "seed", "points_target", "points",
             "runs", "error")

    def __init__(self, args: argparse.Namespace, argv: list[str]) -> None:
        stem = f"speed_{dt.date.today().isoformat()}" + (f"_{args.tag}" if args.tag else "")
        self.csv, self.md = RESULTS / f"{stem}.csv", RESULTS / f"{stem}.md"
        self.command = "python benchmarks/bench_speed.py " + shlex.join(argv)
        dirty = (" (with uncommitted changes under bayeslaw/ or models/)"
                 if _git("status", "--porcelain", "--", "bayeslaw", "models") else "")
        self.header = [
            f"# Fit speed: {OLD_COMMIT} (old) vs the working tree (new)", "",
            "    " + self.command.rstrip(), "",
            f"- new: {_git('rev-parse', '--short', 'HEAD')}{dirty}; old: {OLD_COMMIT} "
            f"(worktree {OLD_ROOT})",
            f"- machine: {os.cpu_count()} cores; {sys.version.split()[0]}; caches: "
            + ("empty per child (--cold-cache)" if args.cold_cache else
               "--targets: one folder per version, empty before its first CLI run; other "
               "sections: PyTensor/numba on-disk caches shared" if args.targets else
               "PyTensor/numba on-disk caches shared (warm after a first run)"),
            f"- us/grad: {LOGP_CALLS} calls after {LOGP_WARMUP}, best of {LOGP_REPEATS}; "
            "us/grad sampling = sample s x min(chains, cores) / (warm-up + draw steps)",
            f"- started {dt.datetime.now().isoformat(timespec='seconds')}", ""]
        self.rows: list[dict[str, Any]] = []
        self.suite_file = args.suite_file

    def add(self, row: dict[str, Any]) -> None:
        """Keep ``row`` and rewrite both files."""
        self.rows.append(row)
        frame = pd.DataFrame(self.rows)
        first = [c for c in self.FIRST if c in frame.columns]
        frame = frame[first + [c for c in frame.columns if c not in first]].convert_dtypes()
        atomic_text(self.csv, frame.to_csv(index=False))
        body = pairs_tables(self.rows) + [""] + scaling_tables(self.rows) + [""] \
            + compile_tables(self.rows) + [""] + cli_tables(self.rows) + [""] \
            + targets_tables(self.rows, self.suite_file)
        atomic_text(self.md, "\n".join(self.header + body).rstrip() + "\n")


# -- parent: main ---------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options (``--child`` is internal: one measurement)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", help="comma-separated pair names or substrings of them "
                   "(a whole name selects that pair only; default: all)")
    p.add_argument("--seeds", default="1", help="comma-separated seeds (default 1)")
    p.add_argument("--skip-old", action="store_true", help="measure the current code only")
    p.add_argument("--scaling", action="store_true", help="the misfitting size section")
    p.add_argument("--scaling-old", action="store_true", help="old code in --scaling too")
    p.add_argument("--scaling-scope", choices=sorted(SCALING_TABLES), default="all",
                   help="all: every misfitting checkpoint; 1e9: past 10%% and 1e9 tokens")
    p.add_argument("--cli", action="store_true", help="time the README's bayeslaw fit")
    p.add_argument("--methods", default="nuts",
                   help="comma-separated --method values of the CLI section (nuts, laplace, "
                        "pathfinder), timed one after another in each repeat, the order "
                        "rotated by one each repeat")
    p.add_argument("--repeats", type=int, default=1, help="repeats of the CLI section")
    p.add_argument("--compile", action="store_true",
                   help="compile seconds of a first and a second process (pairs: --pairs)")
    p.add_argument("--cold-cache", action="store_true",
                   help="empty PyTensor and numba caches for every child")
    p.add_argument("--timeout", type=float, default=7200.0, help="seconds per child")
    p.add_argument("--tag", help="suffix of the result files (speed_<date>_<tag>.csv)")
    p.add_argument("--old", default=OLD_COMMIT,
                   help=f"the old commit, a worktree at /tmp/bayeslaw_<commit> (default "
                        f"{OLD_COMMIT})")
    p.add_argument("--targets", action="store_true",
                   help="issue 34's table: cold and warm README command, outputs, first "
                        "looks, multi_power's gradient, judged against the targets")
    p.add_argument("--suite-file", help="--targets: a file with the fresh clone's "
                   "'pytest ... NNN s' (its suite row)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--pair", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--table", help=argparse.SUPPRESS)
    p.add_argument("--points", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--compile-only", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(args.methods) - {"nuts", "laplace", "pathfinder"})
    if unknown or not args.methods:
        p.error(f"--methods: {', '.join(unknown) or 'none given'}; choose from nuts, laplace, "
                "pathfinder")
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1 (got {args.repeats})")
    return args


def run_sections(args: argparse.Namespace, rec: Recorder) -> None:
    """Pairs, scaling and CLI sections as selected."""
    pairs = load_pairs()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    versions = ["new"] if args.skip_old else ["old", "new"]
    other = args.scaling or args.cli or args.compile or args.targets
    do_pairs = (bool(args.pairs) and not args.compile) or not other
    do_cli = args.cli or not (args.pairs or other)
    if args.targets:
        run_targets(args, rec, versions)
    if args.compile:
        for pair in pairs.select(args.pairs):
            for version in versions:
                cache = Path(tempfile.mkdtemp(prefix=f"bench_speed_compile_{version}_"))
                for process in (1, 2):
                    rec.add(run_child(version, pair.name, seeds[0], args, section="compile",
                                      cache=cache, process=process))
    if do_pairs:
        for pair in pairs.select(args.pairs):
            for seed in seeds:
                for version in versions:
                    rec.add(run_child(version, pair.name, seed, args))
    if args.scaling:
        scaling = ["old", "new"] if args.scaling_old and not args.skip_old else ["new"]
        for points in SCALING_POINTS:
            for version in scaling:
                rec.add(run_child(version, SCALING_PAIR, seeds[0], args, section="scaling",
                                  table=SCALING_TABLES[args.scaling_scope], points=points))
    if do_cli:
        methods = args.methods
        for repeat in range(1, args.repeats + 1):
            shift = (repeat - 1) % len(methods)  # no method always first
            for version in versions:
                for method in methods[shift:] + methods[:shift]:
                    rec.add(run_cli(version, args, method, repeat))


def main(argv: list[str] | None = None) -> int:
    """Run the selected sections, writing rows and tables as they come."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--cli-child"]:
        return cli_child(argv[1:])
    args = parse_args(argv)
    global OLD_COMMIT, OLD_ROOT
    OLD_COMMIT, OLD_ROOT = args.old, Path(f"/tmp/bayeslaw_{args.old}")
    if args.child:
        return child_main(args)
    if not args.skip_old:
        ensure_worktree()
    rec = Recorder(args, argv)
    print(f"rows -> {rec.csv}\ntables -> {rec.md}", flush=True)
    run_sections(args, rec)
    print("\n".join(pairs_tables(rec.rows) + scaling_tables(rec.rows)
                    + compile_tables(rec.rows) + cli_tables(rec.rows)
                    + targets_tables(rec.rows, args.suite_file)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
