"""The HTML / Markdown report of one or several fits.

:func:`build_report` assembles the sections of each fit (:mod:`bayeslaw.report.sections`: data,
priors and hierarchy, diagnostics, coefficients, fitted curves, residuals, group effects,
derived quantities) and, for several fits, a model comparison; :mod:`bayeslaw.report.document`
renders them.  A fit's output folder is :mod:`bayeslaw.report.folders`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import constants as C
from ..errors import ArgumentError
from .document import Block, Image, Report, Section, figure_png
from .sections import fit_sections

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit

__all__ = ["Report", "build_report"]


def _comparison_section(comparison: Any, level: int) -> Section:
    blocks = [Block(comparison.summary_sentence()),
              Block(f"Expected log predictive density (elpd, by {comparison.method}; higher "
                    "is better) with its standard error, each model's difference from the best "
                    "(elpd_diff, dse), the effective number of parameters p, the stacking "
                    "weight, and n_bad_k, the points where the LOO estimate is unreliable.",
                    comparison.table),
              Block("ELPD of each model with its standard error.",
                    image=Image("compare", figure_png(comparison.plot()),
                                "model comparison plot"))]
    notes = tuple(getattr(comparison, "notes", ()))
    if notes:  # bad Pareto k, exact refits, refits that did not converge
        blocks.append(Block("Notes on this comparison: " + " ".join(
            n if n.endswith(".") else n + "." for n in notes)))
    return Section("Model comparison", tuple(blocks), level)


def build_report(fits: Fit | Mapping[str, Fit], *, title: str | None = None,
                 budget: float | None = None, comparison: Any = None,
                 seed: int = 0) -> Report:
    """The HTML / Markdown report of one fit, or of several with a model comparison.

    Parameters
    ----------
    fits : Fit or mapping of str to Fit
        One fit, or fits by name (several add a model-comparison section).
    title : str, optional
        Document title.
    budget : float, optional
        Compute budget (FLOPs) of the compute-optimal tables; default ten times the largest
        run's compute (:func:`bayeslaw.posterior.derived.largest_run_compute`).
    comparison : object, optional
        A precomputed comparison with ``table``, ``plot()`` and ``summary_sentence()``;
        default :func:`bayeslaw.evaluation.comparison.compare` of ``fits`` when there are several.
    seed : int
        Seed of every posterior-predictive draw (the report is reproducible).

    Returns
    -------
    Report
        Render with ``to_html()`` / ``to_markdown()``, write with ``save(folder)``.
    """
    named = dict(fits) if isinstance(fits, Mapping) else {"fit": fits}
    if not named:
        raise ArgumentError("build_report needs at least one fit")
    sections: list[Section] = []
    if len(named) == 1:
        only = next(iter(named.values()))
        sections += fit_sections(only, budget=budget, seed=seed)
    else:
        for name, fit in named.items():
            sections.append(Section(f"Model {name}", (Block(f"`{fit!r}`"),), 2))
            sections += fit_sections(fit, name=name, level=3, budget=budget, seed=seed)
        if comparison is None:
            import warnings

            from ..errors import ParetoKWarning
            from ..evaluation.comparison import compare

            # unreliable LOO points are reported in the table (n_bad_k) and in the notes
            # that the comparison section renders: the report is where the reader sees them
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ParetoKWarning)
                comparison = compare(named)
    if comparison is not None:
        sections.append(_comparison_section(comparison, 2))
    laws = sorted({f.spec.law for f in named.values()})
    title = title or f"bayeslaw report: {', '.join(laws)}"
    meta = (f"bayeslaw {C.VERSION}; {len(named)} fit(s): "
            + ", ".join(f"`{n}` ({f.spec.law}, {f.n_draws} draws)" for n, f in named.items()))
    return Report(title, sections, meta)
