"""Convergence diagnostics of a fit: thresholds, R-hat, ESS, divergences and BFMI.

A fit that fails a threshold also carries a :class:`~bayeslaw.posterior.diagnosis.Diagnosis`:
the worst elements, where the divergences sit, the strongest correlations and the remedies.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import constants as C
from .diagnosis import Diagnosis, LevelFacts, diagnose_failure


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
    #: why a NUTS fit failed and what to change; None when every check passed
    diagnosis: Diagnosis | None = None

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
                "approximate": self.approximate, "ok": self.ok, "failures": self.failures,
                "diagnosis": None if self.diagnosis is None else self.diagnosis.to_dict()}

    def __str__(self) -> str:
        if self.approximate:
            return self.failures[0]
        status = "OK" if self.ok else "FAILED: " + "; ".join(self.failures)
        return (f"R-hat max {self.max_rhat:.3f} | ESS bulk min {self.min_ess_bulk:.0f}, "
                f"tail min {self.min_ess_tail:.0f} | divergences {self.divergences} | "
                f"BFMI min {self.min_bfmi:.2f} | {status}")


def diagnose(idata: Any, thresholds: Thresholds | None = None, *,
             derived: tuple[str, ...] = (), settings: Any = None,
             facts: LevelFacts | None = None) -> Diagnostics:
    """Compute R-hat, bulk/tail ESS, divergences and BFMI over every posterior variable.

    When a check fails, the result's ``diagnosis`` says why (see
    :func:`~bayeslaw.posterior.diagnosis.diagnose_failure`, which ``derived``, ``settings``
    and ``facts`` are passed to).
    """
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
        bfmi = _bfmi(idata)

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
    sampled = idata.sample_stats if "sample_stats" in idata.groups() else {}
    div = int(sampled["diverging"].sum()) if "diverging" in sampled else 0
    min_bfmi = float(np.nanmin(bfmi)) if np.isfinite(bfmi).any() else float("nan")
    diag = Diagnostics(max_rhat, min_essb, min_esst, div, min_bfmi, worst_r, worst_e,
                       thresholds, tuple(undefined))
    if diag.ok:
        return diag
    t = thresholds
    mixing = not (max_rhat <= t.max_rhat and min_essb >= t.min_ess and min_esst >= t.min_ess)
    return replace(diag, diagnosis=diagnose_failure(idata, rhat, ess_b, derived=derived,
                                                     settings=settings, failed_mixing=mixing,
                                                     facts=facts))


def _bfmi(idata: Any) -> np.ndarray:
    """BFMI per chain, NaN without energy.

    A fit sampled one run at a time (``method="by_curve"``) records each run's energy (dims
    ``chain, draw, run``): then per chain and run.
    """
    import arviz as az

    try:
        energy = idata.sample_stats["energy"]
        if energy.ndim == 3:
            return np.concatenate([np.atleast_1d(az.bfmi(energy.values[..., i]))
                                   for i in range(energy.shape[2])])
        return np.atleast_1d(az.bfmi(idata))
    except (KeyError, AttributeError, ValueError, TypeError):  # no energy: judged NaN
        return np.array([np.nan])


def judge(idata: Any, method: str, thresholds: Thresholds, *, derived: tuple[str, ...] = (),
          settings: Any = None, facts: LevelFacts | None = None) -> Diagnostics:
    """The diagnostics of a fit's draws, once: :func:`diagnose` for NUTS.

    None apply to an approximate ``method`` (Laplace, pathfinder): its one failure says so.
    """
    if method in C.APPROXIMATE_METHODS:
        nan = float("nan")
        return Diagnostics(nan, nan, nan, 0, nan, "", "", thresholds, approximate=method)
    return diagnose(idata, thresholds, derived=derived, settings=settings, facts=facts)
