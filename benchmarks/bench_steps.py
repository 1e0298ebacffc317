"""Step-wise losses of a looped LM: recovery on the simulated sweep, and backtests against
Ouro's least squares per T_m.

Run from the repository root::

    python benchmarks/bench_steps.py [--seed S] [--only recovery|backtest|link] [--out FILE]
        [--figure PNG]
    python benchmarks/bench_steps.py --only backtest --seeds 1,2,3,4,5 [--splits sizes] --out FILE

Data: ``bayeslaw.simulate.looped_step_sweep`` (the bundled sweep's sizes and depths, each run's
loss at every exit step T = 1..T_m and its total, 30 checkpoints from 1e8 to 2e10 tokens,
``q(T)`` proportional to T, entropy weight 0.05, per-curve Student-t noise of scale 0.01).

Recovery: the default spec fitted with q logged (``looped_steps``) and with q latent
(``looped_steps_latent``, the column ``q`` dropped); for every shared coefficient (and
``lambda_q``) its posterior median and 90% interval beside the truth, and the fit's
diagnostics.

The link (``--only link``): every third checkpoint's total left out of the fit (its step rows
kept) and forecast through the link, with q logged and latent: R^2, MAPE and the 50% / 90%
bands' coverage per total curve.

Backtests (q logged; scored on held-out points only): a step held out (T_m = 4: steps 1-3
fitted, step 4 and the T_m = 4 totals left out of the fit, step 4 forecast), sizes held out
(the two largest N: every curve of theirs forecast) and prefixes (the first 25 / 50 / 75% of
every curve fitted, the rest forecast; step rows scored).  bayeslaw fits one joint model of
every T_m (its default spec; held-out curves and sizes drawn from the population); the
baseline is Ouro's procedure, the step law fitted by least squares separately for each T_m
on its step rows (:func:`bayeslaw.evaluation.baseline.point_fit`: Huber on log loss, 64
starts; no effects, ``beta_H`` fixed at 0 since steps carry no entropy term), with no
uncertainty.  Scores: R^2 on the held-out points, R^2 the Ouro way (over every point of the
forecast curves' T_m, fitted ones included), MAPE, and for bayeslaw the 50% / 90% predictive
bands' coverage per curve (each curve's share of its held-out points inside; the mean and the
Clopper-Pearson interval over curves).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_converge import parse_overrides, with_sampler  # the script's folder is on sys.path
from bench_figures import emit, results_header

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.evaluation.baseline import point_fit
from bayeslaw.evaluation.metrics import coverage_by_curve, mape, r2
from bayeslaw.laws.registry import law_for_columns
from bayeslaw.simulate import looped_step_sweep

SHARED = ("E", "a", "alpha", "b", "beta", "c", "gamma", "beta_H")


# [sampler] keys and other sections' keys over the default spec's (``--sampler``, ``--set``;
# both empty: the shipped spec as it is)
SAMPLER: dict = {}
SECTIONS: dict = {}


def _fit(data: bl.LossData, seed: int, like: bl.LossData | None = None) -> bl.Fit:
    spec = (with_sampler(law_for_columns(set(data.frame.columns)), SAMPLER, SECTIONS)
            if SAMPLER or SECTIONS else None)
    return bl.fit(data, spec, seed=seed, progress=False, like=like)


def recovery(seed: int, figure: Path | None = None) -> list[str]:
    lines = ["## Recovery on the simulated sweep", "",
             "| q | coefficient | truth | median | 90% interval | inside |",
             "| --- | --- | --- | --- | --- | --- |"]
    diag = []
    for logged in (True, False):
        table, truth = looped_step_sweep(q_logged=logged, seed=seed)
        t0 = time.perf_counter()
        fit = _fit(bl.load(table), seed)
        seconds = time.perf_counter() - t0
        names = [*SHARED, *(() if logged else ("lambda_q",))]
        for name in names:
            x = np.asarray(fit.idata.posterior[name]).ravel()
            lo, med, hi = np.quantile(x, [0.05, 0.5, 0.95])
            inside = lo <= truth.params[name] <= hi
            lines.append(f"| {'logged' if logged else 'latent'} | {name} | "
                         f"{truth.params[name]:.4g} | {med:.4g} | [{lo:.4g}, {hi:.4g}] | "
                         f"{'yes' if inside else 'NO'} |")
        diag.append(f"- q {'logged' if logged else 'latent'} ({fit.spec.law}): "
                    f"{fit.diagnostics}; {seconds:.0f} s (compile included)")
        if logged and figure is not None:  # the grid figure of the q-logged fit
            import matplotlib

            matplotlib.use("Agg")
            from bayeslaw.report.folders import save_figure

            save_figure(bl.plot_grid(fit, seed=seed), figure, tight=False)
            diag.append(f"- grid figure of the q-logged fit: `{figure}`")
    return [*lines, "", *diag, ""]


def _baseline(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Ouro's procedure: the step law by least squares per T_m, on that T_m's step rows."""
    spec = bl.load_spec({"fixed": {"beta_H": 0.0}, "effects": []}, law="looped_steps")
    pred = np.full(len(test), np.nan)
    for t in sorted(test[C.T_M].unique()):
        rows = (train[C.T_M] == t) & (train[C.EXIT_KIND] == "step")
        part = bl.LossData(train[rows].reset_index(drop=True))
        fit = point_fit(part, spec, seed=0)
        at = (test[C.T_M] == t).to_numpy()
        pred[at] = fit.predict(test[at])
    return pred


def _scores(name: str, method: str, y: np.ndarray, pred: np.ndarray, ouro: tuple, bands=None,
            curves=None) -> str:
    y_all, pred_all = ouro
    cells = [name, method, str(len(y)), f"{r2(y, pred):.4f}", f"{r2(y_all, pred_all):.4f}",
             f"{100 * mape(y, pred):.2f}%"]
    for p in (0.5, 0.9):
        if bands is None:
            cells.append("-")
            continue
        cov = coverage_by_curve(y, *bands[p], curves, p)
        cells.append(f"{cov.rate:.2f} [{cov.low:.2f}, {cov.high:.2f}]")
    return "| " + " | ".join(cells) + " |"


def backtests(seed: int, pooled: dict | None = None, only: str | None = None) -> list[str]:
    """The backtest table of one seed; with ``pooled``, each split's scored points, bands,
    curves (named with the seed) and verdict appended to ``pooled[split]`` for
    :func:`pooled_table`; ``only``: the splits whose name contains it."""
    table, _ = looped_step_sweep(seed=seed)
    data = bl.load(table)
    f = data.frame
    step = (f[C.EXIT_KIND] == "step").to_numpy()
    big = sorted(f[C.N].unique())[-2:]
    splits = {"step held out (T_m = 4, T = 4)":
              ((f[C.T_M] == 4) & ((f[C.T_STEP] == 4) | (f[C.EXIT_KIND] == "total")),
               (f[C.T_M] == 4) & (f[C.T_STEP] == 4)),
              "sizes held out (two largest N)": (f[C.N].isin(big), f[C.N].isin(big) & step)}
    position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
    for share in (0.25, 0.5, 0.75):
        splits[f"prefix {share:.0%}"] = (position >= share, (position >= share) & step)
    splits = {name: split for name, split in splits.items() if only is None or only in name}
    lines = ["## Backtests of step-wise forecasts (q logged)", "",
             "| split | method | held-out points | R^2 held out | R^2 Ouro's way (all points) "
             "| MAPE | 50% band, per curve | 90% band, per curve |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    for name, (out, scored) in splits.items():
        out, scored = np.asarray(out, bool), np.asarray(scored, bool)
        train = data.select(~out, f"bench_steps: {name} left out")
        test = f[scored].reset_index(drop=True)
        y = test[C.LOSS].to_numpy()
        # Ouro's R^2 over every step point of the forecast curves' T_m, fitted ones included
        every = (f[C.T_M].isin(test[C.T_M].unique()) & (f[C.EXIT_KIND] == "step")).to_numpy()
        t0 = time.perf_counter()
        fit = _fit(train, seed, like=data)
        pred = bl.predict(fit, f[every | scored].reset_index(drop=True), seed=seed).table
        seconds = time.perf_counter() - t0
        mine = pred.iloc[np.flatnonzero(scored[every | scored])]
        all_rows = pred.iloc[np.flatnonzero(every[every | scored])]
        bands = {p: (mine[f"lower_{int(100 * p)}"].to_numpy(),
                     mine[f"upper_{int(100 * p)}"].to_numpy()) for p in (0.5, 0.9)}
        lines.append(_scores(name, "bayeslaw (joint, all T_m)", y, mine["median"].to_numpy(),
                             (all_rows[C.LOSS].to_numpy(), all_rows["median"].to_numpy()),
                             bands, test[C.RUN].to_numpy()))
        ls_test = _baseline(train.frame, test)
        ls_all = _baseline(train.frame, f[every].reset_index(drop=True))
        lines.append(_scores(name, "least squares per T_m (Ouro)", y, ls_test,
                             (f.loc[every, C.LOSS].to_numpy(), ls_all)))
        notes.append(f"- {name}: bayeslaw {fit.diagnostics}; {seconds:.0f} s")
        if pooled is not None:
            pooled.setdefault(name, []).append(
                (y, bands, np.char.add(f"seed{seed}:", test[C.RUN].to_numpy().astype(str)),
                 fit.diagnostics.ok, r2(y, mine["median"].to_numpy()), r2(y, ls_test)))
    return [*lines, "", *notes, ""]


def _over_seeds(rates: np.ndarray) -> str:
    """The seeds' mean coverage and its 95% t interval over seeds (the independent unit when
    one sweep's curves share one fit), clipped to [0, 1]; nothing for one seed."""
    if len(rates) < 2:
        return ""
    from scipy.stats import t

    half = t.ppf(0.975, len(rates) - 1) * rates.std(ddof=1) / np.sqrt(len(rates))
    low, high = max(0.0, rates.mean() - half), min(1.0, rates.mean() + half)
    return f"; mean {rates.mean():.2f} [{low:.2f}, {high:.2f}]"


def pooled_table(pooled: dict, seeds: list[int]) -> list[str]:
    """Each split over every seed: the bands' coverage per curve with every seed's curves
    pooled (each curve counted once, the interval over curves), each seed's own 90% coverage,
    and how many of the seeds' fits met every threshold.

    One simulated sweep is one draw of the truth: its held-out curves share the fit's error
    (the sizes held out all ride on one extrapolation of the size term), so a seed's curves
    over- or under-cover together; the pooled row is the calibration over sweeps, its interval
    over curves narrower than the evidence, so the seeds' mean 90% coverage is given with a t
    interval over seeds beside it.
    """
    lines = [f"## Every split over seeds {', '.join(map(str, seeds))} (curves pooled)", "",
             "| split | curves | 50% band, per curve | 90% band, per curve "
             "| 90% band by seed; their mean [t interval over seeds] "
             "| median R^2 held out: bayeslaw (least squares) | fits meeting every threshold |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, parts in pooled.items():
        y = np.concatenate([part[0] for part in parts])
        curves = np.concatenate([part[2] for part in parts])
        cells = [name, str(len(np.unique(curves)))]
        for p in (0.5, 0.9):
            lo = np.concatenate([part[1][p][0] for part in parts])
            hi = np.concatenate([part[1][p][1] for part in parts])
            cov = coverage_by_curve(y, lo, hi, curves, p)
            cells.append(f"{cov.rate:.2f} [{cov.low:.2f}, {cov.high:.2f}]")
        by_seed = np.array([coverage_by_curve(part[0], *part[1][0.9], part[2], 0.9).rate
                            for part in parts])
        cells.append(" / ".join(f"{rate:.2f}" for rate in by_seed) + _over_seeds(by_seed))
        cells.append(f"{np.median([part[4] for part in parts]):.4f} "
                     f"({np.median([part[5] for part in parts]):.4f})")
        cells.append(f"{sum(part[3] for part in parts)} of {len(parts)}")
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def link(seed: int) -> list[str]:
    """The link on held-out checkpoints: every third checkpoint's total left out and forecast."""
    lines = ["## The link on held-out checkpoints", "",
             "| q | held-out totals | R^2 | MAPE | 50% band, per curve | 90% band, per curve |",
             "| --- | --- | --- | --- | --- | --- |"]
    notes = []
    for logged in (True, False):
        table, _ = looped_step_sweep(q_logged=logged, seed=seed)
        data = bl.load(table)
        f = data.frame
        checkpoint = f.groupby(C.RUN).cumcount().to_numpy()
        out = ((f[C.EXIT_KIND] == "total").to_numpy() & (checkpoint % 3 == 1))
        train = data.select(~out, "bench_steps: every third checkpoint's total left out")
        t0 = time.perf_counter()
        fit = _fit(train, seed, like=data)
        test = f[out].reset_index(drop=True)
        pred = bl.predict(fit, test, seed=seed).table
        seconds = time.perf_counter() - t0
        y, med = test[C.LOSS].to_numpy(), pred["median"].to_numpy()
        cells = ["logged" if logged else "latent", str(len(y)), f"{r2(y, med):.4f}",
                 f"{100 * mape(y, med):.2f}%"]
        for p in (0.5, 0.9):
            tag = int(100 * p)
            cov = coverage_by_curve(y, pred[f"lower_{tag}"].to_numpy(),
                                    pred[f"upper_{tag}"].to_numpy(), test[C.RUN].to_numpy(), p)
            cells.append(f"{cov.rate:.2f} [{cov.low:.2f}, {cov.high:.2f}]")
        lines.append("| " + " | ".join(cells) + " |")
        notes.append(f"- q {'logged' if logged else 'latent'}: {fit.diagnostics}; "
                     f"{seconds:.0f} s")
    return [*lines, "", *notes, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seeds", help="comma-separated seeds for the backtests, one after "
                        "another, with a table of every split over them (curves pooled)")
    parser.add_argument("--only", choices=("recovery", "backtest", "link"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--splits", help="only the backtest splits whose name contains this "
                        "(e.g. 'sizes')")
    parser.add_argument("--figure", type=Path, help="save the q-logged fit's grid figure here")
    parser.add_argument("--sampler", action="append", default=[], metavar="KEY=JSON",
                        help="a [sampler] key over the default spec's, its value as JSON, "
                        "e.g. 'target_accept=0.99' (repeatable; for selection runs)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=JSON",
                        help="a key of another section over the default spec's, e.g. "
                        "'reference.D=2e8' (a change of the model; repeatable)")
    args = parser.parse_args(argv)
    sampler, sections = parse_overrides(args.sampler, args.set)
    SAMPLER.update(sampler)
    SECTIONS.update(sections)
    lines = [*results_header("Step-wise losses: recovery and backtests", "bench_steps.py"), ""]
    if args.only in (None, "recovery"):
        lines += recovery(args.seed, args.figure)
    if args.only in (None, "backtest") and args.seeds:
        seeds, pooled = [int(s) for s in args.seeds.split(",")], {}
        for seed in seeds:
            lines += [f"# Seed {seed}", "", *backtests(seed, pooled, args.splits)]
        lines += pooled_table(pooled, seeds)
    elif args.only in (None, "backtest"):
        lines += backtests(args.seed, only=args.splits)
    if args.only in (None, "link"):
        lines += link(args.seed)
    return emit(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
