r"""Derived quantities with credible intervals, as posterior draws.

Every function evaluates the law in numpy on each posterior draw and returns a
:class:`Derived`: the draws themselves (so any summary can be computed) plus a median and
central interval table.

* :func:`loss_at`: the loss at one target point (a forecast, as :func:`~bayeslaw.predict`).
* :func:`compute_optimal`: the model size and token count that minimise the loss at a
  compute budget :math:`C = k(N, T_m)\, D`, with :math:`k = 6 N T_m` FLOPs per token by
  default (:math:`6 N` for laws without ``T_m``).
* :func:`best_T_m`, :func:`best_T_m_at_budget`: the posterior probability that each
  recurrent depth gives the lowest loss, at fixed (N, D) or at a fixed compute budget.
* :func:`step_gain`, :func:`total_loss`, :func:`best_exit_distribution`: a step law's gain of
  one more recurrent step, its total under an exit distribution, and the exit distribution
  with the lowest total.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import SCHEDULE, TERM_COLUMNS
from ..data.steps import check_exit_columns, exit_columns, optimal_exit
from ..errors import ArgumentError, SpecError
from ..laws.registry import STEP_LAWS, takes_T_m
from .draws import mean_draws, typical_parameters
from .prediction import band_tag, predict

if TYPE_CHECKING:  # pragma: no cover
    from ..laws.registry import Law
    from .result import Fit

#: Default grid of model sizes searched by :func:`compute_optimal` (1M to 10T parameters,
#: 100 points per decade: the optimum is found to within 2.3%).
DEFAULT_N_GRID = np.geomspace(1e6, 1e13, 701)
#: Draws evaluated at once on the N grid (bounds memory at draws x grid floats).
_BLOCK = 1000

CostPerToken = Callable[[np.ndarray, float | None], np.ndarray]
#: A step law's exit columns (a point's weights per step, its entropy, its latent marker).
EXIT_COLUMNS = frozenset({*C.EXIT_WEIGHTS, C.EXIT_ENTROPY, C.EXIT_LATENT})


@dataclass(frozen=True)
class Derived:
    """Posterior draws of a derived quantity.

    Attributes
    ----------
    name : str
        Short name (``"loss_at"``, ``"compute_optimal"``, ``"best_T_m"``).
    draws : ndarray or dict of str to ndarray
        One value per posterior draw, ``(S,)``, or several named quantities.
    description : str
        One sentence saying what the draws are (for reports).
    columns : dict of str to dict
        Extra summary columns keyed by column name, then by draw key (e.g. ``p_best``).
    """

    name: str
    draws: np.ndarray | dict[str, np.ndarray] = field(repr=False)
    description: str = ""
    columns: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, np.ndarray]:
        """The draws as a dict (a single array is keyed by :attr:`name`)."""
        if isinstance(self.draws, Mapping):
            return {k: np.asarray(v) for k, v in self.draws.items()}
        return {self.name: np.asarray(self.draws)}

    def summary(self, prob: float = 0.9) -> pd.DataFrame:
        """Median and central ``prob`` interval of each quantity (plus :attr:`columns`)."""
        if not 0 < prob < 1:
            raise ArgumentError(f"prob must lie in (0, 1), got {prob}")
        tag = band_tag(prob)
        rows = {}
        for key, values in self.as_dict().items():
            lo, med, hi = np.quantile(values, [(1 - prob) / 2, 0.5, (1 + prob) / 2])
            rows[key] = {"median": med, f"lower_{tag}": lo, f"upper_{tag}": hi}
        table = pd.DataFrame.from_dict(rows, orient="index")
        for col, values in self.columns.items():
            table[col] = [values.get(k, np.nan) for k in table.index]
        table.index.name = "quantity"
        return table

    def __repr__(self) -> str:
        n = len(next(iter(self.as_dict().values())))
        table = self.summary().to_string(float_format=lambda v: f"{v:.4g}")
        return f"Derived({self.name!r}, {n} draws)\n{self.description}\n{table}"

    def _repr_html_(self) -> str:
        table = self.summary().to_html(float_format=lambda v: f"{v:.4g}", border=0)
        return (f"<div><strong>{html.escape(self.name)}</strong>"
                f"<p>{html.escape(self.description)}</p>{table}</div>")


def _needs_T(fit: Fit, T_m: float | None) -> bool:
    """Whether the law has a ``T_m`` term; check ``T_m`` is given exactly when it does."""
    has_T = takes_T_m(fit.spec.law_obj)
    if has_T and T_m is None:
        raise ArgumentError(f"law {fit.spec.law!r} has a T_m term: give T_m")
    if not has_T and T_m is not None:
        raise ArgumentError(f"law {fit.spec.law!r} has no T_m term: do not give T_m")
    return has_T


def covariates_beyond_N(fit: Fit) -> list[str]:
    """The law's covariates besides ``N``, ``D``, ``T_m`` and ``horizon`` (``P``, ...).

    With any, the law's model size or cost per token is not one number ``N`` (no compute
    optimum).  A run's ``horizon`` is not one of them: a point here is a run trained to
    ``D`` (:func:`runs_end_at_D`).
    """
    return [c for c in fit.spec.law_obj.covariates
            if c not in (C.N, C.D, C.T_M, C.HORIZON)]


def _needs_N_only(fit: Fit, what: str, exits: bool = False) -> None:
    """Check the law's size and cost per token are one number ``N`` (with ``T_m``).

    ``exits``: a step law's exit columns are allowed (the caller gives them: its ``q``).
    """
    allowed = EXIT_COLUMNS if exits else frozenset()
    extra = [c for c in covariates_beyond_N(fit) if c not in allowed]
    if extra:
        raise SpecError(f"{what} searches or costs one model size N; law {fit.spec.law!r} "
                        f"also needs {extra}, so it is not defined for this law: forecast "
                        "chosen points with bayeslaw.predict or loss_at(..., columns=...)")


def _points(fit: Fit, N: Any, D: Any, T_m: Any,
            columns: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Points ``(N, D[, T_m])`` broadcast together, with the extra ``columns``.

    A law that needs a run's ``horizon`` (:func:`bayeslaw.laws.functions.chinchilla_anneal`) gets
    ``horizon = D`` unless ``columns`` gives one: the loss of a run trained to ``D``.
    """
    law = fit.spec.law_obj
    names = [C.N, C.D, C.T_M] if takes_T_m(law) else [C.N, C.D]
    values = np.broadcast_arrays(*(np.atleast_1d(np.asarray(v, float))
                                   for v in (N, D, T_m)[:len(names)]))
    table = pd.DataFrame(dict(zip(names, values, strict=True)))
    for name, value in (columns or {}).items():
        if name in (C.N, C.D, C.T_M):
            raise ArgumentError(f"columns must not repeat {name!r}: it is an argument of its own")
        table[name] = value
    if law.name in STEP_LAWS and C.EXIT_WEIGHTS[0] not in table.columns:
        # a step law's point is the total at its T_m unless columns say otherwise
        rows = [exit_columns(t, latent=law.name == "looped_steps_latent") for t in table[C.T_M]]
        table = table.assign(**pd.DataFrame(rows, index=table.index))
    if law.name in STEP_LAWS:
        check_exit_columns(law.name, table)
    return runs_end_at_D(law, table)


def runs_end_at_D(law: Law, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with ``horizon = D`` where ``law`` needs a horizon and ``table`` has none.

    A point of a derived quantity or a grid forecast is a run *trained to* ``D``: its
    schedule ends there.  A schedule-aware law also needs that run's schedule (its kind,
    warm-up, final rate: columns the caller gives); each point is then a run of its own.
    """
    scheduled = any(c in TERM_COLUMNS for c in law.covariates)
    if ((C.HORIZON in law.covariates or scheduled) and C.HORIZON not in table.columns
            and C.D in table):
        table = table.assign(**{C.HORIZON: table[C.D].to_numpy(float)})
    if scheduled and C.RUN not in table.columns:
        if SCHEDULE not in table.columns:
            raise ArgumentError(
                f"law {law.name!r} reads the run's learning-rate schedule: give the schedule "
                "of a run trained to D in columns, e.g. columns={'schedule': 'cosine', "
                "'warmup': 1e8, 'final_lr_ratio': 0.1}, or forecast points of known runs "
                "with bayeslaw.predict")
        table = table.assign(**{C.RUN: [f"trained_to_D_{i}" for i in range(len(table))]})
    return table


def columns_text(columns: Mapping[str, Any] | None) -> str:
    """A point's extra columns as text for descriptions: ``", peak_lr = 0.002"`` (or ``""``)."""
    return "".join(f", {k} = {v:.3g}" if isinstance(v, (int, float)) else f", {k} = {v}"
                   for k, v in (columns or {}).items())


def default_cost_per_token(N: np.ndarray, T_m: float | None) -> np.ndarray:
    """Training FLOPs per token: ``6 N T_m`` (a looped model applies N parameters T_m times).

    Without ``T_m`` (``None``) this is the usual ``6 N``.
    """
    return 6.0 * np.asarray(N, float) * (1.0 if T_m is None else float(T_m))


def largest_run_compute(fit: Fit, cost_per_token: CostPerToken | None = None) -> float:
    """Training compute (FLOPs) of the fit's most expensive run: ``cost(N, T_m) * D_max``."""
    _needs_N_only(fit, "largest_run_compute")
    cost = cost_per_token or default_cost_per_token
    frame = fit.data.frame
    group = frame[C.RUN] if C.RUN in frame.columns else np.arange(len(frame))
    runs = frame.groupby(group, sort=False).max(numeric_only=True)
    has_T = C.T_M in fit.spec.law_obj.covariates
    flops = [float(np.asarray(cost(np.array([n]), t if has_T else None), float)[0]) * d
             for n, d, t in zip(runs[C.N], runs[C.D],
                                runs[C.T_M] if has_T else [None] * len(runs), strict=True)]
    return max(flops)


def loss_at(fit: Fit, N: float, D: float, T_m: float | None = None, *,
            columns: Mapping[str, Any] | None = None, kind: str = "epistemic",
            seed: int = 0) -> Derived:
    """Posterior draws of the loss at one point ``(N, D, T_m)``.

    Parameters
    ----------
    fit : Fit
    N, D : float
        Model size (parameters) and training tokens.
    T_m : float, optional
        Maximum recurrent steps (required by laws with a ``T_m`` term).
    columns : mapping, optional
        Further columns of the point: the law's other covariates (``P``, ``N_once``,
        ``N_rec``) and the spec's group columns (e.g. ``{"peak_lr": 2e-3}``).  A law that
        needs a run's ``horizon`` takes ``horizon = D`` (a run trained to ``D``) unless
        given here (a checkpoint at ``D`` of a longer run).
    kind : {"epistemic", "predictive"}
        The law's value, or a new observed loss (noise included).
    seed : int
        Seed of the draws of new group levels (an N or T_m the fit has not seen) and noise.

    Returns
    -------
    Derived
        ``draws`` of shape ``(S,)``.
    """
    has_T = _needs_T(fit, T_m)
    pred = predict(fit, _points(fit, N, D, T_m, columns), kind=kind, seed=seed)
    where = f"N = {N:.3g}, D = {D:.3g}" + (f", T_m = {T_m:g}" if has_T else "")
    where += columns_text(columns)
    what = "the law's value" if kind == "epistemic" else "a new observed loss"
    return Derived("loss_at", pred.draws[:, 0],
                   f"Posterior draws of {what} at {where} (new levels drawn from the "
                   "population).")


def _grid_losses(fit: Fit, theta: Mapping[str, Any], N: np.ndarray, D: np.ndarray,
                 T_m: float | None, rows: slice) -> np.ndarray:
    """The law at ``(N, D)`` (each ``(G,)``) for the draws ``rows``: ``(S_block, G)``."""
    law = fit.spec.law_obj
    cov = {C.N: N[None, :], C.D: D[None, :]}
    if T_m is not None:
        cov[C.T_M] = np.full((1, len(N)), float(T_m))
    if C.HORIZON in law.covariates:  # each run trained to its D
        cov[C.HORIZON] = cov[C.D]
    block = {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in theta.items()}
    return np.asarray(law(np, cov, block, fit.spec.reference), dtype=float)


def compute_optimal(fit: Fit, budget: float, *, T_m: float | None = None,
                    cost_per_token: CostPerToken | None = None,
                    grid: Sequence[float] | np.ndarray | None = None,
                    seed: int = 0) -> Derived:
    r"""Compute-optimal model size and tokens at a compute budget, per posterior draw.

    For each draw, the law's loss :math:`L(N, D = C / k(N, T_m), T_m)` is minimised over
    ``N`` on a log grid, where :math:`k` is the training cost per token.  The loss is that of
    a *typical* curve: group effects by ``N`` (and by run) sit at their population value,
    zero on the link scale, since ``N`` varies continuously; effects by ``T_m`` use the
    fitted level, or a population draw for a new ``T_m``.

    Parameters
    ----------
    fit : Fit
    budget : float
        Training compute ``C`` in FLOPs.
    T_m : float, optional
        Recurrent depth (required by laws with a ``T_m`` term).
    cost_per_token : callable, optional
        ``(N, T_m) -> FLOPs per token``; default :func:`default_cost_per_token`
        (``6 N T_m``, or ``6 N`` without ``T_m``).
    grid : array of float, optional
        Model sizes searched (default :data:`DEFAULT_N_GRID`, 1M to 10T, log spaced).
    seed : int
        Seed of the draws of a new ``T_m`` level.

    Returns
    -------
    Derived
        ``draws`` with keys ``N_opt``, ``D_opt`` (``= C / cost_per_token(N_opt, T_m)``) and
        ``loss_opt``, each ``(S,)``; ``columns["at_grid_edge"]`` gives the share of draws
        whose optimum is the first or last grid point (widen the grid when it is not 0).
    """
    _needs_T(fit, T_m)
    _needs_N_only(fit, "compute_optimal")
    if not (np.isfinite(budget) and budget > 0):
        raise ArgumentError(f"budget must be a positive number of FLOPs, got {budget!r}")
    cost = cost_per_token or default_cost_per_token
    N = np.sort(np.asarray(DEFAULT_N_GRID if grid is None else grid, dtype=float))
    if N.ndim != 1 or len(N) < 2 or not (N > 0).all():
        raise ArgumentError("grid must hold at least two positive model sizes")
    D = budget / np.asarray(cost(N, T_m), dtype=float)
    theta = typical_parameters(fit, T_m, np.random.default_rng(seed))
    best = np.empty(fit.n_draws, dtype=int)
    loss = np.empty(fit.n_draws)
    for start in range(0, fit.n_draws, _BLOCK):
        rows = slice(start, min(start + _BLOCK, fit.n_draws))
        mu = _grid_losses(fit, theta, N, D, T_m, rows)
        best[rows] = np.argmin(mu, axis=1)
        loss[rows] = mu[np.arange(mu.shape[0]), best[rows]]
    edge = float(np.mean((best == 0) | (best == len(N) - 1)))
    draws = {"N_opt": N[best], "D_opt": budget / np.asarray(cost(N[best], T_m), dtype=float),
             "loss_opt": loss}
    where = f" at T_m = {T_m:g}" if T_m is not None else ""
    return Derived("compute_optimal", draws,
                   f"Per posterior draw, the model size N_opt and tokens D_opt that minimise "
                   f"a typical curve's loss at a budget of {budget:.3g} FLOPs{where}, and that "
                   "minimum loss_opt.",
                   {"at_grid_edge": dict.fromkeys(draws, edge)})


def _best_of(name: str, fit: Fit, table: pd.DataFrame, candidates: Sequence[float],
             kind: str, seed: int, where: str) -> Derived:
    """Loss draws per candidate row of ``table`` and the probability each is lowest."""
    rng = np.random.default_rng(seed)
    if kind == "predictive":
        draws = predict(fit, table, kind=kind, seed=seed).draws
    elif kind == "epistemic":
        draws = mean_draws(fit, table, rng)
    else:
        raise ArgumentError(f"kind must be 'predictive' or 'epistemic', got {kind!r}")
    return _ranked(name, draws, candidates,
                   f"Loss per candidate depth T_m {where}, and the posterior probability "
                   "p_best that each gives the lowest loss (new levels drawn from the "
                   "population).")


def _ranked(name: str, draws: np.ndarray, candidates: Sequence[float],
            description: str) -> Derived:
    """``draws`` (draws x candidates) keyed by depth, with the probability each is lowest."""
    keys = [f"T_m={t:g}" for t in candidates]
    winner = np.argmin(draws, axis=1)
    p_best = {k: float(np.mean(winner == i)) for i, k in enumerate(keys)}
    return Derived(name, {k: draws[:, i] for i, k in enumerate(keys)}, description,
                   {"p_best": p_best})


def _candidates(fit: Fit, candidates: Sequence[float]) -> list[float]:
    if not takes_T_m(fit.spec.law_obj):
        raise SpecError(f"law {fit.spec.law!r} has no T_m term")
    values = [float(t) for t in candidates]
    if len(values) < 2 or len(set(values)) != len(values) or min(values) <= 0:
        raise ArgumentError(f"candidates must be two or more distinct positive depths, got "
                            f"{list(candidates)}")
    return values


def best_T_m(fit: Fit, N: float, D: float, candidates: Sequence[float] = (1, 2, 4, 8, 16), *,
             columns: Mapping[str, Any] | None = None, kind: str = "epistemic",
             seed: int = 0, q: Mapping[float, Sequence[float]] | str | None = None
             ) -> Derived:
    """Which recurrent depth gives the lowest loss at ``(N, D)``, per posterior draw.

    Parameters
    ----------
    fit : Fit
        A fit of a law with a ``T_m`` term.
    N, D : float
        Model size and training tokens.
    candidates : sequence of float
        Depths compared; an unfitted depth draws its effects from the population.
    columns : mapping, optional
        Further columns of the points, as in :func:`loss_at`.
    kind : {"epistemic", "predictive"}
        Compare the law's values (default) or new observed losses.
    seed : int
        Seed of the draws of new levels (and noise).
    q : mapping or "optimal", optional
        A step law's exit distribution at each candidate depth (``{4: [0.1, 0.2, 0.3, 0.4],
        ...}``): the total loss compared is under it.  Required by ``looped_steps`` (its
        q is data); ``looped_steps_latent`` uses its latent ``q`` by default.  ``"optimal"``
        compares each depth under its own best exit distribution, per draw
        (:func:`best_exit_distribution`; the law's values only, ``kind="epistemic"``).

    Returns
    -------
    Derived
        ``draws`` keyed ``"T_m=4"`` etc. and ``columns["p_best"]``, the probabilities
        (summing to 1) that each candidate has the lowest loss.
    """
    values = _candidates(fit, candidates)
    if _optimal(q):
        return _best_optimal("best_T_m", fit, N, [float(D)] * len(values), values, columns,
                             kind, seed, f"at N = {N:.3g}, D = {D:.3g}")
    columns = _with_q(fit, values, columns, q)
    table = _points(fit, np.full(len(values), float(N)), float(D), values, columns)
    return _best_of("best_T_m", fit, table, values, kind, seed,
                    f"at N = {N:.3g}, D = {D:.3g}{columns_text(columns)}")


def _with_q(fit: Fit, values: Sequence[float], columns: Mapping[str, Any] | None,
            q: Mapping[float, Sequence[float]] | None) -> Mapping[str, Any] | None:
    """``columns`` with each candidate depth's exit columns under ``q`` (a step law's)."""
    if q is None:
        return columns
    if fit.spec.law == "looped_steps_latent":
        raise ArgumentError("law 'looped_steps_latent' compares depths under its latent "
                            "exit distribution; q is for 'looped_steps' (or compare "
                            "bayeslaw.total_loss(..., q=...) draws)")
    rows = [exit_columns(t, q=_q_at(q, t)) for t in values]
    return {**(columns or {}), **pd.DataFrame(rows).to_dict("list")}


def _q_at(q: Mapping[float, Sequence[float]], T_m: float) -> Sequence[float]:
    """The exit distribution given for depth ``T_m``."""
    for key, value in q.items():
        if float(key) == T_m:
            return value
    raise ArgumentError(f"q gives no exit distribution for T_m = {T_m:g}; it has "
                        f"{sorted(float(k) for k in q)}")


def step_gain(fit: Fit, N: float, D: float, T_m: float, T: int, *, seed: int = 0) -> Derived:
    """What one more recurrent step buys: ``L_step(T) - L_step(T + 1)`` at ``(N, D, T_m)``.

    A step law's (``looped_steps``, ``looped_steps_latent``) epistemic draws: positive where
    exiting one step later lowers the loss.  ``T + 1`` must be at most ``T_m``.
    """
    _needs_step_law(fit, "step_gain", "it compares a step law's exit steps")
    rows = pd.DataFrame([exit_columns(T_m, T=T), exit_columns(T_m, T=T + 1)])
    table = _points(fit, np.full(2, float(N)), float(D), float(T_m), rows.to_dict("list"))
    draws = mean_draws(fit, table, np.random.default_rng(seed))
    return Derived("step_gain", draws[:, 0] - draws[:, 1],
                   f"Loss of exiting at step {T} minus at step {T + 1} at N = {N:.3g}, "
                   f"D = {D:.3g}, T_m = {T_m:g} (the law's value; new levels drawn from the "
                   "population).")


def total_loss(fit: Fit, N: float, D: float, T_m: float, *, q: Sequence[float] | None = None,
               seed: int = 0) -> Derived:
    """A step law's total loss at ``(N, D, T_m)``, a new depth or a new exit distribution.

    ``sum_T q(T) L_step(T) - beta_H H(q)`` per posterior draw (epistemic), from the draws of
    each step's loss, under ``q`` (one probability per step up to ``T_m``) or, for
    ``looped_steps_latent`` without ``q``, its latent exit distribution.
    """
    _needs_step_law(fit, "total_loss", "use loss_at")
    latent = fit.spec.law == "looped_steps_latent"
    cols = exit_columns(T_m, q=q, latent=latent)  # checks q (or that the law has a latent one)
    rng = np.random.default_rng(seed)
    if q is None:  # the latent law's own total row
        draws = mean_draws(fit, _points(fit, float(N), float(D), float(T_m), cols), rng)[:, 0]
    else:
        weights = np.array([cols[c] for c in C.EXIT_WEIGHTS[:int(T_m)]])
        draws = (_step_losses(fit, N, D, T_m, rng) @ weights
                 - _entropy_weight_draws(fit) * cols[C.EXIT_ENTROPY])
    under = "the given q" if q is not None else "the latent exit distribution"
    return Derived("total_loss", draws,
                   f"Total loss at N = {N:.3g}, D = {D:.3g}, T_m = {T_m:g} under {under} "
                   "(the law's value; new levels drawn from the population).")


def _needs_step_law(fit: Fit, what: str, instead: str) -> None:
    if fit.spec.law not in STEP_LAWS:
        raise SpecError(f"{what} needs a step law ({', '.join(sorted(STEP_LAWS))}); the "
                        f"fit's is {fit.spec.law!r}: {instead}")


def _step_losses(fit: Fit, N: float, D: float, T_m: float,
                 rng: np.random.Generator) -> np.ndarray:
    """Each draw's loss at every exit step ``1..T_m`` at ``(N, D, T_m)``: ``(S, T_m)``."""
    return _step_losses_at(fit, N, [D], [T_m], rng)[0]


def _step_losses_at(fit: Fit, N: float, D: Sequence[float], T_m: Sequence[float],
                    rng: np.random.Generator,
                    columns: Mapping[str, Any] | None = None) -> list[np.ndarray]:
    """:func:`_step_losses` at several ``(D, T_m)``, from one table.

    A level the fit has not seen (a new N, or T_m) gets one draw shared by every depth, as in
    :func:`_best_of`; each depth is one new run (its steps share a run effect, the depths do
    not).
    """
    parts = []
    for d, t in zip(D, T_m, strict=True):
        exit_columns(t, T=1)  # checks T_m
        rows = pd.DataFrame([exit_columns(t, T=k) for k in range(1, int(t) + 1)])
        part = _points(fit, np.full(int(t), float(N)), float(d), float(t),
                       {**(columns or {}), **rows.to_dict("list")})
        parts.append(part.assign(**{C.RUN: f"new (T_m = {float(t):g})"}))
    draws = mean_draws(fit, pd.concat(parts, ignore_index=True), rng)
    return np.split(draws, np.cumsum([len(p) for p in parts])[:-1], axis=1)


def _entropy_weight_draws(fit: Fit) -> np.ndarray | float:
    """``beta_H`` per draw (a free parameter) or its fixed value."""
    if "beta_H" in fit.spec.free_params:
        return fit.draws("beta_H")
    return float(fit.spec.fixed["beta_H"])


def best_exit_distribution(fit: Fit, N: float, D: float, T_m: float, *,
                           seed: int = 0) -> Derived:
    """The exit distribution with the lowest total loss at ``(N, D, T_m)``, per draw.

    A step law's total ``sum_T q(T) L_step(T) - beta_H H(q)`` is lowest at
    ``q(T) ~ exp(-L_step(T) / beta_H)`` (``bayeslaw.data.steps.optimal_exit``): with no
    entropy weight, all mass on the step of lowest loss.  Per posterior draw (epistemic; a
    depth the fit has not seen draws its effects from the population), from the law's step
    losses and ``beta_H``.

    Under Ouro's step law (``c, gamma > 0``, ``t3 >= 0``) the loss falls with every step, so
    the optimum always puts the most mass on ``T = T_m`` (all of it at ``beta_H = 0``); the
    entropy weight sets how much it spreads to earlier steps.  What the draws then answer is
    how much: ``q(T=T_m)``, the mean exit step, and the total under that distribution, which
    ``best_T_m_at_budget(..., q="optimal")`` compares across depths.

    Returns
    -------
    Derived
        ``draws`` keyed ``"q(T=1)"`` ... ``"q(T=T_m)"`` (the optimal exit probabilities),
        ``"mean_T"`` (its mean exit step) and ``"total_opt"`` (the total loss under it);
        ``columns["p_mode"]`` gives, for each step, the posterior probability that it is the
        optimal distribution's most likely exit (for ``beta_H = 0``: that it has the lowest
        loss).
    """
    _needs_step_law(fit, "best_exit_distribution", "it chooses a step law's exit distribution")
    steps = _step_losses(fit, N, D, T_m, np.random.default_rng(seed))
    q, loss = optimal_exit(steps, _entropy_weight_draws(fit))
    keys = [f"q(T={k})" for k in range(1, int(T_m) + 1)]
    mode = np.argmax(q, axis=1)
    draws = {**{k: q[:, i] for i, k in enumerate(keys)},
             "mean_T": q @ np.arange(1.0, int(T_m) + 1), "total_opt": loss}
    return Derived("best_exit_distribution", draws,
                   f"Per posterior draw, the exit distribution q over steps 1..{int(T_m)} with "
                   f"the lowest total loss at N = {N:.3g}, D = {D:.3g}, T_m = {T_m:g} "
                   "(q(T) proportional to exp(-L_step(T) / beta_H)), its mean exit step "
                   "mean_T and that total total_opt; p_mode: the probability that each step "
                   "is its most likely exit.",
                   {"p_mode": {k: float(np.mean(mode == i)) for i, k in enumerate(keys)}})


def _optimal(q: Any) -> bool:
    if isinstance(q, str):
        if q != "optimal":
            raise ArgumentError(f"q must be a mapping of depth to exit distribution or "
                                f"'optimal', got {q!r}")
        return True
    return False


def _best_optimal(name: str, fit: Fit, N: float, D: Sequence[float],
                  values: Sequence[float], columns: Mapping[str, Any] | None, kind: str,
                  seed: int, where: str) -> Derived:
    """Each candidate depth's total loss under its own optimal exit distribution, ranked."""
    _needs_step_law(fit, f"{name}(q='optimal')", "q='optimal' chooses a step law's exits")
    given = EXIT_COLUMNS.intersection(columns or {})
    if given:
        raise ArgumentError(f"q='optimal' sets each depth's exit columns itself; columns must "
                            f"not give {sorted(given)}")
    if kind != "epistemic":
        raise ArgumentError("q='optimal' compares the law's values (kind='epistemic'): the "
                            "optimal exit distribution is a property of the law, not of noise")
    beta_H = _entropy_weight_draws(fit)
    steps = _step_losses_at(fit, N, D, values, np.random.default_rng(seed), columns)
    draws = np.stack([optimal_exit(part, beta_H)[1] for part in steps], axis=1)
    return _ranked(name, draws, values,
                   f"Total loss per candidate depth T_m {where}, each under its own optimal "
                   "exit distribution (bayeslaw.best_exit_distribution), and the posterior "
                   "probability p_best that each gives the lowest (new levels drawn from the "
                   "population).")


def best_T_m_at_budget(fit: Fit, N: float, budget: float,
                       candidates: Sequence[float] = (1, 2, 4, 8, 16), *,
                       cost_per_token: CostPerToken | None = None,
                       columns: Mapping[str, Any] | None = None, kind: str = "epistemic",
                       seed: int = 0,
                       q: Mapping[float, Sequence[float]] | str | None = None) -> Derived:
    """As :func:`best_T_m` at a fixed compute budget: ``D = budget / cost(N, T_m)``.

    A deeper loop costs more per token, so at a fixed budget it sees fewer tokens
    (``D = C / (6 N T_m)`` by default).  ``q`` as in :func:`best_T_m`: a step law's exit
    distribution at each candidate depth (required by ``looped_steps``), or ``"optimal"``:
    each depth at the budget under its own best exit distribution.
    """
    values = _candidates(fit, candidates)
    _needs_N_only(fit, "best_T_m_at_budget", exits=True)
    cost = cost_per_token or default_cost_per_token
    D = [float(budget / np.asarray(cost(np.array([float(N)]), t), float)[0]) for t in values]
    if _optimal(q):
        return _best_optimal("best_T_m_at_budget", fit, N, D, values, columns, kind, seed,
                             f"at N = {N:.3g} and a budget of {budget:.3g} FLOPs")
    columns = _with_q(fit, values, columns, q)
    table = _points(fit, np.full(len(values), float(N)), D, values, columns)
    return _best_of("best_T_m_at_budget", fit, table, values, kind, seed,
                    f"at N = {N:.3g}{columns_text(columns)} and a budget of {budget:.3g} FLOPs")
