"""The files of a backtest: its score table (CSV, Markdown) and each split's forecast figure.

:func:`write_backtest_outputs` writes what ``bayeslaw backtest`` leaves in its folder;
:func:`score_summary` and :func:`unconverged` are the table it prints and the rows it warns
about.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ..files import atomic_write, atomic_write_text
from .document import markdown_table

if TYPE_CHECKING:  # pragma: no cover
    from ..data.table import LossData
    from ..evaluation.backtesting import BacktestResult

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
    from .folders import headless, save_and_close

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
