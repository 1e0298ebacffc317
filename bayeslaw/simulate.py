"""Seeded synthetic sweeps with known truth (the bundled data set, recovery tests, SBC).

The generative process mirrors :mod:`bayeslaw.model.graph` but is written in plain numpy: it
shares the law functions and the model's arithmetic (:mod:`bayeslaw.model.arithmetic`, and the
noise model's :mod:`bayeslaw.model.noise`) with the graph, not its assembly (layout, containers,
indexing of effects and runs), which a recovery test therefore checks. The arithmetic is
checked against closed forms in ``tests/model/test_arithmetic.py`` and ``tests/model/
test_noise.py`` and, through the graph, against the log densities of 5d06e18
(``tests/fixtures/logp_reference.json``).
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
from .data.steps import checkpoint_labels
from .data.table import run_label
from .errors import ArgumentError
from .model.arithmetic import link_value
from .model.noise import draw_curves, noise_scale, previous_rows, standard_noise
from .spec.catalog import load_spec
from .spec.model_spec import ModelSpec
from .spec.parts import FAMILY_PARAMS

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
             ar1: float = 0.0, outlier_share: float = 0.05, outlier_scale: float = 9.0,
             shock: float = 0.0, seed: int | np.random.Generator = 0
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
    outlier_share, outlier_scale : float
        With the spec's family ``contaminated``: the share of points whose noise scale is
        ``1 + outlier_scale`` times the run's.
    sigma_decay, ar1 : float
        Noise scale falling as ``(D / D_ref) ** -sigma_decay``; AR(1) correlation of
        consecutive standardised residuals of a run (rows must be sorted by run, then D).
        With the spec's ``likelihood.sigma_relative`` the scale is also multiplied by the
        law's value (``sigma`` is then a fraction of the loss).
    shock : float
        sd of a shift shared by the rows of one checkpoint (a step table's looped run at one
        ``D``: :func:`bayeslaw.data.steps.checkpoint_labels`), added after the noise.
    seed : int or Generator
    """
    rng = np.random.default_rng(seed)
    law = spec.law_obj
    out = table.copy()
    runs = pd.unique(out[C.RUN])
    run_idx = pd.Categorical(out[C.RUN], categories=runs).codes
    first = out.groupby(C.RUN, sort=False).first().reindex(runs)
    theta, effects = _parameters(spec, params, dict(effect_sd or {}), runs, first, rng)
    theta = {k: v[run_idx] if isinstance(v, np.ndarray) else v for k, v in theta.items()}
    cov = {c: out[c].to_numpy(float) for c in law.covariates}
    mu = np.asarray(law(np, cov, theta, spec.reference), dtype=float)
    lk = spec.likelihood
    scale_run = _run_scales(lk.sigma_by, first, len(runs), sigma, sigma_spread, rng)
    own = {"nu": nu, "outlier_share": outlier_share, "outlier_scale": outlier_scale}
    eps = standard_noise(rng, lk.family, (len(out),), *(own[k] for k in FAMILY_PARAMS[lk.family]))
    log_d = (np.log(out[C.D].to_numpy(float) / spec.reference[C.D]) if sigma_decay else None)
    scale = noise_scale(np, scale_run[run_idx], log_d=log_d, decay=sigma_decay or None,
                        mu=mu if lk.sigma_relative else None)
    prev, first_rows = previous_rows(out[C.RUN].to_numpy())
    # standardised residuals follow an AR(1) along each run (rows sorted by D)
    out[C.LOSS] = draw_curves(mu[None, :], scale[None, :], eps[None, :], prev, first_rows,
                              ar1=ar1 or None)[0] + _checkpoint_shifts(out, shock, rng)
    truth = Truth(dict(params), effects, dict(zip(runs.tolist(), scale_run.tolist(),
                                                  strict=True)),
                  nu if lk.family == "student_t" else None)
    return out, truth


def _checkpoint_shifts(rows: pd.DataFrame, shock: float, rng: np.random.Generator
                       ) -> np.ndarray | float:
    """One ``N(0, shock)`` shift per checkpoint, on each of its rows (0.0 when ``shock`` is 0).

    Drawn after the noise, so that a seed's other draws stay as they are without it.
    """
    if not shock:
        return 0.0
    codes = pd.factorize(pd.Series(checkpoint_labels(rows)))[0]
    return shock * rng.standard_normal(codes.max() + 1)[codes]


def _run_scales(sigma_by: str | None, first: pd.DataFrame, n_runs: int, sigma: float,
                sigma_spread: float, rng: np.random.Generator) -> np.ndarray:
    """Each run's noise scale: ``sigma``, or ``sigma`` times its level's log-normal deviation."""
    if sigma_by is None:
        return np.full(n_runs, sigma)
    levels = _levels(first, sigma_by, n_runs)
    uniq = np.array(sorted(set(levels.tolist())))
    per = link_value(np, sigma, "log", [sigma_spread * rng.normal(size=len(uniq))])
    return per[np.searchsorted(uniq, levels)]


def _levels(first: pd.DataFrame, group: str, n_runs: int) -> np.ndarray:
    """Each run's level of ``group`` (a run is its own level)."""
    return np.arange(n_runs) if group == C.RUN else first[group].to_numpy()


def _parameters(spec: ModelSpec, params: Mapping[str, float], effect_sd: Mapping[str, float],
                runs: np.ndarray, first: pd.DataFrame, rng: np.random.Generator
                ) -> tuple[dict[str, Any], dict[str, dict[Any, float]]]:
    """Law parameters (fixed, a number, or one value per run) and the drawn level effects."""
    theta: dict[str, Any] = {**spec.fixed, **{k: float(v) for k, v in params.items()}}
    effects: dict[str, dict[Any, float]] = {}
    for p in spec.law_obj.params:
        deviations = []
        for e in [e for e in spec.effects if e.param == p.name]:
            levels = _levels(first, e.group, len(runs))
            uniq = np.array(sorted(set(levels.tolist())))
            draws = rng.normal(0.0, effect_sd.get(p.name, 0.0), size=len(uniq))
            effects[e.name] = dict(zip(uniq.tolist(), draws.tolist(), strict=True))
            deviations.append(draws[np.searchsorted(uniq, levels)])
        if deviations:
            theta[p.name] = link_value(np, np.full(len(runs), theta[p.name]), p.link,
                                       deviations)
    return theta, effects


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


#: True coefficients of the synthetic schedule sweep (centered: N_ref = 1e8, D_ref = 1e9).
SCHEDULE_TRUTH: dict[str, float] = {
    "E": 1.9, "a": 0.5, "alpha": 0.35, "b": 0.6, "beta": 0.45, "d": 0.25, "kappa": 8.0,
    "zeta": 0.6, "omega": 0.5,
}
#: The schedules of the synthetic sweep: every kind, WSD with two cool-down shapes.
SCHEDULE_KINDS: tuple[dict[str, Any], ...] = (
    {"schedule": "cosine", "final_lr_ratio": 0.1},
    {"schedule": "linear"},
    {"schedule": "constant"},
    {"schedule": "wsd", "decay_start_share": 0.8, "decay_shape": "1-sqrt"},
    {"schedule": "wsd", "decay_start_share": 0.9, "decay_shape": "linear"},
    {"schedule": "inverse_sqrt"},
)
SCHEDULE_N = (5e7, 1e8, 2e8, 4e8, 8e8)


def schedule_design(*, N: Sequence[float] = SCHEDULE_N, horizons: Sequence[float] = (2e9, 6e9),
                    points: int = 30, kinds: Sequence[Mapping[str, Any]] = SCHEDULE_KINDS
                    ) -> pd.DataFrame:
    """Every size with every schedule and horizon, logged at ``points`` even steps.

    Each run warms up over 1% of its horizon; a WSD cool-down starts at
    ``decay_start_share`` of it.  The columns are those :mod:`bayeslaw.data.schedules` reads.
    """
    rows = []
    for kind in kinds:
        for horizon in horizons:
            for n in N:
                plan = {k: v for k, v in kind.items() if k != "decay_start_share"}
                if "decay_start_share" in kind:
                    plan["decay_start"] = kind["decay_start_share"] * horizon
                name = kind["schedule"] + (f"{kind['decay_start_share']:g}"
                                           if "decay_start_share" in kind else "")
                for d in np.linspace(horizon / points, horizon, points):
                    rows.append({C.RUN: f"{run_label(n)}_{name}_H{horizon:g}", C.N: float(n),
                                 C.D: float(d), C.HORIZON: float(horizon),
                                 "warmup": 0.01 * horizon, **plan})
    return pd.DataFrame(rows)


def schedule_sweep(*, seed: int = SWEEP_SEED, points: int = 30, law: str = "multi_power",
                   params: Mapping[str, float] | None = None, sigma: float = 0.01,
                   **design_options: Any) -> tuple[pd.DataFrame, Truth]:
    """A synthetic sweep of curves with known schedules of every kind, from a schedule law.

    The table (:func:`schedule_design`) goes through :func:`bayeslaw.data.table.load`, which adds
    the schedule's terms, and is simulated from ``law``'s default spec with ``params``
    (default :data:`SCHEDULE_TRUTH`, the parameters the law has) and Student-t noise of
    scale ``sigma``.  The returned frame holds the schedule columns, not the terms.
    """
    from .data.table import load

    table = schedule_design(points=points, **design_options)
    spec = load_spec(law=law)
    names = set(spec.law_obj.param_names)
    truth = {k: v for k, v in (params or SCHEDULE_TRUTH).items() if k in names}
    frame, drawn = simulate(spec, load(table.assign(loss=1.0)).frame, truth, sigma=sigma,
                            sigma_spread=0.0, seed=seed)
    return frame[[*table.columns, C.LOSS]], drawn


#: True coefficients of the synthetic step-wise sweep (centered as the default spec of
#: ``looped_steps``: a, b, c are loss contributions at N = 3e8, D = 1e9 and exit step T = 4),
#: its entropy weight and the exponent of its exit distribution ``q(T) ~ T^lambda_q`` over a
#: run's steps ``T <= T_m`` (1: at T_m = 4, q = 0.1, 0.2, 0.3, 0.4, a gate that exits late
#: more often, as Ouro's does).
STEP_TRUTH: dict[str, float] = {**DEFAULT_TRUTH, "c": 0.2, "gamma": 0.6, "beta_H": 0.05,
                                "lambda_q": 1.0}
STEP_EFFECT_SD: dict[str, float] = {**DEFAULT_EFFECT_SD, "c": 0.1, "gamma": 0.08}


def exit_probabilities(T_m: int, power: float | Mapping[float, float] = STEP_TRUTH["lambda_q"]
                      ) -> np.ndarray:
    """The exit distribution over steps ``1..T_m``: ``q(T)`` proportional to ``T^power``.

    ``power`` is one exponent, or a mapping from ``T_m`` to each depth's exponent (a gate that
    learned a different exit distribution at each depth).
    """
    if isinstance(power, Mapping):
        by_depth = {float(k): v for k, v in power.items()}
        if float(T_m) not in by_depth:
            raise ArgumentError(f"no exit exponent for T_m = {T_m:g}: the mapping has "
                                f"{sorted(by_depth)}; give one for every T_m")
        power = by_depth[float(T_m)]
    w = np.arange(1, int(T_m) + 1, dtype=float) ** power
    return w / w.sum()


def step_design(*, N: Sequence[float] = SWEEP_N, T_m: Sequence[float] = SWEEP_T_M,
                D: Sequence[float] = tuple(np.geomspace(1e8, 2e10, 30)), totals: bool = True,
                power: float | Mapping[float, float] = STEP_TRUTH["lambda_q"]
                ) -> pd.DataFrame:
    """A step table's rows, the loss left at 1.

    Every run's rows at each exit step ``T = 1..T_m`` of each checkpoint ``D`` (with the
    logged ``q``), and its total-loss row (``T`` empty) when ``totals``.
    """
    rows = []
    for t in T_m:
        q = exit_probabilities(int(t), power)
        for n in N:
            run = run_label(n, t)
            for d in D:
                for k in range(1, int(t) + 1):
                    rows.append({C.RUN: run, C.N: float(n), C.D: float(d), C.T_M: float(t),
                                 C.T_STEP: float(k), C.Q_EXIT: float(q[k - 1]), C.LOSS: 1.0})
                if totals:
                    rows.append({C.RUN: run, C.N: float(n), C.D: float(d), C.T_M: float(t),
                                 C.T_STEP: np.nan, C.Q_EXIT: np.nan, C.LOSS: 1.0})
    return pd.DataFrame(rows)


def looped_step_sweep(*, seed: int = SWEEP_SEED, q_logged: bool = True, totals: bool = True,
                      params: Mapping[str, float] | None = None, sigma: float = 0.01,
                      exit_powers: Mapping[float, float] | None = None, shock: float = 0.0,
                      **design_options: Any) -> tuple[pd.DataFrame, Truth]:
    """A synthetic looped sweep with step losses, a known exit distribution and entropy weight.

    The bundled sweep's sizes and depths (:data:`SWEEP_N`, :data:`SWEEP_T_M`), each run's loss
    at every exit step ``T = 1..T_m`` and its total ``sum_T q(T) L_step(T) - beta_H H(q)`` at
    30 log-spaced checkpoints (:func:`step_design`), simulated from ``looped_steps``' default
    spec with :data:`STEP_TRUTH` (``params``; its ``lambda_q`` gives the exit distribution,
    :func:`exit_probabilities`), crossed N and T_m effects (:data:`STEP_EFFECT_SD`) and
    Student-t noise of scale ``sigma`` per curve (spread 0.3).  ``q_logged=False`` drops the
    column ``q`` (a latent exit distribution); ``totals=False`` leaves out the total rows.
    ``exit_powers`` maps each ``T_m`` to its own exponent in place of ``lambda_q`` (an exit
    distribution that differs by depth); the truth then holds each depth's exponent less
    ``lambda_q`` as the effect ``lambda_q_by_T_m``.  ``shock`` (> 0) shifts every row of a
    checkpoint (its steps and total) by one normal draw of that sd; the truth then holds it
    as ``shock``.
    """
    from .data.table import load

    truth = dict(params or STEP_TRUTH)
    power = truth["lambda_q"] if exit_powers is None else exit_powers
    table = step_design(totals=totals, power=power, **design_options)
    spec = load_spec(law="looped_steps")
    names = set(spec.law_obj.param_names)
    loaded = load(table).frame
    frame, drawn = simulate(spec, loaded, {k: v for k, v in truth.items() if k in names},
                            effect_sd=STEP_EFFECT_SD, sigma=sigma, sigma_spread=0.3, nu=6.0,
                            shock=shock, seed=seed)
    key = [C.LOOPED_RUN, C.D, C.T_STEP]
    losses = frame[key + [C.LOSS]].rename(columns={C.LOOPED_RUN: C.RUN})
    out = table.drop(columns=C.LOSS).merge(losses, on=[C.RUN, C.D, C.T_STEP], how="left")
    if not q_logged:
        out = out.drop(columns=C.Q_EXIT)
    effects = dict(drawn.effects)
    if exit_powers is not None:
        effects["lambda_q_by_T_m"] = {float(t): float(v) - truth["lambda_q"]
                                      for t, v in exit_powers.items()}
    if shock:
        truth["shock"] = shock
    return out, Truth(truth, effects, drawn.sigma_run, drawn.nu)
