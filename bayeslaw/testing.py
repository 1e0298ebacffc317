"""Checks for users' test suites: convergence, predictive checks, recovery and SBC.

Every check returns a result object with a verdict (``passed``), the figures behind it
(``values``), the failures in words (``failures``) and a ``plot()``; ``assert_ok()`` turns a
failed verdict into an ``AssertionError`` for pytest.  Statistical verdicts use a stated
error rate, so a matched model fails them only as often as that rate says:

* **posterior predictive check**: the central ``prob`` predictive band's coverage of the
  observed points, each given its run's previous point where the noise model links them
  (AR(1), random walk: the model's own factorization), with a Clopper-Pearson interval at
  level ``1 - alpha``; it fails when the interval lies wholly outside ``prob +- tolerance``
  (in-sample points within a run share their run's parameters, so a small tolerance absorbs
  what a binomial interval cannot).  Also the posterior predictive p-value of the final
  losses' deviance ``T = -sum log p(y_final | theta)``: ``p = P(T(y_rep) >= T(y))``; it
  fails below ``alpha`` (one-sided: final losses further from the forecast than the noise
  allows; a p near 1 means the noise model is conservative there, which misleads no
  forecast - the bundled sweep's default fit gave p = 0.99 with in-sample coverage 0.903,
  measured at 4cd4322).
* **recovery**: a posterior draw of a fit is the truth, data are simulated from it at the
  fit's own points, and the same spec is refitted; every sampled law parameter's truth must
  lie in its central ``1 - alpha / k`` interval (Bonferroni over the ``k`` parameters).
* **simulation-based calibration** (Talts et al. 2018): truths drawn from the prior, the
  rank of each truth among ``L`` thinned posterior draws, and a chi-square test of uniform
  ranks per parameter at level ``alpha / k``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from . import constants as C
from . import inference
from .data import LossData
from .diagnostics import Thresholds
from .errors import ConvergenceWarning, SpecError, StaleRecordsWarning
from .likelihood import one_step_replicates, simulated_losses
from .metrics import coverage
from .posterior import log_density
from .result import Fit
from .spec import ModelSpec, resolve_spec


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check, the figures behind it and what failed.

    Attributes
    ----------
    name : str
        Which check (``"convergence"``, ``"posterior predictive"``, ``"recovery"``, ``"sbc"``).
    passed : bool
    values : dict
        The numbers the verdict rests on.
    failures : list of str
        One line per failed criterion, naming the value and the threshold.
    details : DataFrame
        Per-parameter or per-point table behind the figures (for ``plot``).
    """

    name: str
    passed: bool
    values: dict[str, Any]
    failures: list[str] = field(default_factory=list)
    details: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def verdict(self) -> str:
        """``"PASS"`` or ``"FAIL"``."""
        return "PASS" if self.passed else "FAIL"

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in self.values.items()
                          if not isinstance(v, dict | list))
        lines = [f"{self.verdict} {self.name}: {shown}"]
        lines += [f"  - {f}" for f in self.failures]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<CheckResult {self}>"

    def _repr_html_(self) -> str:
        import html

        colour = "#1a7f37" if self.passed else "#cf222e"
        items = "".join(f"<li>{html.escape(f)}</li>" for f in self.failures)
        return (f"<div><b style='color:{colour}'>{self.verdict}</b> "
                f"{html.escape(self.name)}<ul>{items}</ul>"
                + (self.details.to_html(float_format=_fmt) if not self.details.empty else "")
                + "</div>")

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the failures (for pytest)."""
        if not self.passed:
            raise AssertionError(str(self))

    def plot(self, ax: Any = None) -> Any:
        """The figure behind the verdict; returns the matplotlib Figure."""
        import matplotlib.pyplot as plt

        from .plots import log_ticks

        if self.name == "sbc":
            return plot_sbc(self)
        fig = ax.figure if ax is not None else plt.subplots(figsize=(6, 3.5))[0]
        ax = ax if ax is not None else fig.axes[0]
        d = self.details
        if self.name == "posterior predictive":
            ax.hist(d["T_rep"] - d["T_obs"], bins=40, color="0.6")
            ax.axvline(0.0, color="C3")
            ax.set_xlabel("T(y_rep) - T(y): deviance of the final losses")
            ax.set_title(f"p = {self.values['p_value']:.3f}, coverage "
                         f"{self.values['coverage']:.3f}")
        elif self.name == "recovery":
            y = np.arange(len(d))
            ax.errorbar(d["median"], y, xerr=[d["median"] - d["lower"], d["upper"] - d["median"]],
                        fmt="o", color="0.3")
            ax.plot(d["truth"], y, "x", color="C3", label="truth")
            ax.set_yticks(y, d.index)
            ax.set_xscale("log")
            log_ticks(ax.xaxis)
            ax.legend()
        else:  # convergence
            ax.barh(d.index, d["r_hat"], color="0.6")
            ax.axvline(self.values["max_rhat_threshold"], color="C3")
            ax.set_xlabel("R-hat")
        return fig


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


# -- convergence --------------------------------------------------------------------------
def check_convergence(fit: Fit, thresholds: Thresholds | None = None) -> CheckResult:
    """R-hat, bulk / tail ESS, divergences and BFMI of a fit against ``thresholds``."""
    import arviz as az

    diag = replace(fit.diagnostics, thresholds=thresholds or fit.thresholds)
    names = fit.coefficient_names()
    summ = az.summary(fit.idata, var_names=names, kind="diagnostics")
    details = summ[["r_hat", "ess_bulk", "ess_tail"]]
    values = {"max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
              "min_ess_tail": diag.min_ess_tail, "divergences": diag.divergences,
              "min_bfmi": diag.min_bfmi, "max_rhat_threshold": diag.thresholds.max_rhat}
    return CheckResult("convergence", diag.ok, values, diag.failures, details)


def assert_converged(fit: Fit, thresholds: Thresholds | None = None) -> None:
    """Raise ``AssertionError`` naming each failed convergence check."""
    check_convergence(fit, thresholds).assert_ok()


# -- predictive checks --------------------------------------------------------------------
def _final_rows(frame: pd.DataFrame) -> np.ndarray:
    """Row positions of each run's last point (largest D)."""
    pos = frame.reset_index(drop=True)
    return pos.groupby(C.RUN, sort=False)[C.D].idxmax().to_numpy()


def posterior_predictive_check(fit: Fit, *, prob: float = 0.9, alpha: float = 0.01,
                               tolerance: float = 0.05, seed: int = 0) -> CheckResult:
    """Coverage of the observed points and a p-value of the final losses.

    Parameters
    ----------
    fit : Fit
    prob : float
        Central predictive band whose coverage of the observed points is checked.
    alpha : float
        Error rate: level of the coverage interval and of the (one-sided) p-value.
    tolerance : float
        Coverage within ``prob +- tolerance`` is accepted even when the binomial interval
        excludes ``prob`` (points of one run are correlated).
    seed : int
        Seed of the replicated noise.
    """
    frame = fit.data.frame
    y = frame[C.LOSS].to_numpy(float)
    # each point given the observed previous point of its run (the model's own factorization:
    # with AR(1) or a random walk these one-step predictive bands hold the walk's variance)
    y_rep, loc, scale = one_step_replicates(fit, np.random.default_rng(seed))
    lo, hi = np.quantile(y_rep, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    cov = coverage(y, lo, hi, prob, confidence=1 - alpha)
    last = _final_rows(frame)
    t_obs = -log_density(fit, y[last], loc[:, last], scale[:, last]).sum(axis=1)
    t_rep = -log_density(fit, y_rep[:, last], loc[:, last], scale[:, last]).sum(axis=1)
    p = float(np.mean(t_rep >= t_obs))
    failures = []
    if cov.high < prob - tolerance or cov.low > prob + tolerance:
        failures.append(f"the {prob:.0%} predictive band holds {cov.rate:.1%} of the "
                        f"{cov.n} observed points ({1 - alpha:.0%} interval "
                        f"[{cov.low:.1%}, {cov.high:.1%}]), outside {prob:.0%} "
                        f"+- {tolerance:.0%}")
    if p < alpha:
        failures.append(f"posterior predictive p-value of the final losses' deviance is "
                        f"{p:.4f} < {alpha:g}: the final losses lie further from the forecast "
                        "than the noise model allows")
    values = {"coverage": cov.rate, "coverage_lower": cov.low, "coverage_upper": cov.high,
              "n_points": cov.n, "prob": prob, "p_value": p, "n_final": len(last)}
    details = pd.DataFrame({"T_obs": t_obs, "T_rep": t_rep})
    return CheckResult("posterior predictive", not failures, values, failures, details)


def prior_predictive_check(data: LossData, spec: ModelSpec | str | Path | None = None, *,
                           prob: float = 0.99, min_coverage: float = 0.9, draws: int = 500,
                           seed: int = C.DEFAULT_SEED) -> CheckResult:
    """Do the priors allow the observed sweep?  Coverage of the points by a wide prior band.

    Fails when the central ``prob`` prior predictive band holds fewer than ``min_coverage``
    of the observed points: the priors then rule out what the data show.  ``values`` also
    reports the band's median width relative to the data's range (how vague the prior is).
    """
    idata = inference.sample_prior_predictive(data, spec, draws=draws, seed=seed)
    sims = idata.prior_predictive["loss"].values.reshape(-1, len(data))
    y = data.values(C.LOSS)
    lo, hi = np.quantile(sims, [(1 - prob) / 2, (1 + prob) / 2], axis=0)
    inside = (y >= lo) & (y <= hi)
    rate = float(inside.mean())
    failures = []
    if rate < min_coverage:
        worst = int(np.argmin(np.minimum(y - lo, hi - y)))
        failures.append(f"the {prob:.0%} prior predictive band holds {rate:.1%} of the "
                        f"points (< {min_coverage:.0%}); e.g. row {worst + 1} loss "
                        f"{y[worst]:.4g} vs band [{lo[worst]:.4g}, {hi[worst]:.4g}]: widen "
                        "the priors")
    width = float(np.median(hi - lo) / max(np.ptp(y), 1e-12))
    values = {"coverage": rate, "prob": prob, "relative_width": width, "draws": draws}
    details = pd.DataFrame({"loss": y, "lower": lo, "upper": hi, "inside": inside})
    return CheckResult("prior predictive", not failures, values, failures, details)


# -- recovery -----------------------------------------------------------------------------
def simulate_from_draw(fit: Fit, draw: int, *, seed: int = 0) -> LossData:
    """The fit's own points with losses simulated from one posterior draw (all parameters).

    Each run's curve is drawn jointly from the model's generative process (AR(1) residuals
    or a random walk accumulating along the run, :func:`bayeslaw.predict.simulate_curves`),
    so a recovery refits the model that simulated the data.
    """
    sim = fit.data.frame.copy()
    sim[C.LOSS] = simulated_losses(fit, draw, np.random.default_rng(seed))
    return replace(fit.data, frame=sim, notes=(*fit.data.notes, f"simulated: draw {draw}"))


def _central(values: np.ndarray, prob: float) -> tuple[float, float]:
    lo, hi = np.quantile(values, [(1 - prob) / 2, (1 + prob) / 2])
    return float(lo), float(hi)


def recovery(fit: Fit, *, seed: int = 0, alpha: float = 0.05, **fit_kwargs: Any
             ) -> CheckResult:
    """Refit data simulated from a posterior draw of ``fit`` and look for the truth.

    The truth is a whole posterior draw (population values, group effects, per-run noise),
    so the simulated sweep is one the model believes possible.  The refit uses the fit's
    spec and the compiled model of its structure; ``fit_kwargs`` override sampler settings.
    Passes when every sampled law parameter's truth lies in its central
    ``1 - alpha / k`` interval (Bonferroni over ``k`` parameters).
    """
    rng = np.random.default_rng(seed)
    draw = int(rng.integers(fit.n_draws))
    data = simulate_from_draw(fit, draw, seed=seed)
    kwargs = {"seed": seed, **fit_kwargs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        refit = inference.fit(data, fit.spec, **kwargs)
    names = list(fit.spec.free_params)
    prob = 1 - alpha / len(names)
    rows, failures = [], []
    for name in names:
        truth = float(fit.draws(name)[draw])
        post = refit.draws(name)
        lo, hi = _central(post, prob)
        rows.append({"param": name, "truth": truth, "median": float(np.median(post)),
                     "lower": lo, "upper": hi, "quantile": float(np.mean(post < truth))})
        if not lo <= truth <= hi:
            failures.append(f"{name}: truth {truth:.4g} outside its {prob:.1%} interval "
                            f"[{lo:.4g}, {hi:.4g}]")
    conv = refit.diagnostics
    failures += [f"refit not converged: {f}" for f in conv.failures]
    values = {"draw": draw, "prob": prob, "max_rhat": conv.max_rhat,
              "min_ess_bulk": conv.min_ess_bulk, "divergences": conv.divergences}
    return CheckResult("recovery", not failures, values, failures,
                       pd.DataFrame(rows).set_index("param"))


# -- simulation-based calibration ----------------------------------------------------------
def _thinned_rank(post: np.ndarray, truth: float, n_ranks: int) -> int:
    """Rank of ``truth`` among ``n_ranks`` evenly thinned draws (0 .. n_ranks)."""
    idx = np.linspace(0, len(post) - 1, n_ranks).round().astype(int)
    return int(np.sum(post[idx] < truth))


def _read_sbc(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def _append_line(path: Path, record: Mapping[str, Any]) -> None:
    """Append one JSON line and flush it to disk (an interrupted SBC keeps finished fits)."""
    import os

    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def sbc_key(design: LossData, spec: ModelSpec, fit_spec: ModelSpec, *, seed: int,
            n_ranks: int, params: Sequence[str], settings: Mapping[str, Any]) -> str:
    """A hash of everything that defines an SBC simulation and its ranks.

    The design's points (every column but the loss, which SBC simulates), the generating and
    fitted specs, the seed, the rank count, the ranked parameters and the sampler settings:
    a resumed SBC reuses a stored record only when all of them match.
    """
    import hashlib

    points = design.frame.drop(columns=[C.LOSS], errors="ignore")
    payload = json.dumps({"design": pd.util.hash_pandas_object(points, index=False).tolist(),
                          "columns": list(points.columns), "spec": spec.to_json(),
                          "fit_spec": fit_spec.to_json(), "seed": int(seed),
                          "n_ranks": int(n_ranks), "params": list(params),
                          "settings": {k: settings[k] for k in sorted(settings)}},
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def sbc(design: LossData, spec: ModelSpec | str | Path | None = None, *, n_sims: int = 100,
        fit_spec: ModelSpec | str | Path | None = None, n_ranks: int = 99,
        params: Sequence[str] | None = None, alpha: float = 0.01, bins: int | None = None,
        seed: int = 0, path: str | Path | None = None, **fit_kwargs: Any) -> CheckResult:
    """Simulation-based calibration of ``spec`` on the points of ``design``.

    Parameters
    ----------
    design : LossData
        The points (runs, N, D, T_m) at which sweeps are simulated; its losses are ignored.
    spec : ModelSpec, path, name or None
        The generating spec (its priors draw the truths).  Default: the law's default spec.
    n_sims : int
        Number of simulated sweeps (each is fitted once).
    fit_spec : optional
        Spec to fit with (default ``spec``); a different one shows what miscalibration
        looks like (the check must then fail).
    n_ranks : int
        Posterior draws kept (evenly thinned) for each rank, so ranks run 0..``n_ranks``.
        Thinning below the effective sample size keeps ranks from autocorrelated draws
        uniform.
    params : sequence of str, optional
        Parameters ranked (default: the spec's sampled law parameters and ``sigma``).
    alpha : float
        Family-wise level of the uniformity tests (Bonferroni over parameters).
    bins : int, optional
        Rank histogram bins of the chi-square test (default ``max(2, min(20, n_sims // 5))``,
        so every bin expects at least 5 ranks).
    seed : int
        Seeds the prior draws and each fit (``seed + i``).
    path : str or Path, optional
        JSON-lines file: each finished fit is appended at once, and a rerun with the same
        file skips the simulations already there (a long SBC is resumable).  A record is
        reused only when everything that defines it matches (:func:`sbc_key`); others are
        ignored with a warning.
    **fit_kwargs
        Sampler settings for every fit (``draws``, ``tune``, ``chains``, ...).
    """
    gen = resolve_spec(spec, law=None, columns=design.columns)
    fitted = (resolve_spec(fit_spec, law=None, columns=design.columns)
              if fit_spec is not None else gen)
    params = list(params) if params is not None else [*gen.free_params, "sigma"]
    path = Path(path) if path is not None else None
    key = sbc_key(design, gen, fitted, seed=seed, n_ranks=n_ranks, params=params,
                  settings=fit_kwargs)
    stored = _read_sbc(path)
    done = {r["sim"]: r for r in stored if r.get("key") == key}
    stale = len(stored) - len(done)
    if stale:
        warnings.warn(f"{stale} SBC record(s) in {str(path)!r} were made with another design, "
                      "spec, fitted spec, sampler settings, seed or rank count: ignored and "
                      "kept in the file; the simulations are run anew (use another path to keep "
                      "runs apart)", StaleRecordsWarning, stacklevel=2)
    prior = inference.sample_prior_predictive(design, gen, draws=n_sims, seed=seed)
    sims = prior.prior_predictive["loss"].values.reshape(n_sims, len(design))
    records = []
    for i in range(n_sims):
        if i in done:
            records.append(done[i])
            continue
        truth = {p: float(np.asarray(prior.prior[p].values).reshape(n_sims, -1)[i, 0])
                 for p in params}
        frame = design.frame.copy()
        frame[C.LOSS] = sims[i]
        data = replace(design, frame=frame, notes=(*design.notes, f"sbc simulation {i}"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = inference.fit(data, fitted, seed=seed + i, **fit_kwargs)
        diag = result.diagnostics
        record = {"sim": i, "seed0": seed, "key": key, "n_ranks": n_ranks, "truth": truth,
                  "ranks": {p: _thinned_rank(result.draws(p), truth[p], n_ranks)
                            for p in params},
                  "max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
                  "divergences": diag.divergences}
        if path is not None:
            _append_line(path, record)
        records.append(record)
    return sbc_verdict(records, params=params, alpha=alpha, bins=bins)


def sbc_verdict(records: Sequence[Mapping[str, Any]], *, params: Sequence[str] | None = None,
                alpha: float = 0.01, bins: int | None = None) -> CheckResult:
    """Chi-square test of uniform ranks per parameter (Bonferroni at family-wise ``alpha``)."""
    if not records:
        raise SpecError("no SBC simulations to judge")
    params = list(params or records[0]["ranks"])
    n_ranks = int(records[0]["n_ranks"])
    n = len(records)
    bins = bins or max(2, min(20, n // 5))
    level = alpha / len(params)
    rows, failures = [], []
    for p in params:
        ranks = np.array([r["ranks"][p] for r in records])
        counts = np.bincount(np.minimum(ranks * bins // (n_ranks + 1), bins - 1),
                             minlength=bins)
        expected = np.array([np.sum(np.arange(n_ranks + 1) * bins // (n_ranks + 1) == b)
                             for b in range(bins)]) / (n_ranks + 1) * n
        chi2 = float(np.sum((counts - expected) ** 2 / expected))
        pval = float(stats.chi2.sf(chi2, bins - 1))
        extreme = float(np.mean((ranks == 0) | (ranks == n_ranks)))
        rows.append({"param": p, "chi2": chi2, "p_value": pval,
                     "mean_rank": float(ranks.mean() / n_ranks), "extreme_share": extreme})
        if pval < level:
            failures.append(f"{p}: ranks not uniform (chi-square {chi2:.1f} on {bins - 1} df, "
                            f"p = {pval:.2g} < {level:.2g}); {extreme:.0%} of truths fall "
                            "outside every posterior draw")
    values = {"n_sims": n, "n_ranks": n_ranks, "bins": bins, "alpha": alpha,
              "max_rhat": float(max(r["max_rhat"] for r in records)),
              "divergent_fits": int(sum(r["divergences"] > 0 for r in records)),
              "ranks": {p: [r["ranks"][p] for r in records] for p in params}}
    return CheckResult("sbc", not failures, values, failures,
                       pd.DataFrame(rows).set_index("param"))


def plot_sbc(result: CheckResult) -> Any:
    """Rank histograms and ECDF differences (with a 95% pointwise band) per parameter."""
    import matplotlib.pyplot as plt

    ranks = result.values["ranks"]
    n_ranks, bins = result.values["n_ranks"], result.values["bins"]
    names = list(ranks)
    fig, axes = plt.subplots(2, len(names), figsize=(2.2 * len(names), 4.2), squeeze=False)
    for j, name in enumerate(names):
        r = np.asarray(ranks[name])
        n = len(r)
        axes[0, j].hist(r, bins=bins, range=(0, n_ranks + 1), color="0.6")
        axes[0, j].axhline(n / bins, color="C3", lw=1)
        axes[0, j].set_title(name)
        z = np.linspace(0, 1, 101)
        ecdf = np.array([np.mean((r + 0.5) / (n_ranks + 1) <= q) for q in z])
        lo, hi = stats.binom.ppf([[0.025], [0.975]], n, z[None, :]) / n
        axes[1, j].fill_between(z, lo - z, hi - z, color="0.85")
        axes[1, j].plot(z, ecdf - z, color="C0")
        axes[1, j].set_xlabel("fractional rank")
    axes[0, 0].set_ylabel("count")
    axes[1, 0].set_ylabel("ECDF - uniform")
    fig.tight_layout()
    return fig
