"""Backtests: fit on part of the data, forecast the rest, score only the held-out points.

Splits (``parse_split``):

* ``prefix:F`` - every curve's points with ``D <= F * (its largest D)`` train, the rest test
  (the Ouro paper's "first 25% of each curve" is ``prefix:0.25``);
* ``largest-N`` - the runs of the largest model size are held out;
* ``largest-N:FRAC`` - the runs of the largest sizes are held out, as many sizes as it takes
  to cover at least ``FRAC`` of the runs (``0 < FRAC < 1``): for a table of continuous N
  (Chinchilla's final losses have about one run per size), where ``largest-N`` holds out one
  run;
* ``level:COL=VALUE`` - the runs with that value of a run-level column are held out;
* ``kfold:K`` - runs are dealt (seeded) into K folds, each held out in turn;
* ``RUNS+prefix:F`` (``RUNS`` any of the above but a prefix, e.g. ``kfold:5+prefix:0.5``) - the
  held-out runs keep their first ``F`` in training and every other run trains whole: the rest
  of runs in progress, forecast from their start and the finished runs.

Held-out runs stay in the model unobserved (``fit(..., like=all_data)``), so the compiled
model is reused across splits and their effects are drawn from the population.  The
least-squares baseline (:mod:`bayeslaw.baseline`) is scored on the same split.  A training
part with fewer levels than the law needs (T_m = 8 held out of a sweep of T_m = 2, 4, 8 leaves
two levels for the T_m term's three parameters) is fitted all the same, as the Ouro paper's
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

Both kinds of band are scored for both methods: ``coverage_XX`` (and its intervals) and
``crps`` are the predictive band's (a new observed loss: bayeslaw's posterior predictive, the
baseline's bootstrap with its own residuals, :mod:`bayeslaw.baseline`), and the same columns
with ``_epistemic`` after ``coverage_XX`` (``coverage_90_epistemic``, ...,
``crps_epistemic``) are the band of the law's value alone. Predictive bands are the ones to
compare with held-out losses; the epistemic ones show how much of the band is the fit's own
uncertainty. Every row gives the number of held-out runs (``n_curves``); facts that bear on
reading a row (an R^2 that is not defined) are in :attr:`BacktestResult.notes`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import constants as C
from . import metrics
from .baseline import PointFit, bootstrap, point_fit
from .data import LossData
from .errors import DataError, SpecError, UnidentifiedSplitWarning
from .spec import ModelSpec

if TYPE_CHECKING:
    from .diagnostics import Diagnostics
    from .prediction import Prediction
    from .result import Fit


@dataclass(frozen=True)
class Split:
    """One train / test partition of a ``LossData`` (boolean row masks)."""

    name: str
    train: np.ndarray = field(repr=False)
    test: np.ndarray = field(repr=False)


def _number(text: str, cast: Any, message: str) -> Any:
    try:
        return cast(text)
    except ValueError:
        raise SpecError(message) from None


def parse_split(data: LossData, split: str, *, seed: int = 0) -> list[Split]:
    """Turn a split string (see the module docstring) into train / test masks."""
    if "+" in split:
        return _runs_continued(data, split, seed)
    frame = data.frame
    kind, _, arg = split.partition(":")
    if kind == "prefix":
        frac = _number(arg, float, f"prefix split takes a fraction, e.g. prefix:0.25; got "
                                   f"{split!r}")
        if not 0 < frac < 1:
            raise SpecError(f"prefix fraction must lie in (0, 1), got {frac}")
        limit = frac * frame.groupby(C.RUN)[C.D].transform("max")
        train = (frame[C.D] <= limit).to_numpy()
        return [Split(split, train, ~train)]
    if kind == "largest-N" and not arg:
        test = (frame[C.N] == frame[C.N].max()).to_numpy()
        return [Split(split, ~test, test)]
    if kind == "largest-N":
        return [Split(split, *_largest_sizes(data, split, arg))]
    if kind == "level":
        col, eq, value = arg.partition("=")
        if not eq or col not in frame.columns:
            raise SpecError(f"level split takes COLUMN=VALUE with a column of the data, e.g. "
                            f"level:T_m=8; got {split!r} (columns: {sorted(frame.columns)})")
        column = frame[col]
        try:
            target: Any = float(value) if column.dtype.kind in "fiu" else value
        except ValueError:
            raise SpecError(f"column {col!r} is numeric; {value!r} is not a number") from None
        test = (column == target).to_numpy()
        if not test.any():
            raise DataError(f"no rows with {col} = {value}; levels are "
                            f"{sorted(column.unique().tolist())[:10]}")
        return [Split(split, ~test, test)]
    if kind == "kfold":
        k = _number(arg, int, f"kfold split takes a number of folds, e.g. kfold:5; got "
                              f"{split!r}")
        runs = np.array(data.runs, dtype=object)
        if not 2 <= k <= len(runs):
            raise SpecError(f"kfold needs 2 <= K <= number of runs ({len(runs)}), got {k}")
        order = np.random.default_rng(seed).permutation(len(runs))
        fold_of = dict(zip(runs[order], np.arange(len(runs)) % k, strict=True))
        folds = frame[C.RUN].map(fold_of).to_numpy()
        return [Split(f"{split} fold {i + 1}", folds != i, folds == i) for i in range(k)]
    raise SpecError(f"unknown split {split!r}: use prefix:F, largest-N, largest-N:FRAC, "
                    "level:COL=VALUE or kfold:K")


def _largest_sizes(data: LossData, split: str, arg: str) -> tuple[np.ndarray, np.ndarray]:
    """Train / test masks of ``largest-N:FRAC``: the largest sizes covering >= FRAC of runs."""
    frac = _number(arg, float, f"largest-N takes a fraction of the runs, e.g. largest-N:0.1; "
                               f"got {split!r}")
    if not 0 < frac < 1:
        raise SpecError(f"largest-N fraction must lie in (0, 1), got {frac} in {split!r}")
    frame = data.frame
    runs_per_size = frame.groupby(C.N)[C.RUN].nunique().sort_index(ascending=False)
    covered = runs_per_size.cumsum() / runs_per_size.sum()
    # the largest sizes, down to the first at which the held-out share reaches frac (a share
    # k / n is the float nearest k / n, as the literal frac is: 3 of 10 runs meet 0.3)
    n_sizes = int(np.searchsorted(covered.to_numpy(), frac)) + 1
    if n_sizes >= len(runs_per_size):
        most = float(covered.iloc[-2]) if len(covered) > 1 else 0.0
        raise SpecError(f"{split!r} would hold out every model size: all but the smallest of "
                        f"the {len(covered)} sizes cover {most:.3g} of the "
                        f"{int(runs_per_size.sum())} runs; use a fraction up to that")
    test = frame[C.N].isin(runs_per_size.index[:n_sizes]).to_numpy()
    return ~test, test


def short_of_levels(train: LossData, spec: ModelSpec) -> str | None:
    """Why ``train`` cannot identify ``spec``'s law (too few levels of a covariate), or None.

    The same check as :func:`bayeslaw.model.check_compatible`'s, which refuses a table in
    ``fit``; a backtest's training part may fall short of it by holding out a level.
    """
    law = spec.law_obj
    try:
        train.require_levels(law.covariates, law.name, law.min_levels)
    except DataError as err:
        return str(err)
    return None


def _runs_continued(data: LossData, split: str, seed: int) -> list[Split]:
    """``RUNS+prefix:F``: the runs ``RUNS`` holds out keep their first ``F`` in training.

    ``RUNS`` is ``largest-N[:FRAC]``, ``level:COL=VALUE`` or ``kfold:K``; every other run trains
    whole.  This is the forecast a sweep in progress asks for: the rest of some runs, given
    their beginning and the finished runs.
    """
    held, _, prefix = split.partition("+")
    if not prefix.startswith("prefix:") or held.startswith("prefix") or "+" in prefix:
        raise SpecError(f"a combined split is RUNS+prefix:F with RUNS one of largest-N, "
                        f"largest-N:FRAC, level:COL=VALUE or kfold:K, e.g. "
                        f"kfold:5+prefix:0.5; got {split!r}")
    (start,) = parse_split(data, prefix, seed=seed)
    return [Split(part.name.replace(held, split, 1), part.train | (part.test & start.train),
                  part.test & start.test)
            for part in parse_split(data, held, seed=seed)]


def inner_split(data: LossData, split: str, *, seed: int = C.DEFAULT_SEED) -> Split:
    """The split a recalibration learns from: ``split``'s first fold on ``data``.

    In a backtest ``data`` is the outer training part, so the inner test points are all
    training points of the outer split.  A split that cannot be made there (a held-out level
    the training part lacks, a prefix with no point left to train on) is refused with an error
    that says so.
    """
    try:
        part = parse_split(data, split, seed=seed)[0]
    except DataError as err:
        raise DataError(f"the inner split {split!r} cannot be made on the training part "
                        f"({err}); recalibrate from another split, e.g. prefix:0.5 or "
                        "kfold:5+prefix:0.5") from None
    if not part.train.any() or not part.test.any():
        raise DataError(f"the inner split {part.name!r} of the training part leaves an empty "
                        "train or test set; recalibrate from another split, e.g. prefix:0.5")
    return part


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
        from .prediction import band_tag, summarise

        if pred.kind != "predictive":
            raise SpecError(f"a recalibration maps predictive forecasts (learned from their "
                            f"PIT); got kind={pred.kind!r}: predict with "
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

    Fits ``spec`` to that fold's training part (``like`` as in :func:`bayeslaw.fit.fit`,
    ``data`` by default) and takes the PIT of its held-out points under their forecasts.
    For a forecast of runs in progress, ``kfold:5+prefix:0.5`` on every logged run learns how
    the rest of a run misses its forecast.
    """
    from .prediction import predict

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
    """:func:`bayeslaw.fit.fit` of one fold's training part.

    A convergence warning names the fold (``split 'prefix:0.5': sampling did not
    converge: ...``), so a user reading a backtest's warnings knows which row it concerns.
    """
    from .errors import ConvergenceWarning
    from .inference import fit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = fit(train, spec, **fit_kwargs)
    for w in caught:
        message = (f"split {name!r}: {w.message}" if issubclass(w.category, ConvergenceWarning)
                   else w.message)
        warnings.warn_explicit(message, w.category, w.filename, w.lineno)
    return result


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


def _with_epistemic(table: pd.DataFrame, epistemic: pd.DataFrame, probs: tuple[float, ...]
                    ) -> pd.DataFrame:
    """A forecast table with the epistemic band's bounds too (``lower_90_epistemic``, ...)."""
    out = table.copy()
    for p in probs:
        for side in ("lower", "upper"):
            out[f"{side}_{p * 100:g}_epistemic"] = epistemic[f"{side}_{p * 100:g}"].to_numpy()
    return out


@dataclass
class BacktestResult:
    """One row per (split, method) with held-out scores; forecasts kept for figures.

    Attributes
    ----------
    table : DataFrame
        The scores (module docstring: ``coverage_XX`` predictive, ``..._epistemic`` not).
    forecasts : dict of DataFrame
        Per ``"split / method"``: the held-out points with the predictive ``median`` and
        bands and the epistemic bounds (``lower_XX_epistemic``, ``upper_XX_epistemic``).
    notes : list of str
        What some rows need said (:func:`table_notes`).
    """

    table: pd.DataFrame
    forecasts: dict[str, pd.DataFrame] = field(repr=False, default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        cols = [c for c in ("split", "method", "n_test", "n_curves", "mape", "coverage_50",
                            "coverage_90", "coverage_90_epistemic", "crps")
                if c in self.table.columns]
        text = "BacktestResult\n" + self.table[cols].to_string(index=False)
        return text + "".join(f"\nnote: {n}" for n in self.notes)


def backtest(data: LossData, spec: ModelSpec, split: str, *, seed: int = C.DEFAULT_SEED,
             baseline: bool = True, n_boot: int = 100, probs: tuple[float, ...] = (0.5, 0.9),
             recalibrate: bool | str = False, **fit_kwargs: Any) -> BacktestResult:
    """Run every fold of ``split``: bayeslaw and (optionally) the baseline, held-out scores.

    ``fit_kwargs`` go to :func:`bayeslaw.fit.fit` (draws, tune, chains, thresholds, ...).
    In-sample points are never scored; held-out points never reach either fit.  Both methods
    are scored on both kinds of band (module docstring); the baseline's rows say whether its
    optimizer reported convergence (``converged``, ``boot_unconverged``).  With
    ``recalibrate`` (``True`` for the same split, or an inner split string such as
    ``"prefix:0.5"``), each fold also scores bayeslaw's forecast recalibrated from an inner
    backtest on its training part (method ``"bayeslaw, recalibrated"``: one more fit per
    fold; its ``lpd`` and epistemic columns are not defined, its R-hat and divergences are
    the worse of both fits, ``n_calibration`` counts the inner held-out points).
    """
    from .likelihood import log_likelihood
    from .prediction import predict

    parts = parse_split(data, split, seed=seed)
    for part in parts:
        if not part.train.any() or not part.test.any():
            raise DataError(f"split {part.name!r} leaves an empty train or test set")
    trains = [data.select(part.train, f"train of {part.name}") for part in parts]
    inner = split if recalibrate is True else recalibrate or None
    if inner:  # an inner split that cannot be made is refused before any fit
        for train in trains:
            inner_split(train, inner, seed=seed)
    rows, forecasts = [], {}
    for part, train in zip(parts, trains, strict=True):
        test = data.frame.loc[part.test].reset_index(drop=True)
        y = test[C.LOSS].to_numpy(float)
        curves = test[C.RUN].to_numpy()
        short = short_of_levels(train, spec)
        if short:
            warnings.warn(f"split {part.name!r}: the training part is short of levels: {short}. "
                          "Fitted anyway: the held-out forecast rests on priors there",
                          UnidentifiedSplitWarning, stacklevel=2)
        result = fold_fit(train, spec, part.name, seed=seed, like=data, **fit_kwargs)
        pred = predict(result, test, probs=probs, seed=seed)
        epi = predict(result, test, kind="epistemic", probs=probs, seed=seed)
        ll = log_likelihood(result, test, seed=seed)
        bands = {p: pred.band(p) for p in probs}
        rows.append({"split": part.name, "method": "bayeslaw", "n_train": int(part.train.sum()),
                     "identified": short is None,
                     **score(y, pred.table["median"].to_numpy(), pred.draws, bands, ll, curves,
                             epistemic=(epi.draws, {p: epi.band(p) for p in probs})),
                     **diagnostic_columns(result.diagnostics)})
        forecasts[f"{part.name} / bayeslaw"] = _with_epistemic(pred.table, epi.table, probs)
        if inner:
            rec = recalibration(train, spec, inner, seed=seed, like=data, **fit_kwargs)
            cal = rec.apply(pred)
            rows.append({"split": part.name, "method": "bayeslaw, recalibrated",
                         "n_train": int(part.train.sum()), "identified": short is None,
                         **score(y, cal.table["median"].to_numpy(), cal.draws,
                                 {p: cal.band(p) for p in probs}, None, curves),
                         **diagnostic_columns(result.diagnostics, rec.diagnostics),
                         "n_calibration": len(rec.pit)})
            forecasts[f"{part.name} / bayeslaw, recalibrated"] = cal.table
        if baseline:
            _, row, table = baseline_scores(train, test, spec, probs=probs, n_boot=n_boot,
                                            seed=seed)
            rows.append({"split": part.name, "method": "baseline",
                         "n_train": int(part.train.sum()), "identified": short is None, **row})
            forecasts[f"{part.name} / baseline"] = table
    table = pd.DataFrame(rows)
    return BacktestResult(table, forecasts, table_notes(table))


def baseline_scores(train: LossData, test: pd.DataFrame, spec: ModelSpec, *,
                    probs: tuple[float, ...] = (0.5, 0.9), n_boot: int = 100,
                    seed: int = C.DEFAULT_SEED) -> tuple[PointFit, dict[str, Any], pd.DataFrame]:
    """The baseline fitted on ``train`` and scored on ``test`` as :func:`backtest` does.

    Returns the bootstrapped :class:`~bayeslaw.baseline.PointFit`, the row's scores (both
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
    return base, row, _with_epistemic(table, epi, probs)
