"""Train / test splits of a loss table for backtests, and what a training part lacks.

Splits (:func:`parse_split`):

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

:func:`inner_split` is the split a recalibration learns from on a training part
(:mod:`bayeslaw.evaluation.backtesting`); :func:`short_of_levels` says why a training part cannot
identify a law.  A split string that cannot be read or made raises
:class:`~bayeslaw.errors.ArgumentError`; a level the data does not hold raises
:class:`~bayeslaw.errors.DataError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import constants as C
from ..data.table import LossData
from ..errors import ArgumentError, DataError
from ..spec.model_spec import ModelSpec


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
        raise ArgumentError(message) from None


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
            raise ArgumentError(f"prefix fraction must lie in (0, 1), got {frac}")
        limit = frac * frame.groupby(C.RUN)[C.D].transform("max")
        train = (frame[C.D] <= limit).to_numpy()
        return [Split(split, train, ~train)]
    if kind == "largest-N" and C.N not in frame.columns:
        raise ArgumentError(f"{split!r} holds out the largest model sizes, and this table has "
                            "no N column (curves without model sizes): use prefix:F, kfold:K "
                            "or level:run=NAME")
    if kind == "largest-N" and not arg:
        test = (frame[C.N] == frame[C.N].max()).to_numpy()
        return [Split(split, ~test, test)]
    if kind == "largest-N":
        return [Split(split, *_largest_sizes(data, split, arg))]
    if kind == "level":
        col, eq, value = arg.partition("=")
        if not eq or col not in frame.columns:
            raise ArgumentError(f"level split takes COLUMN=VALUE with a column of the data, "
                                f"e.g. level:T_m=8; got {split!r} (columns: "
                                f"{sorted(frame.columns)})")
        column = frame[col]
        try:
            target: Any = float(value) if column.dtype.kind in "fiu" else value
        except ValueError:
            raise ArgumentError(f"column {col!r} is numeric; {value!r} is not a "
                                "number") from None
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
            raise ArgumentError(f"kfold needs 2 <= K <= number of runs ({len(runs)}), "
                                f"got {k}")
        order = np.random.default_rng(seed).permutation(len(runs))
        fold_of = dict(zip(runs[order], np.arange(len(runs)) % k, strict=True))
        folds = frame[C.RUN].map(fold_of).to_numpy()
        return [Split(f"{split} fold {i + 1}", folds != i, folds == i) for i in range(k)]
    raise ArgumentError(f"unknown split {split!r}: use prefix:F, largest-N, largest-N:FRAC, "
                        "level:COL=VALUE or kfold:K")


def _largest_sizes(data: LossData, split: str, arg: str) -> tuple[np.ndarray, np.ndarray]:
    """Train / test masks of ``largest-N:FRAC``: the largest sizes covering >= FRAC of runs."""
    frac = _number(arg, float, f"largest-N takes a fraction of the runs, e.g. largest-N:0.1; "
                               f"got {split!r}")
    if not 0 < frac < 1:
        raise ArgumentError(f"largest-N fraction must lie in (0, 1), got {frac} in "
                            f"{split!r}")
    frame = data.frame
    runs_per_size = frame.groupby(C.N)[C.RUN].nunique().sort_index(ascending=False)
    covered = runs_per_size.cumsum() / runs_per_size.sum()
    # the largest sizes, down to the first at which the held-out share reaches frac (a share
    # k / n is the float nearest k / n, as the literal frac is: 3 of 10 runs meet 0.3)
    n_sizes = int(np.searchsorted(covered.to_numpy(), frac)) + 1
    if n_sizes >= len(runs_per_size):
        most = float(covered.iloc[-2]) if len(covered) > 1 else 0.0
        raise ArgumentError(f"{split!r} would hold out every model size: all but the "
                            f"smallest of the {len(covered)} sizes cover {most:.3g} of the "
                            f"{int(runs_per_size.sum())} runs; use a fraction up to that")
    test = frame[C.N].isin(runs_per_size.index[:n_sizes]).to_numpy()
    return ~test, test


def short_of_levels(train: LossData, spec: ModelSpec) -> str | None:
    """Why ``train`` cannot identify ``spec``'s law (too few levels of a covariate), or None.

    The same check as :func:`bayeslaw.model.plan.check_compatible`'s, which refuses a table in
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
        raise ArgumentError(f"a combined split is RUNS+prefix:F with RUNS one of largest-N, "
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
