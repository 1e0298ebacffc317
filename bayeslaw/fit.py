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
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from . import constants as C
from ._io import atomic_write
from .data import LossData
from .errors import ConvergenceError, FitFileError, SpecError
from .model import LossModel, centering, structure_of
from .priors import ModelSpec, resolve_spec


class ConvergenceWarning(UserWarning):
    """A fit's diagnostics failed their thresholds (R-hat, ESS, divergences, BFMI)."""


class ApproximationWarning(UserWarning):
    """A fit's draws come from an approximation (Laplace, pathfinder), not from NUTS."""


@dataclass(frozen=True)
class Thresholds:
    """Convergence thresholds; the defaults follow Vehtari et al. (2021)."""

    max_rhat: float = C.MAX_RHAT
    min_ess: float = C.MIN_ESS
    max_divergences: int = 0
    min_bfmi: float = C.MIN_BFMI


@dataclass(frozen=True)
class Diagnostics:
    """Convergence summary of a fit."""

    max_rhat: float
    min_ess_bulk: float
    min_ess_tail: float
    divergences: int
    min_bfmi: float
    worst_rhat_var: str
    worst_ess_var: str
    thresholds: Thresholds = field(default_factory=Thresholds)
    #: variables with a non-finite draw, or varying with an R-hat or ESS that is not a number
    undefined: tuple[str, ...] = ()
    #: the approximate method that made the draws ("laplace", "pathfinder"); "" for NUTS
    approximate: str = ""

    @property
    def failures(self) -> list[str]:
        """One line per failed check, naming the value and the threshold."""
        t, out = self.thresholds, []
        if self.approximate:
            return [f"approximate posterior ({self.approximate}): independent draws, not a "
                    "Markov chain, so R-hat, ESS and divergences do not apply; refit with "
                    "method='nuts' (bayeslaw fit --method nuts) to check convergence"]
        if self.undefined:
            out.append(f"R-hat or ESS not defined for {', '.join(self.undefined)} (non-finite "
                       "draws, or too few draws to judge)")
        if not self.max_rhat <= t.max_rhat:
            out.append(f"R-hat {self.max_rhat:.3f} > {t.max_rhat} ({self.worst_rhat_var})")
        if not self.min_ess_bulk >= t.min_ess:
            out.append(f"bulk ESS {self.min_ess_bulk:.0f} < {t.min_ess:.0f} "
                       f"({self.worst_ess_var})")
        if not self.min_ess_tail >= t.min_ess:
            out.append(f"tail ESS {self.min_ess_tail:.0f} < {t.min_ess:.0f}")
        if self.divergences > t.max_divergences:
            out.append(f"{self.divergences} divergent transitions > {t.max_divergences}")
        if not self.min_bfmi >= t.min_bfmi:
            out.append(f"BFMI {self.min_bfmi:.2f} < {t.min_bfmi}")
        return out

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for JSON / reports)."""
        return {"max_rhat": self.max_rhat, "min_ess_bulk": self.min_ess_bulk,
                "min_ess_tail": self.min_ess_tail, "divergences": self.divergences,
                "min_bfmi": self.min_bfmi, "worst_rhat_var": self.worst_rhat_var,
                "worst_ess_var": self.worst_ess_var, "undefined": list(self.undefined),
                "approximate": self.approximate, "ok": self.ok, "failures": self.failures}

    def __str__(self) -> str:
        if self.approximate:
            return self.failures[0]
        status = "OK" if self.ok else "FAILED: " + "; ".join(self.failures)
        return (f"R-hat max {self.max_rhat:.3f} | ESS bulk min {self.min_ess_bulk:.0f}, "
                f"tail min {self.min_ess_tail:.0f} | divergences {self.divergences} | "
                f"BFMI min {self.min_bfmi:.2f} | {status}")


def diagnose(idata: Any, thresholds: Thresholds | None = None) -> Diagnostics:
    """Compute R-hat, bulk/tail ESS, divergences and BFMI over every posterior variable."""
    import arviz as az

    thresholds = thresholds or Thresholds()
    names = list(idata.posterior.data_vars)  # sampled, transformed and derived alike
    with warnings.catch_warnings():
        # one chain or a constant variable: ArviZ warns and returns NaN, judged below
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        rhat = az.rhat(idata, var_names=names)
        ess_b = az.ess(idata, var_names=names, method="bulk")
        ess_t = az.ess(idata, var_names=names, method="tail")
        try:
            bfmi = np.atleast_1d(az.bfmi(idata))
        except (KeyError, AttributeError, ValueError, TypeError):  # no energy: judged NaN
            bfmi = np.array([np.nan])

    def extreme(ds: Any, pick: Any) -> tuple[float, str]:
        pairs = [(float(v), name) for name, da in ds.data_vars.items()
                 for v in np.ravel(da.values) if np.isfinite(v)]
        return pick(pairs) if pairs else (float("nan"), "")

    # a NaN R-hat / ESS is expected of an element that is constant across draws (a fixed or
    # derived constant): those are skipped; one that varies, or any non-finite draw, is a
    # failure, named
    undefined = []
    for name in names:
        values = np.asarray(idata.posterior[name].values, float)
        values = values.reshape(values.shape[0] * values.shape[1], -1)
        finite = np.isfinite(values).all(axis=0)
        constant = finite & (np.ptp(np.where(np.isfinite(values), values, 0.0), axis=0) == 0)
        stats = [np.ravel(ds[name].values) for ds in (rhat, ess_b, ess_t)]
        if not finite.all() or any((~np.isfinite(v) & ~constant).any() for v in stats):
            undefined.append(name)
    max_rhat, worst_r = extreme(rhat, max)
    min_essb, worst_e = extreme(ess_b, min)
    min_esst, _ = extreme(ess_t, min)
    div = int(idata.sample_stats["diverging"].sum()) if "diverging" in idata.sample_stats else 0
    return Diagnostics(max_rhat, min_essb, min_esst, div, float(np.nanmin(bfmi)), worst_r,
                       worst_e, thresholds, tuple(undefined))


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


class WarmStartWarning(UserWarning):
    """The warm start found no usable mode: the chains start from the prior's centre."""


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
                  "bayeslaw_version": __version__, "sampling": sampled, "method": method}
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


@dataclass(repr=False)
class Fit:
    """A fitted model: posterior draws + spec + data + provenance.

    Attributes
    ----------
    idata : arviz.InferenceData
        ``posterior``, ``sample_stats`` and ``log_likelihood`` (pointwise, for LOO).
    spec : ModelSpec
    data : LossData
    provenance : dict
        Seed, sampler settings, input path and hash, package version.
    """

    idata: Any
    spec: ModelSpec
    data: LossData
    provenance: dict[str, Any]
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def method(self) -> str:
        """``"nuts"``, or the approximation that made the draws (``"laplace"``, ...)."""
        return str(self.provenance.get("method", "nuts"))

    @property
    def approximate(self) -> bool:
        """Whether the draws come from an approximation, not from NUTS."""
        return self.method != "nuts"

    @property
    def label(self) -> str:
        """The law's name, marked approximate where it is (figure titles, reports)."""
        return (f"{self.spec.law} (approximate: {self.method})" if self.approximate
                else self.spec.law)

    def __repr__(self) -> str:
        post = self.idata.posterior
        state = ("converged" if self.diagnostics.ok else "NOT converged") if not \
            self.approximate else f"approximate: {self.method}"
        return (f"Fit(law={self.spec.law!r}, runs={len(self.data.runs)}, "
                f"points={len(self.data)}, draws={post.sizes['chain']}x{post.sizes['draw']}, "
                f"{state})")

    def predict(self, points: pd.DataFrame, **kwargs: Any) -> Any:
        """Posterior predictions at ``points``: see :func:`bayeslaw.predict.predict`."""
        from .predict import predict

        return predict(self, points, **kwargs)

    # -- diagnostics -----------------------------------------------------------------------
    @cached_property
    def diagnostics(self) -> Diagnostics:
        """Convergence diagnostics judged against :attr:`thresholds`.

        None apply to an approximate fit: its one failure says so.
        """
        if self.approximate:
            nan = float("nan")
            return Diagnostics(nan, nan, nan, 0, nan, "", "", self.thresholds,
                               approximate=self.method)
        return diagnose(self.idata, self.thresholds)

    def check(self, *, strict: bool = False, thresholds: Thresholds | None = None) -> Diagnostics:
        """Warn (or raise with ``strict``) when diagnostics fail; return them."""
        diag = (self.diagnostics if thresholds is None or self.approximate
                else diagnose(self.idata, thresholds))
        if self.approximate:
            if strict:
                raise ConvergenceError(diag.failures[0])
            k = self.provenance.get("sampling", {}).get("pareto_k")
            extra = (f"; its Pareto k is {k:.2f} (> 0.7: the posterior is far from the "
                     f"{self.method} approximation here)" if k is not None and k > 0.7
                     else "")
            warnings.warn(diag.failures[0] + "; a first look, not a checked posterior" + extra,
                          ApproximationWarning, stacklevel=3)
            return diag
        if not diag.ok:
            msg = "sampling did not converge: " + "; ".join(diag.failures)
            if strict:
                raise ConvergenceError(msg)
            warnings.warn(msg + " (run longer, or see the diagnostics table)",
                          ConvergenceWarning, stacklevel=3)
        return diag

    # -- posterior views -------------------------------------------------------------------
    @property
    def n_draws(self) -> int:
        """Total posterior draws (chains x draws)."""
        post = self.idata.posterior
        return int(post.sizes["chain"] * post.sizes["draw"])

    def draws(self, name: str) -> np.ndarray:
        """Posterior draws of a variable, chains stacked first: shape ``(S, *dims)``."""
        da = self.idata.posterior[name]
        return np.asarray(da.values).reshape(self.n_draws, *da.shape[2:])

    def coefficient_names(self) -> list[str]:
        """Law coefficients (sampled ones, then textbook A, B, C) and noise parameters."""
        law = self.spec.law_obj
        names = list(self.spec.free_params)
        names += [n for n in law.natural({p: 1.0 for p in law.param_names},
                                         dict.fromkeys(law.reference_keys, 1.0))
                  if n in self.idata.posterior]
        names += [n for n in ("sigma", "sigma_spread", "nu", "sigma_decay", "ar1", "walk",
                              "walk_start", "walk_hurst")
                  if n in self.idata.posterior]
        names += [f"{e.name}_sd" for e in self.spec.effects if f"{e.name}_sd" in
                  self.idata.posterior]
        return names

    def summary(self, prob: float = C.TABLE_PROB) -> pd.DataFrame:
        """Coefficient table: mean, sd, central ``prob`` interval, R-hat, bulk/tail ESS."""
        import arviz as az

        names = self.coefficient_names()
        if self.approximate:  # one "chain" of independent draws: nothing to diagnose
            table = pd.DataFrame(np.nan, index=names, columns=["r_hat", "ess_bulk", "ess_tail"])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                warnings.simplefilter("ignore", UserWarning)
                table = az.summary(self.idata, var_names=names, kind="all", hdi_prob=prob,
                                   stat_focus="mean")
        lo, hi = (1 - prob) / 2, 1 - (1 - prob) / 2
        q = {n: np.quantile(self.draws(n), [lo, hi]) for n in names}
        pct = f"{int(round(prob * 100))}%"
        out = pd.DataFrame({
            "mean": [float(self.draws(n).mean()) for n in names],
            "sd": [float(self.draws(n).std(ddof=1)) for n in names],
            f"lower_{pct}": [float(q[n][0]) for n in names],
            f"upper_{pct}": [float(q[n][1]) for n in names],
            "r_hat": table["r_hat"].reindex(names).to_numpy(),
            "ess_bulk": table["ess_bulk"].reindex(names).to_numpy(),
            "ess_tail": table["ess_tail"].reindex(names).to_numpy(),
        }, index=pd.Index(names, name="coefficient"))
        if self.approximate:  # no chain to diagnose: say what made the draws instead
            out = out.drop(columns=["r_hat", "ess_bulk", "ess_tail"])
            out["method"] = f"{self.method} (approximate)"
        return out

    # -- log-likelihood --------------------------------------------------------------------
    def attach_log_likelihood(self) -> None:
        """Compute the pointwise log-likelihood (numpy, no recompilation) into ``idata``."""
        import xarray as xr

        from .predict import pointwise_log_likelihood

        ll = pointwise_log_likelihood(self).astype(np.float32)
        post = self.idata.posterior
        ll = ll.reshape(post.sizes["chain"], post.sizes["draw"], -1)
        ds = xr.Dataset({"loss": (("chain", "draw", "obs"), ll)},
                        coords={"chain": post.chain, "draw": post.draw,
                                "obs": np.arange(ll.shape[-1])})
        if "log_likelihood" in self.idata.groups():
            del self.idata["log_likelihood"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            self.idata.add_groups(log_likelihood=ds)

    # -- persistence -----------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the fit to one netCDF file, atomically (temp file, then rename)."""
        import xarray as xr

        idata = self.idata.copy()
        frame = self.data.frame
        cols = {}
        for c in frame.columns:
            values = frame[c].to_numpy()
            if values.dtype.kind in "fiub":
                cols[f"data__{c}"] = ("row", values)
            else:
                cols[f"data__{c}"] = ("row", values.astype(str).astype(object))
        if "constant_data" in idata.groups():
            del idata["constant_data"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            idata.add_groups(constant_data=xr.Dataset(cols))
        idata.posterior.attrs.update({
            "bayeslaw_format_version": C.FIT_FORMAT_VERSION,
            "bayeslaw_spec": self.spec.to_json(),
            "bayeslaw_provenance": json.dumps(self.provenance, sort_keys=True),
            "bayeslaw_method": (f"{self.method} (approximate)" if self.approximate
                                else self.method),
            "bayeslaw_data": json.dumps({"source": self.data.source, "sha256": self.data.sha256,
                                         "has_runs": self.data.has_runs,
                                         "notes": list(self.data.notes),
                                         "columns": list(frame.columns),
                                         "dtypes": [str(t) for t in frame.dtypes]}),
        })
        return atomic_write(path, lambda tmp: idata.to_netcdf(tmp, engine="h5netcdf"))

    @classmethod
    def load(cls, path: str | Path) -> Fit:
        """Read a fit written by :meth:`save` (exact round trip)."""
        import arviz as az

        path = Path(path)
        if not path.is_file():
            raise FitFileError(f"fit file {str(path)!r} does not exist")
        try:
            idata = az.from_netcdf(path, engine="h5netcdf")
            attrs = dict(idata.posterior.attrs)
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            raise FitFileError(f"{str(path)!r} is not a bayeslaw fit file ({exc})") from None
        version = attrs.get("bayeslaw_format_version")
        if version is None:
            raise FitFileError(f"{str(path)!r} is a netCDF file but not a bayeslaw fit")
        if int(version) != C.FIT_FORMAT_VERSION:
            raise FitFileError(f"{str(path)!r} has fit format {version}; this bayeslaw reads "
                               f"format {C.FIT_FORMAT_VERSION}: refit with this version")
        meta = json.loads(attrs["bayeslaw_data"])
        const = idata.constant_data
        frame = pd.DataFrame({c: const[f"data__{c}"].values for c in meta["columns"]})
        for c, t in zip(meta["columns"], meta["dtypes"], strict=True):
            if frame[c].dtype.kind not in "fiub":
                frame[c] = frame[c].astype(str)
            else:
                frame[c] = frame[c].astype(t)
        del idata["constant_data"]
        for key in [k for k in attrs if k.startswith("bayeslaw_")]:
            del idata.posterior.attrs[key]
        data = LossData(frame, meta["source"], meta["sha256"], meta["has_runs"],
                        tuple(meta["notes"]))
        spec = ModelSpec.from_dict(json.loads(attrs["bayeslaw_spec"]))
        return cls(idata=idata, spec=spec, data=data,
                   provenance=json.loads(attrs["bayeslaw_provenance"]))
