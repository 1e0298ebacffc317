"""Tables and output folders built from a :class:`~bayeslaw.fit.Fit` (CSV, Markdown, JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import constants as C
from ._io import atomic_write, atomic_write_text

if TYPE_CHECKING:  # pragma: no cover
    from .fit import Fit


def markdown_table(frame: pd.DataFrame, *, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.{digits}g}"
        return str(v)

    index_name = frame.index.name or ""
    header = [index_name, *map(str, frame.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for idx, row in frame.iterrows():
        lines.append("| " + " | ".join([fmt(idx), *(fmt(v) for v in row)]) + " |")
    return "\n".join(lines) + "\n"


def diagnostics_markdown(fit: Fit) -> str:
    """Diagnostics as a short Markdown section: what was checked and what failed."""
    d = fit.diagnostics
    t = d.thresholds
    rows = [
        ("max R-hat", f"{d.max_rhat:.4f}", f"<= {t.max_rhat}", d.worst_rhat_var),
        ("min bulk ESS", f"{d.min_ess_bulk:.0f}", f">= {t.min_ess:.0f}", d.worst_ess_var),
        ("min tail ESS", f"{d.min_ess_tail:.0f}", f">= {t.min_ess:.0f}", ""),
        ("divergences", str(d.divergences), f"<= {t.max_divergences}", ""),
        ("min BFMI", f"{d.min_bfmi:.3f}", f">= {t.min_bfmi}", ""),
    ]
    lines = ["# Sampling diagnostics", "",
             f"Verdict: **{'converged' if d.ok else 'NOT converged'}**"
             + ("" if d.ok else " - " + "; ".join(d.failures)), "",
             "| check | value | threshold | worst variable |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {e} |" for a, b, c, e in rows]
    s = fit.provenance["sampler"]
    lines += ["", f"Sampler: {s['backend']}, {s['chains']} chains x {s['draws']} draws "
              f"({s['tune']} tuning), seed {fit.provenance['seed']}."]
    return "\n".join(lines) + "\n"


def plateau_ylim(frame: pd.DataFrame) -> tuple[float, float] | None:
    """Loss range of the second half (in log D) of every curve, where the bands are visible."""
    if frame[C.RUN].nunique() == len(frame):
        return None
    upper = []
    for _, g in frame.groupby(C.RUN):
        logd = np.log(g[C.D].to_numpy())
        upper.append(g[C.LOSS].to_numpy()[logd >= logd.min() + 0.5 * np.ptp(logd)].max())
    lo, hi = float(frame[C.LOSS].min()), float(max(upper))
    return lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)


def write_fit_outputs(fit: Fit, out: Path) -> dict[str, Path]:
    """Write the grid figure (PNG, SVG), coefficient table (CSV, MD), diagnostics, fit."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .plots import plot_grid, save_figure

    out.mkdir(parents=True, exist_ok=True)
    table = fit.summary()
    paths = {
        "coefficients (csv)": atomic_write(out / "coefficients.csv",
                                           lambda tmp: table.to_csv(tmp)),
        "coefficients (markdown)": atomic_write_text(
            out / "coefficients.md",
            f"# Coefficients of `{fit.spec.law}`\n\nPosterior mean, sd, central 94% "
            "interval, R-hat and effective sample sizes. `a`, `b`, `c` are each term's loss "
            "contribution at the reference point "
            f"({', '.join(f'{k} = {v:g}' for k, v in fit.spec.reference.items())}); "
            "`A`, `B`, `C` are the textbook coefficients.\n\n" + markdown_table(table)),
        "diagnostics (markdown)": atomic_write_text(out / "diagnostics.md",
                                                    diagnostics_markdown(fit)),
        "diagnostics (json)": atomic_write_text(
            out / "diagnostics.json", json.dumps(fit.diagnostics.to_dict(), indent=2) + "\n"),
    }
    fig = plot_grid(fit)
    try:
        paths["grid figure (png)"] = save_figure(fig, out / "grid.png")
        paths["grid figure (svg)"] = save_figure(fig, out / "grid.svg")
    finally:
        plt.close(fig)
    zoom = plateau_ylim(fit.data.frame)
    if zoom is not None:
        fig = plot_grid(fit, ylim=zoom)
        try:
            paths["grid figure, plateau zoom (png)"] = save_figure(fig, out / "grid_zoom.png")
        finally:
            plt.close(fig)
    paths["saved fit"] = fit.save(out / "fit.nc")
    return paths
