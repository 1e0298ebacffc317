"""Backtests: fit on part of the data, forecast the rest, score only the held-out points.

The splits (``prefix:F``, ``largest-N[:FRAC]``, ``level:COL=VALUE``, ``kfold:K`` and
``RUNS+prefix:F``) are :mod:`bayeslaw.evaluation.splits`; the scores (both kinds of band, for
bayeslaw and the baseline) are :mod:`bayeslaw.evaluation.scoring`.

Held-out runs stay in the model unobserved (``fit(..., like=all_data)``), so the compiled
model is reused across splits and their effects are drawn from the population.  The
least-squares baseline (:mod:`bayeslaw.evaluation.baseline`) is scored on the same split.  A
training part with fewer levels than the law needs (T_m = 8 held out of a sweep of T_m = 2, 4, 8
leaves two levels for the T_m term's three parameters) is fitted all the same, as the Ouro paper's
held-out T_m was, with a warning and ``identified = False`` in the table: ``bayeslaw fit``
refuses such a table, and the forecast rests on the priors of what the data cannot pin.

Recalibration (``backtest(..., recalibrate=True)``, :func:`recalibration`): quantile
recalibration (Kuleshov, Fenner and Ermon 2018) learned from an inner backtest. The same split
(or the one ``recalibrate`` names, e.g. ``"prefix:0.5"``: the first quarter of a curve may
leave no room for a prefix of its own) is applied to the training part (its first fold).
Fitted on the inner training part, the model forecasts the inner held-out points, and the
empirical distribution of their probability integral transforms (PIT) maps each nominal
quantile level to the level that held that share of them. The outer forecast's draws are
replaced by those quantiles (so its median moves too). Every point of the inner backtest lies
in the outer training part, so nothing held out reaches either fit. The bands are then
calibrated as far as the outer held-out points miss the model as the inner ones did. A
held-out level (``level:COL=VALUE``) has no counterpart in the training part: name another
inner split.

Facts that bear on reading a row of the score table (an R^2 that is not defined) are in
:attr:`BacktestResult.notes`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.table import LossData
from ..errors import ArgumentError, DataError, UnidentifiedSplitWarning
from ..spec.model_spec import ModelSpec
from . import metrics
from .baseline import left_out
from .scoring import baseline_scores, diagnostic_columns, score, table_notes, with_epistemic_bounds
from .splits import Split, inner_split, parse_split, short_of_levels

if TYPE_CHECKING:
    from ..posterior.diagnostics import Diagnostics
    from ..posterior.prediction import Prediction
    from ..posterior.result import Fit


@dataclass(frozen=True)
class Recalibration:
    """Quantile recalibration learned from an inner backtest (see the module docstring).

    Attributes
    ----------
    pit : ndarray
        Sorted PIT values of the inner held-out points under their forecasts.
    split : str
        The inner split it was learned from.
    max_rhat, divergences :
        Convergence of the inner fit.
    diagnostics : Diagnostics, optional
        The inner fit's full diagnostics (judged against its thresholds).
    """

    pit: np.ndarray = field(repr=False)
    split: str
    max_rhat: float = np.nan
    divergences: int = 0
    diagnostics: Diagnostics | None = field(default=None, repr=False)

    def levels(self, u: np.ndarray) -> np.ndarray:
        """The predictive quantile level that holds a share ``u`` of the inner points."""
        return np.quantile(self.pit, np.asarray(u, float))

    def draws(self, draws: np.ndarray) -> np.ndarray:
        """Recalibrated predictive draws ``(S, n)``.

        They are the level-``levels(u)`` quantiles of ``draws`` at ``u = (k + 1/2) / S``, so
        they cannot reach past the draws' own range.
        """
        s = draws.shape[0]
        return np.quantile(draws, self.levels((np.arange(s) + 0.5) / s), axis=0)

    def apply(self, pred: Prediction) -> Prediction:
        """``pred`` with recalibrated draws, median and bands.

        The PIT was taken under predictive draws, so an epistemic prediction (the law's value
        without noise) is refused.
        """
        from ..posterior.prediction import band_tag, summarise

        if pred.kind != "predictive":
            raise ArgumentError(f"a recalibration maps predictive forecasts (learned from "
                                f"their PIT); got kind={pred.kind!r}: predict with "
                                "kind='predictive'")

        summary = {"median"} | {f"{side}_{band_tag(p)}" for p in pred.probs
                                for side in ("lower", "upper")}
        points = pred.table.drop(columns=[c for c in pred.table.columns if c in summary])
        return summarise(points, self.draws(pred.draws), pred.kind, pred.probs,
                         **{**pred.attrs, "recalibrated_from": self.split})


def recalibration(data: LossData, spec: ModelSpec, split: str, *,
                  seed: int = C.DEFAULT_SEED, like: LossData | None = None,
                  **fit_kwargs: Any) -> Recalibration:
    """Learn a :class:`Recalibration` from ``split``'s first fold on ``data``.

    Fits ``spec`` to that fold's training part (``like`` as in
    :func:`bayeslaw.inference.sampling.fit`, ``data`` by default) and takes the PIT of its held-out
    points under their forecasts. For a forecast of runs in progress, ``kfold:5+prefix:0.5`` on
    every logged run learns how the rest of a run misses its forecast.
    """
    from ..posterior.prediction import predict

    part = inner_split(data, split, seed=seed)
    train = data.select(part.train, f"train of the inner {part.name}")
    test = data.frame.loc[part.test].reset_index(drop=True)
    result = fold_fit(train, spec, f"inner {part.name}", seed=seed,
                      like=like if like is not None else data, **fit_kwargs)
    pred = predict(result, test, seed=seed)
    return Recalibration(np.sort(metrics.pit(test[C.LOSS].to_numpy(float), pred.draws)),
                         part.name, result.diagnostics.max_rhat,
                         result.diagnostics.divergences, result.diagnostics)


def fold_fit(train: LossData, spec: ModelSpec, name: str, **fit_kwargs: Any) -> Fit:
    """:func:`bayeslaw.inference.sampling.fit` of one fold's training part.

    A convergence warning names the fold (``split 'prefix:0.5': sampling did not
    converge: ...``), so a user reading a backtest's warnings knows which row it concerns.
    """
    from ..errors import ConvergenceWarning
    from ..inference.sampling import fit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = fit(train, spec, **fit_kwargs)
    for w in caught:
        message = (f"split {name!r}: {w.message}" if issubclass(w.category, ConvergenceWarning)
                   else w.message)
        warnings.warn_explicit(message, w.category, w.filename, w.lineno)
    return result


@dataclass
class BacktestResult:
    """One row per (split, method) with held-out scores; forecasts kept for figures.

    Attributes
    ----------
    table : DataFrame
        The scores (:mod:`bayeslaw.evaluation.scoring`: ``coverage_XX`` predictive,
        ``..._epistemic`` not).
    forecasts : dict of DataFrame
        Per ``"split / method"``: the held-out points with the predictive ``median`` and
        bands and the epistemic bounds (``lower_XX_epistemic``, ``upper_XX_epistemic``).
    notes : list of str
        What some rows need said (:func:`~bayeslaw.evaluation.scoring.table_notes`), and each failed
        fold.
    failures : dict of str
        The folds that raised, by split name: their error (type and message).
    """

    table: pd.DataFrame
    forecasts: dict[str, pd.DataFrame] = field(repr=False, default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        cols = [c for c in ("split", "method", "n_test", "n_curves", "mape", "coverage_50",
                            "coverage_90", "coverage_90_epistemic", "crps")
                if c in self.table.columns]
        text = "BacktestResult\n" + self.table[cols].to_string(index=False)
        return text + "".join(f"\nnote: {n}" for n in self.notes)


def backtest(data: LossData, spec: ModelSpec, split: str, *, seed: int = C.DEFAULT_SEED,
             baseline: bool = True, n_boot: int = 100, probs: tuple[float, ...] = (0.5, 0.9),
             recalibrate: bool | str = False, client: Any = None, workers: int | None = None,
             progress: bool | None = None, **fit_kwargs: Any) -> BacktestResult:
    """Run every fold of ``split``: bayeslaw and (optionally) the baseline, held-out scores.

    ``fit_kwargs`` go to :func:`bayeslaw.inference.sampling.fit` (draws, tune, chains, thresholds,
    ...). In-sample points are never scored; held-out points never reach either fit.  Both methods
    are scored on both kinds of band (:mod:`bayeslaw.evaluation.scoring`); the baseline's rows say
    whether its optimizer reported convergence (``converged``, ``boot_unconverged``); a law the
    baseline cannot stand beside (a population of curves:
    :func:`~bayeslaw.evaluation.baseline.left_out`) gets none, and a note says why.  With
    ``recalibrate`` (``True`` for the same split, or an inner split string such as
    ``"prefix:0.5"``), each fold also scores bayeslaw's forecast recalibrated from an inner
    backtest on its training part (method ``"bayeslaw, recalibrated"``: one more fit per
    fold; its ``lpd`` and epistemic columns are not defined, its R-hat and divergences are
    the worse of both fits, ``n_calibration`` counts the inner held-out points).

    Each fold is a task of :func:`bayeslaw.inference.fleet.run`: serially here by default, on a
    local cluster of ``workers`` processes, or on the Dask ``client`` (a client or a scheduler's
    address); the table is the same either way.  ``progress`` draws a bar over the folds.  A
    fold that raises is named in a :class:`~bayeslaw.errors.TaskFailedWarning` and in
    ``failures``, and the other folds' rows are kept (when every fold fails, its error is
    raised).
    """
    from ..inference import fleet

    parts, trains = _training_parts(data, split, seed)
    skipped = left_out(spec) if baseline else None  # a law the baseline cannot stand beside
    baseline = baseline and skipped is None
    inner = split if recalibrate is True else recalibrate or None
    if inner:  # an inner split that cannot be made is refused before any fit
        for train in trains:
            inner_split(train, inner, seed=seed)
    options = {"baseline": baseline, "n_boot": n_boot, "probs": probs, "seed": seed,
               "fit_kwargs": {"progress": False, **fit_kwargs}}
    tasks = [fleet.Task(part.name, _fold_rows, (data, spec, part, train, inner), options)
             for part, train in zip(parts, trains, strict=True)]
    outcomes = fleet.run(tasks, client=client, workers=workers, progress=progress,
                         label="backtest folds")
    rows, forecasts = [], {}
    for name, fold in fleet.values(outcomes, "backtest fold").items():
        for method, row, forecast in fold:
            rows.append(row)
            forecasts[f"{name} / {method}"] = forecast
    table = pd.DataFrame(rows)
    failed = fleet.failures(outcomes)
    notes = table_notes(table) + [f"fold {k!r} failed: {v}" for k, v in failed.items()]
    notes += [skipped] if skipped else []
    return BacktestResult(table, forecasts, notes, failed)


def _training_parts(data: LossData, split: str, seed: int
                    ) -> tuple[list[Split], list[LossData]]:
    """The parts of ``split`` on ``data`` and their training tables (none may be empty)."""
    parts = parse_split(data, split, seed=seed)
    for part in parts:
        if not part.train.any() or not part.test.any():
            raise DataError(f"split {part.name!r} leaves an empty train or test set")
    return parts, [data.select(part.train, f"train of {part.name}") for part in parts]


def _fold_rows(data: LossData, spec: ModelSpec, part: Split, train: LossData,
               inner: str | None, *, baseline: bool, n_boot: int, probs: tuple[float, ...],
               seed: int, fit_kwargs: dict[str, Any]
               ) -> list[tuple[str, dict[str, Any], pd.DataFrame]]:
    """One fold's ``(method, score row, forecast)``: bayeslaw, recalibrated, baseline.

    The recalibrated row needs an ``inner`` split, the baseline's ``baseline``.  A training
    part short of the law's levels is fitted with an :class:`UnidentifiedSplitWarning`
    (issued for the caller of :func:`backtest`).
    """
    test = data.frame.loc[part.test].reset_index(drop=True)
    short = short_of_levels(train, spec)
    if short:
        warnings.warn(f"split {part.name!r}: the training part is short of levels: {short}. "
                      "Fitted anyway: the held-out forecast rests on priors there",
                      UnidentifiedSplitWarning, stacklevel=3)

    def head(method: str) -> dict[str, Any]:
        return {"split": part.name, "method": method, "n_train": int(part.train.sum()),
                "identified": short is None}

    result = fold_fit(train, spec, part.name, seed=seed, like=data, **fit_kwargs)
    pred, row, forecast = _bayeslaw_scores(result, test, probs, seed)
    out = [("bayeslaw", head("bayeslaw") | row, forecast)]
    if inner:
        rec = recalibration(train, spec, inner, seed=seed, like=data, **fit_kwargs)
        cal = rec.apply(pred)
        row = {**score(test[C.LOSS].to_numpy(float), cal.table["median"].to_numpy(), cal.draws,
                       {p: cal.band(p) for p in probs}, None, test[C.RUN].to_numpy()),
               **diagnostic_columns(result.diagnostics, rec.diagnostics),
               "n_calibration": len(rec.pit)}
        method = "bayeslaw, recalibrated"
        out.append((method, head(method) | row, cal.table))
    if baseline:
        _, row, table = baseline_scores(train, test, spec, probs=probs, n_boot=n_boot,
                                        seed=seed)
        out.append(("baseline", head("baseline") | row, table))
    return out


def _bayeslaw_scores(result: Fit, test: pd.DataFrame, probs: tuple[float, ...], seed: int
                     ) -> tuple[Prediction, dict[str, Any], pd.DataFrame]:
    """The fold fit's predictive forecast of ``test``, its scores and its forecast table.

    The scores are both kinds of band's (:func:`~bayeslaw.evaluation.scoring.score`) and the fit's
    convergence columns; the table has the epistemic bounds too.
    """
    from ..posterior.noise import log_likelihood
    from ..posterior.prediction import predict

    y = test[C.LOSS].to_numpy(float)
    pred = predict(result, test, probs=probs, seed=seed)
    epi = predict(result, test, kind="epistemic", probs=probs, seed=seed)
    ll = log_likelihood(result, test, seed=seed)
    bands = {p: pred.band(p) for p in probs}
    row = {**score(y, pred.table["median"].to_numpy(), pred.draws, bands, ll,
                   test[C.RUN].to_numpy(),
                   epistemic=(epi.draws, {p: epi.band(p) for p in probs})),
           **diagnostic_columns(result.diagnostics)}
    return pred, row, with_epistemic_bounds(pred.table, epi.table, probs)
