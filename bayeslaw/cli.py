"""Command-line front end: parse, call the library, print.  No logic of its own.

User errors (bad data, bad spec, missing files) print one ``error:`` line and exit 2;
``--strict`` turns failed convergence diagnostics into exit code 3; ``bayeslaw check`` exits
1 when a saved fit fails a check.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from . import constants as C
from .errors import BayeslawError

EXIT_USER_ERROR = 2
EXIT_NOT_CONVERGED = 3
EXIT_CHECK_FAILED = 1

#: What ``bayeslaw fit --method laplace|pathfinder`` warns: where each approximation missed
#: NUTS (benchmarks/results/approx_2026-12-01.md, the README's "First look in seconds").
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


def _mapping(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise BayeslawError(f"--column takes OLD=NEW (e.g. step=D), got {pair!r}")
        old, new = pair.split("=", 1)
        out[old] = new
    return out


def _add_sampler_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling")
    g.add_argument("--draws", type=int, help="posterior draws per chain (spec default 1000)")
    g.add_argument("--tune", type=int, help="tuning steps per chain (spec default 1000)")
    g.add_argument("--chains", type=int, help="number of chains (spec default 4)")
    g.add_argument("--seed", type=int, default=C.DEFAULT_SEED, help="random seed")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bayeslaw`` command."""
    parser = argparse.ArgumentParser(
        prog="bayeslaw",
        description="Bayesian forecasting of language-model training loss: fit a loss law to "
                    "a sweep, forecast with credible bands, backtest on held-out data.")
    parser.add_argument("--version", action="version", version=f"bayeslaw {C.VERSION}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fit", help="fit a loss law to a sweep and write table, figure, fit")
    p.add_argument("data", nargs="?", help="CSV/Parquet table (default: bundled sweep)")
    p.add_argument("--law", help="law name (default from the columns: iso_depth with N_once "
                                 "and N_rec, parallel_streams(_data) with P, looped_total "
                                 "with T_m, else chinchilla)")
    p.add_argument("--spec", help="TOML spec file or shipped spec name")
    p.add_argument("--out", default="bayeslaw-out", help="output folder")
    p.add_argument("--xscale", choices=("log", "linear"), default="log",
                   help="token axis of the grid figures (default log; linear as in the Ouro "
                        "paper's figures)")
    p.add_argument("--method", choices=("nuts", "laplace", "pathfinder"), default="nuts",
                   help="nuts (default) samples the posterior; laplace or pathfinder draw "
                        "from an approximation for a first look in seconds (labelled "
                        "approximate; bayeslaw check refuses it)")
    _add_data_args(p)
    _add_sampler_args(p)

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
    p.add_argument("--epistemic", action="store_true",
                   help="band of the law's value (no observation noise)")
    p.add_argument("--levels", default="0.5,0.9", help="band probabilities (default 0.5,0.9)")
    p.add_argument("--seed", type=int, default=0, help="seed of the predictive draws")
    p.add_argument("--out", help="write CSV here instead of stdout")
    g = p.add_argument_group("recalibration")
    g.add_argument("--recalibrate", metavar="SPLIT",
                   help="recalibrate the bands from an inner backtest of SPLIT on the fit's data "
                        "(one more fit; e.g. kfold:5+prefix:0.5 for runs in progress)")
    g.add_argument("--draws", type=int, help="the inner fit's draws per chain (spec default)")
    g.add_argument("--tune", type=int, help="the inner fit's tuning steps (spec default)")
    g.add_argument("--chains", type=int, help="the inner fit's chains (spec default)")

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
    p.add_argument("--out", default="grid.png", help="figure file (.png or .svg)")

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
    g.add_argument("--prob", type=float, default=0.9,
                   help="band whose coverage of the observed points is checked (%(default)s)")
    g.add_argument("--alpha", type=float, default=0.01,
                   help="error rate of the coverage interval and p-value (%(default)s)")
    g.add_argument("--tolerance", type=float, default=0.05,
                   help="coverage accepted within prob +- tolerance (%(default)s)")
    g.add_argument("--no-ppc", action="store_true", help="check convergence only")
    g.add_argument("--seed", type=int, default=0, help="seed of the replicated data")

    p = sub.add_parser("report", help="write an HTML and a Markdown report of saved fits")
    p.add_argument("fits", nargs="+", metavar="FIT",
                   help="saved fit(s) (fit.nc); several add a model comparison")
    p.add_argument("--out", default="bayeslaw-report",
                   help="output folder (report.html, report.md and its figures)")
    p.add_argument("--title", help="document title")
    p.add_argument("--budget", type=float,
                   help="compute budget in FLOPs of the compute-optimal table (default ten "
                        "times the largest run)")
    p.add_argument("--seed", type=int, default=0, help="seed of the predictive draws")
    return parser


def _load_data(args: argparse.Namespace):
    from .data import load
    from .simulate import bundled_path

    source = args.data if args.data else bundled_path()
    data = load(source, columns=_mapping(args.column) or None,
                tokens_per_step=args.tokens_per_step, min_D=args.min_D)
    return data.thin(args.thin) if args.thin else data


def _floats(text: str | None, name: str) -> list[float] | None:
    if text is None:
        return None
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise BayeslawError(f"{name} takes comma-separated numbers, got {text!r}") from None


#: Covariates ``bayeslaw predict`` takes as comma-separated grid axes.
GRID_COLUMNS = (C.N, C.D, C.T_M, C.P)


def cmd_predict(args: argparse.Namespace) -> int:
    """``bayeslaw predict``: CSV of medians and bands to stdout or ``--out``."""
    import itertools

    import pandas as pd

    from .derived import runs_end_at_D
    from .files import atomic_write_text
    from .prediction import forecast_run, predict
    from .result import Fit

    result = Fit.load(args.fit)
    kind = "epistemic" if args.epistemic else "predictive"
    probs = _floats(args.levels, "--levels")
    modes = [m for m in ("points", "run", "N") if getattr(args, m)]
    if len(modes) != 1:
        raise BayeslawError("give exactly one of --points FILE, --run NAME or --N ... --D ...")
    if args.run:
        target = _floats(args.D, "--D")
        if not target or len(target) != 1:
            raise BayeslawError("--run needs one target --D (tokens to forecast to)")
        pred = forecast_run(result, args.run, target[0], kind=kind, probs=probs,
                            seed=args.seed)
    else:
        if args.points:
            from .data import read_table

            points, _, _ = read_table(args.points)
        else:
            law = result.spec.law_obj
            other = [c for c in law.covariates if c not in (*GRID_COLUMNS, C.HORIZON)]
            if other:
                raise BayeslawError(f"law {law.name!r} needs {', '.join(other)}: give the "
                                    "points as a table with --points FILE")
            axes = {c: _floats(getattr(args, c), f"--{c}") for c in GRID_COLUMNS}
            for col, values in axes.items():
                if col in law.covariates and not values:
                    raise BayeslawError(f"law {law.name!r} needs --{col}"
                                        + (" (tokens)" if col == C.D else ""))
                if values and col not in law.covariates:
                    raise BayeslawError(f"law {law.name!r} has no {col} term: drop --{col}")
            cols = [c for c in GRID_COLUMNS if c in law.covariates]
            points = pd.DataFrame(list(itertools.product(*(axes[c] for c in cols))),
                                  columns=cols)
            # a grid point is a run trained to D (a law's horizon, if it has one, is D)
            points = runs_end_at_D(law, points)
        pred = predict(result, points, kind=kind, probs=probs, seed=args.seed)
    if args.recalibrate:
        if args.epistemic:
            raise BayeslawError("--recalibrate maps predictive bands (learned from the PIT of "
                                "held-out points): drop --epistemic")
        from .backtesting import recalibration

        rec = recalibration(result.data, result.spec, args.recalibrate, seed=args.seed,
                            draws=args.draws, tune=args.tune, chains=args.chains)
        pred = rec.apply(pred)
        print(f"recalibrated from {rec.split}: {len(rec.pit)} held-out points; inner fit "
              f"R-hat {rec.max_rhat:.3f}, {rec.divergences} divergences", file=sys.stderr)
    text = pred.table.to_csv(index=False, float_format="%.6g")
    if args.out:
        atomic_write_text(args.out, text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """``bayeslaw plot``: the grid figure of a saved fit, optionally extended."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .grid_figure import plot_grid
    from .outputs import save_figure
    from .result import Fit

    if Path(args.out).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise BayeslawError(f"--out {args.out!r}: use a .png, .svg or .pdf file name")
    ylim = _floats(args.ylim, "--ylim")
    if ylim is not None and (len(ylim) != 2 or not ylim[0] < ylim[1]):
        raise BayeslawError(f"--ylim takes LOW,HIGH with LOW < HIGH, got {args.ylim!r}")
    result = Fit.load(args.fit)
    fig = plot_grid(result, extend_to=args.extend_to, add_N=args.add_N,
                    forecast=not args.no_forecast, xscale=args.xscale,
                    kind="epistemic" if args.epistemic else "predictive",
                    ylim=tuple(ylim) if ylim else None)
    try:
        path = save_figure(fig, args.out)
    finally:
        plt.close(fig)
    print(f"wrote {path}")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    """``bayeslaw fit``: fit, then write the figure, tables, diagnostics and the saved fit."""
    from .errors import ApproximationWarning, ConvergenceWarning
    from .inference import fit
    from .outputs import write_fit_outputs

    data = _load_data(args)
    if args.xscale != "log" and C.D not in data.columns:
        raise BayeslawError("--xscale sets the token axis of the grid figure; this table has "
                            "no D column (its figure is drawn against N)")
    print(f"data: {data.source} - {len(data)} points, {len(data.runs)} runs", flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        warnings.simplefilter("always", ApproximationWarning)
        result = fit(data, args.spec, law=args.law, seed=args.seed, draws=args.draws,
                     tune=args.tune, chains=args.chains, backend=args.backend,
                     progress=False if args.no_progress else None, method=args.method)
    grid = {"xscale": args.xscale} if C.D in data.columns else {}
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
        if args.strict:
            return EXIT_NOT_CONVERGED
    return 0


def cmd_backtest(args: argparse.Namespace) -> int:
    """``bayeslaw backtest``: held-out scores of bayeslaw and the baseline, table + figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .backtesting import backtest
    from .files import atomic_write, atomic_write_text
    from .outputs import save_figure
    from .plots import plot_backtest
    from .priors import resolve_spec
    from .report_html import markdown_table

    data = _load_data(args)
    spec = resolve_spec(args.spec, law=args.law, columns=data.columns)
    # warnings reach the user as they come (a fold that did not converge, a training part
    # short of levels, the baseline's optimizer): each names its split
    result = backtest(data, spec, args.split, seed=args.seed,
                      baseline=not args.no_baseline, n_boot=args.n_boot,
                      recalibrate=args.recalibrate, draws=args.draws, tune=args.tune,
                      chains=args.chains, backend=args.backend)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = result.table
    atomic_write(out / "backtest.csv", lambda tmp: table.to_csv(tmp, index=False))
    notes = "".join(f"\n- {n}" for n in result.notes)
    atomic_write_text(out / "backtest.md", "# Held-out forecast scores\n\nOnly held-out points "
                      "are scored; `coverage_XX` is the share of them inside the XX% "
                      "predictive band (a new observed loss: noise included), with its 95% "
                      "Clopper-Pearson interval in `_low` / `_high`; `coverage_XX_epistemic` "
                      "is the same for the band of the law's value alone (no noise). "
                      "`n_curves` counts the held-out runs, `converged` whether every fit of "
                      "the row passed its convergence thresholds.\n\n"
                      + markdown_table(table.set_index("split"))
                      + (f"\n\nNotes:{notes}\n" if notes else "\n"))
    for name, forecast in result.forecasts.items():
        if not name.endswith("/ baseline"):
            slug = (name.replace(" / bayeslaw", "").replace(", ", "_").replace(":", "_")
                    .replace("=", "_").replace(" ", "_"))
            fig = plot_backtest(data, forecast, title=f"{name}: held-out forecasts")
            try:
                save_figure(fig, out / f"forecast_{slug}.png")
            finally:
                plt.close(fig)
    cols = [c for c in ("split", "method", "n_curves", "n_test", "identified", "mape",
                        "coverage_50", "coverage_90", "coverage_90_epistemic", "crps",
                        "max_rhat", "divergences", "converged") if c in table.columns]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {out}")
    fits = table[table["method"] != "baseline"]
    failed = fits[~fits["converged"].astype(bool)] if "converged" in fits else fits.iloc[:0]
    for _, row in failed.iterrows():
        print(f"warning: split {row['split']!r} ({row['method']}) did not converge: "
              f"{row['failures']}", file=sys.stderr)
    return EXIT_NOT_CONVERGED if len(failed) and args.strict else 0


def cmd_check(args: argparse.Namespace) -> int:
    """``bayeslaw check``: convergence and posterior predictive verdicts of a saved fit."""
    from .diagnostics import Thresholds
    from .result import Fit
    from .testing import check_convergence, posterior_predictive_check

    fitted = Fit.load(args.fit)
    if fitted.approximate:
        raise BayeslawError(
            f"{args.fit} holds an approximate posterior ({fitted.method}): its draws are "
            "independent draws of an approximation, not a Markov chain, so R-hat, ESS, "
            "divergences and a posterior predictive check of them say nothing about the "
            "posterior; refit with `bayeslaw fit --method nuts` and check that")
    thresholds = Thresholds(max_rhat=args.max_rhat, min_ess=args.min_ess,
                            max_divergences=args.max_divergences, min_bfmi=args.min_bfmi)
    results = [check_convergence(fitted, thresholds)]
    if not args.no_ppc:
        results.append(posterior_predictive_check(fitted, prob=args.prob, alpha=args.alpha,
                                                  tolerance=args.tolerance, seed=args.seed))
    for r in results:
        print(r)
    failed = [r.name for r in results if not r.passed]
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
    import matplotlib

    matplotlib.use("Agg")

    from .report import build_report
    from .result import Fit

    if args.budget is not None and not args.budget > 0:
        raise BayeslawError(f"--budget must be a positive number of FLOPs, got {args.budget}")
    fits = {name: Fit.load(path) for name, path in zip(_fit_names(args.fits), args.fits,
                                                        strict=True)}
    report = build_report(fits, title=args.title, budget=args.budget, seed=args.seed)
    paths = report.save(Path(args.out))
    print(f"wrote {paths['html']}")
    print(f"wrote {paths['markdown']} (+ {len(report.images)} figures)")
    return 0


COMMANDS = {"fit": cmd_fit, "backtest": cmd_backtest, "predict": cmd_predict,
            "plot": cmd_plot, "report": cmd_report, "check": cmd_check}


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
