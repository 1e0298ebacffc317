"""Output folders: a fit's and a backtest's.

A fit's holds figures, coefficient tables, diagnostics and the saved fit; a backtest's its
score table and forecast figures.
:func:`write_fit_outputs` writes what ``bayeslaw fit`` leaves in its folder (CSV,
Markdown, JSON, figures, ``fit.nc``); :func:`write_grid_figures` redraws its grid figures
and :func:`save_figure` writes any figure atomically. :func:`write_backtest_outputs` writes
what ``bayeslaw backtest`` leaves in its folder; :func:`score_summary` and
:func:`unconverged` are the table it prints and the rows it warns about.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import constants as C
from ..files import atomic_write, atomic_write_text
from .document import markdown_table

if TYPE_CHECKING:  # pragma: no cover
    from ..data.table import LossData
    from ..evaluation.backtesting import BacktestResult
    from ..posterior.result import Fit


def diagnostics_table(fit: Fit) -> pd.DataFrame:
    """Each convergence check: its value, threshold and worst variable (strings)."""
    d = fit.diagnostics
    t = d.thresholds
    rows = [
        ("max R-hat", f"{d.max_rhat:.4f}", f"<= {t.max_rhat}", d.worst_rhat_var),
        ("min bulk ESS", f"{d.min_ess_bulk:.0f}", f">= {t.min_ess:.0f}", d.worst_ess_var),
        ("min tail ESS", f"{d.min_ess_tail:.0f}", f">= {t.min_ess:.0f}", ""),
        ("divergences", str(d.divergences), f"<= {t.max_divergences}", ""),
        ("min BFMI", f"{d.min_bfmi:.3f}", f">= {t.min_bfmi}", ""),
    ]
    table = pd.DataFrame(rows, columns=["check", "value", "threshold", "worst variable"])
    return table.set_index("check")


def sampler_sentence(fit: Fit) -> str:
    """One sentence saying how the draws were made: sampler, chains, draws, seed."""
    s = fit.settings
    if fit.approximate:
        return (f"APPROXIMATE posterior: {s.chains * s.draws} independent draws of the "
                f"{fit.method} approximation (no MCMC), seed {fit.provenance['seed']}.")
    return (f"Sampler: {s.backend}, {s.chains} chains x {s.draws} draws "
            f"({s.tune} tuning), seed {fit.provenance['seed']}.")


def diagnostics_markdown(fit: Fit) -> str:
    """Diagnostics as a short Markdown section: what was checked and what failed."""
    d = fit.diagnostics
    verdict = (f"approximate ({fit.method}), not checked" if fit.approximate
               else "converged" if d.ok else "NOT converged")
    lines = ["# Sampling diagnostics", "",
             f"Verdict: **{verdict}**"
             + ("" if d.ok else " - " + "; ".join(d.failures)), "",
             "| check | value | threshold | worst variable |", "|---|---|---|---|"]
    lines += [f"| {check} | {' | '.join(row)} |"
              for check, row in diagnostics_table(fit).iterrows()]
    if d.diagnosis is not None:
        lines += ["", "## Why, and what to change", ""] + [f"- {x}" for x in d.diagnosis.lines()]
    lines += ["", sampler_sentence(fit)]
    return "\n".join(lines) + "\n"


def coefficients_sentence(fit: Fit) -> str:
    """What the coefficients of a fit's law are, for a reader of its tables (Markdown).

    A law of centered power-law terms: ``a``, ``b``, ``c`` and the textbook ``A``, ``B``,
    ``C``.  Another (``curve_power``'s ``m``, ``f``, ``beta``): each parameter's description
    and the textbook coefficients that follow from them.
    """
    law, spec = fit.spec.law_obj, fit.spec
    ref = ", ".join(f"{k} = {spec.reference[k]:g}" for k in law.reference_keys)
    if {"a", "b", "c"} & set(law.param_names):
        return ("`a`, `b`, `c` are each term's loss contribution at the reference point "
                f"({ref}); `A`, `B`, `C` are the textbook coefficients"
                + ("; `_sd` rows are the spreads of group effects." if spec.effects else "."))
    textbook = law.natural_names
    by_run = any(e.group == C.RUN for e in spec.effects)
    return ("; ".join(f"`{p.name}`: {p.description}" for p in law.params)
            + f" (reference point {ref}); " + ", ".join(f"`{k}`" for k in textbook)
            + f" are the textbook coefficients of `{law.formula}`"
            + (_by_run_sentence(spec) if by_run
               else "; `_sd` rows are the spreads of group effects." if spec.effects else "."))


def _by_run_sentence(spec: Any) -> str:
    """What the coefficient rows of a law with effects by run are.

    The population's values (learned spreads), or the centres of fixed per-curve priors
    (``pooling = "none"``).
    """
    learned = [e.param for e in spec.effects if e.group == C.RUN and e.pooling == "partial"]
    fixed = [e.param for e in spec.effects if e.group == C.RUN and e.pooling == "none"]
    text = "; these are the population's values: each curve's own differ by its run effects"
    if learned:
        text += (", whose spreads across curves are the `_by_run_sd` rows ("
                 + ", ".join(f"`{p}`" for p in learned) + ")")
    if fixed:
        text += ("; " + ", ".join(f"`{p}`" for p in fixed) + " vary by curve with a fixed "
                 "spread around a fixed centre (pooling = 'none'): their rows are those centres, "
                 "not learned from the curves")
    return text + "."


def save_figure(fig: Any, path: str | Path, *, tight: bool = True) -> Path:
    """Save a figure atomically; the format follows the suffix (``.png``, ``.svg``).

    ``tight=False`` saves the figure as laid out (a grid figure places its texts itself,
    :func:`~bayeslaw.plots.panels.lay_out_grid`); otherwise matplotlib's
    ``bbox_inches="tight"`` crops it to its artists, which measures every tick again.
    """
    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    bbox = "tight" if tight else None
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=120,
                                                      bbox_inches=bbox))


def headless() -> None:
    """Draw figures without a display (matplotlib's Agg), unless a backend is already in use."""
    import matplotlib

    matplotlib.use("Agg", force=False)


def save_and_close(fig: Any, paths: dict[str, Path], *, tight: bool = True
                   ) -> dict[str, Path]:
    """Save ``fig`` to each of ``paths`` (keyed by their names in an output folder), close it.

    ``tight`` is :func:`save_figure`'s.
    """
    import matplotlib.pyplot as plt

    try:
        return {name: save_figure(fig, path, tight=tight) for name, path in paths.items()}
    finally:
        plt.close(fig)


def write_grid_figures(fit: Fit, out: str | Path, *,
                       zoom: tuple[float, float] | Mapping[str, tuple[float, float]] | None
                       = None, **options: Any) -> dict[str, Path]:
    """Write the grid figures of an output folder, with :func:`~bayeslaw.plots.plot_grid`'s options.

    ``grid.png`` and ``grid.svg`` at full scale and, given a ``zoom`` loss range (a table of
    curves: each curve's, by run name; :func:`~bayeslaw.plots.sweep.grid_zoom`),
    ``grid_zoom.png``; returns their paths under the names :func:`write_fit_outputs` gives
    them (``bayeslaw fit --xscale linear`` redraws its figures with this).
    """
    from ..plots.sweep import plot_grid, zoom_options

    out = Path(out)
    full = plot_grid(fit, **options)
    drawn = full.bayeslaw_prediction  # the zoom draws the same prediction again
    paths = save_and_close(full, {
        "grid figure (png)": out / "grid.png", "grid figure (svg)": out / "grid.svg"},
        tight=False)
    if zoom is not None:
        paths.update(save_and_close(
            plot_grid(fit, **zoom_options(fit, zoom, options), prediction=drawn),
            {"grid figure, plateau zoom (png)": out / "grid_zoom.png"}, tight=False))
    return paths


def write_fit_outputs(fit: Fit, out: Path, **grid_options: Any) -> dict[str, Path]:
    """Write the grid figure (PNG, SVG), coefficient table (CSV, MD), diagnostics, fit.

    ``grid_options`` go to :func:`~bayeslaw.plots.sweep.plot_grid` (``xscale``,
    ``forecast``, ...).
    """
    headless()
    from ..plots.figures import plot_final_losses
    from ..plots.sweep import grid_zoom

    out.mkdir(parents=True, exist_ok=True)
    table = fit.summary()
    paths = {
        "coefficients (csv)": atomic_write(out / "coefficients.csv",
                                           lambda tmp: table.to_csv(tmp)),
        "coefficients (markdown)": atomic_write_text(
            out / "coefficients.md",
            f"# Coefficients of `{fit.label}`\n\nPosterior mean, sd, central 94% "
            "interval, R-hat and effective sample sizes (an approximate fit has a method "
            f"column instead). {coefficients_sentence(fit)}\n\n" + markdown_table(table)),
        "diagnostics (markdown)": atomic_write_text(out / "diagnostics.md",
                                                    diagnostics_markdown(fit)),
        "diagnostics (json)": atomic_write_text(
            out / "diagnostics.json", json.dumps(fit.diagnostics.to_dict(), indent=2) + "\n"),
    }
    if C.D in fit.data.frame.columns:
        paths.update(write_grid_figures(fit, out, zoom=grid_zoom(fit.data.frame),
                                        **grid_options))
    else:  # final losses without D (e.g. ParScale): one figure against N, not the curve grid
        paths.update(save_and_close(plot_final_losses(fit), {
            "grid figure (png)": out / "grid.png", "grid figure (svg)": out / "grid.svg"}))
    paths["saved fit"] = fit.save(out / "fit.nc")
    return paths


# ---------------------------------------------------------------------------------------------
# a backtest's folder

#: The opening of ``backtest.md``: what its columns are.
BACKTEST_MD_INTRO = (
    "# Held-out forecast scores\n\nOnly held-out points are scored; `coverage_XX` is the share "
    "of them inside the XX% predictive band (a new observed loss: noise included), with its "
    "95% Clopper-Pearson interval in `_low` / `_high`; `coverage_XX_epistemic` is the same "
    "for the band of the law's value alone (no noise). `n_curves` counts the held-out runs, "
    "`converged` whether every fit of the row passed its convergence thresholds.\n\n")

#: Columns of the score table printed by ``bayeslaw backtest`` (those the table has).
SUMMARY_COLUMNS = ("split", "method", "n_curves", "n_test", "identified", "mape",
                   "coverage_50", "coverage_90", "coverage_90_epistemic", "crps", "max_rhat",
                   "divergences", "converged")


def forecast_slug(name: str) -> str:
    """File-name part of a forecast's figure: ``"prefix:0.5 / bayeslaw"`` -> ``prefix_0.5``."""
    return (name.replace(" / bayeslaw", "").replace(", ", "_").replace(":", "_")
            .replace("=", "_").replace(" ", "_"))


def backtest_markdown(result: BacktestResult) -> str:
    """``backtest.md``: the score table by split, with the backtest's notes."""
    notes = "".join(f"\n- {n}" for n in result.notes)
    return (BACKTEST_MD_INTRO + markdown_table(result.table.set_index("split"))
            + (f"\n\nNotes:{notes}\n" if notes else "\n"))


def write_backtest_outputs(data: LossData, result: BacktestResult, out: Path
                           ) -> dict[str, Path]:
    """Write ``backtest.csv``, ``backtest.md`` and ``forecast_<split>.png`` under ``out``.

    One figure per forecast of bayeslaw (the baseline's are not drawn), its held-out runs
    against ``data``.  Returns the written paths by name.
    """
    from ..plots.figures import plot_backtest

    headless()

    out.mkdir(parents=True, exist_ok=True)
    table = result.table
    paths = {"scores (csv)": atomic_write(out / "backtest.csv",
                                          lambda tmp: table.to_csv(tmp, index=False)),
             "scores (markdown)": atomic_write_text(out / "backtest.md",
                                                    backtest_markdown(result))}
    for name, forecast in result.forecasts.items():
        if not name.endswith("/ baseline"):
            fig = plot_backtest(data, forecast, title=f"{name}: held-out forecasts")
            paths.update(save_and_close(fig, {
                f"forecast {name}": out / f"forecast_{forecast_slug(name)}.png"}))
    return paths


def score_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The columns of :data:`SUMMARY_COLUMNS` that ``table`` has (the printed scores)."""
    return table[[c for c in SUMMARY_COLUMNS if c in table.columns]]


def unconverged(table: pd.DataFrame) -> pd.DataFrame:
    """Rows of bayeslaw fits (not the baseline) whose fits did not all converge."""
    fits = table[table["method"] != "baseline"]
    return fits[~fits["converged"].astype(bool)] if "converged" in fits else fits.iloc[:0]
