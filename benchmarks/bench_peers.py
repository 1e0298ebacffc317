"""Peer benchmark: NSL-PFN's scaling-curve extrapolation protocol, run with bayeslaw.

Run from the repository root::

    python benchmarks/bench_peers.py [--mode pooled|alone] [--datasets IC,DD,...]
        [--draws N --tune N --chains N --seed S] [--max-context N] [--min-portion F]
        [--selection]
        [--spec SPEC] [--widen] [--out FILE_OR_FOLDER]

Data: the seven data sets of NSL-PFN's benchmark (Lee et al., ICML 2025, arXiv 2505.23032)
in ``../shared/data/nslpfn_bench/`` beside the repository (``README.txt`` there describes
them; ``--data`` points elsewhere).  Each ``<dataset>.csv`` holds ``dataset, curve, x, y,
role``: the ``context`` rows of a curve are fitted, its ``target`` rows (all beyond the
context) forecast and scored.  Rows are used as given (LM's fourfold repeats included).

Scales: per curve, ``D = x / (the curve's largest context x)`` and ``loss = y / y_scale``
(``y_scale`` from ``curves.csv``: the curve's largest context y for DD, Nano and ColPret, 1
elsewhere).  The fit, the forecasts and the log densities are therefore on ``y / y_scale``,
the scale on which the protocol scores LL (:func:`bayeslaw.evaluation.metrics.curve_scores`
gets ``y_scale=1``: already divided); RMSLE and MSCE do not depend on the scale.  The spec is
the default spec of a table of curves (``curve_bend``: each curve's shape from its own points,
the level and the noise pooled; chosen over the learned population ``curve_bend_population``
on the selection splits, ``benchmarks/results/peers_selection_*_2026-12-04.md``) in pooled
mode and ``curve_bend_population`` in alone mode (:data:`DEFAULT_SPECS`), with the reference
set to ``D = 1`` (each curve's last context point); ``--spec`` names another (a shipped name
or a TOML path), whose reference is set to ``D = 1`` in the same way.

Scores per curve on its targets (:func:`~bayeslaw.evaluation.metrics.curve_scores`): RMSLE of
the predictive median, LL (mean log predictive density, :func:`bayeslaw.log_density`) and
MSCE over the levels 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99 (central intervals of
``Prediction.draws``, numpy's linear quantiles, bounds included); each averaged over the
curves of a data set.  ``NLP+Nano`` averages the per-curve scores of NMT, LM, BB and Nano
(44 curves), each data set fitted by itself.  Beside them: seconds per curve (fit, forecast
and densities), the fits' worst R-hat and total divergences, and the 50% / 90% band coverage
per curve (each curve's share of targets inside, the mean over curves, with the
Clopper-Pearson interval over curves).

Modes: ``--mode pooled`` fits one model per data set on every curve's context (what the
spec shares across curves is shared: with the default, the level and the noise);
``--mode alone`` fits each curve by itself.  ``--max-context
N`` thins each curve's context to at most N points spread evenly in log x (said in the
output).  ``--min-portion F`` leaves each curve's context below ``F`` times its last context
x out of the fit (at least its last three points kept; scored rows unchanged): an early
transient the law's bend does not reach, as ``bl.load_misfitting`` leaves out its first 10%.
The published rows (NSL-PFN, LC-PFN, MCMC) are the README's figures
(:data:`PUBLISHED`).  Targets, judged in pooled mode on ColPret and NLP+Nano: RMSLE and MSCE
no higher, LL no lower than NSL-PFN's.  Nothing here is tuned on them.

``--selection``: inner splits of the context only, on IC and DD (the data sets on which the
law's form, priors and noise may be chosen): each curve's first
``max(3, min(int(0.5 L + 0.5), L - 1))`` context points (NSL-PFN's own split rule) are
fitted and the rest of its context scored; targets are never read.  No published rows then.

``--widen``: each data set's forecast is also scored widened (:class:`bayeslaw.Widening`:
the predictive draws spread around their median by ``scale (1 + rate d)``, ``d`` the e-folds
of x past the curve's last context point, or with ``--widen span`` that distance over the
curve's context span in log x), the widening learned on the context alone: its
curves re-split by NSL-PFN's rule, the first part fitted, the widening that best forecasts the
rest of the context kept: by the mean log density, or with ``--widen-criterion msce`` by
each curve's calibration error as scored here, or ``coverage`` (each level's coverage
averaged over curves); ``--widen-tails`` learns the tails' stretch too
(:meth:`bayeslaw.Widening.learn`).  One more
fit per data set (per curve alone); both rows are printed and judged.  ``--widen shared``
learns nothing on the data set scored: it applies one widening per span
(:data:`SHARED_WIDENINGS`, by mode and spec), the geometric mean of the two learned on the
selection splits (DD and IC) with that mode and spec, so no context or target row of the
scored data set chooses it.

``--out`` writes the printed tables as Markdown, atomically, with the exact command at the
top; a folder gets ``peers_<mode>[_selection]_<date>.md``.  Beside it, ``<name>_curves.csv``
holds every curve's scores (one row per curve, its data set in ``dataset``).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import shlex
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import bayeslaw as bl
from bayeslaw.evaluation import metrics
from bayeslaw.evaluation.widen import CRITERIA
from bayeslaw.files import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "nslpfn_bench"
DATASETS = ("IC", "NMT", "LM", "BB", "DD", "Nano", "ColPret")
#: The data sets NSL-PFN pools into one row (README.txt: "NLP+Nano").
NLP_NANO = ("NMT", "LM", "BB", "Nano")
#: The data sets the issue allows for choosing the law's form, priors and noise.
SELECTION = ("IC", "DD")
#: The default spec per mode: a table of curves' default (curve_bend) pooled; alone, the
#: learned population's spec (curve_bend_population: with its effects dropped, each curve gets
#: the population's prior; curve_bend's fixed-spread effects would leave it only their centres').
#: Every spec's reference is set to D = 1 (each curve's last context point, :func:`bench_spec`).
DEFAULT_SPECS = {"pooled": "curve_bend", "alone": "curve_bend_population"}

#: ``--widen shared``: ``(scale, rate)`` per context span, the geometric means of the widenings
#: learned on DD's and IC's selection splits with ``--widen span`` (DD 0.98 / 14.51, IC 0.76 /
#: 20.23: benchmarks/results/peers_selection_widen_2026-12-03.md), chosen before any other data
#: set was scored with it.
SHARED_WIDENING = (float(np.sqrt(0.98 * 0.76)), float(np.sqrt(14.51 * 20.23)))
#: ``--widen shared`` in ``--mode alone``: the same rule for curves fitted alone (one widening
#: learned from every curve's own fit, :func:`learn_widening_alone`), on the same selection
#: splits: DD 1.24 / 7.89, IC 1.20 / 0.08 (benchmarks/results/
#: peers_selection_{dd,ic}_alone_widen_span_2026-12-03.md).
SHARED_WIDENING_ALONE = (float(np.sqrt(1.24 * 1.20)), float(np.sqrt(7.89 * 0.08)))
#: ``--widen shared`` per ``(mode, spec)``: the rule above for each spec that has one learned
#: (a third number, where there is one, is the tail: the mean of the two learned).
#: (``curve_bend_population`` was named ``curve_bend`` when its two were learned.)  Pooled
#: ``curve_bend``: DD 1.299 / 6.336, IC 1.218 / 0 (benchmarks/results/
#: peers_selection_{dd,ic}_curve_bend_widen_span_2026-12-04.md): IC's learned rate is 0, so the
#: rule gives rate 0, a constant widening. Keyed by the spec's shipped name (a path is not
#: matched) and, where it is set, ``--min-portion`` (:func:`widening_key`).
SHARED_WIDENINGS: dict[tuple[str, str], tuple[float, ...]] = {
    ("pooled", "curve_bend_population"): SHARED_WIDENING,
    ("alone", "curve_bend_population"): SHARED_WIDENING_ALONE,
    ("pooled", "curve_bend"): (float(np.sqrt(1.299 * 1.218)), 0.0),
    # with --min-portion 0.1, before sigma_min_points (not relearned): DD 1.386 / 5.408, IC
    # 1.196 / 0 (benchmarks/results/
    # peers_selection_{dd,ic}_curve_bend_min_portion_2026-12-06.md)
    ("pooled", "curve_bend --min-portion 0.1"): (float(np.sqrt(1.386 * 1.196)), 0.0),
    # learned for calibration (--widen-criterion msce), the cut the spec's own, with the
    # spec's sigma_min_points = 6: DD 0.1173 / 177.4, IC 0.1 / 70.63 (benchmarks/results/
    # own_noise_scale_2026-12-06/peers_selection_{dd,ic}_msce.md); before that key DD
    # 0.5121 / 39.72, IC 0.1489 / 44.56 (peers_selection_{dd,ic}_curve_bend_min_portion_msce_
    # grid_2026-12-06.md, the widening of the 2026-12-06 target rows named "msce")
    ("pooled", "curve_bend --min-portion 0.1 --widen-criterion msce"): (
        float(np.sqrt(0.1173 * 0.1)), float(np.sqrt(177.4 * 70.63))),
    # learned for each level's coverage averaged over curves (--widen-criterion coverage),
    # with sigma_min_points = 6: DD 0.1083 / 140.9, IC 0.4032 / 7.924 (benchmarks/results/
    # own_noise_scale_2026-12-06/peers_selection_{dd,ic}_min6.md); before that key DD 0.1 /
    # 158.1, IC 0.2218 / 17.74 (peers_selection_{dd,ic}_curve_bend_coverage_2026-12-06.md,
    # the rate grid to 500).  The criterion is flat along k = scale * rate * d (DD about 15
    # per span): the geometric means keep the products' geometric mean.
    ("pooled", "curve_bend --min-portion 0.1 --widen-criterion coverage"): (
        float(np.sqrt(0.1083 * 0.4032)), float(np.sqrt(140.9 * 7.924))),
    # learned before sigma_min_points (not relearned): with the tails (--widen-tails): DD 0.1 /
    # 158.1 / tail 0, IC
    # 0.1818 / 22.33 / tail 0.2 (benchmarks/results/
    # peers_selection_{dd,ic}_curve_bend_coverage_tails_2026-12-06.md); the tail is their mean
    ("pooled", "curve_bend --min-portion 0.1 --widen-criterion coverage --widen-tails"): (
        float(np.sqrt(0.1 * 0.1818)), float(np.sqrt(158.1 * 22.33)), 0.1),
}

#: Published figures, ``(RMSLE, LL, MSCE)`` per data set (None: not published), from
#: ``../shared/data/nslpfn_bench/README.txt`` (the tables of Lee et al. 2025, 3 training runs).
PUBLISHED = {
    "NSL-PFN": {"ColPret": (0.027, 2.794, 0.0615), "NLP+Nano": (0.019, 2.773, 0.1145),
                "IC": (0.028, 3.330, 0.0512), "DD": (0.034, 2.565, 0.0826)},
    "LC-PFN": {"ColPret": (None, None, 0.1071), "NLP+Nano": (0.0398, 1.519, 0.2674)},
    "MCMC (M4)": {"ColPret": (None, None, 0.6187), "NLP+Nano": (0.0235, 2.216, 0.3732)},
}
#: Published seconds per curve (same README); MCMC with the BNSL law took 280.6.
PUBLISHED_SECONDS = {"NSL-PFN": 0.02, "LC-PFN": 0.02, "MCMC (M4)": 154.6}
#: The method whose figures are the targets.
TARGET_METHOD = "NSL-PFN"
#: Where the targets apply (pooled mode).
TARGET_KEYS = ("ColPret", "NLP+Nano")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("pooled", "alone"), default="pooled")
    p.add_argument("--datasets", help=f"comma-separated, of {', '.join(DATASETS)} (default: "
                   f"all; with --selection {', '.join(SELECTION)})")
    p.add_argument("--method", choices=("nuts", "by_curve"), default="nuts",
                   help="bayeslaw.fit's method: nuts (one joint fit, the default) or by_curve "
                   "(the shared values estimated from every curve, then each curve sampled "
                   "by itself given them: bayeslaw.inference.by_curve)")
    p.add_argument("--draws", type=int)
    p.add_argument("--tune", type=int)
    p.add_argument("--chains", type=int)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-context", type=int, help="thin each curve's context to at most N "
                   "points, evenly in log x")
    p.add_argument("--min-portion", type=float, help="fit each curve's context from this "
                   "fraction of its last context x on (at least its last three points): an "
                   "early transient left out of the fit (sets the spec's data.min_portion; 0: "
                   "every point; default: the spec's own)")
    p.add_argument("--selection", action="store_true", help="inner splits of the context "
                   "(IC, DD): fit each curve's first half, score the rest")
    p.add_argument("--spec", help="a spec (TOML path or shipped name; default "
                   f"{DEFAULT_SPECS['pooled']} pooled, {DEFAULT_SPECS['alone']} alone); its "
                   "reference is set to D = 1, or --reference-d")
    p.add_argument("--reference-d", type=float, default=1.0, help="the specs' reference D "
                   "on the normalised x (1: each curve's last context point; sqrt(0.1) = "
                   "0.316 is the middle, in log x, of the window the 0.1 cut fits)")
    p.add_argument("--widen", nargs="?", const="span", choices=("tokens", "span", "shared"),
                   help="also score the forecast widened with the distance past each curve's "
                   "context (bayeslaw.Widening), learned on the context alone: one more fit "
                   "per data set; the distance in units of the curve's context span in log x "
                   "(span, the default: chosen on DD and IC's selection splits) or in e-folds "
                   "of x (tokens); shared: no learning, the selection splits' widening "
                   "(SHARED_WIDENINGS)")
    p.add_argument("--widen-criterion", choices=CRITERIA, default="lpd",
                   help="what a learned widening optimizes on the inner held-out points: lpd "
                   "(the mean log density, the default), msce (each curve's calibration "
                   "error, as scored here) or coverage (the mean per-curve coverage at each "
                   "level against the level); with --widen shared, which learned pair to use")
    p.add_argument("--widen-tails", action="store_true",
                   help="the widening also learns how much more its outer bands widen than "
                   "its 50%% band (bayeslaw.Widening's tail); with --widen shared, which "
                   "learned widening to use")
    p.add_argument("--data", type=Path, default=DATA, help=f"default {DATA}")
    p.add_argument("--out", help="Markdown results file, or a folder for "
                   "peers_<mode>_<date>.md")
    args = p.parse_args(argv)
    args.spec = args.spec or DEFAULT_SPECS[args.mode]
    allowed = SELECTION if args.selection else DATASETS
    args.names = tuple(args.datasets.split(",")) if args.datasets else allowed
    unknown = [n for n in args.names if n not in allowed]
    if unknown:
        p.error(f"--datasets {','.join(unknown)}: choose among {', '.join(allowed)}"
                + (" (--selection uses only the data sets allowed for choosing)"
                   if args.selection else ""))
    if args.max_context is not None and args.max_context < 3:
        p.error(f"--max-context must be at least 3, got {args.max_context}")
    if args.min_portion is not None and not 0.0 <= args.min_portion < 1.0:
        p.error(f"--min-portion must be in [0, 1) (0: every point), got {args.min_portion}")
    if args.widen_tails and not args.widen:
        p.error("--widen-tails shapes a widening: give --widen too")
    return args


# ---------------------------------------------------------------------------------------------
# Data


def check_data(folder: Path, names: tuple[str, ...]) -> None:
    """Stop with a clear message when the benchmark's files are not in ``folder``."""
    missing = [f for f in ("curves.csv", *(f"{n}.csv" for n in names))
               if not (folder / f).exists()]
    if missing:
        raise SystemExit(f"no NSL-PFN benchmark data in {folder} (missing {', '.join(missing)})"
                         ": the benchmark reads ../shared/data/nslpfn_bench/ beside the "
                         "repository (README.txt there); pass --data DIR for another place")


def read_dataset(folder: Path, name: str) -> pd.DataFrame:
    """One data set's rows with each curve's ``y_scale`` (``curves.csv``)."""
    frame = pd.read_csv(folder / f"{name}.csv")
    scales = pd.read_csv(folder / "curves.csv")[["dataset", "curve", "y_scale"]]
    out = frame.merge(scales, on=["dataset", "curve"], how="left", validate="many_to_one")
    if out["y_scale"].isna().any():
        missing = out.loc[out["y_scale"].isna(), "curve"].unique()[:3].tolist()
        raise SystemExit(f"curves.csv has no y_scale for {name} curve(s) {missing}")
    return out


def inner_split(frame: pd.DataFrame) -> pd.DataFrame:
    """The context alone, re-split per curve by NSL-PFN's rule: its first points fitted.

    A curve of ``L`` context points keeps its first ``max(3, min(int(0.5 L + 0.5), L - 1))``
    (by x) as context and scores the rest; the original targets are dropped.
    """
    context = frame[frame["role"] == "context"].sort_values(["curve", "x"], kind="stable")
    position = context.groupby("curve").cumcount()
    size = context.groupby("curve")["x"].transform("size")
    keep = np.maximum(3, np.minimum((0.5 * size + 0.5).astype(int), size - 1))
    return context.assign(role=np.where(position < keep, "context", "target"))


def thin_context(frame: pd.DataFrame, max_context: int) -> pd.DataFrame:
    """Each curve's context thinned to at most ``max_context`` points, evenly in log x.

    For ``max_context`` values evenly spaced in log x between the curve's smallest and largest
    context x, the nearest context point (repeats kept once); targets are untouched.
    """
    keep = []
    for _, rows in frame[frame["role"] == "context"].groupby("curve"):
        rows = rows.sort_values("x", kind="stable")
        if len(rows) <= max_context:
            keep.extend(rows.index)
            continue
        logx = np.log(rows["x"].to_numpy())
        grid = np.linspace(logx[0], logx[-1], max_context)
        nearest = np.abs(logx[None, :] - grid[:, None]).argmin(axis=1)
        nearest[-1] = len(rows) - 1  # the largest x, which sets the curve's scale
        keep.extend(rows.index[np.unique(nearest)])
    return frame.loc[sorted(keep) + frame.index[frame["role"] == "target"].tolist()]


def normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """bayeslaw's columns: ``run`` the curve, ``D = x / x_max`` (largest context x of the
    curve) and ``loss = y / y_scale``."""
    x_max = frame[frame["role"] == "context"].groupby("curve")["x"].max()
    return frame.assign(run=frame["curve"], D=frame["x"] / frame["curve"].map(x_max),
                        loss=frame["y"] / frame["y_scale"])


# ---------------------------------------------------------------------------------------------
# Fitting and scoring


@dataclass(frozen=True)
class Scored:
    """Per-curve scores (``curves``) and per-fit facts (``fits``) of one data set."""

    curves: pd.DataFrame
    fits: pd.DataFrame


def curve_row(curve: str, y: np.ndarray, log_density: np.ndarray, draws: np.ndarray,
              suffix: str = "") -> dict:
    """One curve's NSL-PFN scores and its share of targets inside the 50% and 90% bands
    (column names end in ``suffix``)."""
    s = metrics.curve_scores(y, log_density, draws=draws, y_scale=1.0)  # y already / y_scale
    row = {"rmsle": s.rmsle, "ll": s.ll, "msce": s.msce}
    for level in (0.5, 0.9):
        lower, upper = metrics.central_bounds(draws, level)
        row[f"in{level * 100:g}"] = float(np.mean((y >= lower) & (y <= upper)))
    return {"curve": curve, "n": s.n} | {k + suffix: v for k, v in row.items()}


def one_row_per_point(context: pd.DataFrame) -> pd.DataFrame:
    """The context as bayeslaw fits it: one row per (run, D), repeated rows averaged (LM
    repeats every point four times, digitised ColPret curves repeat an x); the targets are
    scored as they are, repeats included, as the protocol does."""
    return context.groupby(["run", "D"], as_index=False, sort=False)["loss"].mean()


def fit_context(context: pd.DataFrame, spec: object, args: argparse.Namespace) -> bl.Fit:
    """``spec`` fitted to context rows (convergence shown in the table, not warned); the
    spec's ``data.min_portion`` (or ``--min-portion``) leaves each curve's early context out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bl.ConvergenceWarning)
        return bl.fit(bl.load(one_row_per_point(context)), spec, seed=args.seed,
                      draws=args.draws, tune=args.tune, chains=args.chains, progress=False,
                      method=getattr(args, "method", "nuts"))


def learn_widening(frame: pd.DataFrame, spec: object, args: argparse.Namespace) -> bl.Widening:
    """``--widen``: a :class:`bayeslaw.Widening` learned on the context alone.

    Each curve's context is re-split by NSL-PFN's rule (:func:`inner_split`) and scaled
    afresh (:func:`normalise`: D = 1 at the inner part's last point); ``spec`` is fitted to
    the inner part and the widening that best forecasts the rest of the context is kept.
    No target row is read.
    """
    inner = normalise(inner_split(frame))
    result = fit_context(inner[inner["role"] == "context"], spec, args)
    held = inner[inner["role"] == "target"][["run", "D", "loss"]].reset_index(drop=True)
    return bl.Widening.learn(result, held, seed=args.seed, source="NSL-PFN's rule on the "
                             "context", per_span=args.widen == "span",
                             criterion=args.widen_criterion, tails=args.widen_tails)


def widening_key(args: argparse.Namespace) -> str:
    """The spec's name in :data:`SHARED_WIDENINGS`: with ``--min-portion``, a
    ``--reference-d`` other than 1 and a ``--widen-criterion`` other than lpd, they too."""
    key = args.spec
    if portion(args):
        key += f" --min-portion {portion(args):g}"
    if getattr(args, "reference_d", 1.0) != 1.0:
        key += f" --reference-d {args.reference_d:g}"
    if getattr(args, "widen_criterion", "lpd") != "lpd":
        key += f" --widen-criterion {args.widen_criterion}"
    if getattr(args, "widen_tails", False):
        key += " --widen-tails"
    return key


def shared_pair(mode: str, spec: str) -> tuple[float, ...]:
    """``(scale, rate[, tail])`` of ``--widen shared`` for ``mode`` and the spec named
    ``spec``."""
    pair = SHARED_WIDENINGS.get((mode, spec))
    if pair is None:
        raise SystemExit(f"--widen shared: no widening learned for --mode {mode} --spec {spec} "
                         f"(learned: {sorted(SHARED_WIDENINGS)}); run --selection --mode {mode} "
                         "--widen span on DD and IC with that spec (by its shipped name) and add "
                         "their geometric mean to SHARED_WIDENINGS")
    return pair


def shared_widening(mode: str, spec: str) -> bl.Widening:
    """``--widen shared``: the widening of :data:`SHARED_WIDENINGS` for ``mode`` and
    ``spec``, per context span, learned on nothing here."""
    scale, rate, *tail = shared_pair(mode, spec)
    return bl.Widening(scale, rate, source=f"DD and IC selection splits, {mode} fits of {spec} "
                       "(geometric mean)", per_span=True, tail=tail[0] if tail else 0.0)


@functools.cache  # a frozen ModelSpec: read from disk once per argument pair
def bench_spec(spec: str, min_portion: float | None = None, reference: float = 1.0) -> object:
    """The spec ``spec`` (a shipped name or a TOML path) with its reference at D = 1: each
    curve's last context point, the scale :func:`normalise` puts every curve on (or at D =
    ``reference`` on that scale); with ``min_portion``, its ``data.min_portion`` set to it."""
    d = bl.load_spec(spec, fallback="curve_bend").to_dict()  # overrides merge over curve_bend
    d["reference"] = {"D": reference}
    if min_portion is not None:
        d["data"] = {**d.get("data", {}), "min_portion": min_portion}
    return bl.ModelSpec.from_dict(d)


def portion(args: argparse.Namespace) -> float:
    """The share of each curve's last context x before which its context is left out of the
    fit: ``--min-portion``, else the spec's own ``data.min_portion``."""
    return bench_spec(args.spec, args.min_portion).data.min_portion


def learn_widening_alone(frame: pd.DataFrame, spec: object, args: argparse.Namespace
                         ) -> bl.Widening:
    """``--widen`` in ``--mode alone``: one widening learned from every curve's own fit.

    As :func:`learn_widening`, but each curve's inner part is fitted by itself (as the mode
    fits it) and the one widening that best forecasts the rest of every curve's context is
    kept (:meth:`bayeslaw.Widening.learn` over all the fits): a curve of a few inner points
    says too little to learn its own.  No target row is read.
    """
    inner = normalise(inner_split(frame))
    fits, helds = [], []
    for _, rows in inner.groupby("run", sort=True):
        rows = rows.assign(run=ALONE_RUN)
        held = rows[rows["role"] == "target"][["run", "D", "loss"]].reset_index(drop=True)
        if held.empty:
            continue
        fits.append(fit_context(rows[rows["role"] == "context"], spec, args))
        helds.append(held)
    return bl.Widening.learn(fits, helds, seed=args.seed, source="NSL-PFN's rule on the "
                             "context, every curve alone", per_span=args.widen == "span",
                             criterion=args.widen_criterion, tails=args.widen_tails)


def score_unit(frame: pd.DataFrame, spec: object, args: argparse.Namespace,
               widen: bl.Widening | None = None) -> tuple[list[dict], dict]:
    """Fit the context rows of ``frame``'s curves together; score its targets per curve.

    With ``--widen`` each curve's row also holds the scores of the widened forecast
    (columns ending in ``_w``): ``widen``'s, or one learned or shared here.
    """
    start = time.perf_counter()
    context = frame[frame["role"] == "context"]
    target = frame[frame["role"] == "target"].reset_index(drop=True)
    runs = frame["run"].unique()
    facts = {"curves": len(runs), "error": "",
             "runs": ", ".join(runs[:2]) + (f" and {len(runs) - 2} more" if len(runs) > 2 else "")}
    try:
        if widen is None and args.widen:
            widen = (shared_widening(args.mode, widening_key(args)) if args.widen == "shared"
                     else learn_widening(frame, spec, args))
        fit = fit_context(context, spec, args)
        pred = bl.predict(fit, target[["run", "D"]], seed=args.seed)
        log_dens = np.asarray(bl.log_density(fit, target[["run", "D", "loss"]]), float)
        if widen is not None:
            wide = np.asarray(widen.apply(fit, pred).draws)
            wide_dens = widen.log_density(fit, target[["run", "D", "loss"]], seed=args.seed)
    except bl.BayeslawError as err:  # one failed fit is reported, not the end of the run
        facts.update(seconds=time.perf_counter() - start, max_rhat=np.nan, divergences=0,
                     error=str(err).splitlines()[0])
        return [], facts
    facts.update(seconds=time.perf_counter() - start, max_rhat=fit.diagnostics.max_rhat,
                 divergences=fit.diagnostics.divergences)
    if widen is not None:
        facts.update(max_rhat=max(fit.diagnostics.max_rhat, widen.max_rhat),
                     divergences=fit.diagnostics.divergences + widen.divergences,
                     widen_scale=widen.scale, widen_rate=widen.rate, widen_tail=widen.tail,
                     widen_points=widen.n_points, widen_span=widen.per_span)
    draws = np.asarray(pred.draws)
    y = target["loss"].to_numpy()
    rows = []
    for curve, idx in target.groupby("run").indices.items():
        row = curve_row(curve, y[idx], log_dens[idx], draws[:, idx])
        if widen is not None:
            row |= curve_row(curve, y[idx], wide_dens[idx], wide[:, idx], "_w")
        rows.append(row)
    return rows, facts


#: The run name each curve is fitted under in ``--mode alone`` (scored under its own).
ALONE_RUN = "curve"


def alone_spec(spec: object) -> object:
    """The spec for one curve fitted by itself: no effects by curve (a population of one
    curve has no spread to learn) and one noise scale."""
    loaded = bl.load_spec(spec)
    if any(e.pooling == "none" for e in loaded.effects):
        raise SystemExit(f"--mode alone with {loaded.law}'s spec of fixed-spread effects "
                         "(pooling = 'none'): fitted alone, a curve would get the effects' "
                         "centres' priors, not its own; use --mode pooled, or a spec with "
                         "partially pooled effects (curve_bend_population)")
    d = loaded.with_pooling("complete").to_dict()
    d["likelihood"]["sigma_by"] = "none"
    d["likelihood"].pop("sigma_spread", None)
    return bl.ModelSpec.from_dict(d)


def score_dataset(frame: pd.DataFrame, spec: object, args: argparse.Namespace) -> Scored:
    """Every curve of a data set scored: one fit (pooled) or one per curve (alone: ``spec``
    is then already :func:`alone_spec`'s)."""
    units = ([frame] if args.mode == "pooled"
             else [rows for _, rows in frame.groupby("run", sort=True)])
    curves, fits = [], []
    widen = (learn_widening_alone(frame, spec, args)
             if args.mode == "alone" and args.widen in ("span", "tokens") else None)
    for unit in units:
        if args.mode == "alone":  # every curve under one run name: one compiled model for all
            name = str(unit["run"].iloc[0])  # (the run names are the model's structure)
            rows, facts = score_unit(unit.assign(run=ALONE_RUN), spec, args, widen)
            rows = [{**row, "curve": name} for row in rows]
            facts["runs"] = name
        else:
            rows, facts = score_unit(unit, spec, args)
        curves.extend(rows)
        fits.append(facts)
        if facts["error"]:
            print(f"  fit failed ({facts['runs']}): {facts['error']}", flush=True)
    columns = ["curve", "n"] + [c + w for w in ("", "_w") if w == "" or args.widen
                                for c in ("rmsle", "ll", "msce", "in50", "in90")]
    return Scored(pd.DataFrame(curves, columns=columns), pd.DataFrame(fits))


def prepared(folder: Path, name: str, args: argparse.Namespace) -> pd.DataFrame:
    """A data set read, split (``--selection``), thinned (``--max-context``) and normalised."""
    frame = read_dataset(folder, name)
    if args.selection:
        frame = inner_split(frame)
    if args.max_context is not None:
        frame = thin_context(frame, args.max_context)
    return normalise(frame)


# ---------------------------------------------------------------------------------------------
# Summaries, tables and targets


def summary(scored: Scored, label: str, suffix: str = "") -> dict:
    """One table row: the mean scores over curves, coverage with its interval over curves
    (the columns ending in ``suffix``: ``_w`` for the widened forecast)."""
    f = scored.curves
    c = f[["curve", "n"]].assign(**{k: f[k + suffix] for k in
                                    ("rmsle", "ll", "msce", "in50", "in90")})
    f = scored.fits
    attempted = int(f["curves"].sum())
    row = {"method": label, "curves": f"{len(c)}" + (f" of {attempted}"
                                                    if len(c) < attempted else ""),
           "rmsle": c["rmsle"].mean(), "ll": c["ll"].mean(), "msce": c["msce"].mean(),
           "seconds": f["seconds"].sum() / max(attempted, 1),
           "max_rhat": f["max_rhat"].max(), "divergences": int(f["divergences"].sum())}
    for column in ("in50", "in90"):
        k, n = float(c[column].sum()), len(c)
        low, high = metrics.clopper_pearson(k, n) if n else (np.nan, np.nan)
        row[column] = (k / n if n else np.nan, low, high)
    return row


def published(key: str) -> list[dict]:
    """The published rows of data set ``key`` (none for NMT, LM, BB, Nano alone)."""
    rows = []
    for method, figures in PUBLISHED.items():
        if key in figures:
            rmsle, ll, msce = figures[key]
            rows.append({"method": method, "rmsle": rmsle, "ll": ll, "msce": msce,
                         "seconds": PUBLISHED_SECONDS[method]})
    return rows


def cell(value: object, digits: int) -> str:
    """A table cell: a number to ``digits`` decimals, a coverage with its interval, or -."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if isinstance(value, tuple):
        rate, low, high = value
        return f"{rate:.2f} [{low:.2f}, {high:.2f}]" if not np.isnan(rate) else "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


COLUMNS = (("method", "method", 0), ("curves", "curves", 0), ("rmsle", "RMSLE", 4),
           ("ll", "LL", 3), ("msce", "MSCE", 4), ("seconds", "s / curve", 2),
           ("max_rhat", "worst R-hat", 3), ("divergences", "divergences", 0),
           ("in50", "cov50 [95% CI over curves]", 0), ("in90", "cov90 [95% CI over curves]", 0))


def table(title: str, rows: list[dict]) -> str:
    """A Markdown table of summary and published rows under a heading."""
    lines = [f"## {title}", "", "| " + " | ".join(h for _, h, _ in COLUMNS) + " |",
             "|" + " --- |" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(k), d) for k, _, d in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def judged(key: str, row: dict) -> str:
    """Whether a pooled row meets its targets: NSL-PFN's RMSLE, LL and MSCE or better."""
    rmsle, ll, msce = PUBLISHED[TARGET_METHOD][key]
    checks = [("RMSLE", row["rmsle"], "<=", rmsle, row["rmsle"] <= rmsle),
              ("LL", row["ll"], ">=", ll, row["ll"] >= ll),
              ("MSCE", row["msce"], "<=", msce, row["msce"] <= msce)]
    parts = [f"{name} {value:.4f} {op} {goal}: {'met' if ok else 'NOT met'}"
             for name, value, op, goal, ok in checks]
    met = sum(bool(ok) for *_, ok in checks)
    partial = (f" (only {row['curves']} curves scored: failed fits, not comparable)"
               if " of " in row["curves"] else "")
    return (f"- target {key}, {row['method']} (against {TARGET_METHOD}): " + "; ".join(parts)
            + f" -> {met} of 3 met{partial}")


# ---------------------------------------------------------------------------------------------
# Running


def header(args: argparse.Namespace, argv: list[str]) -> str:
    """The results file's top: the exact command, the commit, the settings."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    # the code only: a results file written by an earlier run is not a change of the code
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "bayeslaw",
                            "benchmarks", "models", ":(exclude)benchmarks/results"],
                           capture_output=True, text=True).stdout
    lines = ["# Peer benchmark (NSL-PFN's protocol)", "",
             f"Command: `{shlex.join(['python', 'benchmarks/bench_peers.py', *argv])}`",
             f"Commit: {commit}" + (" with uncommitted changes" if dirty.strip() else ""),
             f"Date: {datetime.date.today().isoformat()}",
             f"Mode: {args.mode}; spec: {args.spec} (reference D = {args.reference_d:g}); "
             "draws / tune / chains: "
             f"{args.draws or 'spec'} / {args.tune or 'spec'} / {args.chains or 'spec'}; "
             f"seed {args.seed}; method {args.method}"]
    if args.max_context is not None:
        lines.append(f"Context thinned: at most {args.max_context} points per curve, evenly "
                     "in log x (--max-context); the published rows used every point.")
    if portion(args):
        lines.append(f"Early context left out of the fit: each curve's points below "
                     f"{portion(args):g} of its last context x (at least its last three "
                     "kept; the spec's data.min_portion, or --min-portion); scored rows "
                     "unchanged.")
    if args.widen == "shared":
        scale, rate, *tail = shared_pair(args.mode, widening_key(args))
        lines.append("Widened rows: bands widened by the one bayeslaw.Widening learned on DD's "
                     f"and IC's selection splits, scale {scale:.3f}, rate {rate:.2f} per context "
                     f"span{f', tail {tail[0]:.3f}' if tail else ''} (--widen shared; see the "
                     "script's docstring).")
    elif args.widen:
        lines.append("Widened rows: bands widened by a bayeslaw.Widening learned on the "
                     f"context alone for {args.widen_criterion}"
                     f"{', its tails too' if args.widen_tails else ''} (--widen, "
                     "--widen-criterion, --widen-tails; see the script's docstring).")
    if args.selection:
        lines.append("Selection: inner splits of the context only (first part fitted, rest "
                     "scored); targets not read; no published rows (they score the targets).")
    return "\n".join(lines) + "\n"


def summaries(result: Scored, label: str, args: argparse.Namespace) -> list[dict]:
    """The data set's rows: the fit's own forecast, and (``--widen``) the widened one."""
    rows = [summary(result, label)]
    if args.widen:
        rows.append(summary(result, label[:-1] + ", widened)", "_w"))
    return rows


def widening_line(result: Scored) -> str:
    """The widenings a data set's fits learned (``--widen``)."""
    f = result.fits.dropna(subset=["widen_scale"]) if "widen_scale" in result.fits else None
    if f is None or f.empty or not f["widen_points"].any():  # none learned (--widen shared)
        return ""
    # --mode alone learns one widening for a data set: every curve's row repeats it
    learned = f.drop_duplicates(subset=["widen_scale", "widen_rate", "widen_points"])
    over = (f"one widening for the {len(f)} curves, each fitted alone" if len(learned) == 1
            and len(f) > 1 else f"over {len(f)} fit(s)")
    return ("Widening learned on the context (NSL-PFN's rule applied to it; scale at the last "
            f"context point, rate per unit of distance past it): scale {f['widen_scale'].min():.4g}"
            f"-{f['widen_scale'].max():.4g}, rate {f['widen_rate'].min():.4g}-"
            f"{f['widen_rate'].max():.4g}, tail {f['widen_tail'].min():.4g}-"
            f"{f['widen_tail'].max():.4g} {over}, from "
            f"{int(learned['widen_points'].sum())} inner held-out points; distance "
            f"{'per context span' if f['widen_span'].all() else 'in e-folds of x'}.\n")


def report(scored: dict[str, Scored], args: argparse.Namespace) -> str:
    """Every table, the NLP+Nano pool, and the judged targets."""
    label = f"bayeslaw ({args.mode}{', selection' if args.selection else ''})"
    parts, rows = [], {}
    for name, result in scored.items():
        rows[name] = summaries(result, label, args)
    if all(n in scored for n in NLP_NANO):
        pool = Scored(pd.concat([scored[n].curves for n in NLP_NANO], ignore_index=True),
                      pd.concat([scored[n].fits for n in NLP_NANO], ignore_index=True))
        rows["NLP+Nano"] = summaries(pool, label, args)
    for key, own in rows.items():
        shown = own + ([] if args.selection else published(key))
        parts.append(table(key, shown))
        if key in scored:
            parts.append(widening_line(scored[key]))
        failed = scored[key].fits if key in scored else pd.DataFrame({"error": []})
        for _, fit in failed[failed["error"] != ""].iterrows():
            parts.append(f"Failed fit, not scored ({fit['runs']}): {fit['error']}\n")
    if args.mode == "pooled" and not args.selection:
        lines = [judged(key, row) for key in TARGET_KEYS if key in rows for row in rows[key]]
        if lines:
            parts.append("## Targets\n\n" + "\n".join(lines) + "\n")
    return "\n".join(p for p in parts if p)


def out_path(args: argparse.Namespace) -> Path | None:
    """Where ``--out`` writes: the file, or ``peers_<mode>[_selection]_<date>.md`` in a folder."""
    if args.out is None:
        return None
    if not (Path(args.out).is_dir() or args.out.endswith("/")):
        return Path(args.out)
    tag = args.mode + ("_selection" if args.selection else "")
    return Path(args.out) / f"peers_{tag}_{datetime.date.today().isoformat()}.md"


def main(argv: list[str] | None = None) -> None:
    """Run the chosen data sets, print their tables, write ``--out``."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    check_data(args.data, args.names)
    if not hasattr(bl, "log_density"):
        raise SystemExit("this bayeslaw has no bl.log_density (the log predictive density of "
                         "held-out rows, which the LL score needs)")
    spec = bench_spec(args.spec, args.min_portion, args.reference_d)
    if args.mode == "alone":  # before any output: refused when it cannot be fitted alone
        spec = alone_spec(spec)
    if args.widen == "shared":
        shared_pair(args.mode, widening_key(args))  # likewise: no widening learned for this spec
    top = header(args, argv)
    print(top, flush=True)
    scored = {}
    for name in args.names:
        frame = prepared(args.data, name, args)
        print(f"{name}: {frame['curve'].nunique()} curves, "
              f"{int((frame['role'] == 'context').sum())} context and "
              f"{int((frame['role'] == 'target').sum())} scored rows", flush=True)
        scored[name] = score_dataset(frame, spec, args)
        print(table(name, summaries(scored[name], f"bayeslaw ({args.mode})", args)), flush=True)
    body = report(scored, args)
    print(body)
    path = out_path(args)
    if path is not None:
        atomic_write_text(path, top + "\n" + body)
        curves = path.with_name(path.stem + "_curves.csv")
        atomic_write_text(curves, pd.concat([r.curves.assign(dataset=n) for n, r in
                                             scored.items()]).to_csv(index=False))
        print(f"written: {path} and {curves} (each curve's scores)")


if __name__ == "__main__":
    main()
