"""``fit(..., method="by_curve")``: a table of curves fitted one curve at a time (empirical Bayes).

A population spec such as ``curve_bend`` ties its curves together only through a few shared
values: the centre and spread of the effects it learns (a curve's level ``m``), the noise's
centre ``sigma``, its spread across curves and the Student-t's ``nu``.  Sampled jointly, one
NUTS step size and tree depth serve every curve, and the hardest of 192 curves sets them for
all (ColPret's pooled fit runs at nutpie's maximum of 1,023 leapfrog steps a draw).  Given the
shared values the curves are independent, so this method:

1. **first pass**: samples every curve by itself under broad priors (the population's centre
   priors, a broad ``nu``), with a dense mass matrix (a curve has four or five coordinates);
2. **the shared values**: each learned spread and centre at the mode of its marginal
   posterior, every curve's marginal likelihood estimated from its first-pass draws by
   importance weights (the population's density over the first pass's prior, averaged over the
   draws); ``nu`` at the mode of the product of the curves' marginal likelihoods in ``log nu``,
   each a kernel density of its draws over the first pass's prior;
3. **second pass**: samples every curve again with its prior the population's at those values
   (a curve with fewer than ``sigma_min_points`` points takes the centre ``sigma``, as in the
   joint fit), and stacks the curves' draws into the joint model's variables, with the shared
   values as constants.

So the result is the joint model's posterior with its shared values held at a point estimate:
their uncertainty is left out (small with many curves: the shared values are then pinned by
all of them; larger with a handful), and each curve's R-hat, ESS and divergences are its own
sampler's.  Forecasts, log densities, new curves and figures read the result as any fit.
Supported: specs whose effects all vary by ``run`` (one effect a parameter, every parameter
with one, a learned spread only on a log link, no ``[correlation]``), a noise scale by run
and a normal or Student-t noise without a schedule, AR(1) or walk.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
from scipy import optimize, stats
from scipy.special import logsumexp

from .. import constants as C
from ..data.table import LossData
from ..errors import SpecError
from ..model.arithmetic import link_of
from ..spec.model_spec import ModelSpec
from ..spec.settings import SamplerSettings

#: Every curve is fitted under this run name: one model structure, compiled once.
CURVE = "curve"
#: The sd (log scale) of the tight priors that hold a shared value in the second pass.
HELD_SD = 1e-3
#: The first pass's prior on ``nu``: LogNormal(log 5, 1.5), 90% in [0.4, 59], broad enough
#: that every curve's marginal likelihood in ``nu`` can be read from its draws.
FIRST_NU = (float(np.log(5.0)), 1.5)
#: The first pass's draws and tuning steps a chain at most (it only feeds the shared values).
FIRST_DRAWS, FIRST_TUNE = 250, 500
#: A curve of the second pass whose diagnostics fail is sampled again this many times longer.
RETRY = 4
#: The grid of ``nu`` searched for the shared value.
NU_GRID = np.exp(np.linspace(np.log(0.3), np.log(300.0), 600))


def check_supported(spec: ModelSpec, data: LossData) -> None:
    """Refuse, with the reason, a spec or table the method cannot fit one curve at a time."""
    def no(why: str) -> SpecError:
        return SpecError(f"method='by_curve' cannot fit spec {spec.law!r} here: {why}; use "
                         "method='nuts' (one joint fit)")

    lk = spec.likelihood
    if data.schedules is not None:
        raise no("the table has learning-rate schedules")
    if len(data.runs) < 2:
        raise no("the table has one run (fit it with method='nuts')")
    if spec.correlation is not None:
        raise no("its [correlation] block ties the curves' coefficients together")
    if lk.sigma_by != C.RUN or lk.family not in ("normal", "student_t"):
        raise no("its noise must have a scale by run (likelihood.sigma_by = 'run') and a "
                 "normal or Student-t family")
    extra = [k for k in ("ar1", "walk", "sigma_decay", "shock") if getattr(lk, k, None) is not None]
    if extra or lk.sigma_relative:
        raise no(f"its noise model has {extra or ['sigma_relative']}")
    params = [p for p in spec.law_obj.params if p.name not in spec.fixed]
    for p in params:
        effects = [e for e in spec.effects if e.param == p.name]
        if len(effects) != 1 or effects[0].group != C.RUN:
            raise no(f"parameter {p.name!r} needs exactly one effect by run (it has "
                     f"{[e.group for e in effects]})")
        prior = spec.priors[p.name]
        if not isinstance(effects[0].scale, float) and (
                p.link != "log" or prior.dist != "LogNormal"):
            raise no(f"the learned spread of {p.name!r} needs a log link and a LogNormal prior")
    if lk.sigma.dist != "LogNormal":
        raise no("likelihood.sigma needs a LogNormal prior")


def _prior(mu: float, sigma: float) -> dict[str, Any]:
    return {"dist": "LogNormal", "mu": float(mu), "sigma": float(sigma)}


def curve_spec(spec: ModelSpec, shared: dict[str, Any] | None = None,
               own_scale: bool = True) -> ModelSpec:
    """The spec of one curve: the first pass's (``shared`` None) or the second's.

    A fixed-spread effect stays as it is (one run gets the prior it has in the joint model); a
    learned one is dropped in the first pass (the centre's prior is the curve's) and held at
    ``shared``'s centre and spread in the second.  The noise is one scale: the centre's prior
    first, then ``LogNormal(mu, spread)`` (``own_scale``) or held at the centre.
    """
    d = spec.to_dict()
    effects = []
    for e in d["effects"]:
        if not isinstance(e.get("scale"), dict):
            effects.append(e)
        elif shared is not None:
            mu, sd = shared["effects"][e["param"]]
            d["priors"][e["param"]] = _prior(mu, HELD_SD)
            effects.append({"param": e["param"], "group": C.RUN, "pooling": "none",
                            "scale": float(sd)})
    d["effects"] = effects
    lk = d["likelihood"]
    for key in ("sigma_spread", "sigma_centered", "sigma_min_points"):
        lk.pop(key, None)
    lk["sigma_by"] = "none"
    if shared is None:
        if "nu" in lk:
            lk["nu"] = _prior(*FIRST_NU)
    else:
        mu, sd = shared["sigma"]
        lk["sigma"] = _prior(mu, sd if own_scale else HELD_SD)
        if "nu" in lk:
            lk["nu"] = _prior(np.log(shared["nu"]), HELD_SD)
    d["data"] = {**d.get("data", {}), "min_portion": 0.0}
    d["sampler"] = {**d.get("sampler", {}), "low_rank": True, "centered_values": False}
    if shared is None:  # the level's effect is gone: a curve's own coordinates
        d["sampler"]["shape_at"] = "reference"
    return ModelSpec.from_dict(d)


def _lognormal_logpdf(u: np.ndarray, mu: float, sd: float) -> np.ndarray:
    """The log density of ``u = log x`` when ``x ~ LogNormal(mu, sd)``."""
    return stats.norm.logpdf(u, mu, sd)


def _kernel_logpdf(u: np.ndarray, at: np.ndarray) -> np.ndarray:
    """A Gaussian kernel density of draws ``u`` (Scott's bandwidth), in log, at ``at``."""
    h = 1.06 * max(float(np.std(u)), 1e-3) * len(u) ** -0.2
    return logsumexp(stats.norm.logpdf(np.asarray(at, float)[..., None], u, h),
                     axis=-1) - np.log(len(u))


def population_mode(draws: list[np.ndarray], first: tuple[float, float],
                    centre_prior: tuple[float, float], spread_prior: Any,
                    at_centre: list[np.ndarray] = ()) -> tuple[float, float]:
    """The mode of ``(mu, log s)`` of ``log x_r ~ N(mu, s)`` given every curve's data.

    ``draws[r]`` are curve r's first-pass draws of ``log x_r`` under ``N(first)``; its
    marginal likelihood at ``(mu, s)`` is the mean of ``N(u; mu, s) / N(u; first)`` over them.
    A curve of ``at_centre`` takes the centre itself (``x_r = exp(mu)``: a noise scale of a
    curve with fewer than ``sigma_min_points`` points): its likelihood at ``mu`` is its
    first-pass posterior density there (a kernel density of its draws) over ``N(first)``.
    The hyperpriors: ``mu ~ N(centre_prior)``, ``s`` the spec's spread prior (its log
    density at ``s``, with the Jacobian of ``log s``).
    """
    base = [_lognormal_logpdf(u, *first) for u in draws]

    def minus(theta: np.ndarray) -> float:
        mu, s = theta[0], float(np.exp(theta[1]))
        total = sum(logsumexp(stats.norm.logpdf(u, mu, s) - b) - np.log(len(u))
                    for u, b in zip(draws, base, strict=True))
        total += sum(float(_kernel_logpdf(u, mu)) for u in at_centre)
        total -= len(at_centre) * float(_lognormal_logpdf(mu, *first))
        hyper = (stats.norm.logpdf(mu, *centre_prior) + spread_prior.logpdf(s) + np.log(s))
        return -float(total + hyper)

    means = np.array([np.mean(u) for u in [*draws, *at_centre]])
    spread = means.std() if len(draws) > 1 else float(spread_prior.median())
    start = np.array([means.mean(), np.log(max(spread, 1e-3))])
    best = optimize.minimize(minus, start, method="Nelder-Mead",
                             options={"xatol": 1e-4, "fatol": 1e-6, "maxiter": 4000})
    return float(best.x[0]), float(np.exp(best.x[1]))


def shared_nu(draws: list[np.ndarray], hyper: Any) -> float:
    """The mode of a shared ``nu`` given every curve's first-pass draws of ``log nu``.

    Each curve's marginal likelihood in ``log nu`` is its posterior over the first pass's prior
    (a Gaussian kernel density of its draws, Scott's bandwidth); their product times the spec's
    prior on ``nu`` is maximised on :data:`NU_GRID`.
    """
    grid = np.log(NU_GRID)
    total = hyper.logpdf(NU_GRID) + grid  # the spec's prior, in log nu
    for u in draws:
        total = total + _kernel_logpdf(u, grid) - _lognormal_logpdf(grid, *FIRST_NU)
    return float(NU_GRID[int(np.argmax(total))])


def _curve_data(data: LossData, run: str) -> LossData:
    """Run ``run``'s rows, renamed :data:`CURVE`."""
    frame = data.frame[data.frame[C.RUN] == run].assign(**{C.RUN: CURVE})
    return dataclasses.replace(data, frame=frame.reset_index(drop=True),
                               notes=(*data.notes, f"run {run} alone (method='by_curve')"))


def _one_pass(data: LossData, spec_of: Any, settings: SamplerSettings, seeds: np.ndarray,
              sample: Any, retry: bool = False) -> tuple[dict[str, Any], list[str], float]:
    """Every run sampled alone under ``spec_of(run)``.

    Returns its draws by run, the runs sampled again and the seconds.  With ``retry`` a run
    whose diagnostics fail is sampled again :data:`RETRY` times longer (draws and tuning),
    every :data:`RETRY`-th draw kept.
    """
    from ..model.plan import make_plan
    from ..posterior.diagnostics import diagnose

    out, again, start = {}, [], time.perf_counter()
    for run, seed in zip(data.runs, seeds, strict=True):
        spec = spec_of(run)
        one = _curve_data(data, run)
        curve_settings = spec.sampler.replace(draws=settings.draws, tune=settings.tune,
                                              chains=settings.chains,
                                              target_accept=settings.target_accept)
        plan = make_plan(spec, one, one)
        idata, _ = sample(plan, one, curve_settings, int(seed), False)
        if retry and not diagnose(idata).ok:  # longer, thinned to the same number of draws
            longer = curve_settings.replace(draws=RETRY * settings.draws,
                                            tune=RETRY * settings.tune)
            idata, _ = sample(plan, one, longer, int(seed) + 1, False)
            idata = idata.isel(draw=slice(RETRY - 1, None, RETRY))
            again.append(str(run))
        out[run] = idata
    return out, again, time.perf_counter() - start


def _first(idata: Any, name: str) -> np.ndarray:
    """A scalar variable's draws, chains stacked, as ``log`` of the value."""
    return np.log(np.asarray(idata.posterior[name].values, float).ravel())


def estimate_shared(spec: ModelSpec, data: LossData, first: dict[str, Any]) -> dict[str, Any]:
    """The shared values from the first pass's draws (see the module's step 2)."""
    lk = spec.likelihood
    runs = list(data.runs)
    counts = data.frame[C.RUN].value_counts()
    own = [r for r in runs if lk.sigma_min_points is None
           or counts[r] >= lk.sigma_min_points]
    shared: dict[str, Any] = {"effects": {}}
    for e in spec.effects:
        if isinstance(e.scale, float):
            continue
        prior = spec.priors[e.param]
        mu0, sd0 = prior.params["mu"], prior.params["sigma"]
        shared["effects"][e.param] = population_mode(
            [_first(first[r], e.param) for r in runs], (mu0, sd0), (mu0, sd0), e.scale.scipy())
    mu0, sd0 = lk.sigma.params["mu"], lk.sigma.params["sigma"]
    spread = (lk.sigma_spread.scipy() if lk.sigma_spread is not None
              else stats.halfnorm(scale=1.0))
    shared["sigma"] = population_mode([_first(first[r], "sigma") for r in own],
                                      (mu0, sd0), (mu0, sd0), spread,
                                      [_first(first[r], "sigma") for r in runs if r not in own])
    if lk.family == "student_t":
        shared["nu"] = shared_nu([_first(first[r], "nu") for r in runs], lk.nu.scipy())
    shared["own_scale"] = own
    return shared


def _stacked(second: dict[str, Any], runs: list[str], name: str) -> np.ndarray:
    """``name``'s draws of every run, ``(chains, draws, runs)``."""
    return np.stack([np.asarray(second[r].posterior[name].values, float)
                     .reshape(second[r].posterior.sizes["chain"], -1) for r in runs], axis=-1)


def assemble(spec: ModelSpec, data: LossData, shared: dict[str, Any],
             second: dict[str, Any]) -> Any:
    """The joint model's posterior variables from the second pass, shared values constant."""
    import arviz as az
    import xarray as xr

    runs = [str(r) for r in data.runs]
    law = spec.law_obj
    sigma_run = _stacked(second, runs, "sigma")
    shape = sigma_run.shape[:2]
    const = lambda v: (("chain", "draw"), np.full(shape, float(v)))  # noqa: E731
    per_run = lambda v: (("chain", "draw", C.RUN), v)  # noqa: E731
    post, centres = {}, {}
    for e in spec.effects:
        values = _stacked(second, runs, f"{e.param}_run")
        if isinstance(e.scale, float):  # the centre's tight prior: its median over the curves
            centre = float(np.median(_stacked(second, runs, e.param)))
        else:
            mu, sd = shared["effects"][e.param]
            centre = float(np.exp(mu))
            post[f"{e.name}_sd"] = const(sd)
        link = next(p.link for p in law.params if p.name == e.param)
        post[e.param], centres[e.param] = const(centre), centre
        post[e.name] = per_run(link_of(np, values, link) - link_of(np, centre, link))
        post[f"{e.param}_run"] = per_run(values)
    for name, value in law.natural({**centres, **spec.fixed}, spec.reference).items():
        post.setdefault(name, const(value))
    mu, sd = shared["sigma"]
    post["sigma"], post["sigma_spread"] = const(np.exp(mu)), const(sd)
    own = np.isin(runs, shared["own_scale"])
    sigma_run[..., ~own] = np.exp(mu)  # a curve of few points: the centre, as the joint fit
    post["sigma_log_dev"] = per_run(np.log(sigma_run) - mu)
    post["sigma_run"] = per_run(sigma_run)
    if "nu" in shared:
        post["nu"] = const(shared["nu"])
    dims = ("chain", "draw", C.RUN)
    sampled = {k: (dims, np.stack([np.asarray(second[r].sample_stats[k].values)
                                   for r in runs], axis=-1))
               for k in ("diverging", "energy", "n_steps", "step_size")}
    coords = {"chain": np.arange(shape[0]), "draw": np.arange(shape[1]), C.RUN: runs}
    return az.InferenceData(posterior=xr.Dataset(post, coords=coords),
                            sample_stats=xr.Dataset(sampled, coords=coords))


def fit_by_curve(data: LossData, spec: ModelSpec, settings: SamplerSettings, seed: int,
                 sample: Any) -> tuple[Any, dict[str, Any]]:
    """Both passes and the shared values: the joint model's draws and what was done.

    ``sample(plan, data, settings, seed, progress)`` samples one model (the library's NUTS).
    """
    check_supported(spec, data)
    runs = [str(r) for r in data.runs]
    seeds = np.random.default_rng(seed).integers(0, 2**32 - 1, size=(2, len(runs)))
    first_spec = curve_spec(spec)
    first_settings = settings.replace(draws=min(settings.draws, FIRST_DRAWS),
                                      tune=min(settings.tune, FIRST_TUNE))
    first, _, first_s = _one_pass(data, lambda run: first_spec, first_settings, seeds[0],
                                  sample)
    shared = estimate_shared(spec, data, first)
    specs = {own: curve_spec(spec, shared, own_scale=own) for own in (True, False)}
    second, again, second_s = _one_pass(data, lambda run: specs[run in shared["own_scale"]],
                                        settings, seeds[1], sample, retry=True)
    idata = assemble(spec, data, shared, second)
    info = {"first_pass_s": first_s, "sample_s": second_s,
            "shared": {"effects": {k: list(v) for k, v in shared["effects"].items()},
                       "sigma": list(shared["sigma"]), "nu": shared.get("nu"),
                       "own_scale": len(shared["own_scale"])},
            "sampled_again": again}
    return idata, info
