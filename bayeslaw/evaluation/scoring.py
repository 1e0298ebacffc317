"""The held-out scores of a backtest: one row of the score table per (split, method).

Both kinds of band are scored for both methods: ``coverage_XX`` (and its intervals) and
``crps`` are the predictive band's (a new observed loss: bayeslaw's posterior predictive, the
baseline's bootstrap with its own residuals, :mod:`bayeslaw.evaluation.baseline`), and the same
columns with ``_epistemic`` after ``coverage_XX`` (``coverage_90_epistemic``, ...,
``crps_epistemic``) are the band of the law's value alone. Predictive bands are the ones to
compare with held-out losses; the epistemic ones show how much of the band is the fit's own
uncertainty. Every row gives the number of held-out runs (``n_curves``); facts that bear on
reading a row (an R^2 that is not defined) are in :func:`table_notes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.table import LossData
from ..spec.model_spec import ModelSpec
from . import metrics
from .baseline import PointFit, bootstrap, point_fit

if TYPE_CHECKING:
    from ..posterior.diagnostics import Diagnostics


def diagnostic_columns(*diagnostics: Diagnostics | None) -> dict[str, Any]:
    """A backtest row's convergence columns from one or more fits (the worst of them).

    ``converged`` is whether every fit passed its thresholds (R-hat, bulk and tail ESS,
    divergences, BFMI); ``failures`` says which failed.
    """
    given = [d for d in diagnostics if d is not None]
    return {"max_rhat": max(d.max_rhat for d in given),
            "min_ess_bulk": min(d.min_ess_bulk for d in given),
            "min_ess_tail": min(d.min_ess_tail for d in given),
            "divergences": sum(d.divergences for d in given),
            "min_bfmi": min(d.min_bfmi for d in given),
            "converged": all(d.ok for d in given),
            "failures": "; ".join(f for d in given for f in d.failures)}


def _band_scores(y: np.ndarray, bands: dict[float, tuple[np.ndarray, np.ndarray]],
                 curves: np.ndarray | None, kind: str) -> dict[str, float]:
    """Coverage columns of one kind of band: ``coverage_XX{kind}`` and its intervals."""
    out: dict[str, float] = {}
    for prob, (lo, hi) in bands.items():
        cov = metrics.coverage(y, lo, hi, prob)
        name = f"coverage_{prob * 100:g}{kind}"
        out[name] = cov.rate
        out[f"{name}_low"], out[f"{name}_high"] = cov.low, cov.high
        if curves is not None:
            by = metrics.coverage_by_curve(y, lo, hi, curves, prob)
            out[f"{name}_curves"] = by.rate
            out[f"{name}_curves_low"], out[f"{name}_curves_high"] = by.low, by.high
    return out


def score(y: np.ndarray, median: np.ndarray, draws: np.ndarray,
          bands: dict[float, tuple[np.ndarray, np.ndarray]],
          loglik: np.ndarray | None, curves: np.ndarray | None = None, *,
          epistemic: tuple[np.ndarray, dict[float, tuple[np.ndarray, np.ndarray]]] | None
          = None) -> dict[str, float]:
    """Held-out scores of one method: R^2, MAE, MAPE, coverage (with interval), CRPS, LPD.

    ``draws`` and ``bands`` are the predictive kind's (``crps``, ``coverage_XX``).
    ``epistemic``, the epistemic kind's draws and bands, adds the same scores of that band
    under names that say so: ``crps_epistemic``, ``coverage_XX_epistemic`` (and ``_low``,
    ``_high``, ``_curves``, ... after it).
    With ``curves`` (the run of each point), the number of held-out curves (``n_curves``) and
    coverage with each curve counted once (``coverage_XX_curves`` and its interval,
    :func:`metrics.coverage_by_curve`) are reported too:
    points of a curve are correlated, so the pointwise binomial interval overstates the
    evidence when few curves are held out. ``r2`` is NaN when the held-out losses have no
    spread (one point): :func:`table_notes` says so.
    """
    out = {"n_test": len(y), "r2": metrics.r2(y, median), "mae": metrics.mae(y, median),
           "mape": metrics.mape(y, median), "crps": metrics.crps(y, draws),
           "lpd": metrics.log_predictive_density(loglik) if loglik is not None else np.nan}
    if curves is not None:
        out["n_curves"] = len(np.unique(np.asarray(curves)))
    out.update(_band_scores(y, bands, curves, ""))
    if epistemic is not None:
        e_draws, e_bands = epistemic
        out["crps_epistemic"] = metrics.crps(y, e_draws)
        out.update(_band_scores(y, e_bands, curves, "_epistemic"))
    return out


def table_notes(table: pd.DataFrame) -> list[str]:
    """What a reader of a backtest table needs to know about some of its rows.

    An R^2 that is not defined (NaN: the held-out losses have no spread, e.g. one point), a
    row without epistemic columns (a recalibrated forecast: recalibration maps predictive
    draws only), a baseline whose optimizer did not report convergence.
    """
    notes = []
    if "r2" in table:
        for split, part in table[table["r2"].isna()].groupby("split", sort=False):
            n = sorted(set(part["n_test"].astype(int)))
            notes.append(f"split {split!r}: R^2 is not defined on {' / '.join(map(str, n))} "
                         f"held-out point(s) with no spread in loss; it is NaN for "
                         f"{', '.join(part['method'])}")
    if "method" in table and (table["method"] == "bayeslaw, recalibrated").any():
        notes.append("'bayeslaw, recalibrated' rows have no epistemic columns (NaN): a "
                     "recalibration maps predictive draws only")
    if "boot_unconverged" in table:  # baseline rows ("converged" is every method's column)
        base = table[table["method"] == "baseline"]
        bad = base[~base["converged"].astype(bool) | (base["boot_unconverged"] > 0)]
        for _, row in bad.iterrows():
            notes.append(f"split {row['split']!r}: the baseline's optimizer did not report "
                         f"convergence (best start converged: {bool(row['converged'])}; "
                         f"bootstrap refits that did not: {int(row['boot_unconverged'])})")
    return notes


def with_epistemic_bounds(table: pd.DataFrame, epistemic: pd.DataFrame,
                          probs: tuple[float, ...]) -> pd.DataFrame:
    """A forecast table with the epistemic band's bounds too (``lower_90_epistemic``, ...).

    ``table`` is the predictive forecast, ``epistemic`` the epistemic one at the same points
    (its ``lower_XX`` / ``upper_XX`` columns for each of ``probs``).
    """
    out = table.copy()
    for p in probs:
        for side in ("lower", "upper"):
            out[f"{side}_{p * 100:g}_epistemic"] = epistemic[f"{side}_{p * 100:g}"].to_numpy()
    return out


def baseline_scores(train: LossData, test: pd.DataFrame, spec: ModelSpec, *,
                    probs: tuple[float, ...] = (0.5, 0.9), n_boot: int = 100,
                    seed: int = C.DEFAULT_SEED) -> tuple[PointFit, dict[str, Any], pd.DataFrame]:
    """The baseline fitted on ``train`` and scored on ``test`` as a backtest does.

    Returns the bootstrapped :class:`~bayeslaw.evaluation.baseline.PointFit`, the row's scores (both
    kinds of band, :func:`score`; ``converged`` and ``boot_unconverged`` from the optimizer)
    and the forecast table (predictive median and bands, epistemic bounds).  No sampling.
    """
    base = bootstrap(point_fit(train, spec, seed=seed), train, n_boot=n_boot, seed=seed)
    y = test[C.LOSS].to_numpy(float)
    table = base.bands(test, probs, seed=seed)
    epi = base.bands(test, probs, "epistemic")

    def bounds(t: pd.DataFrame) -> dict[float, tuple[np.ndarray, np.ndarray]]:
        return {p: (t[f"lower_{p * 100:g}"].to_numpy(), t[f"upper_{p * 100:g}"].to_numpy())
                for p in probs}

    row = {**score(y, table["median"].to_numpy(), base.draws(test, seed=seed), bounds(table),
                   None, test[C.RUN].to_numpy(),
                   epistemic=(base.draws(test, "epistemic"), bounds(epi))),
           "converged": base.converged, "boot_unconverged": base.boot_unconverged}
    return base, row, with_epistemic_bounds(table, epi, probs)
