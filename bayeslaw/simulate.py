"""Seeded synthetic sweeps with known truth (the bundled data set, recovery tests, SBC).

The generative process mirrors :mod:`bayeslaw.model` but is written in plain numpy from the
same law functions, so a recovery test checks the PyMC graph against an independent
simulator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import constants as C
from .data import run_label
from .priors import ModelSpec, load_spec

#: True coefficients of the bundled synthetic looped-LM sweep (centered scale of the
#: default spec: a, b, c are loss contributions at N=3e8, D=1e9, T_m=4).
DEFAULT_TRUTH: dict[str, float] = {
    "E": 1.8, "a": 0.6, "alpha": 0.3, "b": 0.6, "beta": 0.55, "c": 0.25, "gamma": 0.5,
}
#: Spread of the true group effects (sd on the log scale) and noise of the bundled sweep.
DEFAULT_EFFECT_SD: dict[str, float] = {"b": 0.08, "beta": 0.05}
DEFAULT_NOISE = {"sigma": 0.02, "sigma_spread": 0.3, "nu": 6.0}
#: Design of the bundled sweep.
SWEEP_N = (53e6, 134e6, 374e6, 778e6, 1.36e9)
SWEEP_T_M = (2, 4, 8)
SWEEP_D_RANGE = (1e7, 2e10)
SWEEP_POINTS = 200
SWEEP_SEED = 20251030
BUNDLED_FILE = "looped_sweep.csv"


@dataclass(frozen=True)
class Truth:
    """Everything drawn to simulate a sweep: population values, effects, per-run noise."""

    params: Mapping[str, float]
    effects: Mapping[str, Mapping[Any, float]] = field(default_factory=dict)
    sigma_run: Mapping[str, float] = field(default_factory=dict)
    nu: float | None = None


def design(N: Sequence[float], T_m: Sequence[float] | None, D: Sequence[float]) -> pd.DataFrame:
    """Full-factorial design: every (N, T_m) run observed at every D."""
    rows = []
    for t in (T_m if T_m is not None else [None]):
        for n in N:
            run = run_label(n, t)
            for d in D:
                row = {C.RUN: run, C.N: float(n), C.D: float(d)}
                if t is not None:
                    row[C.T_M] = float(t)
                rows.append(row)
    return pd.DataFrame(rows)


def simulate(spec: ModelSpec, table: pd.DataFrame, params: Mapping[str, float], *,
             effect_sd: Mapping[str, float] | None = None, sigma: float = 0.02,
             sigma_spread: float = 0.3, nu: float = 6.0, sigma_decay: float = 0.0,
             ar1: float = 0.0, seed: int | np.random.Generator = 0
             ) -> tuple[pd.DataFrame, Truth]:
    """Simulate losses for the rows of ``table`` from ``spec``'s law and hierarchy.

    Parameters
    ----------
    spec : ModelSpec
        Law, effects (which parameter varies by which group) and likelihood family.
    table : DataFrame
        Columns ``run``, ``N``, ``D`` (and ``T_m`` and group columns as the spec needs).
    params : mapping
        Population values of the sampled law parameters (fixed ones come from the spec).
    effect_sd : mapping, optional
        True sd (link scale) of the effects of each parameter, used for every group it
        varies by; parameters not listed get 0.
    sigma, sigma_spread, nu : float
        Noise: per-run scale ``sigma * exp(sigma_spread * z)``; Student-t ``nu`` if the spec's
        family is ``student_t``.
    sigma_decay, ar1 : float
        Noise scale falling as ``(D / D_ref) ** -sigma_decay``; AR(1) correlation of
        consecutive standardised residuals of a run (rows must be sorted by run, then D).
        With the spec's ``likelihood.sigma_relative`` the scale is also multiplied by the
        law's value (``sigma`` is then a fraction of the loss).
    seed : int or Generator
    """
    rng = np.random.default_rng(seed)
    law = spec.law_obj
    effect_sd = dict(effect_sd or {})
    out = table.copy()
    runs = pd.unique(out[C.RUN])
    run_idx = pd.Categorical(out[C.RUN], categories=runs).codes
    first = out.groupby(C.RUN, sort=False).first().reindex(runs)
    theta: dict[str, Any] = {**spec.fixed, **{k: float(v) for k, v in params.items()}}
    effects: dict[str, dict[Any, float]] = {}
    for p in law.params:
        mine = [e for e in spec.effects if e.param == p.name]
        if not mine:
            continue
        eta = np.full(len(runs), np.log(theta[p.name]) if p.link == "log" else theta[p.name])
        for e in mine:
            levels = np.arange(len(runs)) if e.group == C.RUN else first[e.group].to_numpy()
            uniq = np.array(sorted(set(levels.tolist())))
            draws = rng.normal(0.0, effect_sd.get(p.name, 0.0), size=len(uniq))
            effects[e.name] = dict(zip(uniq.tolist(), draws.tolist(), strict=True))
            eta = eta + draws[np.searchsorted(uniq, levels)]
        theta[p.name] = (np.exp(eta) if p.link == "log" else eta)[run_idx]
    cov = {c: out[c].to_numpy(float) for c in law.covariates}
    mu = np.asarray(law(np, cov, theta, spec.reference), dtype=float)
    lk = spec.likelihood
    if lk.sigma_by is None:
        scale_run = np.full(len(runs), sigma)
    else:
        levels = np.arange(len(runs)) if lk.sigma_by == C.RUN else first[lk.sigma_by].to_numpy()
        uniq = np.array(sorted(set(levels.tolist())))
        per = sigma * np.exp(sigma_spread * rng.normal(size=len(uniq)))
        scale_run = per[np.searchsorted(uniq, levels)]
    eps = rng.standard_t(nu, size=len(out)) if lk.family == "student_t" else \
        rng.normal(size=len(out))
    scale = scale_run[run_idx]
    if sigma_decay:
        scale = scale * (out[C.D].to_numpy(float) / spec.reference[C.D]) ** -sigma_decay
    if lk.sigma_relative:  # sigma is a fraction of the law's value
        scale = scale * mu
    if ar1:  # standardised residuals follow an AR(1) along each run (rows sorted by D)
        from .kernel import previous_rows

        prev, first = previous_rows(out[C.RUN].to_numpy())
        for i in range(len(eps)):
            if not first[i]:
                eps[i] = ar1 * eps[prev[i]] + np.sqrt(1 - ar1**2) * eps[i]
    out[C.LOSS] = mu + scale * eps
    truth = Truth(dict(params), effects, dict(zip(runs.tolist(), scale_run.tolist(),
                                                  strict=True)),
                  nu if lk.family == "student_t" else None)
    return out, truth


def looped_sweep(*, points: int = SWEEP_POINTS, seed: int = SWEEP_SEED,
                 N: Sequence[float] = SWEEP_N, T_m: Sequence[float] = SWEEP_T_M,
                 D_range: tuple[float, float] = SWEEP_D_RANGE, spacing: str = "log",
                 spec: ModelSpec | None = None) -> tuple[pd.DataFrame, Truth]:
    """The bundled synthetic sweep (defaults) or a smaller one for tests.

    Every run logs ``points`` losses at log-spaced (or, ``spacing="linear"``, evenly spaced
    as in a training log) tokens over ``D_range``, simulated from
    :data:`DEFAULT_TRUTH` with crossed N and T_m effects on the data term
    (:data:`DEFAULT_EFFECT_SD`) and Student-t noise with a per-run scale
    (:data:`DEFAULT_NOISE`).
    """
    spec = spec or load_spec(law="looped_total")
    D = np.geomspace(*D_range, points) if spacing == "log" else np.linspace(*D_range, points)
    return simulate(spec, design(N, T_m, D), DEFAULT_TRUTH, effect_sd=DEFAULT_EFFECT_SD,
                    seed=seed, **DEFAULT_NOISE)


def bundled_path() -> Path:
    """Path of the bundled synthetic sweep CSV shipped with the package."""
    return Path(str(resources.files("bayeslaw") / "datasets" / BUNDLED_FILE))


def write_bundled(path: str | Path | None = None) -> Path:
    """Regenerate the bundled CSV (deterministic; a test checks the shipped file matches)."""
    path = Path(path) if path is not None else bundled_path()
    frame, _ = looped_sweep()
    frame.to_csv(path, index=False, float_format="%.6g")
    return path
