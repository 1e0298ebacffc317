"""Simulation-based calibration (Talts et al. 2018): resumable, keyed, with a rank test.

Part of :mod:`bayeslaw.testing` (re-exported there): ``bl.testing.sbc``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .. import constants as C
from ..data.table import LossData
from ..errors import ArgumentError, ConvergenceWarning, StaleRecordsWarning
from ..inference import sampling as inference
from ..spec.catalog import resolve_spec
from ..spec.model_spec import ModelSpec
from .verdicts import CheckResult


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
        seed: int = 0, path: str | Path | None = None, client: Any = None,
        workers: int | None = None, progress: bool | None = None,
        allow_unconverged: bool = False, **fit_kwargs: Any) -> CheckResult:
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
        Spec to fit with (default ``spec``); another one shows miscalibration (must fail).
    n_ranks : int
        Posterior draws kept (evenly thinned) for each rank, so ranks run 0..``n_ranks``
        (thinning below the ESS keeps ranks of autocorrelated draws uniform).
    params : sequence of str, optional
        Parameters ranked (default: the spec's sampled law parameters and ``sigma``).
    alpha : float
        Family-wise level of the uniformity tests (Bonferroni over parameters).
    bins : int, optional
        Bins of the chi-square test (default ``max(2, min(20, n_sims // 5))``: >= 5 per bin).
    seed : int
        Seeds the prior draws and each fit (``seed + i``).
    path : str or Path, optional
        JSON-lines file: each finished fit is appended at once, and a rerun with the same
        file skips the simulations already there (a long SBC is resumable).  A record is
        reused only when everything that defines it matches (:func:`sbc_key`); others are
        ignored with a warning.
    client, workers, progress :
        Each simulation's fit is a task of :func:`bayeslaw.inference.fleet.run` (serially by
        default, ``workers`` local processes or a Dask ``client`` / address), with a progress bar;
        the records are the same either way, each appended to ``path`` as its fit finishes. A
        fit that fails is named in a :class:`~bayeslaw.errors.TaskFailedWarning` and left
        out of the verdict (and of ``path``, so a rerun tries it again).
    allow_unconverged : bool
        Unconverged fits (:func:`unconverged`) fail the verdict unless ``True``.
    **fit_kwargs
        Sampler settings for every fit (``draws``, ``tune``, ``chains``, ...).
    """
    _check_seeds(seed, n_sims)
    gen = resolve_spec(spec, law=None, columns=design.columns)
    fitted = gen if fit_spec is None else resolve_spec(fit_spec, law=None, columns=design.columns)
    params = list(params) if params is not None else [*gen.free_params, "sigma"]
    path = Path(path) if path is not None else None
    key = sbc_key(design, gen, fitted, seed=seed, n_ranks=n_ranks, params=params,
                  settings=fit_kwargs)
    done = _stored_records(path, key)
    prior = inference.sample_prior_predictive(design, gen, draws=n_sims, seed=seed)
    tasks = _simulation_tasks(design, prior, [i for i in range(n_sims) if i not in done],
                              params, fitted, seed, fit_kwargs,
                              {"seed0": seed, "key": key, "n_ranks": n_ranks})
    done |= _run_simulations(tasks, path, client=client, workers=workers, progress=progress)
    return sbc_verdict([done[i] for i in range(n_sims) if i in done], params=params,
                       alpha=alpha, bins=bins, allow_unconverged=allow_unconverged)


def _check_seeds(seed: Any, n_sims: int) -> None:
    """Simulation i is fitted with ``seed + i``: every one must be a seed a fit takes."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not (
            0 <= seed and seed + n_sims <= 2**32):
        raise ArgumentError(f"sbc(): seed + n_sims must stay within 0 to {2**32} (simulation "
                            f"i is fitted with seed + i); got seed {seed}, n_sims {n_sims}")


def _run_simulations(tasks: Sequence[Any], path: Path | None, **where: Any
                     ) -> dict[int, dict[str, Any]]:
    """Run the simulations' fleet; each record appended to ``path`` as its fit finishes."""
    from ..inference import fleet

    def keep(_: int, outcome: fleet.Outcome) -> None:
        if outcome.ok and path is not None:
            _append_line(path, outcome.value)

    outcomes = fleet.run(tasks, label="SBC simulations", on_done=keep, **where)
    return {r["sim"]: r for r in fleet.values(outcomes, "SBC").values()}


def _simulation_tasks(design: LossData, prior: Any, todo: Sequence[int],
                      params: Sequence[str], fitted: ModelSpec, seed: int,
                      fit_kwargs: Mapping[str, Any], record: Mapping[str, Any]
                      ) -> list[Any]:
    """One fleet task per simulation in ``todo``: its sweep, truth, seed and record head."""
    from ..inference import fleet

    n_sims = prior.prior.sizes["chain"] * prior.prior.sizes["draw"]
    sims = prior.prior_predictive["loss"].values.reshape(n_sims, len(design))
    tasks = []
    for i in todo:
        truth = {p: float(np.asarray(prior.prior[p].values).reshape(n_sims, -1)[i, 0])
                 for p in params}
        frame = design.frame.copy()
        frame[C.LOSS] = sims[i]
        data = replace(design, frame=frame, notes=(*design.notes, f"sbc simulation {i}"))
        tasks.append(fleet.Task(f"simulation {i}", _ranked_fit,
                                (data, fitted, truth, seed + i, fit_kwargs,
                                 {"sim": i, **record})))
    return tasks


def _stored_records(path: Path | None, key: str) -> dict[int, dict[str, Any]]:
    """The records of ``path`` made with ``key``, by simulation; others are warned about."""
    stored = _read_sbc(path)
    done = {r["sim"]: r for r in stored if r.get("key") == key}
    stale = len(stored) - len(done)
    if stale:
        warnings.warn(f"{stale} SBC record(s) in {str(path)!r} were made with another design, "
                      "spec, fitted spec, sampler settings, seed or rank count: ignored and "
                      "kept in the file; the simulations are run anew (use another path to keep "
                      "runs apart)", StaleRecordsWarning, stacklevel=3)
    return done


def _ranked_fit(data: LossData, spec: ModelSpec, truth: Mapping[str, float], seed: int,
                fit_kwargs: Mapping[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Fit one simulated sweep; its record: the truth's ranks and the fit's convergence."""
    n_ranks = record["n_ranks"]
    with warnings.catch_warnings():
        # judged over all simulations: each record keeps its R-hat, ESS and divergences
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = inference.fit(data, spec, seed=seed, **{"progress": False, **fit_kwargs})
    diag = result.diagnostics
    return {**record, "truth": dict(truth),
            "ranks": {p: _thinned_rank(result.draws(p), truth[p], n_ranks) for p in truth},
            "max_rhat": diag.max_rhat, "min_ess_bulk": diag.min_ess_bulk,
            "divergences": diag.divergences}


def unconverged(record: Mapping[str, Any]) -> bool:
    """Whether a simulation's fit did not converge (R-hat over the threshold, divergences).

    R-hat above (or not below: NaN) ``constants.MAX_RHAT``, or any divergent transition.
    """
    return not record["max_rhat"] <= C.MAX_RHAT or record["divergences"] > 0


def sbc_verdict(records: Sequence[Mapping[str, Any]], *, params: Sequence[str] | None = None,
                alpha: float = 0.01, bins: int | None = None,
                allow_unconverged: bool = False) -> CheckResult:
    """Chi-square test of uniform ranks per parameter (Bonferroni at family-wise ``alpha``).

    Simulations whose fit did not converge (:func:`unconverged`) are counted
    (``values["unconverged"]``) and fail the verdict unless ``allow_unconverged``.
    """
    if not records:
        raise ArgumentError("no SBC simulations to judge: run sbc() with n_sims >= 1")
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
    bad = [int(r.get("sim", i)) for i, r in enumerate(records) if unconverged(r)]
    if bad and not allow_unconverged:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        failures.append(f"{len(bad)} of {n} simulations did not converge (R-hat > "
                        f"{C.MAX_RHAT} or divergent transitions: simulation {shown}); their "
                        "ranks come from unsampled posteriors: lengthen tune / draws or raise "
                        "target_accept, or pass allow_unconverged=True to judge the ranks "
                        "anyway")
    values = {"n_sims": n, "n_ranks": n_ranks, "bins": bins, "alpha": alpha,
              "unconverged": len(bad),
              "max_rhat": float(max(r["max_rhat"] for r in records)),
              "divergent_fits": int(sum(r["divergences"] > 0 for r in records)),
              "ranks": {p: [r["ranks"][p] for r in records] for p in params}}
    return CheckResult("sbc", not failures, values, failures,
                       pd.DataFrame(rows).set_index("param"))


