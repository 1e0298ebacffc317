"""The report sections of one fit: what it saw, assumed, found and forecasts.

:func:`fit_sections` gives, in order: the data, the priors and hierarchy, the sampling
diagnostics, the coefficients, the fitted curves (the grid figure and its plateau zoom),
the residuals, the group effects and the derived quantities (forecasts at the largest
model, its compute-optimal allocation, its best depth; for a table of curves without N, each
curve's forecast).  :mod:`bayeslaw.report.build` assembles
them into a document with :mod:`bayeslaw.report.document`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.schedules import TERM_COLUMNS
from ..model.plan import groups_of, level_dim
from ..posterior import derived
from ..posterior.noise import residuals
from ..posterior.prediction import predict
from .document import Block, Image, Section, figure_png, slug
from .folders import coefficients_sentence, diagnostics_table, sampler_sentence

if TYPE_CHECKING:  # pragma: no cover
    from ..posterior.result import Fit


def _g(v: float) -> str:
    return f"{v:.3g}"


def _interval(values: np.ndarray, prob: float = 0.9) -> str:
    """``median [lower, upper]`` of draws, three significant digits."""
    lo, med, hi = np.quantile(values, [(1 - prob) / 2, 0.5, (1 + prob) / 2])
    return f"{_g(med)} [{_g(lo)}, {_g(hi)}]"


def _prior_text(prior: Any) -> str:
    if isinstance(prior, float):
        return f"fixed sd {prior:g}"
    return f"{prior.dist}({', '.join(f'{k}={v:g}' for k, v in prior.params.items())})"


def _data_section(fit: Fit, title: str, level: int) -> Section:
    s = fit.data.summary()
    rows = {"runs": str(s["runs"]), "points": str(s["points"])}
    if "N_levels" in s:  # a table of curves has no model sizes
        rows["N levels"] = str(s["N_levels"])
    for col in (c for c in (C.N, C.D, C.LOSS) if f"{c}_range" in s):
        lo, hi = s[f"{col}_range"]
        rows[f"{col} range"] = f"{_g(lo)} - {_g(hi)}"
    if "T_m_levels" in s:
        rows["T_m levels"] = ", ".join(f"{t:g}" for t in s["T_m_levels"])
    rows["source"] = f"{fit.data.source} (sha256 {fit.data.sha256[:12]})"
    if fit.data.notes:
        rows["transformations"] = "; ".join(fit.data.notes)
    table = pd.DataFrame({"value": rows}).rename_axis("quantity")
    return Section(title, (Block(
        f"The fit saw {s['points']} observed losses on {s['runs']} training curves; ranges "
        "are the smallest and largest value over all points.", table),), level)


def _spec_section(fit: Fit, title: str, level: int) -> Section:
    spec, law = fit.spec, fit.spec.law_obj
    priors = pd.DataFrame({
        "description": [p.description for p in law.params],
        "unit": [p.unit for p in law.params],
        "prior": [f"fixed at {spec.fixed[p.name]:g}" if p.name in spec.fixed
                  else _prior_text(spec.priors[p.name]) for p in law.params],
    }, index=pd.Index(law.param_names, name="parameter"))
    blocks = [
        Block(f"Law `{law.name}`, written with centered coefficients: "
              f"{coefficients_sentence(fit)}", code=law.formula),
        Block("Priors of the law's parameters (on the centered scale); fixed parameters are "
              "not sampled.", priors),
    ]
    post = fit.idata.posterior
    if spec.effects:
        effects = pd.DataFrame({
            "parameter": [e.param for e in spec.effects],
            "varies by": [e.group for e in spec.effects],
            "levels": [int(post[e.name].sizes[level_dim(e.group)]) if e.name in post else 0
                       for e in spec.effects],
            "pooling": [e.pooling for e in spec.effects],
            "sd prior": [_prior_text(e.scale) for e in spec.effects],
        }, index=pd.Index([e.name for e in spec.effects], name="effect"))
        blocks.append(Block("Group effects: each parameter varies by the levels of a column, "
                            "added on its link scale (log for positive parameters, logit for "
                            "shares) with a learned spread (partial pooling) or, where the "
                            "pooling column says none, a fixed one.", effects))
    else:
        blocks.append(Block("The spec has no group effects: every curve shares one set of "
                            "parameters (complete pooling)."))
    lk = spec.likelihood
    rows = {"family": lk.family, "noise scale sigma": _prior_text(lk.sigma),
            "noise varies by": lk.sigma_by or "none"}
    labels = {"sigma_spread": "spread of log sigma", "nu": "degrees of freedom nu",
              "outlier_share": "share of outlying points",
              "outlier_scale": "outliers' scale over the bulk's, minus 1",
              "sigma_decay": "noise decay with D (exponent)",
              "ar1": "within-run AR(1) correlation"}
    rows.update({label: _prior_text(getattr(lk, key)) for key, label in labels.items()
                 if getattr(lk, key) is not None})
    if lk.walk is not None:
        rows["random-walk drift per e-fold of tokens"] = _prior_text(lk.walk)
        rows["random walk's spread at the reference D"] = _prior_text(lk.walk_start)
        rows["random walk's Hurst exponent"] = (_prior_text(lk.walk_hurst)
                                                if lk.walk_hurst is not None else "1/2 (fixed)")
    if lk.sigma_relative:
        rows["noise scale relative to"] = "the law's value (sigma is a fraction of the loss)"
    blocks.append(Block("Observation model: how an observed loss scatters around the law.",
                        pd.DataFrame({"value": rows}).rename_axis("likelihood")))
    return Section(title, tuple(blocks), level)


def _diagnostics_section(fit: Fit, title: str, level: int) -> Section:
    d = fit.diagnostics
    verdict = (f"APPROXIMATE: {d.failures[0]}." if fit.approximate
               else "All convergence checks passed." if d.ok
               else "Sampling did NOT converge: " + "; ".join(d.failures) + ".")
    blocks = [Block(
        f"{verdict} Each row is a check's worst value over every posterior variable, against "
        f"its threshold. {sampler_sentence(fit)}", diagnostics_table(fit))]
    if d.diagnosis is not None:
        blocks.append(Block("Why, and what to change (the worst elements, where the divergences "
                            "sit, the strongest correlations, the remedies with their spec "
                            "keys):", code=str(d.diagnosis)))
    return Section(title, tuple(blocks), level)


def _coefficient_section(fit: Fit, title: str, level: int) -> Section:
    table = fit.summary()
    pct = f"{C.TABLE_PROB * 100:g}%"
    return Section(title, (Block(
        f"Posterior mean, sd and central {pct} interval of each coefficient, with R-hat and "
        f"effective sample sizes; {coefficients_sentence(fit)}", table),), level)


def _curves_section(fit: Fit, title: str, level: int, tag: str) -> Section:
    from ..plots.figures import plot_final_losses
    from ..plots.sweep import grid_zoom, plot_grid, zoom_options

    if C.D not in fit.data.frame.columns:  # final losses only (e.g. ParScale's N x P grid)
        return Section(title, (Block(
            "Every observed final loss (dots) beside the posterior median (dashed) and the 50% "
            "and 90% predictive bands of a new observation, against model size.",
            image=Image(f"{tag}final", figure_png(plot_final_losses(fit)),
                        "final losses with credible bands")),), level)

    curves = C.N not in fit.data.frame.columns  # one panel per curve, none per size
    where = ("one panel per curve, each continued past its data to twice its own largest D"
             if curves else "continued past the data to twice the largest D")
    blocks = [Block("Every observed curve (Real, black) beside the posterior median (Pred, "
                    f"dashed) and the 50% and 90% predictive bands of a new observation, {where} "
                    "(a dotted line marks the end of the data)"
                    + ("." if curves else ", with one more column forecasting the sweep's "
                       "next model size."),
                    image=Image(f"{tag}grid", figure_png(full := plot_grid(fit), tight=False),
                                "grid of fitted curves with credible bands"))]
    zoom = grid_zoom(fit.data.frame)
    if zoom is not None:
        blocks.append(Block("The same grid zoomed on the second half (in log D) of "
                            + ("each curve, in its own panel's range, "
                               if curves else "every curve, ")
                            + "where the bands are visible"
                            + ("." if curves else " (without the new size's column)."),
                            image=Image(f"{tag}grid-zoom",
                                        figure_png(plot_grid(
                                            fit, **zoom_options(fit, zoom, {}),
                                            prediction=full.bayeslaw_prediction), tight=False),
                                        "grid zoomed on the plateau")))
    return Section(title, tuple(blocks), level)


def _residual_section(fit: Fit, title: str, level: int, tag: str) -> Section:
    from ..plots.figures import plot_residuals

    frame = fit.data.frame
    by = next((c for c in (C.T_M, C.P, C.N) if c in frame.columns), C.RUN)
    against = "tokens" if C.D in frame.columns else "model size"
    resid = pd.Series(residuals(fit), index=frame.index)
    table = resid.groupby(frame[by]).agg(
        points="size", mean="mean", sd="std", max_abs=lambda r: float(np.abs(r).max()))
    table.index = table.index.map(lambda v: v if isinstance(v, str) else f"{v:g}")
    return Section(title, (
        Block(f"Observed loss minus the posterior median of the law, against {against}, "
              f"one colour per {by}: a good fit scatters around zero with no trend.",
              image=Image(f"{tag}residuals", figure_png(plot_residuals(fit, color_by=by)),
                          f"residuals against {against}")),
        Block(f"Residuals per {by if by == C.RUN else by + ' level'} (nats): a mean far from "
              "zero is a systematic misfit, the sd is the typical error of one point.", table),
    ), level)


def _effects_section(fit: Fit, title: str, level: int, tag: str) -> Section:
    from ..plots.figures import plot_group_effects

    if not fit.spec.effects:
        return Section(title, (Block("No group effects: nothing is pooled."),), level)
    return Section(title, (Block(
        "Each level's effect (posterior median and 90% interval) against the population value "
        "(zero, vertical line); the shaded band is where a new level's effect falls with 90% "
        "probability, so levels inside it are shrunk towards the population.",
        image=Image(f"{tag}effects", figure_png(plot_group_effects(fit)),
                    "forest plot of group effects")),), level)


def _config_columns(fit: Fit) -> list[str]:
    """Columns a forecast point needs besides ``N`` and ``D``.

    The law's other covariates (``T_m``, ``P``, ``N_once``, ...) and the group columns of
    the spec's effects and noise scale (:func:`bayeslaw.model.plan.groups_of`) other than
    ``run``.  Not a run's ``horizon``: a forecast here is a run trained to its ``D``.
    """
    cols = [c for c in fit.spec.law_obj.covariates if c not in (C.N, C.D, C.HORIZON)]
    cols += [g for g in groups_of(fit.spec) if g not in (C.RUN, C.N, C.D)]
    return list(dict.fromkeys(cols))


def _forecast_table(fit: Fit, points: pd.DataFrame, others: list[str], label: str,
                    seed: int) -> pd.DataFrame:
    """Epistemic median and 90% interval at ``points``, indexed by the ``others`` columns."""
    pred = predict(fit, points, kind="epistemic", probs=(0.9,), seed=seed).table
    table = pred[[*others, "median", "lower_90", "upper_90"]].copy()
    for col in others:  # index labels as the report prints numbers: 4, not 4.0
        if pd.api.types.is_numeric_dtype(table[col]):
            table[col] = [f"{v:g}" for v in table[col]]
    return table.set_index(others) if others else table.rename(index={0: label})


def _configurations(frame: pd.DataFrame, others: list[str]) -> pd.DataFrame:
    """The distinct rows of ``frame``'s ``others`` columns, sorted (one empty row if none)."""
    return (frame[others].drop_duplicates().sort_values(others) if others
            else pd.DataFrame(index=[0]))


def _largest_model_block(fit: Fit, biggest: pd.DataFrame, others: list[str], n_max: float,
                         d_max: float, seed: int) -> Block:
    """Forecast at the largest N, in each of its configurations, trained on ten times D."""
    points = derived.runs_end_at_D(
        fit.spec.law_obj, _configurations(biggest, others)
        .assign(**{C.N: n_max, C.D: 10 * d_max}).reset_index(drop=True))
    at = _forecast_table(fit, points, others, "-", seed)
    return Block(f"Forecast of the law's value (epistemic: no observation noise) at the "
                 f"largest model size N = {_g(n_max)}, for each configuration it was run "
                 f"with, trained on ten times the most tokens seen, D = {_g(10 * d_max)}: "
                 "posterior median and 90% interval.", at)


def _no_allocation_block(fit: Fit, extra: list[str]) -> Block:
    """Why a law whose size is not one number N has no compute-optimal allocation."""
    return Block(f"No compute-optimal allocation: law {fit.spec.law_obj.name!r} needs "
                 f"{', '.join(extra)} besides N, D and T_m, so neither its model "
                 "size nor its cost per token is one number N to search over. "
                 "Forecast chosen configurations with `bayeslaw.predict`.")


def _allocation_block(fit: Fit, budget: float | None, seed: int) -> Block:
    """The compute-optimal N and D per fitted depth, as median [90% interval].

    At ``budget`` FLOPs, by default ten times the largest run's compute.
    """
    has_T = C.T_M in fit.spec.law_obj.covariates
    frame = fit.data.frame
    depths = sorted(float(t) for t in frame[C.T_M].unique()) if has_T else [None]
    largest = derived.largest_run_compute(fit)
    why = "" if budget else " (ten times the largest run)"
    budget = budget or 10 * largest
    cost = "6 N T_m" if has_T else "6 N"

    def key(t: float | None) -> str:
        return "-" if t is None else f"{t:g}"

    opt = {key(t): derived.compute_optimal(fit, budget, T_m=t, seed=seed) for t in depths}
    opt_table = pd.DataFrame(
        {k: {q: _interval(v) for q, v in r.as_dict().items()}
         | {"at_grid_edge": f"{r.columns['at_grid_edge']['N_opt']:.0%}"}
         for k, r in opt.items()}).T.rename_axis(C.T_M)
    return Block(
        f"Compute-optimal allocation at a budget of C = {_g(budget)} FLOPs{why}, at a "
        f"cost of {cost} FLOPs per token: per posterior draw, the N and "
        f"D = C / ({cost}) that minimise a typical curve's loss (group effects other "
        "than T_m's at their population value), as median [90% interval]; "
        "`at_grid_edge` is the share of draws whose optimum hit the search grid's end.",
        opt_table)


def _depth_blocks(fit: Fit, biggest: pd.DataFrame, others: list[str], n_max: float,
                  d_max: float, at_budget: bool, seed: int) -> list[Block]:
    """Which depth T_m is best for the largest model, at its (N, D).

    With ``at_budget`` also at the largest run's compute (a deeper loop sees fewer tokens).
    """
    # the largest model's other columns, as in its longest run
    fixed = {c: biggest[c].iloc[-1] for c in others if c != C.T_M}
    given = derived.columns_text(fixed)
    candidates = sorted({1.0, 2.0, 4.0, 8.0, 16.0}
                        | {float(t) for t in fit.data.frame[C.T_M].unique()})
    best = derived.best_T_m(fit, n_max, d_max, candidates, columns=fixed, seed=seed)
    blocks = [Block(f"Which depth T_m gives the lowest loss at N = {_g(n_max)}, "
                    f"D = {_g(d_max)}{given}: the loss per depth and the posterior "
                    "probability `p_best` that it is the lowest (unfitted depths draw "
                    "their effects from the population).",
                    best.summary().rename_axis("candidate"))]
    if at_budget:
        largest = derived.largest_run_compute(fit)
        same = derived.best_T_m_at_budget(fit, n_max, largest, candidates, columns=fixed,
                                          seed=seed)
        blocks.append(Block(f"The same at N = {_g(n_max)} and the largest run's compute, "
                            f"{_g(largest)} FLOPs: a deeper loop costs more per token, so "
                            "it sees fewer tokens, D = C / (6 N T_m).",
                            same.summary().rename_axis("candidate")))
    return blocks


def _derived_section(fit: Fit, title: str, level: int, budget: float | None,
                     seed: int) -> Section:
    """Forecasts at the largest model, its compute-optimal allocation and its best depth."""
    frame, law = fit.data.frame, fit.spec.law_obj
    if fit.data.schedules and any(c in TERM_COLUMNS for c in law.covariates):
        return _derived_with_schedule(fit, title, level, seed)
    if C.D not in law.covariates:
        return _derived_without_D(fit, title, level, seed)
    if C.N not in frame.columns:
        return _derived_of_curves(fit, title, level, seed)
    n_max, d_max = float(frame[C.N].max()), float(frame[C.D].max())
    # every configuration (depth, streams, group level, ...) the largest model was run with
    others = _config_columns(fit)
    biggest = frame.loc[frame[C.N] == n_max].sort_values(C.D)
    blocks = [_largest_model_block(fit, biggest, others, n_max, d_max, seed)]
    extra = derived.covariates_beyond_N(fit)
    blocks.append(_no_allocation_block(fit, extra) if extra
                  else _allocation_block(fit, budget, seed))
    if C.T_M in law.covariates:
        blocks += _depth_blocks(fit, biggest, others, n_max, d_max, not extra, seed)
    return Section(title, tuple(blocks), level)


def _derived_with_schedule(fit: Fit, title: str, level: int, seed: int) -> Section:
    """Forecasts of the largest model's runs at the end of their schedules (no compute split)."""
    frame = fit.data.frame
    n_max = float(frame[C.N].max())
    last = frame[frame[C.N] == n_max].groupby(C.RUN, sort=False).last().reset_index()
    ends = {run: s.known_to for run, s in (fit.data.schedules or {}).items()}
    points = last.assign(**{C.D: last[C.RUN].map(ends).to_numpy(float)})
    table = _forecast_table(fit, points.drop(columns=[C.LOSS]), [C.RUN], "-", seed)
    return Section(title, (Block(
        f"Forecast of the law's value (epistemic) at the end of each schedule of the largest "
        f"model size, N = {_g(n_max)}: posterior median and 90% interval. A schedule-aware "
        "law's loss depends on the whole learning-rate schedule, not on N and D alone, so "
        "there is no compute-optimal split of a budget between N and D.", table),), level)


def _derived_without_D(fit: Fit, title: str, level: int, seed: int) -> Section:
    """Forecasts at twice the largest N for a law without a data term (no compute split)."""
    frame = fit.data.frame
    others = _config_columns(fit)
    n_new = 2 * float(frame[C.N].max())
    points = _configurations(frame, others).assign(**{C.N: n_new}).reset_index(drop=True)
    table = _forecast_table(fit, points, others, f"N = {n_new:g}", seed)
    return Section(title, (Block(
        f"Forecast of the law's value (epistemic) at twice the largest model size, "
        f"N = {_g(n_new)}, per level of {', '.join(others) or 'the data'}: posterior median "
        "and 90% interval. The law has no data term, so there is no compute-optimal split of "
        "a budget between N and D.", table),), level)


def _derived_of_curves(fit: Fit, title: str, level: int, seed: int) -> Section:
    """Each curve's forecast at ten times its largest D (a table without model sizes)."""
    runs = fit.data.run_table().drop(columns=[C.LOSS]).reset_index()
    largest = fit.data.frame.groupby(C.RUN, sort=False)[C.D].max()
    points = runs.assign(**{C.D: 10.0 * runs[C.RUN].map(largest).to_numpy(float)})
    table = _forecast_table(fit, points, [C.RUN], "-", seed)
    table.insert(0, C.D, [f"{d:g}" for d in points[C.D]])
    return Section(title, (Block(
        "Forecast of the law's value (epistemic: no observation noise) of each curve trained "
        "on ten times its largest D: posterior median and 90% interval. The curves have no "
        "model size, so there is no compute-optimal split of a budget between N and D.",
        table),), level)


def fit_sections(fit: Fit, *, name: str | None = None, level: int = 2,
                 budget: float | None = None, seed: int = 0) -> list[Section]:
    """The report sections of one fit (titles prefixed with ``name`` when given).

    Parameters
    ----------
    fit : Fit
    name : str, optional
        The fit's name in a report of several fits (prefixes titles and figure files).
    level : int
        Heading level of the sections (2, or 3 under a per-model heading).
    budget : float, optional
        Compute budget (FLOPs) of the compute-optimal table; default ten times the largest
        run's compute (:func:`bayeslaw.posterior.derived.largest_run_compute`).
    seed : int
        Seed of every posterior-predictive draw.
    """
    tag = f"report-{slug(name)}-" if name else "report-"
    pre = f"{name}: " if name else ""
    if fit.approximate:  # every section's title says so
        pre += f"(approximate: {fit.method}) "
    return [
        _data_section(fit, f"{pre}Data", level),
        _spec_section(fit, f"{pre}Priors and hierarchy", level),
        _diagnostics_section(fit, f"{pre}Diagnostics", level),
        _coefficient_section(fit, f"{pre}Coefficients", level),
        _curves_section(fit, f"{pre}Fitted curves", level, tag),
        _residual_section(fit, f"{pre}Residuals", level, tag),
        _effects_section(fit, f"{pre}Group effects", level, tag),
        _derived_section(fit, f"{pre}Derived quantities", level, budget, seed),
    ]


