"""A looped nanochat's depth sweep (``../shared/data/looped_nanochat``): what bayeslaw's looped
laws make of it.

Run from the repository root::

    python benchmarks/bench_nanochat.py [--seed S] [--out FILE]

Data (the folder's README.txt: the experiment log's tables of github:kschwethelm/looped_nanochat,
MIT; validation bits per byte, not nats; single runs, no seeds):

- ``looped_isoflop_depth_sweep.csv``: IsoFLOP sweeps over the recurrence count ``r`` (the
  models were trained at a fixed ``r``, so ``T_m = r``): seven fixed-depth runs at two widths
  and budgets (S20, N = 3.3e8, C = 1.35e19, r = 1, 2, 4, 6; S12, N = 1.6e8, C = 2.15e18,
  r = 2, 4, 6). The two runs trained with a sampled ``r`` are left out (their depth is a
  distribution, not a ``T_m``).
- ``looped_eval_depth.csv``: the same kind of models evaluated at other recurrence counts. A
  fixed-depth model evaluated at ``r_eval <= r_train`` is its loss at exit step
  ``T = r_eval`` of ``T_m = r_train``: a step table (9 rows, four models; steps 1, 3 and 5
  were not evaluated). Evaluations past the trained depth (``r_eval > r_train``) are outside
  the step-wise law (``T <= T_m``) and left out, as are the sampled-depth models. A
  fixed-depth model trains no exit gate, so its entropy weight is 0.

Each table is fitted with the law ``bayeslaw fit`` picks for it (``looped_total`` for the
totals, ``looped_steps`` for the steps), its shipped spec and sampler settings with two
changes (:func:`spec_for`), both fixed before any fit was run:

- the size term ``a / N^alpha`` off (``a = 0``): two widths cannot identify its coefficients
  (the laws need three sizes for them); the default's partially pooled effects of ``N`` on
  ``b`` and ``beta`` carry the widths' difference;
- the priors of the loss-scale coefficients (``E``, ``b``, ``c`` and the noise scale) divided
  by 3, their LogNormal medians moved by ``-ln 3``: the shipped priors are in nats per token
  and these losses in bits per byte (``ln 2`` nats per bit times about 4.5 bytes per token of
  a 65,536-token BPE: about 3 nats per token for one bit per byte; the log does not give the
  tokenizer's ratio).

Reported:

1. the fits' diagnostics and the depth terms' coefficients;
2. leave-one-out forecasts: each run of the IsoFLOP table (each point of the step table) left
   out of the fit in turn (kept in the model unobserved, as a backtest does) and forecast:
   the error of the median and whether the 50% / 90% predictive bands hold it, with the
   Clopper-Pearson interval over the held-out points (each its own curve);
3. the IsoFLOP question (``bl.best_T_m_at_budget``): at each width's budget, the posterior
   probability that each depth gives the lowest loss, beside the depth that did. The cost per
   token is the log's ``flops_per_token``, linear in ``r`` at each width (prelude and coda
   once, the recurrent block ``r`` times), not the default ``6 N T_m``.
4. The step-wise law's answers: each model's loss at every exit step (the steps not evaluated
   included) and what its last step buys (``bl.step_gain``). (Its best exit distribution is
   not reported: with no entropy weight it is the last step, under Ouro's law for every
   draw.)

No least-squares baseline: Ouro's procedure fits the step law per ``T_m`` (8 coefficients) on
at most 3 points here.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from bench_figures import emit, results_header  # the script's folder is on sys.path

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.evaluation.metrics import clopper_pearson

FOLDER = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "looped_nanochat"


def tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The fixed-depth IsoFLOP runs (totals), the step table, and the IsoFLOP log as read."""
    iso = pd.read_csv(FOLDER / "looped_isoflop_depth_sweep.csv")
    totals = (iso[~iso["sampled"]].rename(columns={"r_train": C.T_M})
              [[C.RUN, C.N, C.D, C.T_M, C.LOSS]].reset_index(drop=True))
    ev = pd.read_csv(FOLDER / "looped_eval_depth.csv")
    keep = ~ev["sampled"] & (ev["r_eval"] <= ev["r_train"])
    steps = (ev[keep].rename(columns={"r_train": C.T_M, "r_eval": C.T_STEP})
             [[C.RUN, C.N, C.D, C.T_M, C.T_STEP, C.LOSS]].assign(entropy_weight=0.0)
             .reset_index(drop=True))
    return totals, steps, iso


def cost_from_log(iso: pd.DataFrame):
    """FLOPs per token as a function of (N, T_m): the log's, a line in ``r`` per width."""
    lines = {}
    for n, part in iso[~iso["sampled"]].groupby(C.N):
        slope, base = np.polyfit(part["r_train"], part["flops_per_token"], 1)
        resid = part["flops_per_token"] - (base + slope * part["r_train"])
        assert np.abs(resid).max() < 0.01 * part["flops_per_token"].min(), "not a line in r"
        lines[float(n)] = (base, slope)

    def cost(N: np.ndarray, T_m: float | None) -> np.ndarray:
        out = []
        for n in np.atleast_1d(N):
            base, slope = lines[float(n)]
            out.append(base + slope * float(T_m))
        return np.asarray(out)

    return cost


#: bits per byte to nats per token, roughly (see the docstring): the priors' scale
UNITS = 3.0


def spec_for(law: str) -> bl.ModelSpec:
    """The shipped spec of ``law`` without the size term, its loss-scale priors in bits per
    byte (the docstring says why)."""
    base = bl.load_spec(law=law)
    shift = -float(np.log(UNITS))
    priors = {}
    for name in ("E", "b", "c"):
        prior = base.priors[name].to_dict()
        assert prior["dist"] == "LogNormal", (name, prior)
        priors[name] = {**prior, "mu": prior["mu"] + shift}
    sigma = base.to_dict()["likelihood"]["sigma"]
    assert sigma["dist"] == "LogNormal", sigma
    return bl.load_spec({"priors": priors, "fixed": {"a": 0.0, "alpha": 0.35},
                         "likelihood": {"sigma": {**sigma, "mu": sigma["mu"] + shift}}},
                        law=law)


def _fit(data: bl.LossData, spec: bl.ModelSpec, seed: int,
         like: bl.LossData | None = None) -> bl.Fit:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = bl.fit(data, spec, seed=seed, progress=False, like=like)
    for w in caught:  # say each, do not swallow it
        first = str(w.message).splitlines()[0] if str(w.message) else ""
        print(f"  {w.category.__name__}: {first}", file=sys.stderr)
    return fit


def _coefficients(fit: bl.Fit, names: tuple[str, ...]) -> list[str]:
    prior = bl.sample_prior_predictive(fit.data, fit.spec, draws=2000, seed=0)
    out = ["| coefficient | posterior median | posterior 90% | prior 90% |",
           "| --- | --- | --- | --- |"]
    for name in names:
        x = np.asarray(fit.idata.posterior[name]).ravel()
        p = np.asarray(prior.prior[name]).ravel()
        lo, med, hi = np.quantile(x, [0.05, 0.5, 0.95])
        plo, phi = np.quantile(p, [0.05, 0.95])
        out.append(f"| {name} | {med:.4g} | [{lo:.4g}, {hi:.4g}] | [{plo:.4g}, {phi:.4g}] |")
    return out


def leave_one_out(data: bl.LossData, spec: bl.ModelSpec, seed: int,
                  label: str) -> tuple[list[str], list[str]]:
    """Each curve left out in turn and forecast: one row per held-out point, and a summary."""
    f = data.frame
    rows = ["| held out | observed | median | error | 50% band | 90% band |",
            "| --- | --- | --- | --- | --- | --- |"]
    inside = {0.5: 0, 0.9: 0}
    errors, notes = [], []
    t0 = time.perf_counter()
    for run in data.runs:
        out = (f[C.RUN] == run).to_numpy()
        train = data.select(~out, f"bench_nanochat: {run} left out")
        fit = _fit(train, spec, seed, like=data)
        test = f[out].reset_index(drop=True)
        pred = bl.predict(fit, test, seed=seed).table
        for i in range(len(test)):
            y, med = float(test[C.LOSS].iloc[i]), float(pred["median"].iloc[i])
            cells = [run, f"{y:.4f}", f"{med:.4f}", f"{med - y:+.4f}"]
            for p in (0.5, 0.9):
                tag = int(100 * p)
                lo, hi = pred[f"lower_{tag}"].iloc[i], pred[f"upper_{tag}"].iloc[i]
                hit = lo <= y <= hi
                inside[p] += hit
                cells.append(f"[{lo:.4f}, {hi:.4f}] {'in' if hit else 'OUT'}")
            errors.append(med - y)
            rows.append("| " + " | ".join(cells) + " |")
        if not fit.diagnostics.ok:
            notes.append(f"- {run} left out: {fit.diagnostics}")
    n = len(errors)
    summary = [f"- {label}: {n} points left out one at a time; median absolute error "
               f"{np.median(np.abs(errors)):.4f}, mean {np.mean(np.abs(errors)):.4f} (bits per "
               f"byte); {time.perf_counter() - t0:.0f} s for the {n} fits"]
    for p in (0.5, 0.9):
        lo, hi = clopper_pearson(inside[p], n, 0.95)
        summary.append(f"- {label}, {p:.0%} band: {inside[p]} of {n} held-out points inside "
                       f"(95% Clopper-Pearson interval of the rate [{lo:.2f}, {hi:.2f}])")
    if notes:
        summary += ["- fits that failed a threshold:", *notes]
    else:
        summary.append(f"- {label}: every leave-one-out fit passed the thresholds")
    return rows, summary


def _fitted(table: pd.DataFrame, law: str, seed: int, what: str
            ) -> tuple[bl.LossData, bl.ModelSpec, bl.Fit, str]:
    """The table loaded and fitted with :func:`spec_for`, and a line saying how."""
    data = bl.load(table)
    spec = spec_for(law)
    t0 = time.perf_counter()
    fit = _fit(data, spec, seed)
    return data, spec, fit, (f"Spec: `{law}` (the law for {what}; no size term, priors in "
                             f"bits per byte); {time.perf_counter() - t0:.0f} s (compile "
                             f"included). Diagnostics: {fit.diagnostics}")


def isoflop(seed: int) -> list[str]:
    totals, _, iso = tables()
    data, spec, fit, how = _fitted(totals, "looped_total", seed, "a table of N, D and T_m")
    lines = ["## The IsoFLOP depth sweep (total loss, fixed depth T_m = r)", "", how, "",
             *_coefficients(fit, ("E", "c", "gamma", "b", "beta")), ""]
    cost = cost_from_log(iso)
    lines += ["### Which depth at the budget (`bl.best_T_m_at_budget`, the log's FLOPs per "
              "token)", "",
              "| width | N | budget C | depth | D at C | loss: median [90%] | observed | p_best |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    fixed = iso[~iso["sampled"]]
    for (size, n, c), part in fixed.groupby(["size", C.N, "C"]):
        depths = tuple(float(r) for r in sorted(part["r_train"]))
        best = bl.best_T_m_at_budget(fit, n, c, candidates=depths, cost_per_token=cost,
                                     seed=seed)
        table = best.summary()
        observed = dict(zip(part["r_train"].astype(float), part[C.LOSS], strict=True))
        winner = min(observed, key=observed.get)
        for t in depths:
            key = f"T_m={t:g}"
            row = table.loc[key]
            mark = " (lowest)" if t == winner else ""
            lines.append(f"| S{size} | {n:.3g} | {c:.3g} | {t:g} | "
                         f"{c / cost(np.array([n]), t)[0]:.3g} | {row['median']:.4f} "
                         f"[{row['lower_90']:.4f}, {row['upper_90']:.4f}] | "
                         f"{observed[t]:.4f}{mark} | {best.columns['p_best'][key]:.2f} |")
    lines.append("")
    rows, summary = leave_one_out(data, spec, seed, "IsoFLOP runs")
    return [*lines, "### Each run left out and forecast", "", *rows, "", *summary, ""]


def step_table(seed: int) -> list[str]:
    _, steps, _ = tables()
    data, spec, fit, how = _fitted(steps, "looped_steps", seed, "a table with a `T` column")
    lines = ["## Evaluated at other recurrence counts (step losses, r_eval <= r_train)", "",
             how + " Entropy weight fixed at 0 (fixed-depth training has no exit gate).", "",
             *_coefficients(fit, ("E", "c", "gamma")), "",
             "### Each model's loss at every exit step (median [90%]; * evaluated)", "",
             "| model | T_m | " + " | ".join(f"T = {k}" for k in range(1, 7)) +
             " | last step's gain L(T_m - 1) - L(T_m) |",
             "| --- | --- | " + " | ".join("---" for _ in range(6)) + " | --- |"]
    f = steps
    for run, part in f.groupby(C.RUN, sort=False):
        n, d, t_m = float(part[C.N].iloc[0]), float(part[C.D].iloc[0]), int(part[C.T_M].iloc[0])
        cells = [run, str(t_m)]
        seen = dict(zip(part[C.T_STEP].astype(int), part[C.LOSS], strict=True))
        for k in range(1, 7):
            if k > t_m:
                cells.append("-")
                continue
            x = bl.loss_at(fit, n, d, t_m, columns=bl.exit_columns(t_m, T=k)).draws
            lo, med, hi = np.quantile(x, [0.05, 0.5, 0.95])
            star = f" *{seen[k]:.4f}" if k in seen else ""
            cells.append(f"{med:.3f} [{lo:.3f}, {hi:.3f}]{star}")
        gain = bl.step_gain(fit, n, d, t_m, t_m - 1, seed=seed).draws
        lo, med, hi = np.quantile(gain, [0.05, 0.5, 0.95])
        cells.append(f"{med:.3f} [{lo:.3f}, {hi:.3f}]")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    rows, summary = leave_one_out(data, spec, seed, "step points")
    return [*lines, "### Each point left out and forecast", "", *rows, "", *summary, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if not FOLDER.is_dir():
        print(f"bench_nanochat: needs {FOLDER} (../shared/data beside the repository)",
              file=sys.stderr)
        return 2
    lines = [*results_header("A looped nanochat's depth sweep, fitted", "bench_nanochat.py"),
             "Losses are validation bits per byte; every table and choice is described in the "
             "script's docstring.", ""]
    lines += isoflop(args.seed)
    lines += step_table(args.seed)
    return emit(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
