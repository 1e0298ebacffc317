"""The :class:`Fit` result: posterior draws, spec, data, provenance; netCDF save / load."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import constants as C
from ..data.table import LossData
from ..errors import ApproximationWarning, ConvergenceError, ConvergenceWarning, FitFileError
from ..files import atomic_write
from ..laws.multi_power import RunSchedule
from ..model.plan import level_counts, level_richness
from ..spec.model_spec import ModelSpec
from ..spec.settings import SamplerSettings
from .diagnosis import LevelFacts, NoiseLevels
from .diagnostics import Diagnostics, Thresholds, diagnose, judge
from .draws import Posterior
from .noise import pointwise_log_likelihood

#: An approximate fit whose distinct draws are fewer than this share of its draws says so.
COLLAPSED_SHARE = 0.1


def distinct_draws(posterior: Any) -> tuple[int, int]:
    """How many of ``posterior``'s draws (over chains) are distinct points, of how many.

    Each draw's values of every variable are compared exactly.
    """
    n = posterior.sizes["chain"] * posterior.sizes["draw"]
    rows = np.concatenate([np.asarray(v.values, float).reshape(n, -1)
                           for v in posterior.data_vars.values()], axis=1)
    return len(np.unique(rows, axis=0)), n


@dataclass(frozen=True, eq=False, repr=False)
class Fit(Posterior):
    """A fitted model: posterior draws + spec + data + provenance, immutable.

    Built complete by :func:`bayeslaw.fit` (or :meth:`from_draws`): the pointwise
    log-likelihood is in ``idata`` and the diagnostics are computed, before the object exists.

    Attributes
    ----------
    idata : arviz.InferenceData
        ``posterior``, ``sample_stats`` and ``log_likelihood`` (pointwise, for LOO).
    spec : ModelSpec
    data : LossData
    provenance : dict
        Seed, sampler settings, input path and hash, package version, method, timings.
    diagnostics : Diagnostics
        Convergence diagnostics judged against ``thresholds`` (none apply to an
        approximate fit: its one failure says so).
    thresholds : Thresholds
    """

    provenance: dict[str, Any]
    diagnostics: Diagnostics
    thresholds: Thresholds = field(default_factory=Thresholds)

    @classmethod
    def from_draws(cls, idata: Any, spec: ModelSpec, data: LossData,
                   provenance: dict[str, Any], thresholds: Thresholds | None = None) -> Fit:
        """A complete fit from posterior draws; log-likelihood and diagnostics come first.

        The pointwise log-likelihood of ``data`` under ``spec`` is computed (into a shallow
        copy of ``idata``; one it held is dropped) and the diagnostics are judged against
        ``thresholds`` once.
        """
        import arviz as az

        # a shallow copy less any stored log-likelihood: draws reused with other data or
        # another spec never keep a log-likelihood that is not theirs
        idata = az.InferenceData(**{g: idata[g] for g in idata.groups()
                                    if g != "log_likelihood"})
        add_log_likelihood(idata, Posterior(idata, spec, data))
        return cls.assemble(idata, spec, data, provenance, thresholds)

    @classmethod
    def assemble(cls, idata: Any, spec: ModelSpec, data: LossData, provenance: dict[str, Any],
                 thresholds: Thresholds | None = None) -> Fit:
        """A fit from draws that hold their own log-likelihood (a saved fit); diagnostics."""
        thresholds = thresholds or Thresholds()
        diag = judge(idata, str(provenance.get("method", "nuts")), thresholds,
                     derived=_derived(idata, spec), settings=_settings(provenance, spec),
                     facts=level_facts(spec, data))
        return cls(idata, spec, data, provenance, diag, thresholds)

    @property
    def settings(self) -> SamplerSettings:
        """The sampler settings the draws were made with (the spec's, with any overrides)."""
        return _settings(self.provenance, self.spec)

    @property
    def method(self) -> str:
        """``"nuts"``, or the approximation that made the draws (``"laplace"``, ...)."""
        return str(self.provenance.get("method", "nuts"))

    @property
    def approximate(self) -> bool:
        """Whether the draws come from an approximation, not from NUTS."""
        return self.method in C.APPROXIMATE_METHODS

    @property
    def label(self) -> str:
        """The law's name, marked approximate where it is (figure titles, reports)."""
        return (f"{self.spec.law} (approximate: {self.method})" if self.approximate
                else self.spec.law)

    def __repr__(self) -> str:
        post = self.idata.posterior
        state = ("converged" if self.diagnostics.ok else "NOT converged") if not \
            self.approximate else f"approximate: {self.method}"
        return (f"Fit(law={self.spec.law!r}, runs={len(self.data.runs)}, "
                f"points={len(self.data)}, draws={post.sizes['chain']}x{post.sizes['draw']}, "
                f"{state})")

    def predict(self, points: pd.DataFrame, **kwargs: Any) -> Any:
        """Posterior predictions at ``points``: see :func:`bayeslaw.predict`."""
        from .prediction import predict

        return predict(self, points, **kwargs)

    def check(self, *, strict: bool = False, thresholds: Thresholds | None = None) -> Diagnostics:
        """Warn (or raise with ``strict``) when diagnostics fail; return them."""
        diag = (self.diagnostics if thresholds is None or self.approximate
                else diagnose(self.idata, thresholds, derived=_derived(self.idata, self.spec),
                              settings=self.settings, facts=level_facts(self.spec, self.data)))
        if self.approximate:
            if strict:
                raise ConvergenceError(diag.failures[0])
            k = self.provenance.get("sampling", {}).get("pareto_k")
            extra = (f"; its Pareto k is {k:.2f} (> 0.7: the posterior is far from the "
                     f"{self.method} approximation here)" if k is not None and k > 0.7
                     else "")
            distinct, n = distinct_draws(self.idata.posterior)
            if distinct < max(2, COLLAPSED_SHARE * n):
                extra += (f"; its {n} draws hold only {distinct} distinct point(s) (the "
                          f"{self.method} draws collapsed onto them): its bands are far too "
                          f"narrow, refit with method='nuts'")
            warnings.warn(diag.failures[0] + "; a first look, not a checked posterior" + extra,
                          ApproximationWarning, stacklevel=3)
            return diag
        if not diag.ok:
            msg = "sampling did not converge: " + "; ".join(diag.failures)
            why = "" if diag.diagnosis is None else "\n" + str(diag.diagnosis)
            if strict:
                raise ConvergenceError(msg + why)
            warnings.warn(msg + " (run longer, or see the diagnostics table)" + why,
                          ConvergenceWarning, stacklevel=3)
        return diag

    def coefficient_names(self) -> list[str]:
        """Law coefficients (sampled ones, then textbook A, B, C) and noise parameters."""
        law = self.spec.law_obj
        names = list(self.spec.free_params)
        names += [n for n in law.natural_names if n in self.idata.posterior]
        names += [n for n in ("sigma", "sigma_spread", "nu", "outlier_share", "outlier_scale",
                              "sigma_decay", "ar1", "walk", "walk_start", "walk_hurst")
                  if n in self.idata.posterior]
        names += [f"{e.name}_sd" for e in self.spec.effects if f"{e.name}_sd" in
                  self.idata.posterior]
        return names

    def summary(self, prob: float = C.TABLE_PROB) -> pd.DataFrame:
        """Coefficient table: mean, sd, central ``prob`` interval, R-hat, bulk/tail ESS."""
        import arviz as az

        names = self.coefficient_names()
        if self.approximate:  # one "chain" of independent draws: nothing to diagnose
            table = pd.DataFrame(np.nan, index=names, columns=["r_hat", "ess_bulk", "ess_tail"])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                warnings.simplefilter("ignore", UserWarning)
                table = az.summary(self.idata, var_names=names, kind="all", hdi_prob=prob,
                                   stat_focus="mean")
        lo, hi = (1 - prob) / 2, 1 - (1 - prob) / 2
        q = {n: np.quantile(self.draws(n), [lo, hi]) for n in names}
        pct = f"{int(round(prob * 100))}%"
        out = pd.DataFrame({
            "mean": [float(self.draws(n).mean()) for n in names],
            "sd": [float(self.draws(n).std(ddof=1)) for n in names],
            f"lower_{pct}": [float(q[n][0]) for n in names],
            f"upper_{pct}": [float(q[n][1]) for n in names],
            "r_hat": table["r_hat"].reindex(names).to_numpy(),
            "ess_bulk": table["ess_bulk"].reindex(names).to_numpy(),
            "ess_tail": table["ess_tail"].reindex(names).to_numpy(),
        }, index=pd.Index(names, name="coefficient"))
        if self.approximate:  # no chain to diagnose: say what made the draws instead
            out = out.drop(columns=["r_hat", "ess_bulk", "ess_tail"])
            out["method"] = f"{self.method} (approximate)"
        return out

    def save(self, path: str | Path) -> Path:
        """Write the fit to one netCDF file, atomically (temp file, then rename)."""
        import xarray as xr

        idata = self.idata.copy()
        frame = self.data.frame
        cols, missing = {}, []
        for c in frame.columns:
            values = frame[c].to_numpy()
            if values.dtype.kind in "fiub":
                cols[f"data__{c}"] = ("row", values)
                continue
            absent = pd.isna(frame[c]).to_numpy()
            cols[f"data__{c}"] = ("row", np.where(absent, "", values.astype(str)).astype(object))
            if absent.any():  # a text column's missing values: kept as such, not as "nan"
                cols[f"missing__{c}"] = ("row", absent)
                missing.append(c)
        windows = None
        if self.data.schedules:
            flat, windows = _flatten(self.data.schedules)
            cols.update({f"schedule__{k}": ("node", v.astype(str).astype(object) if k == "run"
                                             else v) for k, v in flat.items()})
        if "constant_data" in idata.groups():
            del idata["constant_data"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            idata.add_groups(constant_data=xr.Dataset(cols))
        idata.posterior.attrs.update({
            "bayeslaw_format_version": C.FIT_FORMAT_VERSION,
            "bayeslaw_spec": self.spec.to_json(),
            "bayeslaw_provenance": json.dumps(self.provenance, sort_keys=True),
            "bayeslaw_method": (f"{self.method} (approximate)" if self.approximate
                                else self.method),
            "bayeslaw_data": json.dumps({"source": self.data.source, "sha256": self.data.sha256,
                                         "has_runs": self.data.has_runs,
                                         "notes": list(self.data.notes),
                                         "columns": list(frame.columns),
                                         "dtypes": [str(t) for t in frame.dtypes],
                                         "missing": missing,
                                         "schedule_windows": windows}),
        })
        # contiguous and uncompressed, a loaded fit's chunked zlib layout included: the draws
        # hardly compress, and compressing them cost most of the save's time
        # (benchmarks/results/figures_2026-12-03.md, "fit file")
        for group in idata.groups():
            for var in idata[group].variables.values():
                var.encoding = {}
        return atomic_write(path, lambda tmp: idata.to_netcdf(tmp, engine="h5netcdf",
                                                               compress=False))

    @classmethod
    def load(cls, path: str | Path) -> Fit:
        """Read a fit written by :meth:`save` (exact round trip)."""
        import arviz as az

        path = Path(path)
        if not path.is_file():
            raise FitFileError(f"fit file {str(path)!r} does not exist")
        try:
            idata = az.from_netcdf(path, engine="h5netcdf")
            attrs = dict(idata.posterior.attrs)
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            raise FitFileError(f"{str(path)!r} is not a bayeslaw fit file ({exc})") from None
        version = attrs.get("bayeslaw_format_version")
        if version is None:
            raise FitFileError(f"{str(path)!r} is a netCDF file but not a bayeslaw fit")
        if int(version) != C.FIT_FORMAT_VERSION:
            raise FitFileError(f"{str(path)!r} has fit format {version}; this bayeslaw reads "
                               f"format {C.FIT_FORMAT_VERSION}: refit with this version")
        meta = json.loads(attrs["bayeslaw_data"])
        const = idata.constant_data
        frame = _frame(const, meta)
        windows = meta.get("schedule_windows")
        schedules = (_unflatten({k: const[f"schedule__{k}"].values for k in ("run", "D", "eta")},
                               windows) if windows else None)
        del idata["constant_data"]
        for key in [k for k in attrs if k.startswith("bayeslaw_")]:
            del idata.posterior.attrs[key]
        data = LossData(frame, meta["source"], meta["sha256"], meta["has_runs"],
                        tuple(meta["notes"]), schedules)
        spec = ModelSpec.from_dict(json.loads(attrs["bayeslaw_spec"]))
        return cls.assemble(idata, spec, data, json.loads(attrs["bayeslaw_provenance"]))


def _settings(provenance: Mapping[str, Any], spec: ModelSpec) -> SamplerSettings:
    """The sampler settings a fit's provenance records (the spec's when it records none)."""
    recorded = provenance.get("sampler")
    return SamplerSettings.from_dict(recorded) if recorded is not None else spec.sampler


def level_facts(spec: ModelSpec, data: LossData) -> LevelFacts:
    """The diagnosis's view of the fitted data's levels.

    :func:`noise_levels` and :func:`rich_effects` in one :class:`LevelFacts`.
    """
    return LevelFacts(noise_levels(spec, data), rich_effects(spec, data))


def noise_levels(spec: ModelSpec, data: LossData) -> NoiseLevels | None:
    """The diagnosis's view of the noise's levels; None without ``sigma_by``.

    The fitted points of each level of the likelihood's ``sigma_by`` (counted as the plan
    counts them, :func:`~bayeslaw.model.plan.level_counts`) and the coefficients each has of
    its own (the spec's effects over it).
    """
    group = spec.likelihood.sigma_by
    if group is None or group not in data.frame:
        return None
    levels, _ = data.levels(group)
    counts = level_counts(data, data, group)
    return NoiseLevels(group, {str(v): int(n) for v, n in zip(levels.tolist(), counts,
                                                                strict=True)},
                       sum(e.group == group for e in spec.effects),
                       spec.likelihood.sigma_min_points)


def rich_effects(spec: ModelSpec, data: LossData) -> frozenset[str]:
    """The effects rich in data, for the diagnosis's funnel remedy.

    Those (``<param>_by_<group>``, as the graph names them) every level of which the plan's
    ``centered = "auto"`` rule (:func:`~bayeslaw.model.plan.level_richness`) would center on
    the fitted data: the diagnosis advises a funnel's centering switch only where it applies.
    """
    return frozenset(f"{e.param}_by_{e.group}" for e in spec.effects if e.group in data.frame
                     and level_richness("auto", data, data, e.group).all())


def _derived(idata: Any, spec: ModelSpec) -> tuple[str, ...]:
    """The posterior's variables that are functions of others (the diagnosis leaves them out).

    The textbook coefficients, the values per run, a ``[correlation]`` block's matrix (a
    function of its partial correlations, symmetric: its two halves would show as a perfect
    correlation; see :mod:`.diagnosis`), a sampler split's joint vector (its elements are the
    parameters' own draws), a non-centered term's deviations (its sd times its ``_z``), a
    term sampled as values (its ``_value`` less the centre) and one sampled at each curve's
    window (``_mid``: :mod:`bayeslaw.model.window`).
    """
    natural = set(spec.law_obj.natural_names)
    if spec.correlation is not None:
        natural.add(spec.correlation.name)
    names = set(idata.posterior.data_vars)
    # a sampler split's joint vector repeats its parameters' draws (kept: the parameters)
    natural |= set(spec.sampler.joint_names().values())
    # non-centered terms: the deviations (and the noise's log deviations) are sd times z
    # (sigma_z's deviations are sigma_log_dev, or sigma_own_dev with sigma_min_points, whose
    # sigma_log_dev is sigma_own_dev times the container sigma_own; sigma itself is sampled)
    own = "sigma_own_dev" in names
    natural |= {n[:-2] for n in names if n.endswith("_z") and n != "sigma_z"}
    # a curve's coefficients sampled at its window (sampler.shape_at): the deviations too
    natural |= {n[:-len("_mid")] for n in names if n.endswith("_mid")}
    if "sigma_z" in names:
        natural.add("sigma_own_dev" if own else "sigma_log_dev")
    if own:
        natural.add("sigma_log_dev")
    # terms sampled as values (sampler.centered_values): the deviations are value - centre
    natural |= {n[:-len("_value")] for n in names if n.endswith("_value")}
    # centered_values = "offset": the joint of a population value and its levels repeats them
    natural |= {n for n in names if n.endswith("_joint")}
    # centered_values = "shifted": a term's deviations are its rotated coordinates turned back
    natural |= {n[:-len("_rot")] for n in names if n.endswith("_rot")}
    return tuple(n for n in idata.posterior.data_vars if n in natural or n.endswith("_run"))


def _flatten(schedules: Mapping[str, RunSchedule]) -> tuple[dict[str, np.ndarray],
                                                           dict[str, float]]:
    """Every run's grid as flat arrays (``run``, ``D``, ``eta``) and each run's window."""
    runs = list(schedules)
    flat = {"run": np.concatenate([np.full(len(schedules[r].D), r, dtype=object)
                                   for r in runs]),
            "D": np.concatenate([schedules[r].D for r in runs]),
            "eta": np.concatenate([schedules[r].eta for r in runs])}
    return flat, {r: float(schedules[r].window) for r in runs}


def _unflatten(flat: Mapping[str, np.ndarray], windows: Mapping[str, float]
               ) -> dict[str, RunSchedule]:
    """The schedules :func:`_flatten` wrote (an exact round trip)."""
    runs = np.asarray(flat["run"]).astype(str)
    return {r: RunSchedule(np.asarray(flat["D"], float)[runs == r],
                           np.asarray(flat["eta"], float)[runs == r], float(w))
            for r, w in windows.items()}


def _frame(const: Any, meta: dict[str, Any]) -> pd.DataFrame:
    """The fitted table from a saved fit's ``constant_data``, with its dtypes.

    A text column's missing values come back missing (the ``missing`` list names the columns
    with a ``missing__`` mask); a file written before the masks holds them as ``"nan"``.
    """
    frame = pd.DataFrame({c: const[f"data__{c}"].values for c in meta["columns"]})
    for c, t in zip(meta["columns"], meta["dtypes"], strict=True):
        if frame[c].dtype.kind in "fiub":
            frame[c] = frame[c].astype(t)
            continue
        values = frame[c].astype(str).to_numpy(dtype=object)
        if "missing" not in meta:  # written before the masks: NaN was saved as "nan"
            absent = values == "nan"
        else:
            absent = (np.asarray(const[f"missing__{c}"].values, bool)
                      if c in meta["missing"] else np.zeros(len(values), bool))
        values[absent] = np.nan
        frame[c] = pd.Series(values).astype(t) if t in ("string", "category") else values
    return frame


@dataclass(frozen=True, repr=False)
class Fits(Mapping[str, Fit]):
    """The fits of :func:`bayeslaw.fit_many` by job name, and the jobs that failed.

    A read-only mapping of name to :class:`Fit`; ``failures`` maps each failed job's name to
    its error (type and message).
    """

    fits: dict[str, Fit]
    failures: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Fit:
        return self.fits[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fits)

    def __len__(self) -> int:
        return len(self.fits)

    def __repr__(self) -> str:
        text = f"Fits: {len(self.fits)} fitted ({', '.join(self.fits) or 'none'})"
        return text + "".join(f"\nfailed: {k}: {v}" for k, v in self.failures.items())


def add_log_likelihood(idata: Any, post: Posterior) -> None:
    """Put the pointwise log-likelihood of ``post`` (numpy, no recompilation) into ``idata``."""
    import xarray as xr

    ll = pointwise_log_likelihood(post).astype(np.float32)
    posterior = idata.posterior
    ll = ll.reshape(posterior.sizes["chain"], posterior.sizes["draw"], -1)
    ds = xr.Dataset({"loss": (("chain", "draw", "obs"), ll)},
                    coords={"chain": posterior.chain, "draw": posterior.draw,
                            "obs": np.arange(ll.shape[-1])})
    if "log_likelihood" in idata.groups():
        del idata["log_likelihood"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # arviz: "the group is new", by design
        idata.add_groups(log_likelihood=ds)
