"""Fitting: :func:`fit` (NUTS through nutpie, or a quick approximation) and prior draws.

A fit is a pure function of ``(data, spec, seed, sampler settings)``: nothing else is
read, so it can be shipped to a worker.  One :class:`~bayeslaw.model.plan.Plan` per fit gives the
compiled-model cache's key (:mod:`bayeslaw.inference.modelcache`); refitting data of the same
structure swaps the data into the compiled model instead of recompiling.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import constants as C
from ..data.steps import fixed_by_data
from ..data.table import LossData
from ..errors import (
    ArgumentError,
    BayeslawError,
    BayeslawWarning,
    ConvergenceError,
    DataError,
    SpecError,
    WarmStartWarning,
)
from ..model.plan import Plan, make_plan
from ..posterior.diagnostics import Thresholds
from ..posterior.result import Fit, Fits
from ..spec.catalog import resolve_spec
from ..spec.model_spec import ModelSpec
from ..spec.settings import SamplerSettings
from .fleet import default_progress
from .modelcache import COMPILES, Entry, compiled_for, entry_for, get_model, origin


def _nutpie_start(entry: Entry, compiled: Any, seed: int, settings: SamplerSettings
                  ) -> tuple[Any, Any]:
    """The compiled model started at the posterior's mode, scaled by its curvature.

    With ``sampler.init = "mode"`` (the default) nutpie samples standardized coordinates
    around the mode (:mod:`bayeslaw.inference.warmstart`); ``"prior"`` keeps nutpie's own start (the
    prior's centre, jittered).  Returns the compiled model to sample and the mode (or None).
    """
    from .warmstart import LogDensity, check_start, find_mode, scale_floors, standardized

    entry.density.identity()  # the raw density: the mode search, or nutpie's own start
    check_start(compiled.initial_point_func(int(seed)), LogDensity(compiled),
                lambda: _start_error(entry, seed))
    if settings.init != "mode":
        return compiled, None
    names, _, shapes = compiled.shape_info
    mode = find_mode(compiled, compiled.initial_point_func(int(seed)),
                     floors=lambda: scale_floors(entry.model.model, entry.model.spec,
                                                 dict(zip(names, shapes, strict=True))))
    if mode is None:
        warnings.warn("the warm start found no proper mode of the posterior (the optimizer "
                      "failed, or the curvature is flat along some parameter); the chains "
                      "start from the prior's centre instead, which needs more tuning. Set "
                      "sampler.init = \"prior\" to skip the search", WarmStartWarning,
                      stacklevel=4)
        return compiled, None
    return standardized(entry.density, compiled, mode), mode


def _start_error(entry: Entry, seed: int, known_bad: bool = True) -> BayeslawError | None:
    """What is not finite at the model's initial point, as the error to raise, or None.

    nutpie given such a model failed every initialization and then crashed the process (a
    segmentation fault): :func:`bayeslaw.inference.warmstart.start_problem` names the parameters or
    runs.  ``known_bad``: the compiled density already found the start not finite (an error
    is returned even when nothing is named).
    """
    from .warmstart import start_problem

    found = start_problem(entry.model.model, entry.model.structure.runs, seed)
    if found is None:
        return BayeslawError("the model's log density or its gradient is not finite at its "
                             "initial point") if known_bad else None
    kind, message = found
    return (DataError if kind == "data" else SpecError)(f"the model cannot start: {message}")


def fit_cores() -> int | None:
    """The cores one fit may use: ``BAYESLAW_CORES`` (set in Dask workers), else None (all).

    Only how fast the chains run depends on it, not the draws: nutpie seeds each chain.
    """
    text = os.environ.get(C.ENV_CORES, "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise ArgumentError(f"{C.ENV_CORES}={text!r}: set it to a positive number of cores, "
                            "or unset it to use them all")
    return int(text)


def _sample(plan: Plan, data: LossData, settings: SamplerSettings, seed: int,
            progress: bool) -> tuple[Any, dict[str, Any]]:
    """Sample; returns the ``InferenceData`` and what the sampler did (timings, steps)."""
    import time

    if settings.backend != "nutpie":
        return _sample_pymc(plan, data, settings, seed, progress)
    import nutpie

    t0 = time.perf_counter()
    compiles = len(COMPILES)
    entry, compiled = compiled_for(plan, data)
    t1 = time.perf_counter()
    info: dict[str, Any] = {"compiled": origin(entry, compiles)}
    compiled, start = _nutpie_start(entry, compiled, seed, settings)
    if settings.pilot:
        from .metric import pilot_metric

        compiled, pilot = pilot_metric(entry.density, compiled, seed, settings.pilot,
                                       settings.chains, settings.target_accept, fit_cores())
        info |= {"pilot_s": pilot.seconds, "pilot_steps": list(pilot.steps),
                 "pilot_step_size": list(pilot.step_size),
                 "pilot_largest_block": pilot.largest_block}
    t2 = time.perf_counter()
    low_rank = plan.prefers_low_rank if settings.low_rank == "auto" else settings.low_rank
    idata = nutpie.sample(
        compiled, draws=settings.draws, tune=settings.tune, chains=settings.chains,
        cores=fit_cores(), seed=int(seed), progress_bar=progress, save_warmup=True,
        target_accept=float(settings.target_accept),
        low_rank_modified_mass_matrix=bool(low_rank))
    t3 = time.perf_counter()
    warm = idata.warmup_sample_stats["n_steps"].values
    info |= {"compile_s": t1 - t0, "start_s": t2 - t1, "sample_s": t3 - t2,
             "warm_start": start is not None,
             "start_evaluations": 0 if start is None else start.evaluations,
             "start_held": [] if start is None else list(start.held),
             "start_pinned": [] if start is None else list(start.pinned),
             "tune_steps": int(warm.sum()),
             "draw_steps": int(idata.sample_stats["n_steps"].values.sum())}
    for group in [g for g in idata.groups() if g.startswith("warmup")]:
        del idata[group]
    return idata, info


def _sample_pymc(plan: Plan, data: LossData, settings: SamplerSettings, seed: int,
                 progress: bool) -> tuple[Any, dict[str, Any]]:
    """PyMC's own NUTS (``sampler.backend = "pymc"``): the fallback backend."""
    import multiprocessing
    import time

    import pymc as pm

    entry = entry_for(plan, data)
    model = entry.model
    error = _start_error(entry, seed, known_bad=False)  # PyMC would raise, or crash
    if error is not None:
        raise error
    t0 = time.perf_counter()
    # a Dask worker's process is a daemon, which may not start processes of its own
    daemon = multiprocessing.current_process().daemon
    with model.model:
        idata = pm.sample(
            draws=settings.draws, tune=settings.tune, chains=settings.chains,
            cores=1 if daemon else min(settings.chains, fit_cores() or 2),
            random_seed=int(seed), progressbar=progress,
            target_accept=float(settings.target_accept), compute_convergence_checks=False)
    return idata, {"sample_s": time.perf_counter() - t0}


def _resolved(spec: Any, law: str | None, data: LossData) -> ModelSpec:
    """The spec to fit ``data`` with (a step table's entropy weight fixes ``beta_H``).

    A ``ModelSpec`` is taken as given, except that the data's values replace the priors it
    took from a default (``load_spec``'s specs record them): where a prior or value of the
    user's own leaves free, or fixes otherwise, a value the data fix, a warning says so.
    """
    known = fixed_by_data(data.frame)
    out = resolve_spec(spec, law=law, columns=data.columns, data_fixed=known)
    if isinstance(spec, ModelSpec):
        differ = {k: v for k, v in known.items()
                  if k in out.law_obj.param_names and out.fixed.get(k) != v}
        if differ:
            warnings.warn(f"the table fixes {differ} (its entropy_weight) but the spec given "
                          f"as a ModelSpec has {({k: out.fixed.get(k) for k in differ})} "
                          "(None: sampled) of its own, not from a default; fitting the spec "
                          "as given", BayeslawWarning, stacklevel=3)
    # an effect on lambda_q passed the parser, so the law is the latent one and has beta_H
    varying = sorted({e.group for e in out.effects if e.param == "lambda_q"})
    if varying and "beta_H" not in out.fixed:
        warnings.warn(f"the latent exit exponent lambda_q varies by {', '.join(varying)} while "
                      "beta_H is sampled: the totals pin one number per level (their level "
                      "above the steps' law), too few for both, and the chains drift along a "
                      "ridge; add the table's entropy_weight column (the training objective's "
                      "beta_H) or fix beta_H in the spec's [fixed]", BayeslawWarning,
                      stacklevel=3)
    return out


def fit(data: LossData, spec: ModelSpec | str | Path | Mapping[str, Any] | None = None, *,
        law: str | None = None, seed: int = C.DEFAULT_SEED, draws: int | None = None,
        tune: int | None = None, chains: int | None = None, backend: str | None = None,
        target_accept: float | None = None, progress: bool | None = None,
        strict: bool = False, thresholds: Thresholds | None = None,
        like: LossData | None = None, method: str = "nuts") -> Fit:
    """Fit a loss law to ``data`` by NUTS (or a quick approximation) and return a :class:`Fit`.

    Parameters
    ----------
    data : LossData
        Validated observations (:func:`bayeslaw.load`); the spec's ``data.min_portion`` may
        leave each run's early points out (:class:`~bayeslaw.spec.settings.DataSettings`).
    spec : ModelSpec, path, shipped name, dict or None
        Model spec; ``None`` takes the default spec of ``law`` (or of the data's columns).
    law : str, optional
        Law name (default: from the data's columns, :func:`bayeslaw.laws.registry.law_for_columns`).
    seed : int
        The same seed, data and settings give the same draws.
    draws, tune, chains, backend, target_accept : optional
        Override the spec's ``[sampler]`` table (``backend``: ``"nutpie"`` or ``"pymc"``).
    progress : bool, optional
        nutpie's progress bar; default: on a terminal, not in CI nor under pytest.
    strict : bool
        Raise :class:`ConvergenceError` instead of warning when diagnostics fail (and for
        an approximate ``method``, which has none).
    thresholds : Thresholds, optional
    like : LossData, optional
        Data whose runs and group levels define the model, when ``data`` is a row subset of
        it (a training split): held-out runs stay in the model, unobserved, so their
        parameters are drawn from the population, and the compiled model is reused across
        splits.
    method : {"nuts", "by_curve", "laplace", "pathfinder"}
        ``"nuts"`` samples; ``"by_curve"`` (a table of curves, ``curve_bend``-like specs)
        estimates the values the curves share and samples each curve by itself given them
        (:mod:`bayeslaw.inference.by_curve`: empirical Bayes; measured no better converged
        than ``"nuts"``); ``"laplace"`` and ``"pathfinder"`` draw from an approximation
        for a first look (:mod:`bayeslaw.inference.approx`; the same number of draws, as one chain).
        Such a fit is labelled approximate everywhere and warns
        (:class:`ApproximationWarning`).

    Returns
    -------
    Fit
        With log-likelihood and diagnostics.  One stderr line gives the compile (from memory,
        disk or now), warm-start and sampling seconds (``fit.provenance["sampling"]``).
    """
    spec = _resolved(spec, law, data)
    data = _fitted_part(data, spec)
    settings = _settings(spec, draws=draws, tune=tune, chains=chains, backend=backend,
                         target_accept=target_accept)
    _check_method(method, strict, seed, spec)
    progress = default_progress() if progress is None else bool(progress)
    idata, sampled = _draw(method, spec, data, like, settings, seed, progress)
    print(timing_line(method, sampled), file=sys.stderr, flush=True)
    result = Fit.from_draws(_posterior_only(idata), spec, data,
                            _provenance(data, seed, settings, sampled, method), thresholds)
    result.check(strict=strict)
    return result


def _draw(method: str, spec: ModelSpec, data: LossData, like: LossData | None,
          settings: SamplerSettings, seed: int, progress: bool) -> tuple[Any, dict[str, Any]]:
    """The draws of ``method`` and what the sampler did."""
    if method == "by_curve":  # runs of ``like`` not in ``data`` are new curves to it
        from .by_curve import fit_by_curve

        return fit_by_curve(data, spec, settings, seed, _sample)
    plan = make_plan(spec, like if like is not None else data, data)
    if method == "nuts":
        return _sample(plan, data, settings, seed, progress)
    return _approximate(plan, data, settings, seed, method)


def _fitted_part(data: LossData, spec: ModelSpec) -> LossData:
    """``data`` less the points the spec's ``[data]`` table leaves out, said on stderr."""
    if not spec.data.min_portion:
        return data
    kept = data.from_portion(spec.data.min_portion, spec.data.min_kept)
    if kept is not data:
        print(f"bayeslaw fit: {kept.notes[-1]} (the spec's data.min_portion)",
              file=sys.stderr, flush=True)
    return kept


def fit_many(jobs: Mapping[str, LossData | Mapping[str, Any]], *, client: Any = None,
             workers: int | None = None, progress: bool | None = None, **common: Any) -> Fits:
    """Many independent fits (one per dataset, spec or seed), serially or as Dask tasks.

    Parameters
    ----------
    jobs : mapping of name to LossData or dict
        Each job is a table fitted with ``common``, or a dict of :func:`fit`'s arguments
        (``data`` and any of ``spec``, ``law``, ``seed``, ``draws``, ...) over ``common``.
    client, workers :
        Where the fits run (:func:`bayeslaw.inference.fleet.run`): a Dask client or scheduler
        address, a local cluster of ``workers`` processes, or (neither) serially in this process.
        Each fit is the same as :func:`fit` of the same arguments here.
    progress : bool, optional
        A progress bar over the fits (each fit's own bar is off).
    **common
        :func:`fit`'s keyword arguments for every job.

    Returns
    -------
    Fits
        The fits by job name, and ``failures``: each failed job's error (also warned about
        by name, :class:`~bayeslaw.errors.TaskFailedWarning`); when every job fails, the first
        error is raised.
    """
    import inspect

    from . import fleet

    allowed = set(inspect.signature(fit).parameters)
    tasks = []
    for name, job in jobs.items():
        kwargs = {"progress": False, **common,
                  **(dict(job) if isinstance(job, Mapping) else {"data": job})}
        unknown = sorted(set(kwargs) - allowed)
        if unknown or not isinstance(kwargs.get("data"), LossData):
            raise ArgumentError(f"fit_many job {name!r}: give a LossData, or a dict with "
                                f"'data' (a LossData) and fit()'s arguments"
                                + (f"; unknown: {unknown}" if unknown else ""))
        tasks.append(fleet.Task(str(name), fit, (kwargs.pop("data"),), kwargs))
    outcomes = fleet.run(tasks, client=client, workers=workers, progress=progress,
                         label="fits")
    return Fits(fleet.values(outcomes, "fit"), fleet.failures(outcomes))


def _posterior_only(idata: Any) -> Any:
    """The sampler's ``InferenceData`` less the groups a fit builds itself (data, log-lik)."""
    for group in ("observed_data", "constant_data", "log_likelihood"):
        if group in idata.groups():
            del idata[group]
    return idata


def _provenance(data: LossData, seed: int, settings: SamplerSettings,
                sampled: Mapping[str, Any], method: str) -> dict[str, Any]:
    """What made a fit: seed, settings, input and its hash, version, method, timings."""
    return {"seed": int(seed), "sampler": settings.to_dict(), "source": data.source,
            "sha256": data.sha256, "notes": list(data.notes), "bayeslaw_version": C.VERSION,
            "sampling": dict(sampled), "method": method}


def _settings(spec: ModelSpec, **overrides: Any) -> SamplerSettings:
    """The spec's sampler settings with ``fit()``'s keyword arguments (``None``: the spec's)."""
    try:
        return spec.sampler.replace(**overrides)
    except SpecError as exc:  # a keyword argument of fit(), not the spec's [sampler] table
        raise ArgumentError(f"fit(): {exc}".replace("sampler.", "")) from None


def _check_method(method: str, strict: bool, seed: Any = 0, spec: ModelSpec | None = None
                  ) -> None:
    """``method`` is NUTS or a known approximation, ``strict`` asks for NUTS, ``seed`` fits.

    ``spec`` must have a mode for ``method="laplace"`` (a checkpoint shock has none).  A seed
    is a whole number in [0, 2**32): what numpy, PyMC and nutpie all take.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**32:
        raise ArgumentError(f"seed must be a whole number from 0 to {2**32 - 1}, got {seed}")

    if method not in C.METHODS:
        raise ArgumentError(f"method must be one of {', '.join(map(repr, C.METHODS))}, "
                            f"got {method!r}")
    if method in C.APPROXIMATE_METHODS and strict:
        raise ConvergenceError(f"strict=True needs MCMC diagnostics, and method={method!r} "
                               "gives an approximation with none: use method='nuts'")
    if method == "laplace" and spec is not None and spec.likelihood.shock is not None:
        # the search climbs for minutes where the shifts follow single curves' residuals
        # (benchmarks/results/steps_shock_2026-12-07/mode_probe_labelled.txt)
        raise ArgumentError("method='laplace' needs a proper mode, and a spec with "
                            "likelihood.shock (a shift per checkpoint) has none: the shifts "
                            "can follow single curves' residuals while their noise scales "
                            "shrink to zero. Use method='nuts', or drop likelihood.shock "
                            "for a first look")


def timing_line(method: str, info: Mapping[str, Any]) -> str:
    """The line printed after a fit: compile, warm start and sampling seconds."""
    parts = []
    if "compile_s" in info:
        how = f" ({info['compiled']})" if "compiled" in info else ""
        parts.append(f"compile {info['compile_s']:.1f} s{how}")
    if info.get("start_s"):
        held, pinned = info.get("start_held") or [], info.get("start_pinned") or []
        why = ([f"{', '.join(held)} held at the prior's median: the mode was in a funnel's "
                "neck"] if held else []) + ([f"{', '.join(pinned)} held at the prior's centre "
                                             "during the search"] if pinned else [])
        parts.append(f"{'mode' if method == 'laplace' else 'warm start'} "
                     f"{info['start_s']:.1f} s" + (f" ({'; '.join(why)})" if why else ""))
    if "pilot_s" in info:
        parts.append(f"pilot {info['pilot_s']:.1f} s (within the warm start)")
    if "first_pass_s" in info:
        parts.append(f"first pass {info['first_pass_s']:.1f} s")
    if "sample_s" in info:
        parts.append(f"{'sampling' if method in C.SAMPLING_METHODS else method} "
                     f"{info['sample_s']:.1f} s")
    label = {"nuts": "", "by_curve": " (by curve)"}.get(method, f" ({method}, approximate)")
    return f"bayeslaw fit{label}: " + ", ".join(parts)


def _approximate(plan: Plan, data: LossData, settings: SamplerSettings, seed: int,
                 method: str) -> tuple[Any, dict[str, Any]]:
    """Draws of an approximate posterior (:mod:`bayeslaw.inference.approx`) and what it took."""
    import time

    from . import approx
    from .warmstart import LogDensity, check_start

    n_draws = settings.draws * settings.chains
    t0 = time.perf_counter()
    if method == "pathfinder":
        idata, info = approx.pathfinder(entry_for(plan, data).model.model, seed, n_draws)
        return idata, {**info, "compiled": "by pymc-extras"}
    compiles = len(COMPILES)
    entry, compiled = compiled_for(plan, data)
    t1 = time.perf_counter()
    entry.density.identity()
    check_start(compiled.initial_point_func(int(seed)), LogDensity(compiled),
                lambda: _start_error(entry, seed))
    idata, info = approx.laplace(compiled, entry.density, seed, n_draws)
    return idata, {"compile_s": t1 - t0, "compiled": origin(entry, compiles), **info}


def sample_prior_predictive(data: LossData,
                            spec: ModelSpec | str | Path | Mapping[str, Any] | None = None, *,
                            law: str | None = None, draws: int = 500,
                            seed: int = C.DEFAULT_SEED) -> Any:
    """Draws from the prior and the prior predictive at the data's points (``InferenceData``).

    The ``prior_predictive`` group holds simulated ``loss`` curves; compare them with the
    observed ones to check that the priors allow what the sweep shows (and not much more).
    """
    import pymc as pm
    import xarray as xr

    resolved = _resolved(spec, law, data)
    if resolved.sampler.shape_at != "reference":  # the same model; its window coordinates'
        resolved = dataclasses.replace(  # prior is a Potential, which prior draws ignore
            resolved, sampler=resolved.sampler.replace(shape_at="reference"))
    model = get_model(resolved, data)
    with model.model:
        idata = pm.sample_prior_predictive(draws=draws, random_seed=seed)
    # the graph draws each run's curve in its padded (run, pos) layout: back to data rows
    padded = idata.prior_predictive["loss"]
    flat = model.flatten(padded.values, data)
    idata.prior_predictive["loss"] = xr.DataArray(
        flat, dims=("chain", "draw", "obs"),
        coords={"chain": padded.chain, "draw": padded.draw, "obs": np.arange(len(data))})
    return idata


