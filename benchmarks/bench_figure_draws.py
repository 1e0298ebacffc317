"""How far the grid figure's thinned bands lie from the bands of every draw (issue 34, item 3).

Run from the repository root::

    python benchmarks/bench_figure_draws.py FIT.nc [--out FILE]

The grid figure (``bayeslaw.plots.sweep.plot_grid``) draws its median and bands from at most
``bayeslaw.plots.panels.FIGURE_DRAWS`` posterior draws (every k-th of each chain).  This
loads a saved fit, draws its grid figure's prediction, predicts the same points from every
draw (``bl.predict``, the same seed), and prints, per column, the gap between the two in units
of the full 90% band's width (median over points and the largest), and the seconds of each
prediction (one run each, side by side).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import warnings

import numpy as np


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("fit")
    p.add_argument("--out")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    import bayeslaw as bl
    from bayeslaw.files import atomic_write_text
    from bayeslaw.plots.panels import FIGURE_DRAWS
    from bayeslaw.plots.sweep import plot_grid
    from bayeslaw.report.folders import headless

    headless()
    fit = bl.Fit.load(args.fit)
    t0 = time.perf_counter()
    pred = plot_grid(fit).bayeslaw_prediction
    t1 = time.perf_counter()
    columns = [c for c in ("run", "N", "D", "T_m") if c in pred.columns]
    full = bl.predict(fit, pred[columns]).table
    t2 = time.perf_counter()
    width = (full["upper_90"] - full["lower_90"]).to_numpy()
    lines = [f"    {shlex.join(['python', *sys.argv])}", "",
             f"Fit: {args.fit}, {fit.n_draws} draws; the figure's: {pred.attrs['draws']} "
             f"(FIGURE_DRAWS = {FIGURE_DRAWS}); {len(pred)} points.", "",
             "| column | gap / 90% width, median over points | largest |", "| --- | --- | --- |"]
    for column in ("median", "lower_50", "upper_50", "lower_90", "upper_90"):
        gap = np.abs(pred[column].to_numpy() - full[column].to_numpy()) / width
        lines.append(f"| {column} | {np.median(gap):.4f} | {gap.max():.4f} |")
    lines += ["", f"Seconds: the figure (prediction and drawing) {t1 - t0:.2f}, "
              f"bl.predict of the same points from every draw {t2 - t1:.2f} (one run each)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        atomic_write_text(args.out, text)


if __name__ == "__main__":
    main()
