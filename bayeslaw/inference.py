"""Sampling, diagnostics and the :class:`Fit` result (save / load as one netCDF file).

A fit is a pure function of ``(data, spec, seed, sampler settings)``: nothing else is
read, so it can be shipped to a worker.  Compiled models are cached per process by
(spec, structure); refitting data of the same structure swaps the data into the
compiled model instead of recompiling.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import constants as C
from .data import LossData
from .diagnostics import Thresholds
from .errors import ConvergenceError, SpecError, WarmStartWarning
from .graph import LossModel
from .plan import centering, structure_of
from .priors import ModelSpec, resolve_spec
from .result import Fit


# ---------------------------------------------------------------------------------------
# compiled-model cache: (spec json, structure, centering) -> the model and its compiled forms
@dataclass
class _Compiled:
    """One cache entry: the PyMC model and, once a fit needs them, its compiled forms.

    ``density`` is the model compiled for nutpie with the warm start's affine map
    (:class:`bayeslaw.compiled.Density`), compiled on first use.
    """

    model: LossModel
    density: Any = None


_CACHE: dict[tuple[Any, ...], _Compiled] = {}
#: The cache key of every compile in this process, in order (what a test counts).
COMPILES: list[tuple[Any, ...]] = []


def _cache_key(spec: ModelSpec, like: LossData, data: LossData) -> tuple[Any, ...]:
    """What the graph depends on.

    The spec less its sampler settings (but with ``sampler.sum_split``, which changes the
    sampled coordinates), the structure of ``like`` and which levels are centered given the
    observed ``data``.
    """
    graph = {k: v for k, v in spec.to_dict().items() if k not in ("sampler", "description")}
    graph["sum_split"] = list(spec.sampler.get("sum_split", ()))
    masks = tuple((name, tuple(mask.tolist())) for name, mask in centering(spec, like, data))
    return json.dumps(graph, sort_keys=True), structure_of(spec, like), masks


def _entry(spec: ModelSpec, data: LossData, like: LossData | None) -> _Compiled:
    """The cache entry of (spec, structure of ``like``), ``data`` swapped into its model."""
    like = like if like is not None else data
    key = _cache_key(spec, like, data)
    if key not in _CACHE:
        _CACHE[key] = _Compiled(LossModel(spec, like, data))
    entry = _CACHE[key]
    entry.model.set_data(data)
    return entry


def get_model(spec: ModelSpec, data: LossData, like: LossData | None = None) -> LossModel:
    """The (cached) :class:`LossModel` of ``spec`` with ``data`` swapped in.

    The model's structure (runs and group levels) is that of ``like`` (default ``data``);
    levels are centered or not by how many points of them ``data`` holds.
    """
    return _entry(spec, data, like).model


def _nutpie_compiled(spec: ModelSpec, data: LossData, like: LossData | None
                     ) -> tuple[_Compiled, Any]:
    """The cache entry with ``data`` swapped in, and its nutpie-compiled form for ``data``."""
    from .compiled import compile_model

    entry = _entry(spec, data, like)
    if entry.density is None:
        entry.density = compile_model(entry.model.model)
        COMPILES.append(_cache_key(spec, like if like is not None else data, data))
    compiled = entry.density.compiled
    # containers the graph does not use (a covariate no term needs) are pruned from the
    # compiled graph: pass only the ones it kept
    values = {k: v for k, v in entry.model.data_values(data).items()
              if k in compiled.shared_data}
    return entry, compiled.with_data(**values)


def _origin(entry: _Compiled, compiles_before: int) -> str:
    """Where a fit's compiled model came from, given ``len(COMPILES)`` before the lookup."""
    if len(COMPILES) == compiles_before:
        return "in memory"
    return "loaded from disk" if entry.density.from_disk else "now"



def _nutpie_start(entry: _Compiled, compiled: Any, seed: int, settings: Mapping[str, Any]
                  ) -> tuple[Any, Any]:
    """The compiled model started at the posterior's mode, scaled by its curvature.

    With ``sampler.init = "mode"`` (the default) nutpie samples standardized coordinates
    around the mode (:mod:`bayeslaw.warmstart`); ``"prior"`` keeps nutpie's own start (the
    prior's centre, jittered).  Returns the compiled model to sample and the mode (or None).
    """
    from .warmstart import find_mode, standardized

    entry.density.identity()  # the raw density: the mode search, or nutpie's own start
    if settings.get("init", "mode") != "mode":
        return compiled, None
    mode = find_mode(compiled, compiled.initial_point_func(int(seed)))
    if mode is None:
        warnings.warn("the warm start found no proper mode of the posterior (the optimizer "
                      "failed, or the curvature is flat along some parameter); the chains "
                      "start from the prior's centre instead, which needs more tuning. Set "
                      "sampler.init = \"prior\" to skip the search", WarmStartWarning,
                      stacklevel=4)
        return compiled, None
    return standardized(entry.density, compiled, mode), mode


def _sample(spec: ModelSpec, data: LossData, settings: Mapping[str, Any], seed: int,
            progress: bool, like: LossData | None = None) -> tuple[Any, dict[str, Any]]:
    """Sample; returns the ``InferenceData`` and what the sampler did (timings, steps)."""
    import time

    backend = settings["backend"]
    info: dict[str, Any] = {}
    if backend == "nutpie":
        import nutpie

        t0 = time.perf_counter()
        compiles = len(COMPILES)
        entry, compiled = _nutpie_compiled(spec, data, like)
        model = entry.model
        t1 = time.perf_counter()
        info["compiled"] = _origin(entry, compiles)
        compiled, start = _nutpie_start(entry, compiled, seed, settings)
        t2 = time.perf_counter()
        low_rank = settings.get("low_rank", "auto")
        if low_rank == "auto":
            low_rank = model.prefers_low_rank
        idata = nutpie.sample(
            compiled, draws=int(settings["draws"]), tune=int(settings["tune"]),
            chains=int(settings["chains"]), seed=int(seed), progress_bar=progress,
            save_warmup=True, target_accept=float(settings["target_accept"]),
            low_rank_modified_mass_matrix=bool(low_rank))
        t3 = time.perf_counter()
        warm = idata.warmup_sample_stats["n_steps"].values
        info |= {"compile_s": t1 - t0, "start_s": t2 - t1, "sample_s": t3 - t2,
                "warm_start": start is not None,
                "start_evaluations": 0 if start is None else start.evaluations,
                "tune_steps": int(warm.sum()),
                "draw_steps": int(idata.sample_stats["n_steps"].values.sum())}
        for group in [g for g in idata.groups() if g.startswith("warmup")]:
            del idata[group]
        return idata, info
    import pymc as pm

    model = get_model(spec, data, like)
    t0 = time.perf_counter()
    with model.model:
        idata = pm.sample(
            draws=int(settings["draws"]), tune=int(settings["tune"]),
            chains=int(settings["chains"]), cores=min(int(settings["chains"]), 2),
            random_seed=int(seed), progressbar=progress,
            target_accept=float(settings["target_accept"]), compute_convergence_checks=False,
        )
    return idata, {"sample_s": time.perf_counter() - t0}


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
        Validated observations (:func:`bayeslaw.load`).
    spec : ModelSpec, path, shipped name, dict or None
        Model spec; ``None`` takes the default spec of ``law`` (or of the data's columns).
    law : str, optional
        Law name (default: from the data's columns, :func:`bayeslaw.laws.law_for_columns`).
    seed : int
        The same seed, data and settings give the same draws.
    draws, tune, chains, backend, target_accept : optional
        Override the spec's ``[sampler]`` table (``backend``: ``"nutpie"`` or ``"pymc"``).
    progress : bool, optional
        Show nutpie's progress bar; default (None): when stderr is a terminal, and not in CI
        (``CI`` set) or under pytest (:func:`default_progress`).
    strict : bool
        Raise :class:`ConvergenceError` instead of warning when diagnostics fail (and for
        an approximate ``method``, which has none).
    thresholds : Thresholds, optional
        Convergence thresholds.
    like : LossData, optional
        Data whose runs and group levels define the model, when ``data`` is a row subset of
        it (a training split): held-out runs stay in the model, unobserved, so their
        parameters are drawn from the population, and the compiled model is reused across
        splits.
    method : {"nuts", "laplace", "pathfinder"}
        ``"nuts"`` samples; ``"laplace"`` and ``"pathfinder"`` draw from an approximation
        for a first look (:mod:`bayeslaw.approx`; the same number of draws, as one chain).
        Such a fit is labelled approximate everywhere and warns
        (:class:`ApproximationWarning`).

    Returns
    -------
    Fit

    After every fit one line on stderr gives the seconds spent compiling (and whether the
    model came from memory, from numba's disk cache or was compiled now), in the warm start
    and sampling; they are stored in ``fit.provenance["sampling"]``.
    """
    spec = resolve_spec(spec, law=law, columns=data.columns)
    overrides = {k: v for k, v in dict(draws=draws, tune=tune, chains=chains, backend=backend,
                                       target_accept=target_accept).items() if v is not None}
    settings = {**spec.sampler, **overrides}
    if settings["backend"] not in ("nutpie", "pymc"):
        raise SpecError(f"backend must be 'nutpie' or 'pymc', got {settings['backend']!r}")
    from .approx import METHODS as APPROXIMATE

    if method not in ("nuts", *APPROXIMATE):
        raise SpecError(f"method must be one of 'nuts', 'laplace', 'pathfinder', got "
                        f"{method!r}")
    if method != "nuts" and strict:
        raise ConvergenceError(f"strict=True needs MCMC diagnostics, and method={method!r} "
                               "gives an approximation with none: use method='nuts'")
    progress = default_progress() if progress is None else bool(progress)
    if method == "nuts":
        idata, sampled = _sample(spec, data, settings, seed, progress, like)
    else:
        idata, sampled = _approximate(spec, data, settings, seed, method, like)
    print(timing_line(method, sampled), file=sys.stderr, flush=True)
    for group in ("observed_data", "constant_data", "log_likelihood"):
        if group in idata.groups():
            del idata[group]
    provenance = {"seed": int(seed), "sampler": settings, "source": data.source,
                  "sha256": data.sha256, "notes": list(data.notes),
                  "bayeslaw_version": C.VERSION, "sampling": sampled, "method": method}
    result = Fit(idata=idata, spec=spec, data=data, provenance=provenance,
                 thresholds=thresholds or Thresholds())
    result.attach_log_likelihood()
    result.check(strict=strict)
    return result


def default_progress() -> bool:
    """Whether to show the progress bar: stderr is a terminal, not CI, not under pytest."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return sys.stderr.isatty() and not ci and "PYTEST_CURRENT_TEST" not in os.environ


def timing_line(method: str, info: Mapping[str, Any]) -> str:
    """The line printed after a fit: compile, warm start and sampling seconds."""
    parts = []
    if "compile_s" in info:
        how = f" ({info['compiled']})" if "compiled" in info else ""
        parts.append(f"compile {info['compile_s']:.1f} s{how}")
    if info.get("start_s"):
        parts.append(f"{'mode' if method == 'laplace' else 'warm start'} "
                     f"{info['start_s']:.1f} s")
    if "sample_s" in info:
        parts.append(f"{'sampling' if method == 'nuts' else method} {info['sample_s']:.1f} s")
    label = "" if method == "nuts" else f" ({method}, approximate)"
    return f"bayeslaw fit{label}: " + ", ".join(parts)


def _approximate(spec: ModelSpec, data: LossData, settings: Mapping[str, Any], seed: int,
                 method: str, like: LossData | None) -> tuple[Any, dict[str, Any]]:
    """Draws of an approximate posterior (:mod:`bayeslaw.approx`) and what it took."""
    import time

    from . import approx

    n_draws = int(settings["draws"]) * int(settings["chains"])
    t0 = time.perf_counter()
    if method == "pathfinder":
        idata, info = approx.pathfinder(get_model(spec, data, like).model, seed, n_draws)
        return idata, {**info, "compiled": "by pymc-extras"}
    compiles = len(COMPILES)
    entry, compiled = _nutpie_compiled(spec, data, like)
    t1 = time.perf_counter()
    idata, info = approx.laplace(compiled, entry.density, seed, n_draws)
    return idata, {"compile_s": t1 - t0, "compiled": _origin(entry, compiles), **info}


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

    model = get_model(resolve_spec(spec, law=law, columns=data.columns), data)
    with model.model:
        idata = pm.sample_prior_predictive(draws=draws, random_seed=seed)
    # the graph draws each run's curve in its padded (run, pos) layout: back to data rows
    padded = idata.prior_predictive["loss"]
    flat = model.flatten(padded.values, data)
    idata.prior_predictive["loss"] = xr.DataArray(
        flat, dims=("chain", "draw", "obs"),
        coords={"chain": padded.chain, "draw": padded.draw, "obs": np.arange(len(data))})
    return idata


