"""Command-line front end: parse, call the library, print.  No logic of its own.

User errors (bad data, bad spec, missing files) print one ``error:`` line and exit 2;
``--strict`` turns failed convergence diagnostics into exit code 3.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from . import constants as C
from .errors import BayeslawError

EXIT_USER_ERROR = 2
EXIT_NOT_CONVERGED = 3


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
    g.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _add_data_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data")
    g.add_argument("--column", action="append", default=[], metavar="OLD=NEW",
                   help="rename an input column, e.g. --column step=D (repeatable)")
    g.add_argument("--tokens-per-step", type=float, help="multiply D by this factor")
    g.add_argument("--min-D", type=float, help="drop points with fewer tokens (warm-up)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bayeslaw`` command."""
    parser = argparse.ArgumentParser(prog="bayeslaw", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"bayeslaw {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fit", help="fit a loss law to a sweep and write table, figure, fit")
    p.add_argument("data", nargs="?", help="CSV/Parquet table (default: bundled sweep)")
    p.add_argument("--law", help="law name (default: looped_total if T_m present, else "
                                 "chinchilla)")
    p.add_argument("--spec", help="TOML spec file or shipped spec name")
    p.add_argument("--out", default="bayeslaw-out", help="output folder")
    _add_data_args(p)
    _add_sampler_args(p)
    return parser


def _load_data(args: argparse.Namespace):
    from .data import load
    from .simulate import bundled_path

    source = args.data if args.data else bundled_path()
    return load(source, columns=_mapping(args.column) or None,
                tokens_per_step=args.tokens_per_step, min_D=args.min_D)


def cmd_fit(args: argparse.Namespace) -> int:
    """``bayeslaw fit``: fit, then write the figure, tables, diagnostics and the saved fit."""
    from .fit import ConvergenceWarning, fit
    from .report import write_fit_outputs

    data = _load_data(args)
    print(f"data: {data.source} - {len(data)} points, {len(data.runs)} runs", flush=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = fit(data, args.spec, law=args.law, seed=args.seed, draws=args.draws,
                     tune=args.tune, chains=args.chains, backend=args.backend,
                     progress=not args.no_progress and sys.stderr.isatty())
    paths = write_fit_outputs(result, Path(args.out))
    print(result.summary().to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"diagnostics: {result.diagnostics}")
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for name, path in paths.items():
        print(f"wrote {name}: {path}")
    if not result.diagnostics.ok:
        print("warning: " + "; ".join(result.diagnostics.failures), file=sys.stderr)
        if args.strict:
            return EXIT_NOT_CONVERGED
    return 0


COMMANDS = {"fit": cmd_fit}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bayeslaw`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
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
