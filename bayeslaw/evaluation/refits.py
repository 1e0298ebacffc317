"""Refits without some of the data, as fleets of tasks: exact LOO and grouped K-fold.

Exact leave-one-out refits single points out; grouped K-fold leaves out whole runs, N levels
or T_m levels.

Each refit is a task of :func:`bayeslaw.inference.fleet.run` (serially, on a local cluster of
processes or on a Dask client): the compiled model is reused within a process, held-out runs
stay in the model unobserved (``like``), and a refit is the fit's own sampler settings and seed
unless ``fit_kwargs`` say otherwise. :mod:`bayeslaw.evaluation.comparison` turns their elpd into
rankings.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import constants as C
from ..data.table import LossData
from ..errors import ConvergenceWarning, DataError
from ..inference.sampling import fit
from ..posterior.noise import log_likelihood, pointwise_lpd
from ..posterior.result import Fit
from ..spec.model_spec import ModelSpec


def refit_settings(result: Fit, fit_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a refit: the fit's own sampler settings and seed, then ``fit_kwargs``."""
    s = result.settings
    keep = {"draws": s.draws, "tune": s.tune, "chains": s.chains, "backend": s.backend,
            "target_accept": s.target_accept}
    return {"seed": result.provenance.get("seed", C.DEFAULT_SEED), **keep, **fit_kwargs}


def _quiet_fit(data: LossData, spec: ModelSpec, like: LossData,
               settings: Mapping[str, Any]) -> Fit:
    with warnings.catch_warnings():
        # a refit's convergence is judged by its caller: K-fold and exact LOO note it
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit(data, spec, like=like, **{"progress": False, **settings})


def _loo_refit(data: LossData, spec: ModelSpec, i: int, settings: Mapping[str, Any]
               ) -> tuple[float, str | None]:
    """The elpd of row ``i`` under a refit without it, and a note if it did not converge.

    One task of :func:`exact_loo_points`.
    """
    keep = np.ones(len(data), bool)
    keep[i] = False
    refit = _quiet_fit(data.select(keep, f"leave out row {i + 1}"), spec, data, settings)
    lpd = float(pointwise_lpd(log_likelihood(refit, data.frame.iloc[[i]]))[0])
    ok = refit.diagnostics.ok
    return lpd, None if ok else (f"exact LOO refit without row {i + 1}: "
                                 f"{'; '.join(refit.diagnostics.failures)}")


def exact_loo_points(result: Fit, rows: np.ndarray, *, client: Any = None,
                     workers: int | None = None, progress: bool | None = None,
                     notes: list[str] | None = None, **fit_kwargs: Any) -> np.ndarray:
    """Exact leave-one-out elpd of ``rows``: one refit without each point.

    The refits are tasks of :func:`bayeslaw.inference.fleet.run` (``client``, ``workers``,
    ``progress`` as there); a refit that raises leaves its point's elpd NaN, named in a
    :class:`~bayeslaw.errors.TaskFailedWarning`. A refit that did not converge is named in a
    note appended to ``notes`` (a list), or, without one, in a
    :class:`~bayeslaw.errors.ConvergenceWarning`.
    """
    from ..inference import fleet

    settings = refit_settings(result, fit_kwargs)
    tasks = [fleet.Task(f"leave out row {i + 1}", _loo_refit,
                        (result.data, result.spec, int(i), settings)) for i in rows]
    done = fleet.values(fleet.run(tasks, client=client, workers=workers, progress=progress,
                                  label="exact LOO refits"), "exact LOO refit")
    for _, note in (done[t.name] for t in tasks if t.name in done):
        if note and notes is not None:
            notes.append(note)
        elif note:
            warnings.warn(note, ConvergenceWarning, stacklevel=2)
    return np.array([done[t.name][0] if t.name in done else np.nan for t in tasks], float)


def group_folds(data: LossData, group: str, k: int | None = None, *, seed: int = 0
                ) -> list[tuple[str, np.ndarray]]:
    """Test-row masks of grouped K-fold CV: whole runs, N levels or T_m levels left out.

    ``group="run"`` deals runs (seeded) into ``k`` folds (default 5, at most one per run);
    another run-level column leaves out each of its levels (or, with ``k`` smaller than the
    number of levels, deals the levels into ``k`` folds).
    """
    levels, codes = data.levels(group)
    n = len(levels)
    k = min(k or (5 if group == C.RUN else n), n)
    if k < 2:
        raise DataError(f"grouped K-fold over {group!r} needs at least 2 levels, found {n}")
    order = np.random.default_rng(seed).permutation(n) if k < n else np.arange(n)
    fold_of_level = np.empty(n, int)
    fold_of_level[order] = np.arange(n) % k
    row_fold = fold_of_level[codes][data.run_index]
    out = []
    for f in range(k):
        held = levels[fold_of_level == f]
        label = ", ".join(_level_text(v) for v in held[:4])
        out.append((f"{group} = {label}" + (" ..." if len(held) > 4 else ""),
                    row_fold == f))
    return out


def _level_text(value: Any) -> str:
    """A level for a fold's label: numbers compactly (``3e+08``), text as it is."""
    return f"{value:g}" if isinstance(value, int | float | np.number) else str(value)


def _kfold_refit(data: LossData, spec: ModelSpec, name: str, test: np.ndarray,
                 settings: Mapping[str, Any]) -> tuple[np.ndarray, str | None]:
    """The elpd of ``test``'s rows under a refit without them, and a note if it failed."""
    refit = _quiet_fit(data.select(~test, f"train without {name}"), spec, data, settings)
    held_out = data.frame.loc[test].reset_index(drop=True)
    lpd = pointwise_lpd(log_likelihood(refit, held_out, seed=settings["seed"]))
    ok = refit.diagnostics.ok
    return lpd, None if ok else f"refit without {name}: {'; '.join(refit.diagnostics.failures)}"


def kfold_pointwise(result: Fit, folds: list[tuple[str, np.ndarray]], *, client: Any = None,
                    workers: int | None = None, progress: bool | None = None,
                    **fit_kwargs: Any) -> tuple[np.ndarray, list[str]]:
    """The elpd of every point when its fold is left out, and notes on the refits.

    The refits are tasks of :func:`bayeslaw.inference.fleet.run` (``client``, ``workers``,
    ``progress`` as there); a refit that raises leaves its fold's points NaN, with a note.
    """
    pointwise, notes = kfold_refits({"": result}, folds, fit_kwargs, client=client,
                                    workers=workers, progress=progress)
    return pointwise[""], notes


def kfold_refits(fits: Mapping[str, Fit], folds: list[tuple[str, np.ndarray]],
                 fit_kwargs: Mapping[str, Any], **where: Any
                 ) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every model's refit without every fold, as one fleet; pointwise elpd and notes."""
    from ..inference import fleet

    tasks, slots = [], []
    for model, result in fits.items():
        settings = refit_settings(result, fit_kwargs)
        for name, test in folds:
            label = f"{model}: {name}" if model else name
            tasks.append(fleet.Task(label, _kfold_refit,
                                    (result.data, result.spec, name, test, settings)))
            slots.append((model, test))
    outcomes = fleet.run(tasks, label="K-fold refits", **where)
    done = fleet.values(outcomes, "K-fold refit")
    pointwise = {model: np.full(len(result.data), np.nan) for model, result in fits.items()}
    notes = []
    for task, (model, test) in zip(tasks, slots, strict=True):
        if task.name not in done:
            notes.append(f"{task.name}: the refit failed, its points' elpd is not defined")
            continue
        pointwise[model][test], note = done[task.name]
        if note:
            notes.append(f"{model}: {note}" if model else note)
    return pointwise, notes
