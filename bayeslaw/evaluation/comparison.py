r"""Compare laws and pooling structures: PSIS-LOO, WAIC, grouped K-fold CV and stacking.

Pointwise LOO on curves answers "how well does the law predict one point of a curve whose
other points it has seen" - an easy question, since neighbours pin the point.  A forecast of
a *new run*, size or depth is the harder question that **grouped K-fold** answers: a whole
run, N level or T_m level is left out, the model is refitted (the compiled model is reused,
held-out runs stay in it unobserved and draw their effects from the population), and each
held-out point is scored by its log predictive density

.. math::

    \mathrm{elpd}_i = \log \frac{1}{S} \sum_s p(y_i \mid \theta_s^{(-k(i))}).

Standard errors are computed from the sums per run (points of one curve are correlated, so a
pointwise standard error would be too small).  Stacking weights maximise
:math:`\sum_i \log \sum_m w_m \exp(\mathrm{elpd}_{i,m})` over the simplex (Yao et al. 2018).

Pareto-k of PSIS-LOO is reported per model and acted on (``bad_k``): ``"warn"``,
``"refit"`` (exact leave-one-out refits of the points with k > 0.7, up to ``max_refits``) or
``"kfold"`` (switch the whole comparison to grouped K-fold over runs).
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import logsumexp

from .. import constants as C
from ..data.table import LossData
from ..errors import ArgumentError, DataError, ParetoKWarning
from ..posterior.result import Fit
from .refits import exact_loo_points, group_folds, kfold_refits

#: Pareto-k above this marks a point whose PSIS-LOO estimate is unreliable (Vehtari 2024).
K_THRESHOLD = 0.7


@dataclass(frozen=True)
class Comparison:
    """Models ranked by expected log predictive density.

    Attributes
    ----------
    table : DataFrame
        One row per model, best first: ``rank``, ``elpd``, ``se``, ``elpd_diff`` (to the best),
        ``dse`` (its standard error), ``p`` (effective parameters; NaN for K-fold),
        ``weight`` (stacking), ``n_bad_k`` (LOO points with k > 0.7), ``method``, ``note``
        (why a model is unranked: its elpd is not defined; ranked last, NaN weight).
    method : str
        ``"loo"``, ``"waic"`` or ``"kfold:<group>"``.
    pointwise : dict of str to ndarray
        elpd of every point per model (the stacking input).
    groups : ndarray
        Run of every point (the unit of the standard errors).
    notes : list of str
        What was done about bad Pareto k, refits, convergence of refits.
    """

    table: pd.DataFrame
    method: str
    pointwise: dict[str, np.ndarray] = field(repr=False)
    groups: np.ndarray = field(repr=False)
    notes: tuple[str, ...] = ()

    @property
    def best(self) -> str:
        """Name of the top-ranked model."""
        return str(self.table.index[0])

    def summary_sentence(self) -> str:
        """One sentence saying what the table means."""
        unranked = self.table.index[self.table["note"].astype(bool)] \
            if "note" in self.table else self.table.index[:0]
        t = self.table.drop(index=unranked)
        what = {"loo": "PSIS-LOO (one point left out at a time)",
                "waic": "WAIC"}.get(self.method, f"grouped K-fold CV leaving out whole "
                                                  f"{self.method.split(':', 1)[-1]} groups")
        tail = (f" Not ranked (elpd not defined at some points): {', '.join(unranked)}."
                if len(unranked) else "")
        if len(t) < 2:
            return (f"Only {self.best} was scored by {what}: elpd {t['elpd'].iloc[0]:.1f}."
                    + tail)
        second = t.iloc[1]
        diff, dse = second["elpd_diff"], second["dse"]
        z = diff / dse if dse > 0 else (np.inf if diff > 0 else 0.0)
        strength = ("clearly" if z > 4 else "probably" if z > 2 else "not distinguishably")
        return (f"By {what}, {self.best} predicts held-out losses best; it is {strength} "
                f"better than {t.index[1]} (elpd difference {second['elpd_diff']:.1f} "
                f"+- {second['dse']:.1f}, per-run standard error), and stacking gives it "
                f"weight {t['weight'].iloc[0]:.2f}." + tail)

    def __repr__(self) -> str:
        cols = ["rank", "elpd", "se", "elpd_diff", "dse", "weight", "n_bad_k"]
        return (f"Comparison(method={self.method!r})\n"
                + self.table[cols].to_string(float_format=lambda v: f"{v:.2f}")
                + "\n" + self.summary_sentence())

    def _repr_html_(self) -> str:
        return (f"<div><p>{html.escape(self.summary_sentence())}</p>"
                + self.table.to_html(float_format=lambda v: f"{v:.2f}") + "</div>")

    def plot(self, ax: Any = None) -> Any:
        """The elpd per model with its standard error, and the difference to the best."""
        import matplotlib.pyplot as plt

        fig = ax.figure if ax is not None else plt.subplots(
            figsize=(6, 0.6 * len(self.table) + 1.6))[0]
        ax = ax if ax is not None else fig.axes[0]
        t = self.table.iloc[::-1]
        y = np.arange(len(t))
        ax.errorbar(t["elpd"], y, xerr=t["se"], fmt="o", color="k", label="elpd +- se")
        ax.errorbar(t["elpd"].max() - t["elpd_diff"], y - 0.2, xerr=t["dse"], fmt="^",
                    color="0.5", label="difference to best +- se")
        ax.set_yticks(y, t.index)
        ax.set_xlabel(f"expected log predictive density ({self.method})")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2,
                  frameon=False)  # below the axes: never over a model's markers
        fig.tight_layout()
        return fig


# -- scores ------------------------------------------------------------------------------
def _ic_pointwise(result: Fit, ic: str) -> tuple[np.ndarray, float, np.ndarray | None]:
    """Pointwise elpd, effective parameters and Pareto k (LOO only) through ArviZ."""
    import arviz as az

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if ic == "loo":
            res = az.loo(result.idata, pointwise=True, var_name="loss")
            out = (np.asarray(res.loo_i, float), float(res.p_loo),
                   np.asarray(res.pareto_k, float))
        else:
            res = az.waic(result.idata, pointwise=True, var_name="loss")
            out = np.asarray(res.waic_i, float), float(res.p_waic), None
    for w in caught:
        # LOO's Pareto-k warning is acted on by compare() (bad_k: ParetoKWarning, refits or
        # K-fold) with the count of bad points, so ArviZ's generic one is dropped; any other
        # (WAIC's posterior variance above 0.4, ...) reaches the user as it came
        if ic == "loo" and "Pareto" in str(w.message):
            continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return out


# -- ranking ------------------------------------------------------------------------------
def stacking_weights(pointwise: np.ndarray) -> np.ndarray:
    """Stacking weights from an ``(n, M)`` matrix of pointwise elpd (Yao et al. 2018)."""
    lp = np.asarray(pointwise, float)
    m = lp.shape[1]
    if m == 1:
        return np.ones(1)

    def objective(z: np.ndarray) -> float:
        w = np.exp(z - logsumexp(z))
        return -float(np.sum(logsumexp(lp + np.log(np.maximum(w, 1e-300)), axis=1)))

    best = optimize.minimize(objective, np.zeros(m), method="L-BFGS-B")
    w = np.exp(best.x - logsumexp(best.x))
    return w / w.sum()


def rank_table(pointwise: Mapping[str, np.ndarray], groups: np.ndarray,
               p_eff: Mapping[str, float], bad_k: Mapping[str, int], method: str
               ) -> pd.DataFrame:
    """The comparison table from pointwise elpd (standard errors over per-group sums).

    A model whose elpd is not defined (a point's elpd is NaN: a refit that failed, a
    non-finite log-likelihood) is ranked after the others with NaN ``elpd_diff``, ``dse`` and
    ``weight`` and a ``note`` naming its undefined points; the others are ranked, weighted and
    differenced among themselves. Raises :class:`DataError` when no model has a defined elpd.
    """
    names = list(pointwise)
    undefined = {n: int(np.sum(~np.isfinite(pointwise[n]))) for n in names}
    scored = [n for n in names if not undefined[n]]
    if not scored:
        raise DataError("no model has a defined elpd (points with NaN elpd: "
                        + ", ".join(f"{n}: {undefined[n]}" for n in names)
                        + "); see the notes on failed refits, and rerun those")
    group_codes = pd.factorize(pd.Series(groups))[0]
    g = len(np.unique(group_codes))

    def per_group(v: np.ndarray) -> np.ndarray:
        return np.bincount(group_codes, weights=v, minlength=g)

    elpd = {n: float(np.sum(pointwise[n])) for n in names}
    order = sorted(scored, key=lambda n: -elpd[n]) + [n for n in names if undefined[n]]
    best = order[0]
    weights = dict(zip(scored, stacking_weights(np.column_stack([pointwise[n]
                                                                 for n in scored])),
                       strict=True))
    rows = []
    for rank, n in enumerate(order):
        sums = per_group(pointwise[n])
        diff = per_group(pointwise[best] - pointwise[n])
        note = (f"elpd not defined at {undefined[n]} of {len(pointwise[n])} points (a failed "
                "refit or a non-finite log-likelihood): ranked last, unweighted"
                if undefined[n] else "")
        rows.append({"model": n, "rank": rank, "elpd": elpd[n] if not note else np.nan,
                     "se": float(np.sqrt(g * np.var(sums))) if not note else np.nan,
                     "elpd_diff": elpd[best] - elpd[n] if not note else np.nan,
                     "dse": float(np.sqrt(g * np.var(diff))) if n != best else 0.0,
                     "p": p_eff.get(n, np.nan), "weight": weights.get(n, np.nan),
                     "n_bad_k": int(bad_k.get(n, 0)), "method": method, "note": note})
    return pd.DataFrame(rows).set_index("model")


def unranked_notes(table: pd.DataFrame) -> tuple[str, ...]:
    """The notes of the models :func:`rank_table` could not rank, each named."""
    return tuple(f"{name}: {note}" for name, note in table["note"].items() if note)


def _check_same_data(fits: Mapping[str, Fit]) -> LossData:
    items = list(fits.items())
    if not items:
        raise ArgumentError("compare needs at least one fit")
    name0, first = items[0]
    for name, other in items[1:]:
        a, b = first.data.frame, other.data.frame
        cols = [c for c in (C.RUN, C.N, C.D, C.LOSS) if c in a.columns or c in b.columns]
        same = len(a) == len(b) and all(
            c in a.columns and c in b.columns and (a[c].to_numpy() == b[c].to_numpy()).all()
            for c in cols)
        if not same:
            raise DataError(f"fits {name0!r} and {name!r} were fitted to different data; "
                            "compare models fitted to the same table")
    return first.data


def compare(fits: Mapping[str, Fit], *, method: str = "loo", group: str = C.RUN,
            k: int | None = None, bad_k: str = "warn", max_refits: int = 10, seed: int = 0,
            client: Any = None, workers: int | None = None, progress: bool | None = None,
            **fit_kwargs: Any) -> Comparison:
    """Rank fits of the same data by expected log predictive density.

    Parameters
    ----------
    fits : mapping of name to Fit
        Fits of the same data (different laws, priors or pooling).
    method : {"loo", "waic", "kfold"}
        ``loo`` and ``waic`` use each fit's saved pointwise log-likelihood (no refit);
        ``kfold`` refits every model without each group of ``group`` (see
        :func:`group_folds`).
    group : str
        Grouping of K-fold CV: ``"run"``, ``"N"``, ``"T_m"`` or any run-level column.
    k : int, optional
        Number of folds (default: 5 for runs, one per level otherwise).
    bad_k : {"warn", "refit", "kfold"}
        What to do when LOO finds points with Pareto k > 0.7: warn (:class:`ParetoKWarning`);
        refit exactly without each such point (up to ``max_refits`` per model, else warn);
        or switch the comparison to grouped K-fold over runs.
    seed : int
        Seed of the fold assignment and of population draws for held-out levels.
    client, workers, progress :
        Where refits run (K-fold, exact LOO): tasks of :func:`bayeslaw.inference.fleet.run`,
        serially by default, on a local cluster of ``workers`` processes or a Dask ``client``.
    **fit_kwargs
        Sampler settings for refits (default: each fit's own).
    """
    if method not in ("loo", "waic", "kfold"):
        raise ArgumentError(f"method must be 'loo', 'waic' or 'kfold', got {method!r}")
    if bad_k not in ("warn", "refit", "kfold"):
        raise ArgumentError(f"bad_k must be 'warn', 'refit' or 'kfold', got {bad_k!r}")
    data = _check_same_data(fits)
    groups = data.frame[C.RUN].to_numpy() if C.RUN in data.frame else np.arange(len(data))
    where = {"client": client, "workers": workers, "progress": progress}
    if method == "kfold":
        return _kfold_comparison(fits, data, groups, group, k, seed, fit_kwargs, where)
    pointwise, p_eff, n_bad, notes = {}, {}, {}, []
    for name, result in fits.items():
        pointwise[name], p_eff[name], khat = _ic_pointwise(result, method)
        bad = np.flatnonzero(khat > K_THRESHOLD) if khat is not None else np.array([], int)
        n_bad[name] = len(bad)
        if not len(bad):
            continue
        if bad_k == "kfold":
            switched = _kfold_comparison(fits, data, groups, C.RUN, k, seed, fit_kwargs,
                                         where)
            note = (f"{name}: {len(bad)} points with Pareto k > {K_THRESHOLD}: switched to "
                    "grouped K-fold over runs")
            return replace(switched, notes=(*notes, note, *switched.notes))
        if bad_k == "refit" and len(bad) <= max_refits:
            pointwise[name][bad] = _refit_exactly(name, result, bad, notes, where, fit_kwargs)
            continue
        notes.append(_warn_bad_k(name, khat, len(bad)))
    table = rank_table(pointwise, groups, p_eff, n_bad, method)
    return Comparison(table, method, pointwise, groups, (*notes, *unranked_notes(table)))


def _refit_exactly(name: str, result: Fit, bad: np.ndarray, notes: list[str],
                   where: Mapping[str, Any], fit_kwargs: Mapping[str, Any]) -> np.ndarray:
    """The exact LOO elpd of model ``name``'s ``bad`` points; what was done added to notes."""
    refit_notes: list[str] = []
    elpd = exact_loo_points(result, bad, **where, notes=refit_notes, **fit_kwargs)
    notes.append(f"{name}: {len(bad)} points with Pareto k > {K_THRESHOLD} refitted exactly")
    notes.extend(f"{name}: {note}" for note in refit_notes)
    return elpd


def _kfold_comparison(fits: Mapping[str, Fit], data: LossData, groups: np.ndarray,
                      group: str, k: int | None, seed: int, fit_kwargs: Mapping[str, Any],
                      where: Mapping[str, Any]) -> Comparison:
    """Grouped K-fold CV of every fit over the levels of ``group`` (see :func:`compare`)."""
    folds = group_folds(data, group, k, seed=seed)
    pointwise, notes = kfold_refits(fits, folds, {"seed": seed, **fit_kwargs}, **where)
    table = rank_table(pointwise, groups, {}, {}, f"kfold:{group}")
    return Comparison(table, f"kfold:{group}", pointwise, groups,
                      (*notes, *unranked_notes(table)))


def _warn_bad_k(name: str, khat: np.ndarray, n_bad: int) -> str:
    """Warn that ``n_bad`` points of model ``name`` have a bad Pareto k; return the note."""
    message = (f"{name}: {n_bad} of {len(khat)} points have Pareto k > "
               f"{K_THRESHOLD} (max {khat.max():.2f}); their LOO estimate is "
               "unreliable: use bad_k='refit' or method='kfold'")
    warnings.warn(message, ParetoKWarning, stacklevel=3)
    return message
