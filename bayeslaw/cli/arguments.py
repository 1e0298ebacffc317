"""The ``bayeslaw`` command's argument parser: one function per subcommand.

:func:`build_parser` is what :func:`bayeslaw.cli.commands.main` parses with; options spelled the
same in every command mean the same (``--levels``: band probabilities; ``--seed``: one default,
:data:`bayeslaw.constants.DEFAULT_SEED`).
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import constants as C


def seed(text: str) -> int:
    """A ``--seed``: a whole number in [0, 2**32) (what numpy, PyMC and nutpie all take)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a seed is a whole number, got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"a seed is a whole number from 0 to {2**32 - 1}, "
                                         f"got {value}")
    return value


def _add_seed_arg(p: Any, what: str) -> None:
    """``--seed``: one default, :data:`bayeslaw.constants.DEFAULT_SEED`, in every command."""
    p.add_argument("--seed", type=seed, default=C.DEFAULT_SEED,
                   help=f"{what} (default %(default)s)")


def _add_sampler_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling")
    g.add_argument("--draws", type=int, help="posterior draws per chain (spec default 1000)")
    g.add_argument("--tune", type=int, help="tuning steps per chain (spec default 1000)")
    g.add_argument("--chains", type=int, help="number of chains (spec default 4)")
    _add_seed_arg(g, "random seed")
    g.add_argument("--backend", choices=("nutpie", "pymc"), help="NUTS implementation")
    g.add_argument("--strict", action="store_true",
                   help="exit non-zero (3) when convergence diagnostics fail")
    g.add_argument("--no-progress", action="store_true",
                   help="hide the progress bar (shown by default when stderr is a terminal, "
                        "not in CI)")


def _add_data_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data")
    g.add_argument("--column", action="append", default=[], metavar="OLD=NEW",
                   help="rename an input column, e.g. --column step=D (repeatable)")
    g.add_argument("--tokens-per-step", type=float, help="multiply D by this factor")
    g.add_argument("--min-D", type=float, help="drop points with fewer tokens (warm-up)")
    g.add_argument("--thin", type=int, metavar="K",
                   help="keep at most K points per run, log-spaced in D (last point kept)")
    _add_log_args(g)
    _add_schedule_arg(g)


def _add_schedule_arg(p: Any) -> None:
    p.add_argument("--schedule", metavar="FILE",
                   help="the runs' learning-rate schedules: a logged table (run, D, lr) or one "
                        "row per run (run, schedule, warmup, horizon, decay_start, ...)")


def _add_fit_parser(sub: Any) -> None:
    """``bayeslaw fit``: the data, the law and spec, the figure's axis, the method."""
    p = sub.add_parser("fit", help="fit a loss law to a sweep and write table, figure, fit")
    p.add_argument("data", nargs="?", help="CSV/Parquet table (default: bundled sweep)")
    p.add_argument("--law", help="law name (default from the columns: multi_power with a "
                                 "learning-rate schedule, iso_depth with N_once and N_rec, "
                                 "parallel_streams(_data) with P, looped_total with T_m, else "
                                 "chinchilla)")
    p.add_argument("--spec", help="TOML spec file or shipped spec name")
    p.add_argument("--out", default="bayeslaw-out", help="output folder")
    p.add_argument("--xscale", choices=("log", "linear"), default="log",
                   help="token axis of the grid figures (default log; linear as in the Ouro "
                        "paper's figures)")
    p.add_argument("--method", choices=C.METHODS,
                   default="nuts",
                   help="nuts (default) samples the posterior; by_curve (a table of curves: "
                        "curve_bend) estimates the values the curves share, then samples each "
                        "curve by itself given them (empirical Bayes: faster on many curves, "
                        "the shared values' uncertainty left out); laplace draws from the "
                        "normal approximation at the mode for a first look; pathfinder "
                        "(bayeslaw[approx]) took about as long as nuts through this command "
                        "on the bundled sweep and missed it on every table measured (docs: "
                        "Speed and convergence). "
                        "Both are labelled approximate; bayeslaw check refuses them")
    _add_data_args(p)
    _add_sampler_args(p)


def _add_backtest_parser(sub: Any) -> None:
    """``bayeslaw backtest``: the data, the split, the baseline and the recalibration."""
    p = sub.add_parser("backtest", help="fit on part of the data, score held-out forecasts")
    p.add_argument("data", nargs="?", help="CSV/Parquet table (default: bundled sweep)")
    p.add_argument("--law", help="law name")
    p.add_argument("--spec", help="TOML spec file or shipped spec name")
    p.add_argument("--split", required=True,
                   help="prefix:F | largest-N | largest-N:FRAC (the largest sizes covering "
                        "at least FRAC of the runs) | level:COL=VALUE | kfold:K, or "
                        "RUNS+prefix:F (the held-out runs keep their first F: e.g. "
                        "kfold:5+prefix:0.5)")
    p.add_argument("--no-baseline", action="store_true", help="skip the least-squares baseline")
    p.add_argument("--n-boot", type=int, default=100, help="baseline bootstrap replicates")
    p.add_argument("--recalibrate", nargs="?", const=True, default=False, metavar="SPLIT",
                   help="also score bands recalibrated from an inner backtest on each training "
                        "part: of the same split, or of SPLIT (one more fit per fold)")
    p.add_argument("--out", default="bayeslaw-backtest", help="output folder")
    _add_data_args(p)
    _add_sampler_args(p)
    _add_fleet_args(p, "folds")


def _add_fleet_args(p: argparse.ArgumentParser, what: str) -> None:
    g = p.add_argument_group("many fits at once (Dask; pip install 'bayeslaw[dask]')")
    g.add_argument("--workers", type=int, metavar="K",
                   help=f"run the {what} on a local cluster of K worker processes (default: "
                        "one after another in this process)")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help=f"run the {what} on the Dask scheduler at this address")


def _add_predict_parser(sub: Any) -> None:
    """``bayeslaw predict``: a grid, a table of points or a run; bands; recalibration."""
    p = sub.add_parser("predict", help="forecast the loss at new points or for a run")
    p.add_argument("fit", help="saved fit (fit.nc)")
    p.add_argument("--N", help="model sizes, comma-separated (a grid with --D, --T_m and --P "
                               "as the law needs)")
    p.add_argument("--D", help="tokens, comma-separated")
    p.add_argument("--T_m", help="maximum recurrent steps, comma-separated")
    p.add_argument("--P", help="parallel streams, comma-separated (laws with a P term)")
    p.add_argument("--points", help="CSV with the law's columns (N, D, T_m, P, N_once, "
                                    "horizon, ...) and group columns")
    p.add_argument("--run", help="a fitted run: forecast its rest up to --D")
    _add_schedule_arg(p)
    p.add_argument("--epistemic", action="store_true",
                   help="band of the law's value (no observation noise)")
    p.add_argument("--levels", default="0.5,0.9", help="band probabilities (default 0.5,0.9)")
    _add_seed_arg(p, "seed of the predictive draws")
    p.add_argument("--out", help="write CSV here instead of stdout")
    g = p.add_argument_group("recalibration")
    g.add_argument("--recalibrate", metavar="SPLIT",
                   help="recalibrate the bands from an inner backtest of SPLIT on the fit's data "
                        "(one more fit; e.g. kfold:5+prefix:0.5 for runs in progress)")
    g.add_argument("--widen", metavar="SPLIT",
                   help="widen the bands with the distance past each run's data, learned from "
                        "an inner backtest of SPLIT on the fit's data (one more fit; e.g. "
                        "prefix:0.5); forecasts of fitted runs only")
    g.add_argument("--widen-criterion", choices=("lpd", "msce", "coverage"),
                   help="what --widen learns for: the held-out points' log density (lpd, "
                        "the default), each run's band coverage against its levels (msce), "
                        "or the mean of those coverages against the levels (coverage)")
    g.add_argument("--widen-span", action="store_true",
                   help="--widen's distance in units of each run's fitted span in log D, "
                        "not in e-folds of D")
    g.add_argument("--widen-tails", action="store_true",
                   help="--widen also learns how much more the outer bands widen than the "
                        "50%% band (the widening's tail)")
    g.add_argument("--draws", type=int, help="the inner fit's draws per chain (spec default)")
    g.add_argument("--tune", type=int, help="the inner fit's tuning steps (spec default)")
    g.add_argument("--chains", type=int, help="the inner fit's chains (spec default)")


def _add_plot_parser(sub: Any) -> None:
    """``bayeslaw plot``: forecasts added to the grid figure, its axes and file."""
    p = sub.add_parser("plot", help="redraw the grid figure of a saved fit, with forecasts")
    p.add_argument("fit", help="saved fit (fit.nc)")
    p.add_argument("--extend-to", type=float,
                   help="forecast every curve up to this D (default, with no --add-N: twice "
                        "the largest D)")
    p.add_argument("--add-N", action="append", type=float, default=[],
                   help="add a column of forecasts for this new model size (repeatable; "
                        "default, with no --extend-to: the sweep's next N)")
    p.add_argument("--no-forecast", action="store_true",
                   help="draw the data's range only (no default forecast)")
    p.add_argument("--xscale", choices=("log", "linear"), default="log",
                   help="token axis (default log; linear as in the Ouro paper's figures)")
    p.add_argument("--epistemic", action="store_true", help="bands of the law's value")
    p.add_argument("--ylim", help="loss range shown, LOW,HIGH (zoom in on the bands)")
    _add_schedule_arg(p)
    p.add_argument("--out", default="grid.png", help="figure file (.png or .svg)")


def _add_check_parser(sub: Any) -> None:
    """``bayeslaw check``: convergence thresholds and the posterior predictive check."""
    p = sub.add_parser("check", help="exit non-zero when a saved fit fails convergence or "
                                     "its posterior predictive check (for CI)")
    p.add_argument("fit", help="saved fit (fit.nc)")
    g = p.add_argument_group("convergence thresholds")
    g.add_argument("--max-rhat", type=float, default=C.MAX_RHAT, help="default %(default)s")
    g.add_argument("--min-ess", type=float, default=C.MIN_ESS,
                   help="bulk and tail ESS (default %(default)s)")
    g.add_argument("--max-divergences", type=int, default=0, help="default %(default)s")
    g.add_argument("--min-bfmi", type=float, default=C.MIN_BFMI, help="default %(default)s")
    g = p.add_argument_group("posterior predictive check")
    g.add_argument("--levels", default="0.9",
                   help="bands whose coverage of the observed points is checked, "
                        "comma-separated: one check each (default %(default)s)")
    g.add_argument("--alpha", type=float, default=0.01,
                   help="error rate of the coverage interval and p-value (%(default)s)")
    g.add_argument("--tolerance", type=float, default=0.05,
                   help="coverage accepted within level +- tolerance (%(default)s)")
    g.add_argument("--no-ppc", action="store_true", help="check convergence only")
    _add_seed_arg(g, "seed of the replicated data")


def _add_sbc_parser(sub: Any) -> None:
    """``bayeslaw sbc``: simulation-based calibration of a spec on a table's points."""
    p = sub.add_parser("sbc", help="simulation-based calibration of a spec on a table's points "
                                   "(resumable; exit 1 when ranks are not uniform)")
    p.add_argument("data", nargs="?", help="CSV/Parquet table whose points (runs, N, D, T_m) "
                                           "are simulated; its losses are ignored (default: "
                                           "bundled sweep)")
    p.add_argument("--law", help="law name")
    p.add_argument("--spec", help="the generating spec (TOML file or shipped name)")
    p.add_argument("--fit-spec", help="fit with this spec instead (default: --spec)")
    p.add_argument("--n-sims", type=int, default=100, help="simulations (default %(default)s)")
    p.add_argument("--n-ranks", type=int, default=99,
                   help="posterior draws kept per rank (default %(default)s)")
    p.add_argument("--alpha", type=float, default=0.01,
                   help="family-wise level of the rank tests (default %(default)s)")
    p.add_argument("--out", default="sbc.jsonl",
                   help="records file (JSON lines): each finished fit is appended, a rerun "
                        "skips those there (default %(default)s); the rank plot goes beside "
                        "it (.png)")
    _add_data_args(p)
    _add_sampler_args(p)
    _add_fleet_args(p, "simulations")


def _add_report_parser(sub: Any) -> None:
    """``bayeslaw report``: the fits, the title and the compute budget."""
    p = sub.add_parser("report", help="write an HTML and a Markdown report of saved fits")
    p.add_argument("fits", nargs="+", metavar="FIT",
                   help="saved fit(s) (fit.nc); several add a model comparison")
    p.add_argument("--out", default="bayeslaw-report",
                   help="output folder (report.html, report.md and its figures)")
    p.add_argument("--title", help="document title")
    p.add_argument("--budget", type=float,
                   help="compute budget in FLOPs of the compute-optimal table (default ten "
                        "times the largest run)")
    _add_seed_arg(p, "seed of the predictive draws")


def _add_log_args(g: Any) -> None:
    """The options of training logs (TensorBoard, W&B, MLflow), as ``bl.load`` takes them."""
    g.add_argument("--source", choices=("tensorboard", "wandb", "mlflow", "table"),
                   help="force the kind of source (default: told from the path)")
    g.add_argument("--metric", help="training logs: the loss scalar (default: the one whose "
                                    "name contains 'loss')")
    g.add_argument("--meta", help="training logs: per-run table (CSV with a run column: N, "
                                  "T_m, horizon, schedule, group columns), over the configs")
    g.add_argument("--map", action="append", default=[], metavar="CONFIG_KEY=COLUMN",
                   help="training logs: take a column from the runs' config, e.g. --map "
                        "model.n_params=N (repeatable)")
    g.add_argument("--tokens-metric", help="training logs: a logged tokens counter for D")
    g.add_argument("--lr-metric", help="training logs: the learning-rate scalar (default: one "
                                       "named lr or learning_rate), as the lr column")


def _add_import_parser(sub: Any) -> None:
    """``bayeslaw import``: training logs -> a tidy table (the log options of ``bl.load``)."""
    p = sub.add_parser("import", help="convert training logs (TensorBoard, W&B, MLflow) to a "
                                      "tidy table, every logged point kept")
    p.add_argument("src", help="TensorBoard log folder (one subfolder per run), W&B line plot "
                               "CSV export or wandb:ENTITY/PROJECT, MLflow mlruns/ or .db")
    _add_log_args(p)
    p.add_argument("--tokens-per-step", type=float, help="D = step x this many tokens")
    p.add_argument("--out", required=True, help="tidy table to write (.csv)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bayeslaw`` command."""
    parser = argparse.ArgumentParser(
        prog="bayeslaw",
        description="Bayesian forecasting of language-model training loss: fit a loss law to "
                    "a sweep, forecast with credible bands, backtest on held-out data.")
    parser.add_argument("--version", action="version", version=f"bayeslaw {C.VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_fit_parser, _add_backtest_parser, _add_predict_parser, _add_plot_parser,
                _add_check_parser, _add_sbc_parser, _add_report_parser, _add_import_parser):
        add(sub)
    return parser
