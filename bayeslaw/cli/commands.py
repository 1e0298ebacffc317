"""Command-line front end: parse, call the library, print.  No logic of its own.

User errors (bad data, bad spec, missing files) print one ``error:`` line and exit 2;
``--strict`` turns failed convergence diagnostics into exit code 3; ``bayeslaw check`` and
``bayeslaw sbc`` exit 1 when a check fails; a backtest or SBC whose folds or simulations
partly failed writes what the others gave and exits 4, naming each failed one.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import BayeslawError
from .arguments import build_parser

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.prediction import Prediction
    from ..posterior.result import Fit

EXIT_USER_ERROR = 2
EXIT_NOT_CONVERGED = 3
EXIT_CHECK_FAILED = 1
EXIT_TASKS_FAILED = 4

#: What ``bayeslaw fit --method laplace|pathfinder`` warns: where each approximation missed
#: NUTS (benchmarks/results/approx_2026-12-01.md; docs/user_guide/fitting.md, "First look").
APPROXIMATE_NOTE = {
    "laplace": "approximate posterior (Laplace at the mode): against NUTS it matched the "
               "law's shared coefficients (within 0.16 posterior sd) but not the group sds or "
               "the coefficients they vary (bundled sweep: b, beta and the sds too narrow; "
               "misfitting: the peak-LR sds off by up to 4 sd; benchmarks/results/"
               "approx_2026-12-01.md); refit with --method nuts before relying on intervals",
    "pathfinder": "approximate posterior (pathfinder): against NUTS it missed on every table "
                  "measured (Pareto k 2.3-6.1, means off by up to 134 sd on the bundled sweep; "
                  "benchmarks/results/approx_2026-12-01.md); prefer --method laplace for a "
                  "first look and --method nuts for anything you report",
}


def _mapping(pairs: Sequence[str], option: str = "--column",
             form: str = "OLD=NEW (e.g. step=D)") -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise BayeslawError(f"{option} takes {form}, got {pair!r}")
        old, new = pair.split("=", 1)
        out[old] = new
    return out


def _load_data(args: argparse.Namespace):
    from ..data.table import load
    from ..simulate import bundled_path

    source = args.data if args.data else bundled_path()
    data = load(source, columns=_mapping(args.column) or None,
                tokens_per_step=args.tokens_per_step, min_D=args.min_D,
                schedule=args.schedule, **_log_options(args))
    return data.thin(args.thin) if args.thin else data


def _log_options(args: argparse.Namespace) -> dict[str, object]:
    """The training-log options of ``bl.load`` from ``--source``, ``--metric``, ``--map``..."""
    config_map = _mapping(args.map, "--map", "CONFIG_KEY=COLUMN (e.g. model.n_params=N)")
    return {"source": args.source, "metric": args.metric, "meta": args.meta,
            "config_map": config_map or None, "tokens_metric": args.tokens_metric,
            "lr_metric": args.lr_metric}


def _floats(text: str | None, name: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise BayeslawError(f"{name} takes comma-separated numbers, got {text!r}") from None


def _levels(text: str) -> list[float]:
    """The band probabilities of ``--levels`` (at least one)."""
    levels = _floats(text, "--levels")
    if not levels:
        raise BayeslawError(f"--levels takes comma-separated band probabilities (e.g. "
                            f"0.5,0.9), got {text!r}")
    return levels


def _predictions(args: argparse.Namespace, result: Fit) -> Prediction:
    """The forecast ``bayeslaw predict`` asks for: of a run, or at a grid or table of points."""
    from ..posterior.points import GRID_COLUMNS, prediction_grid
    from ..posterior.prediction import forecast_run, predict

    kind = "epistemic" if args.epistemic else "predictive"
    probs = _levels(args.levels)
    modes = [m for m in ("points", "run", "N") if getattr(args, m)]
    if len(modes) != 1:
        raise BayeslawError("give exactly one of --points FILE, --run NAME or --N ... --D ...")
    if args.run:
        target = _floats(args.D, "--D")
        if not target or len(target) != 1:
            raise BayeslawError("--run needs one target --D (tokens to forecast to)")
        return forecast_run(result, args.run, target[0], kind=kind, probs=probs,
                            seed=args.seed, schedule=args.schedule)
    axes = {c: _floats(getattr(args, c), f"--{c}") for c in GRID_COLUMNS}
    points = prediction_grid(result, points=args.points, **axes)
    return predict(result, points, kind=kind, probs=probs, seed=args.seed,
                   schedule=args.schedule)


def _recalibrated(args: argparse.Namespace, result: Fit, pred: Prediction) -> Prediction:
    """``pred`` with its bands recalibrated from an inner backtest (``--recalibrate``)."""
    from ..evaluation.backtesting import recalibration

    if args.epistemic:
        raise BayeslawError("--recalibrate maps predictive bands (learned from the PIT of "
                            "held-out points): drop --epistemic")
    rec = recalibration(result.data, result.spec, args.recalibrate, seed=args.seed,
                        draws=args.draws, tune=args.tune, chains=args.chains)
    print(f"recalibrated from {rec.split}: {len(rec.pit)} held-out points; inner fit "
          f"R-hat {rec.max_rhat:.3f}, {rec.divergences} divergences", file=sys.stderr)
    return rec.apply(pred)


def _widened(args: argparse.Namespace, result: Fit, pred: Prediction) -> Prediction:
    """``pred`` with its bands widened past each run's data (``--widen``)."""
    from ..evaluation.widen import widening

    if args.epistemic:
        raise BayeslawError("--widen spreads predictive bands (learned from held-out "
                            "points' observed losses): drop --epistemic")
    wide = widening(result.data, result.spec, args.widen, seed=args.seed, draws=args.draws,
                    tune=args.tune, chains=args.chains, per_span=args.widen_span,
                    criterion=args.widen_criterion or "lpd", tails=args.widen_tails)
    unit = "run's fitted span in log D" if wide.per_span else "e-fold of D"
    print(f"widened from {wide.source} ({wide.criterion}): scale {wide.scale:.3g}, rate "
          f"{wide.rate:.3g} per {unit}, tail {wide.tail:.3g}, from {wide.n_points} held-out "
          f"points (mean log density {wide.lpd_before:.3f} -> {wide.lpd_after:.3f}); inner "
          f"fit R-hat {wide.max_rhat:.3f}, {wide.divergences} divergences", file=sys.stderr)
    return wide.apply(result, pred)


def cmd_predict(args: argparse.Namespace) -> int:
    """``bayeslaw predict``: CSV of medians and bands to stdout or ``--out``."""
    from ..files import atomic_write_text
    from ..posterior.result import Fit

    result = Fit.load(args.fit)
    pred = _predictions(args, result)
    if args.recalibrate and args.widen:
        raise BayeslawError("give one of --recalibrate and --widen: each maps the bands "
                            "of the fit's own forecast")
    if (args.widen_criterion or args.widen_span or args.widen_tails) and not args.widen:
        raise BayeslawError("--widen-criterion, --widen-span and --widen-tails say how "
                            "--widen learns: give --widen SPLIT with them")
    if args.recalibrate:
        pred = _recalibrated(args, result, pred)
    if args.widen:
        pred = _widened(args, result, pred)
    text = pred.table.to_csv(index=False, float_format="%.6g")
    if args.out:
        atomic_write_text(args.out, text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """``bayeslaw plot``: the grid figure of a saved fit, optionally extended."""
    from ..plots.sweep import plot_grid
    from ..posterior.result import Fit
    from ..report.folders import headless, save_and_close

    headless()

    if Path(args.out).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise BayeslawError(f"--out {args.out!r}: use a .png, .svg or .pdf file name")
    ylim = _floats(args.ylim, "--ylim")
    if ylim is not None and (len(ylim) != 2 or not ylim[0] < ylim[1]):
        raise BayeslawError(f"--ylim takes LOW,HIGH with LOW < HIGH, got {args.ylim!r}")
    result = Fit.load(args.fit)
    fig = plot_grid(result, extend_to=args.extend_to, add_N=args.add_N,
                    forecast=not args.no_forecast, xscale=args.xscale,
                    kind="epistemic" if args.epistemic else "predictive",
                    ylim=tuple(ylim) if ylim else None, schedule=args.schedule)
    path = save_and_close(fig, {"figure": Path(args.out)}, tight=False)["figure"]
    print(f"wrote {path}")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    """``bayeslaw fit``: fit, then write the figure, tables, diagnostics and the saved fit."""
    from ..errors import ApproximationWarning, ConvergenceWarning
    from ..inference.sampling import fit
    from ..report.folders import write_fit_outputs

    data = _load_data(args)
    if args.xscale != "log" and C.D not in data.columns:
        raise BayeslawError("--xscale sets the token axis of the grid figure; this table has "
                            "no D column (its figure is drawn against N)")
    print(f"data: {data.source} - {len(data)} points, {len(data.runs)} runs", flush=True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            warnings.simplefilter("always", ApproximationWarning)
            result = fit(data, args.spec, law=args.law, seed=args.seed, draws=args.draws,
                         tune=args.tune, chains=args.chains, backend=args.backend,
                         progress=False if args.no_progress else None, method=args.method)
    except Exception:  # what fit warned before it failed (a WarmStartWarning) is not lost
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        raise
    grid = {"xscale": args.xscale} if C.D in data.columns else {}
    if grid and result.spec.data.min_portion:  # the early points the fit left out, in grey
        grid["left_out"] = data.before_portion(result.spec.data.min_portion,
                                               result.spec.data.min_kept)
    paths = write_fit_outputs(result, Path(args.out), **grid)
    print(result.summary().to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"diagnostics: {result.diagnostics}")
    for w in caught:
        if not issubclass(w.category, (ConvergenceWarning, ApproximationWarning)):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    if result.approximate:  # its diagnostics' one failure is printed above
        print(f"warning: {APPROXIMATE_NOTE[result.method]}", file=sys.stderr)
    elif not result.diagnostics.ok:
        print("warning: " + "; ".join(result.diagnostics.failures), file=sys.stderr)
        if result.diagnostics.diagnosis is not None:
            print(str(result.diagnostics.diagnosis), file=sys.stderr)
        if args.strict:
            return EXIT_NOT_CONVERGED
    return 0


def cmd_backtest(args: argparse.Namespace) -> int:
    """``bayeslaw backtest``: held-out scores of bayeslaw and the baseline, table + figure."""
    from ..data.steps import fixed_by_data
    from ..evaluation.backtesting import backtest
    from ..report.folders import headless, score_summary, unconverged, write_backtest_outputs
    from ..spec.catalog import resolve_spec

    headless()
    data = _load_data(args)
    spec = resolve_spec(args.spec, law=args.law, columns=data.columns,
                        data_fixed=fixed_by_data(data.frame))
    # warnings reach the user as they come (a fold that did not converge, a training part
    # short of levels, the baseline's optimizer): each names its split
    result = backtest(data, spec, args.split, seed=args.seed,
                      baseline=not args.no_baseline, n_boot=args.n_boot,
                      recalibrate=args.recalibrate, draws=args.draws, tune=args.tune,
                      chains=args.chains, backend=args.backend, **_fleet_options(args))
    out = Path(args.out)
    write_backtest_outputs(data, result, out)
    print(score_summary(result.table).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {out}")
    failed = unconverged(result.table)
    for _, row in failed.iterrows():
        print(f"warning: split {row['split']!r} ({row['method']}) did not converge: "
              f"{row['failures']}", file=sys.stderr)
    for name, error in result.failures.items():
        print(f"error: fold {name!r} failed: {error}", file=sys.stderr)
    if result.failures:
        return EXIT_TASKS_FAILED
    return EXIT_NOT_CONVERGED if len(failed) and args.strict else 0


def _fleet_options(args: argparse.Namespace) -> dict[str, object]:
    """Where a fleet runs (``--workers``, ``--scheduler``; checked by ``fleet.run``), its bar."""
    return {"client": args.scheduler, "workers": args.workers,
            "progress": False if args.no_progress else None}


def cmd_sbc(args: argparse.Namespace) -> int:
    """``bayeslaw sbc``: the rank tests of a resumable SBC, its records and rank plot."""
    from ..evaluation.sbc import sbc
    from ..evaluation.verdicts import plot_sbc
    from ..report.folders import headless, save_and_close
    from ..spec.catalog import resolve_spec

    headless()
    out = Path(args.out)
    if out.suffix.lower() != ".jsonl":
        raise BayeslawError(f"--out {args.out!r}: the records go to a .jsonl file")
    if args.n_sims < 1:
        raise BayeslawError(f"--n-sims must be at least 1, got {args.n_sims}")
    data = _load_data(args)
    sampler = {k: getattr(args, k) for k in ("draws", "tune", "chains", "backend")
               if getattr(args, k) is not None}
    gen = resolve_spec(args.spec, law=args.law, columns=data.columns)
    result = sbc(data, gen, fit_spec=args.fit_spec, n_sims=args.n_sims,
                 n_ranks=args.n_ranks, alpha=args.alpha, seed=args.seed, path=out,
                 **_fleet_options(args), **sampler)
    print(result)
    print(result.details.to_string(float_format=lambda v: f"{v:.3g}"))
    figure = save_and_close(plot_sbc(result), {"figure": out.with_suffix(".png")})["figure"]
    print(f"wrote {out} and {figure}")
    missing = args.n_sims - result.values["n_sims"]
    if missing:
        print(f"error: {missing} of {args.n_sims} simulations failed (named in the warnings "
              "above); rerun the same command to try them again", file=sys.stderr)
        return EXIT_TASKS_FAILED
    unconverged = (result.values["max_rhat"] > C.MAX_RHAT or result.values["divergent_fits"])
    if unconverged:  # each record keeps its fit's R-hat and divergences
        print(f"warning: the fits' worst R-hat is {result.values['max_rhat']:.3f} and "
              f"{result.values['divergent_fits']} fit(s) diverged", file=sys.stderr)
        if args.strict:
            return EXIT_NOT_CONVERGED
    return 0 if result.passed else EXIT_CHECK_FAILED


def cmd_check(args: argparse.Namespace) -> int:
    """``bayeslaw check``: convergence and posterior predictive verdicts of a saved fit."""
    from ..posterior.diagnostics import Thresholds
    from ..posterior.result import Fit
    from ..testing import check_convergence, posterior_predictive_check

    levels = [] if args.no_ppc else _levels(args.levels)
    fitted = Fit.load(args.fit)
    if fitted.approximate:
        raise BayeslawError(
            f"{args.fit} holds an approximate posterior ({fitted.method}): its draws are "
            "independent draws of an approximation, not a Markov chain, so R-hat, ESS, "
            "divergences and a posterior predictive check of them say nothing about the "
            "posterior; refit with `bayeslaw fit --method nuts` and check that")
    thresholds = Thresholds(max_rhat=args.max_rhat, min_ess=args.min_ess,
                            max_divergences=args.max_divergences, min_bfmi=args.min_bfmi)
    # one posterior predictive check per band of --levels
    results = [check_convergence(fitted, thresholds)] + [
        posterior_predictive_check(fitted, prob=level, alpha=args.alpha,
                                   tolerance=args.tolerance, seed=args.seed)
        for level in levels]
    for r in results:
        print(r)
    failed = list(dict.fromkeys(r.name for r in results if not r.passed))  # each name once
    if failed:
        print(f"check failed: {', '.join(failed)}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return 0


def _fit_names(paths: Sequence[str]) -> list[str]:
    """Names of fit files in a report: the file stem, or the folder name when stems repeat."""
    names = [Path(p).stem for p in paths]
    if len(set(names)) < len(names):
        names = [Path(p).resolve().parent.name or Path(p).stem for p in paths]
    if len(set(names)) < len(names):
        names = [f"{n}-{i + 1}" for i, n in enumerate(names)]
    return names


def cmd_report(args: argparse.Namespace) -> int:
    """``bayeslaw report``: one self-contained HTML file and a Markdown version."""
    from ..report.folders import headless

    headless()
    from ..posterior.result import Fit
    from ..report.build import build_report

    if args.budget is not None and not args.budget > 0:
        raise BayeslawError(f"--budget must be a positive number of FLOPs, got {args.budget}")
    fits = {name: Fit.load(path) for name, path in zip(_fit_names(args.fits), args.fits,
                                                        strict=True)}
    report = build_report(fits, title=args.title, budget=args.budget, seed=args.seed)
    paths = report.save(Path(args.out))
    print(f"wrote {paths['html']}")
    print(f"wrote {paths['markdown']} (+ {len(report.images)} figures)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """``bayeslaw import``: training logs -> a tidy CSV, validated as ``bl.load`` does."""
    from ..data.schedules import TERM_COLUMNS
    from ..data.table import load
    from ..files import atomic_write_text

    if Path(args.out).suffix.lower() != ".csv":
        raise BayeslawError(f"--out {args.out!r}: write the tidy table to a .csv file")
    data = load(args.src, tokens_per_step=args.tokens_per_step, **_log_options(args))
    # the columns load computes from a learning rate are not part of the table
    frame = data.frame.drop(columns=[c for c in TERM_COLUMNS if c in data.frame.columns]
                            if data.schedules is not None else [])
    atomic_write_text(args.out, frame.to_csv(index=False))
    for note in data.notes:
        print(f"note: {note}")
    print(f"wrote {args.out}: {len(frame)} points, {len(data.runs)} runs")
    return 0


COMMANDS = {"fit": cmd_fit, "backtest": cmd_backtest, "predict": cmd_predict,
            "plot": cmd_plot, "report": cmd_report, "check": cmd_check, "sbc": cmd_sbc,
            "import": cmd_import}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bayeslaw`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # pip-installed PyTensor cannot find a system BLAS; nutpie compiles with numba anyway
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    # ArviZ 0.23 announces its coming refactor on stderr at the first import of each day: a
    # user's error message must stay the first line there
    warnings.filterwarnings("ignore", message=r"\s*ArviZ is undergoing a major refactor",
                            category=FutureWarning)
    try:
        return COMMANDS[args.command](args)
    except BayeslawError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:  # pragma: no cover
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
