"""Example: model-comparison reports for the bundled sweep and for ParScale.

Run from the repository root::

    python notebooks/example_reports.py --out example-reports [--quick]

Writes ``example-reports/bundled/report.html`` (+ ``report.md``) comparing, on the bundled
synthetic looped-LM sweep, the default spec (partial pooling), the same law with complete
pooling, and the iso-depth effective-N law; and, when ``../shared/data/parscale`` is present,
``example-reports/parscale_<dataset>/report.html`` comparing on ParScale's final losses the
parallel-streams law, a looped-style ``C/P^gamma`` term and Chinchilla at fixed D with P
ignored.  Every comparison is grouped K-fold CV (whole T_m or P levels left out: the forecast
a team wants is for a depth or stream count it has not trained) plus PSIS-LOO in the text.

``--quick`` thins the sweep to 30 points per curve and samples short chains (a smoke run;
its diagnostics will say it did not converge).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import bayeslaw as bl

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _report(fits, kfold_group, out: Path, title: str, seed: int, **fit_kwargs) -> None:
    kfold = bl.compare(fits, method="kfold", group=kfold_group, seed=seed, **fit_kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bl.ParetoKWarning)
        loo = bl.compare(fits, method="loo", bad_k="refit", max_refits=5, **fit_kwargs)
    print(f"\n== {title}\n{kfold!r}\n{loo!r}")
    for w in caught:
        print(f"note: {w.message}")
    paths = bl.build_report(fits, comparison=kfold, title=title, seed=seed).save(out)
    print(f"wrote {paths['html']} and {paths['markdown']}")


def bundled(out: Path, quick: bool, seed: int) -> None:
    """Partial vs complete pooling vs the iso-depth law on the bundled sweep."""
    data = bl.load(bl.bundled_path())
    kw = dict(draws=300, tune=500, chains=2) if quick else {}
    if quick:
        data = data.thin(30)
    partial = bl.load_spec(law="looped_total")
    specs = {"looped_total (partial pooling)": partial,
             "looped_total (complete pooling)": partial.with_pooling("complete"),
             "iso_depth_eff": bl.load_spec(law="iso_depth_eff")}
    fits = {name: bl.fit(data, spec, seed=seed, **kw) for name, spec in specs.items()}
    _report(fits, "T_m", out / "bundled", "Bundled sweep: which looped law, which pooling",
            seed, **kw)


def parscale(out: Path, quick: bool, seed: int) -> None:
    """Parallel streams vs a C/P^gamma term vs P ignored, per ParScale data set."""
    path = SHARED / "parscale" / "parscale_loss_grid.csv"
    if not path.exists():
        print(f"skipping ParScale: {path} not found")
        return
    kw = dict(draws=500, tune=1000, chains=2) if quick else {}
    for dataset in ("stack_v2_python", "pile"):
        data = bl.load_parscale(path, dataset)
        fits = {law: bl.fit(data, law=law, seed=seed, **kw)
                for law in ("parallel_streams", "looped_streams", "size_only")}
        _report(fits, "P", out / f"parscale_{dataset}",
                f"ParScale ({dataset}): parallel streams vs a C/P^gamma term vs P ignored",
                seed, **kw)


def main() -> None:
    """Parse the options and write the reports."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="example-reports")
    ap.add_argument("--quick", action="store_true", help="thinned data, short chains")
    ap.add_argument("--only", choices=("bundled", "parscale"))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    out = Path(args.out)
    if args.only in (None, "parscale"):
        parscale(out, args.quick, args.seed)
    if args.only in (None, "bundled"):
        bundled(out, args.quick, args.seed)


if __name__ == "__main__":
    main()
