"""The (spec, table) pairs of the convergence and speed benchmarks.

Each pair is a shipped spec (``models/<spec>.toml``, loaded by name) and a function returning
a pandas DataFrame in bayeslaw's tidy layout (``run``, ``N``, ``D``, ``loss`` and what the
spec's law needs: ``T_m``, ``P``, ``horizon``, ``peak_lr``, ``dataset``).  The frames are built
with pandas and numpy only, never with bayeslaw's loaders, so that the same frame can be fed to
an older bayeslaw (``benchmarks/bench_speed.py`` runs commit 5d06e18 side by side with the
current code); where a loader of ``bayeslaw.data.public`` exists, its transformations are
reimplemented here (the check below compares the two).

Tables:

* ``bundled``: ``bayeslaw/datasets/looped_sweep.csv`` (simulated looped-LM sweep);
* ``chinchilla_epoch``, ``misfitting``, ``parscale``, ``formll_*``, ``colpret_gpt3``: the
  public data sets in ``../shared/data`` (each folder's README.txt gives source, licence and
  columns).  A missing folder raises ``FileNotFoundError`` naming it when the table is built;
  importing this module needs none of them.

``misfitting`` is the scope the curve specs were chosen and measured on (their header comments
and ``benchmarks/bench_backtest.py``): checkpoints past 10% of their run and past 1e9 tokens,
at most 12 per run, log-spaced in D with the last kept (``load_misfitting(path,
min_portion=0.1, min_tokens=1e9).thin(12)``): 1,260 points, 151 runs.  ``misfitting_all`` is
every checkpoint (4,852 rows, duplicate (run, D) rows averaged: 4,816 points, 240 runs), the
table of the speed benchmark's scaling section (``misfitting_1e9``: the benchmark scope not
thinned, 3,567 points, its alternative).

Check every table against the current bayeslaw (no sampling; prints points and runs)::

    python benchmarks/pairs.py
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "bayeslaw" / "datasets" / "looped_sweep.csv"
#: The shared data folder (``../shared/data`` beside the repository); override with the
#: environment variable ``BAYESLAW_SHARED_DATA``.
SHARED = Path(os.environ.get("BAYESLAW_SHARED_DATA", ROOT.parent / "shared" / "data"))

#: ParScale data set of the one-data-set specs (parallel_streams, looped_streams, size_only).
PARSCALE_DATASET = "stack_v2_python"
#: formll IsoFLOP configurations with a schedule matched to each budget, standard N, val loss.
FORMLL_CONFIGS = {
    "rw": "rw|hparams=base|warmup=short|decay=chinchilla|N=standard|loss=val",
    "owt2": "owt2|hparams=base|warmup=short|decay=chinchilla|N=standard|loss=val",
}


@dataclass(frozen=True)
class Pair:
    """A shipped spec and the table it is benchmarked on."""

    name: str
    spec: str
    load: Callable[[], pd.DataFrame]
    note: str
    #: spec keys set over the shipped spec's (``{"reference": {"D": 1.0}}``); None: none
    overrides: dict | None = None

    @property
    def fitted_spec(self) -> str | dict:
        """What ``bl.fit`` gets: the shipped spec's name, or it with :attr:`overrides`."""
        return self.spec if not self.overrides else {"law": self.spec, **self.overrides}


# -- reading --------------------------------------------------------------------------------
def _shared(folder: str, file: str) -> Path:
    """``SHARED/folder/file``, or a clear error naming the folder when it is absent."""
    path = SHARED / folder / file
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the table needs the shared data folder {SHARED / folder} "
            "(../shared/data beside the repository, or set BAYESLAW_SHARED_DATA)")
    return path


def _require(frame: pd.DataFrame, columns: list[str], path: Path) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{path} lacks column(s) {missing}: is it the right file?")


def thin_frame(frame: pd.DataFrame, max_points: int) -> pd.DataFrame:
    """At most ``max_points`` rows per run, log-spaced in D, each run's last point kept.

    The algorithm of ``bayeslaw.data.table.LossData.thin``, on a DataFrame (so that an older
    bayeslaw gets the same rows); returned sorted by run, then D.
    """
    if max_points < 2:
        raise ValueError(f"thin to at least 2 points per run, got {max_points}")
    frame = frame.sort_values(["run", "D"], kind="stable").reset_index(drop=True)
    keep = np.zeros(len(frame), dtype=bool)
    logd_all = np.log(frame["D"].to_numpy(dtype=float))
    for idx in frame.groupby("run", sort=False).indices.values():
        if len(idx) <= max_points:
            keep[idx] = True
            continue
        logd = logd_all[idx]
        chosen, i, last = [0], 0, len(idx) - 1
        while len(chosen) < max_points - 1:
            step = (logd[last] - logd[i]) / (max_points - len(chosen))
            j = max(i + 1, int(np.searchsorted(logd, logd[i] + step)))
            if j >= last:
                break
            chosen.append(j)
            i = j
        chosen.append(last)
        keep[idx[sorted(chosen)]] = True
    return frame.loc[keep].reset_index(drop=True)


def thin_to_points(frame: pd.DataFrame, points: int) -> tuple[pd.DataFrame, int]:
    """The frame thinned per run (:func:`thin_frame`) to about ``points`` rows in all.

    Returns the frame and the points-per-run cap used: the largest cap whose total does not
    exceed ``points`` (the whole frame when it has no more rows than that).
    """
    if len(frame) <= points:
        return frame.sort_values(["run", "D"], kind="stable").reset_index(drop=True), 0
    longest = int(frame.groupby("run").size().max())
    best = None
    for cap in range(2, longest + 1):
        thinned = thin_frame(frame, cap)
        if len(thinned) > points:
            break
        best = (thinned, cap)
    if best is None:
        raise ValueError(f"cannot thin {len(frame)} points to {points}: even 2 per run is more")
    return best


# -- tables ---------------------------------------------------------------------------------
def bundled() -> pd.DataFrame:
    """The bundled looped-LM sweep (``run, N, D, T_m, loss``)."""
    return pd.read_csv(BUNDLED)


def chinchilla_epoch() -> pd.DataFrame:
    """Epoch AI's Chinchilla final losses: ``N``, ``D = C / (6 N)``, ``loss``; no run column."""
    path = _shared("chinchilla_epoch", "svg_extracted_data.csv")
    raw = pd.read_csv(path)
    _require(raw, ["Model Size", "Training FLOP", "loss"], path)
    n = raw["Model Size"].astype(float)
    return pd.DataFrame({"N": n, "D": raw["Training FLOP"].astype(float) / (6.0 * n),
                         "loss": raw["loss"].astype(float)})


def _misfitting_curves(min_portion: float, min_tokens: float) -> pd.DataFrame:
    """``load_misfitting(path, min_portion=..., min_tokens=...)`` in pandas."""
    path = _shared("misfitting", "scaling_results.csv")
    raw = pd.read_csv(path)
    _require(raw, ["loss", "N", "D", "model", "current_steps", "total_steps", "peak_lr",
                   "sweep"], path)
    run = (raw["model"].astype(str) + "_steps" + raw["total_steps"].astype(str) + "_lr"
           + raw["peak_lr"].astype(str) + "_" + raw["sweep"].astype(str))
    tidy = pd.DataFrame({"run": run, "N": raw["N"].astype(float), "D": raw["D"].astype(float),
                         "loss": raw["loss"].astype(float),
                         "horizon": raw["D"] * raw["total_steps"] / raw["current_steps"],
                         "peak_lr": raw["peak_lr"].astype(float),
                         "model": raw["model"].astype(str)})
    tidy = tidy.groupby(["run", "D"], as_index=False, sort=False).agg(
        {"N": "first", "loss": "mean", "horizon": "first", "peak_lr": "first",
         "model": "first"})
    # two 250-step runs have a checkpoint at step 256: horizon = their last checkpoint
    last = tidy.groupby("run")["D"].transform("max")
    tidy["horizon"] = np.maximum(tidy["horizon"], last)
    tidy["portion"] = tidy["D"] / tidy["horizon"]
    if min_portion > 0:
        tidy = tidy.loc[tidy["portion"] >= min_portion]
    if min_tokens > 0:
        tidy = tidy.loc[tidy["D"] >= min_tokens]
    return tidy.sort_values(["run", "D"], kind="stable").reset_index(drop=True)


def misfitting() -> pd.DataFrame:
    """Misfitting curves, the benchmark scope: past 10% of each run and 1e9 tokens, <= 12/run."""
    return thin_frame(_misfitting_curves(0.1, 1e9), 12)


def misfitting_curves() -> pd.DataFrame:
    """The misfitting scope as a table of curves without model sizes: ``run, D, loss``.

    The default law of such a table is ``curve_bend`` (a population of curves); D is in
    tokens, the spec's reference D is 1e9.
    """
    return misfitting()[["run", "D", "loss"]]


def colpret_curves(max_context: int = 24) -> pd.DataFrame:
    """ColPret's 192 curves of NSL-PFN's benchmark, their context rows only: ``run, D, loss``.

    As ``benchmarks/bench_peers.py --max-context 24`` fits them: each curve's context thinned
    to at most ``max_context`` points evenly in log x (the largest kept), repeated x averaged,
    ``D = x / (the curve's largest context x)`` and ``loss = y / y_scale``.  The target rows
    are never read.
    """
    folder = SHARED / "nslpfn_bench"
    raw = pd.read_csv(_shared("nslpfn_bench", "ColPret.csv"))
    _require(raw, ["curve", "x", "y", "role"], folder / "ColPret.csv")
    scales = pd.read_csv(_shared("nslpfn_bench", "curves.csv"))
    context = raw.loc[raw["role"] == "context"].merge(
        scales[["dataset", "curve", "y_scale"]], on=["dataset", "curve"], how="left")
    parts = []
    for curve, rows in context.groupby("curve", sort=True):
        rows = rows.sort_values("x", kind="stable")
        if len(rows) > max_context:
            logx = np.log(rows["x"].to_numpy(float))
            grid = np.linspace(logx[0], logx[-1], max_context)
            nearest = np.abs(logx[None, :] - grid[:, None]).argmin(axis=1)
            nearest[-1] = len(rows) - 1
            rows = rows.iloc[np.unique(nearest)]
        parts.append(pd.DataFrame({"run": curve, "D": rows["x"].to_numpy(float)
                                   / rows["x"].max(),
                                   "loss": rows["y"].to_numpy(float) / rows["y_scale"]}))
    tidy = pd.concat(parts, ignore_index=True)
    return tidy.groupby(["run", "D"], as_index=False, sort=False)["loss"].mean()


def misfitting_all() -> pd.DataFrame:
    """Every misfitting checkpoint (duplicate (run, D) rows averaged)."""
    return _misfitting_curves(0.0, 0.0)


def misfitting_1e9() -> pd.DataFrame:
    """Every misfitting checkpoint past 10% of its run and 1e9 tokens (not thinned)."""
    return _misfitting_curves(0.1, 1e9)


def parscale(dataset: str | None) -> pd.DataFrame:
    """ParScale's final losses (``N`` = non-embedding parameters, ``P``, ``dataset``)."""
    path = _shared("parscale", "parscale_loss_grid.csv")
    raw = pd.read_csv(path)
    _require(raw, ["dataset", "P", "params_non_embedding", "loss"], path)
    tidy = pd.DataFrame({"N": raw["params_non_embedding"].astype(float),
                         "P": raw["P"].astype(float), "loss": raw["loss"].astype(float),
                         "dataset": raw["dataset"].astype(str)})
    if dataset is not None:
        known = sorted(tidy["dataset"].unique())
        if dataset not in known:
            raise ValueError(f"{path} has no dataset {dataset!r}; it has {known}")
        tidy = tidy.loc[tidy["dataset"] == dataset]
    return tidy.reset_index(drop=True)


def formll(config: str) -> pd.DataFrame:
    """One formll IsoFLOP configuration: one row per (budget, size), final losses."""
    path = _shared("formll_isoflop", "formll_isoflop_points.csv")
    raw = pd.read_csv(path)
    _require(raw, ["config", "C", "N", "D", "loss"], path)
    rows = raw.loc[raw["config"] == config]
    if rows.empty:
        raise ValueError(f"{path} has no configuration {config!r}")
    return pd.DataFrame({"N": rows["N"].astype(float), "D": rows["D"].astype(float),
                         "loss": rows["loss"].astype(float),
                         "C": rows["C"].astype(float)}).reset_index(drop=True)


#: The schedules of the two tables a schedule law is fitted to, as bayeslaw's loaders add them
#: (``MISFITTING_SCHEDULE`` and ``COLPRET_SCHEDULES["gpt3"]`` in ``bayeslaw/data/public.py``,
#: which give their sources), written out so that this file needs pandas only.
MISFITTING_SCHEDULE = {"schedule": "cosine", "warmup": 50.0 * 512 * 2048,
                       "final_lr_ratio": 0.1, "batch_tokens": 512.0 * 2048}
GPT3_SCHEDULE = {"schedule": "cosine", "warmup": 3.75e8, "decay_end": 2.6e11,
                 "final_lr_ratio": 0.1}


def misfitting_schedule() -> pd.DataFrame:
    """The misfitting scope with the sweep's schedule (a cosine to 10%, each run's horizon)."""
    return misfitting().drop(columns=["peak_lr", "model"]).assign(**MISFITTING_SCHEDULE)


def colpret_gpt3_schedule() -> pd.DataFrame:
    """GPT-3's validation curves with GPT-3's schedule (its one horizon, 3e11 tokens)."""
    return colpret_gpt3().assign(**GPT3_SCHEDULE)


def colpret_gpt3() -> pd.DataFrame:
    """GPT-3 validation curves (ColPret): repeated (run, D) read-offs averaged."""
    path = _shared("colpret", "colpret_gpt3_curves.csv")
    raw = pd.read_csv(path)
    _require(raw, ["run", "N", "D", "loss", "metric", "horizon"], path)
    val = raw.loc[raw["metric"] == "val"]
    tidy = val.groupby(["run", "D"], as_index=False, sort=False).agg(
        {"N": "first", "loss": "mean", "horizon": "first"})
    return tidy.sort_values(["run", "D"], kind="stable").reset_index(drop=True)




#: The exit exponents by depth of the ``steps_sim_depths`` table (T_m -> exponent).
EXIT_POWERS = {2.0: 0.3, 4.0: 1.0, 8.0: 1.8}


def steps_simulated(q_logged: bool = True, half: bool = False,
                    prefix: float | None = None, depths: bool = False) -> pd.DataFrame:
    """The simulated looped sweep with step losses (``bayeslaw.simulate.looped_step_sweep``,
    its default seed): the bundled sweep's sizes and depths, every exit step and the totals at
    30 checkpoints; ``q_logged=False`` drops the exit distribution (the latent law's table),
    ``half`` keeps the first half of every curve's checkpoints (a sweep in progress: the case
    the step benchmark's prefix fits did not converge on); ``prefix`` keeps that share of
    every curve's checkpoints as ``bench_steps.py``'s prefix splits do (a checkpoint is kept
    when its position in its run, counted from 0 and divided by the run's checkpoints, is
    below the share); ``depths`` simulates the exit exponents of :data:`EXIT_POWERS`, one per
    T_m, and logs the entropy weight (``looped_steps_latent_depths``' table).
    Needs bayeslaw, imported here."""
    from bayeslaw.simulate import looped_step_sweep

    table, truth = looped_step_sweep(q_logged=q_logged,
                                     exit_powers=EXIT_POWERS if depths else None)
    if depths:
        table = table.assign(entropy_weight=truth.params["beta_H"])
    if prefix is not None:
        runs = table.groupby("run")["D"]
        position = (runs.rank(method="dense") - 1) / runs.transform("nunique")
        table = table.loc[position < prefix].reset_index(drop=True)
    if half:
        first = table.groupby("run")["D"].transform(lambda d: d <= np.median(np.unique(d)))
        table = table.loc[first].reset_index(drop=True)
    return table


#: Tables by name (the part of a pair's name after ``@``; ``misfitting_all`` and
#: ``misfitting_1e9``, the speed benchmark's scaling tables, are in no pair).
TABLES: dict[str, Callable[[], pd.DataFrame]] = {
    "bundled": bundled,
    "chinchilla_epoch": chinchilla_epoch,
    **{f"formll_{key}": partial(formll, config) for key, config in FORMLL_CONFIGS.items()},
    "misfitting": misfitting,
    "misfitting_all": misfitting_all,
    "misfitting_1e9": misfitting_1e9,
    "colpret_gpt3": colpret_gpt3,
    "misfitting_schedule": misfitting_schedule,
    "colpret_gpt3_schedule": colpret_gpt3_schedule,
    "misfitting_curves": misfitting_curves,
    "colpret_curves": colpret_curves,
    "parscale": partial(parscale, PARSCALE_DATASET),
    "parscale_both": partial(parscale, None),
    "steps_sim": steps_simulated,
    "steps_sim_half": partial(steps_simulated, half=True),
    "steps_sim_latent": partial(steps_simulated, q_logged=False),
    "steps_sim_quarter": partial(steps_simulated, prefix=0.25),
    "steps_sim_latent_half": partial(steps_simulated, q_logged=False, half=True),
    "steps_sim_depths": partial(steps_simulated, q_logged=False, depths=True),
}

_MISFITTING = ("misfitting curves past 10% of each run and 1e9 tokens, <= 12 checkpoints per "
               "run (log-spaced, last kept); horizon and peak_lr per run")
_PARSCALE = f"ParScale final losses, data set {PARSCALE_DATASET} only (6 sizes x 4 P)"
_PAIRS = (
    Pair("looped_total@bundled", "looped_total", bundled,
         "bundled looped-LM sweep (bayeslaw/datasets/looped_sweep.csv)"),
    Pair("iso_depth_eff@bundled", "iso_depth_eff", bundled,
         "bundled sweep: iso_depth_eff 'fits the same tables as looped_total' (its header)"),
    Pair("chinchilla@chinchilla_epoch", "chinchilla", chinchilla_epoch,
         "Epoch AI's Chinchilla final losses, D = C / (6 N), one row per run"),
    *(Pair(f"chinchilla@formll_{key}", "chinchilla", TABLES[f"formll_{key}"],
           f"formll IsoFLOP points {config}: one row per (budget, size)")
      for key, config in FORMLL_CONFIGS.items()),
    Pair("chinchilla_curves@misfitting", "chinchilla_curves", misfitting, _MISFITTING),
    Pair("chinchilla_curves_walk@misfitting", "chinchilla_curves_walk", misfitting,
         _MISFITTING),
    Pair("chinchilla_anneal@misfitting", "chinchilla_anneal", misfitting,
         _MISFITTING + " (the header's '151 runs past 1e9 tokens, 12 checkpoints each')"),
    Pair("chinchilla@colpret_gpt3", "chinchilla", colpret_gpt3,
         "GPT-3 validation curves (ColPret), repeated read-offs averaged; one horizon (3e11) "
         "for every run, so not chinchilla_anneal (needs 2 horizons); no peak_lr"),
    Pair("multi_power@misfitting_schedule", "multi_power", misfitting_schedule,
         _MISFITTING.replace("horizon and peak_lr per run", "horizon per run") + "; the "
         "sweep's schedule (cosine to 10% at each run's horizon, 50 warm-up steps)"),
    Pair("multi_power@colpret_gpt3_schedule", "multi_power", colpret_gpt3_schedule,
         "GPT-3 validation curves (ColPret), as chinchilla@colpret_gpt3, with GPT-3's "
         "schedule (cosine to 10% over 260B tokens after a 375M-token warm-up)"),
    Pair("parallel_streams@parscale", "parallel_streams", TABLES["parscale"], _PARSCALE),
    Pair("parallel_streams_pooled@parscale", "parallel_streams_pooled",
         TABLES["parscale_both"], "ParScale final losses, both data sets (dataset column)"),
    Pair("looped_streams@parscale", "looped_streams", TABLES["parscale"],
         _PARSCALE + ": the comparison law for parallel_streams (its header)"),
    Pair("size_only@parscale", "size_only", TABLES["parscale"],
         _PARSCALE + ": the null model ignoring P (its header)"),
    Pair("curve_bend@misfitting_curves", "curve_bend", misfitting_curves,
         _MISFITTING + ", as curves without N (run, D, loss): the curve population"),
    Pair("curve_bend@colpret_curves", "curve_bend", colpret_curves,
         "ColPret's 192 curves of NSL-PFN's benchmark, context rows only, <= 24 a curve, "
         "each scaled to D = 1 and loss = y / y_scale at its last context point (as "
         "bench_peers.py fits them, with the spec's reference D set to 1)",
         {"reference": {"D": 1.0}}),
    Pair("looped_steps@steps_sim", "looped_steps", TABLES["steps_sim"],
         "simulated looped sweep with step losses and q logged (looped_step_sweep)"),
    Pair("looped_steps@steps_sim_half", "looped_steps", TABLES["steps_sim_half"],
         "the same, first half of every curve's checkpoints (a sweep in progress)"),
    Pair("looped_steps@steps_sim_quarter", "looped_steps", TABLES["steps_sim_quarter"],
         "the same, first 25% of every curve's rows (bench_steps.py's 25% prefix, which fails "
         "on every seed tried)"),
    Pair("looped_steps_latent@steps_sim_latent", "looped_steps_latent",
         TABLES["steps_sim_latent"], "the same sweep with q not logged (latent)"),
    Pair("looped_steps_latent@steps_sim_latent_half", "looped_steps_latent",
         TABLES["steps_sim_latent_half"], "the latent sweep, first half of every curve's "
         "checkpoints (a sweep in progress)"),
    Pair("looped_steps_latent_depths@steps_sim_depths", "looped_steps_latent_depths",
         TABLES["steps_sim_depths"], "the latent sweep with exit exponents 0.3 / 1.0 / 1.8 at "
         "T_m = 2 / 4 / 8 and the entropy weight logged"),
)
#: The pairs by name.
PAIRS: dict[str, Pair] = {p.name: p for p in _PAIRS}

#: Shipped specs with no honest table, and why.
UNAVAILABLE: dict[str, str] = {
    "iso_depth": (
        "needs N_once and N_rec (unshared and recurrent parameters); no bundled or shared "
        "table splits N (the bundled sweep has a total N: by its header that case is "
        "iso_depth_eff; looped_nanochat gives physical N only, in bits per byte, 9 runs)"),
    "parallel_streams_data": (
        "needs P and D together (several token budgets or curves per P); ParScale trains "
        "every run on one fixed, unlisted token budget and no other table has P"),
}


def table(name: str) -> pd.DataFrame:
    """The frame of pair ``name`` (or of a table in :data:`TABLES`)."""
    if name in PAIRS:
        return PAIRS[name].load()
    if name in TABLES:
        return TABLES[name]()
    raise KeyError(f"no pair or table {name!r}; pairs are {sorted(PAIRS)}")


def select(patterns: str | None) -> list[Pair]:
    """The pairs named by the comma-separated patterns (all if None): a pattern that is a
    pair's whole name selects that pair only, any other the pairs whose name contains it."""
    if not patterns:
        return list(PAIRS.values())
    subs = [s for s in patterns.split(",") if s]
    chosen = [p for p in PAIRS.values()
              if any(s == p.name or (s not in PAIRS and s in p.name) for s in subs)]
    if not chosen:
        raise SystemExit(f"--pairs {patterns!r} matches no pair; pairs are {sorted(PAIRS)}")
    return chosen


def _check(pair: Pair) -> str:
    """Load the pair's frame with the current bayeslaw and check the spec accepts it."""
    import bayeslaw as bl
    from bayeslaw.model.plan import check_compatible
    from bayeslaw.spec.catalog import resolve_spec

    data = bl.load(pair.load())
    check_compatible(resolve_spec(pair.spec, law=None, columns=data.columns), data)
    return f"| {pair.name} | {pair.spec} | {len(data)} | {len(data.runs)} | {pair.note} |"


def main() -> int:
    """Check every pair (load + spec compatibility) and print points and runs."""
    import warnings

    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    print("| pair | spec | points | runs | table |\n| --- | --- | --- | --- | --- |")
    failed = 0
    for pair in PAIRS.values():
        try:
            print(_check(pair), flush=True)
        except Exception as exc:  # noqa: BLE001 - report every pair
            failed += 1
            print(f"| {pair.name} | {pair.spec} | - | - | FAILED: {exc} |", flush=True)
    for spec, why in UNAVAILABLE.items():
        print(f"| (none) | {spec} | - | - | unavailable: {why} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
