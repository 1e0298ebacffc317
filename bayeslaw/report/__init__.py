"""Writing results for people: reports and output folders.

The report document (HTML, Markdown) and its sections, and the output folders of a fit and of
a backtest. May import :mod:`bayeslaw.evaluation` and below.
"""

from __future__ import annotations

from .build import build_report
from .document import Report
from .folders import write_fit_outputs, write_grid_figures

__all__ = [
    "Report",
    "build_report",
    "write_fit_outputs",
    "write_grid_figures",
]
