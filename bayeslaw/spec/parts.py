"""The parts of a spec: priors as objects, group effects and the likelihood.

Each part is a frozen dataclass whose fields are the keys its spec section allows
(:mod:`bayeslaw.spec.model_spec` parses and checks them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SpecError, plain

#: Parameters a distribution cannot do without (the others in :data:`_DISTS` are optional).
_REQUIRED: dict[str, frozenset[str]] = {
    "Normal": frozenset({"mu", "sigma"}),
    "LogNormal": frozenset({"mu", "sigma"}),
    "HalfNormal": frozenset({"sigma"}),
    "TruncatedNormal": frozenset({"mu", "sigma"}),
    "Gamma": frozenset({"alpha", "beta"}),
    "Exponential": frozenset({"lam"}),
    "Uniform": frozenset({"lower", "upper"}),
    "Beta": frozenset({"alpha", "beta"}),
}
#: Distributions a spec may name, with the parameters each accepts.
_DISTS: dict[str, frozenset[str]] = {
    "Normal": frozenset({"mu", "sigma"}),
    "LogNormal": frozenset({"mu", "sigma"}),
    "HalfNormal": frozenset({"sigma"}),
    "TruncatedNormal": frozenset({"mu", "sigma", "lower", "upper"}),
    "Gamma": frozenset({"alpha", "beta"}),
    "Exponential": frozenset({"lam"}),
    "Uniform": frozenset({"lower", "upper"}),
    "Beta": frozenset({"alpha", "beta"}),
}
#: The parameters each likelihood family adds to the noise scale, in the order the graph, the
#: posterior layer and the simulator pass them to the noise model
#: (:func:`bayeslaw.model.noise.density_terms`, :func:`~bayeslaw.model.noise.standard_noise`).
FAMILY_PARAMS: dict[str, tuple[str, ...]] = {
    "student_t": ("nu",),
    "normal": (),
    "contaminated": ("outlier_share", "outlier_scale"),
}
LIKELIHOODS = tuple(FAMILY_PARAMS)
POOLINGS = ("partial", "none")


#: Parameters that must be positive (a scale, a shape or a rate): PyMC would build the
#: distribution and its log density would be nan everywhere.
_POSITIVE = frozenset({"sigma", "alpha", "beta", "lam"})


def _number(value: Any) -> bool:
    """Whether ``value`` is a real number (``True`` and ``False`` are not)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_support(dist: str, params: Mapping[str, float]) -> None:
    """Scales, shapes and rates positive, and ``lower < upper``: a density defined somewhere."""
    for k in sorted(_POSITIVE & set(params)):
        if params[k] <= 0:
            raise SpecError(f"prior {dist} parameter {k} = {plain(params[k])} must be positive")
    if "lower" in params and "upper" in params and not params["lower"] < params["upper"]:
        raise SpecError(f"prior {dist} needs lower < upper, got lower = "
                        f"{plain(params['lower'])}, upper = {plain(params['upper'])}")


@dataclass(frozen=True)
class Prior:
    """A named PyMC distribution with numeric parameters, serialisable to a dict.

    Examples
    --------
    >>> Prior("LogNormal", {"mu": 0.0, "sigma": 0.5}).to_dict()
    {'dist': 'LogNormal', 'mu': 0.0, 'sigma': 0.5}
    """

    dist: str
    params: Mapping[str, float]

    def __post_init__(self) -> None:
        if not isinstance(self.dist, str) or self.dist not in _DISTS:
            raise SpecError(f"unknown prior distribution {plain(self.dist)}; use one of "
                            f"{', '.join(sorted(_DISTS))}")
        bad = set(self.params) - _DISTS[self.dist]
        missing = _REQUIRED[self.dist] - set(self.params)
        if bad or missing:
            what = "; ".join(
                ([f"unknown parameter(s) {sorted(bad, key=str)}"] if bad else [])
                + ([f"missing {sorted(missing)}"] if missing else []))
            raise SpecError(
                f"prior {self.dist}: {what}; it takes {sorted(_DISTS[self.dist])} "
                f"(required: {sorted(_REQUIRED[self.dist])})"
            )
        for k, v in self.params.items():
            if not _number(v) or not np.isfinite(v):
                raise SpecError(f"prior {self.dist} parameter {k} = {plain(v)} must be a "
                                "finite number")
        _check_support(self.dist, self.params)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Prior:
        """Inverse of :meth:`to_dict`."""
        if "dist" not in d:
            raise SpecError(f"prior {dict(d)!r} needs a 'dist' key, e.g. dist = \"LogNormal\"")
        return cls(d["dist"], {k: float(v) if _number(v) else v
                               for k, v in d.items() if k != "dist"})

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form, as written in a spec file."""
        return {"dist": self.dist, **dict(self.params)}

    def create(self, name: str, **kwargs: Any) -> Any:
        """Create the PyMC random variable inside the current model context."""
        import pymc as pm

        return getattr(pm, self.dist)(name, **self.params, **kwargs)

    def dist_(self) -> Any:
        """An unnamed PyMC distribution (for forward draws)."""
        import pymc as pm

        return getattr(pm, self.dist).dist(**self.params)

    def quantile(self, q: float) -> float:
        """The prior's ``q`` quantile (scipy's distribution of the same parameters)."""
        return float(self.scipy().ppf(q))

    def scipy(self) -> Any:
        """The frozen scipy distribution of the same parameters."""
        from scipy import stats

        p = dict(self.params)
        if self.dist == "TruncatedNormal":
            lo, hi = p.get("lower", -np.inf), p.get("upper", np.inf)
            return stats.truncnorm((lo - p["mu"]) / p["sigma"], (hi - p["mu"]) / p["sigma"],
                                   loc=p["mu"], scale=p["sigma"])
        return {
            "Normal": lambda: stats.norm(p["mu"], p["sigma"]),
            "LogNormal": lambda: stats.lognorm(p["sigma"], scale=np.exp(p["mu"])),
            "HalfNormal": lambda: stats.halfnorm(scale=p["sigma"]),
            "Gamma": lambda: stats.gamma(p["alpha"], scale=1.0 / p["beta"]),
            "Exponential": lambda: stats.expon(scale=1.0 / p["lam"]),
            "Uniform": lambda: stats.uniform(p["lower"], p["upper"] - p["lower"]),
            "Beta": lambda: stats.beta(p["alpha"], p["beta"]),
        }[self.dist]()


@dataclass(frozen=True)
class Effect:
    """A group effect: ``param`` varies by the levels of column ``group``.

    ``pooling="partial"``: effects with a learned sd whose prior is ``scale`` (partial
    pooling), centered (``effect ~ Normal(0, sd)``) or non-centered (``sd * z``); ``"auto"``
    picks centered when every level holds at least
    :data:`~bayeslaw.constants.CENTERED_MIN_POINTS` observations (the data then pin each
    level and the non-centered form becomes a curved ridge) and non-centered otherwise.
    ``pooling="none"``: the sd is fixed at the number
    ``scale`` (no information shared about the spread: effectively unpooled levels).
    Effects are added on the parameter's link scale (log for positive parameters).
    """

    param: str
    group: str
    pooling: str = "partial"
    scale: Prior | float = field(default_factory=lambda: Prior("HalfNormal", {"sigma": 0.1}))
    centered: bool | str = "auto"

    @property
    def name(self) -> str:
        """Stem of the variable names of this effect (``b_by_N``)."""
        return f"{self.param}_by_{self.group}"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form."""
        scale = self.scale.to_dict() if isinstance(self.scale, Prior) else self.scale
        return {"param": self.param, "group": self.group, "pooling": self.pooling,
                "scale": scale, "centered": self.centered}


@dataclass(frozen=True)
class Correlation:
    """Correlated group effects: the effects of ``params`` by ``group`` share one level draw.

    The level deviations of those effects (each with its own learned sd) are jointly normal
    with correlation matrix ``R ~ LKJ(eta)``: a curve's asymptote and slope inform each other.
    ``eta = 1`` is uniform over correlation matrices; larger values favour weak correlation.
    Every named parameter needs a partially pooled effect by ``group`` in ``[[effects]]``; the
    block is centered when all of them are, non-centered otherwise.
    """

    group: str
    params: tuple[str, ...]
    eta: float = 2.0

    @property
    def name(self) -> str:
        """Stem of the block's variable names (``run_corr``: the correlation matrix)."""
        return f"{self.group}_corr"

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form."""
        return {"group": self.group, "params": list(self.params), "eta": self.eta}


@dataclass(frozen=True)
class Likelihood:
    """Observation model: family, noise scale, per-run spread, decay with D, AR(1), dof.

    The noise of point ``i`` of run ``r`` has marginal scale
    ``s_i = sigma_r * (D_i / D_ref) ** -sigma_decay`` (``sigma_decay`` only when given a
    prior: noise that shrinks as training goes on), times the law's value ``mu_i`` when
    ``sigma_relative`` (``sigma`` is then a fraction of the loss: noise on the log-loss
    scale, as the least-squares baseline's Huber loss on log-loss assumes).  With an ``ar1``
    prior, standardised residuals of consecutive points of a run follow an AR(1) with
    correlation ``ar1``:
    ``y_i | y_(i-1) ~ family(mu_i + ar1 * s_i / s_(i-1) * e_(i-1), s_i * sqrt(1 - ar1^2))``
    (the first point of a run: scale ``s_i``), so ``s_i`` stays the marginal scale that
    predictions far from the data use.

    With a ``walk`` prior (tau, in loss units per square root of an e-fold of tokens) and a
    ``walk_start`` prior (s0), a run's residual ``e = y - mu`` drifts as a random walk in
    ``x = log D``: ``e_i | e_(i-1) ~ family(e_(i-1), sqrt(s_i^2 + tau^2 (x_i - x_(i-1))))``,
    and a run's first point ``e ~ family(0, sqrt(s_i^2 + s0^2 + tau^2 |x_i - log D_ref|))``
    (the walk starts at the reference tokens with spread s0).  A forecast of a fitted run then
    starts from its logged residual and widens with the distance in log tokens (a bridge
    between logged points); ``s_i`` is the white part of one step.  Both scales are times the
    law's value with ``sigma_relative``.  With a ``walk_hurst`` prior (h in (0, 1)), every
    distance ``g`` in log D above enters as ``g^(2h)`` (a fractional walk): h = 1/2 (the
    default) is the random walk, h near 1 a drift whose spread grows in proportion to the
    distance (a run's residual bending away from the law along a trend of its own).

    With ``family = "contaminated"`` the noise is a normal of scale ``s_i`` with probability
    ``1 - outlier_share`` and a normal of scale ``(1 + outlier_scale) s_i`` otherwise: a few
    outlying points (a logging glitch, a loss spike, a digitising slip) are taken by the wide
    part and the rest keep normal tails, where a Student-t would give every point heavy tails.

    With ``sigma_min_points = K`` a level of ``sigma_by`` takes a noise scale of its own only
    when the fit observes at least ``K`` of its points; a level with fewer (but some) takes
    the pooled ``sigma`` (its deviation is zero in the fit and in every forecast), and the
    population of scales is learned from the others.  A curve of about as many points as the
    law has coefficients per curve can pass through its points, its own scale then shrinks
    toward zero and holds its shape in a narrow, curved region that the sampler does not
    cross (``benchmarks/results/few_points_convergence_2026-12-06/README.md``).  A level
    with no observed point (a held-out run) still draws its scale from the population.

    With a ``shock`` prior (a step-wise law's table: ``tau``, in loss units) every row of one
    checkpoint (a looped run's exit steps and its total at one ``D``: one evaluation batch
    for all) shares a shift ``u_c ~ N(0, tau)``, sampled non-centered as
    ``checkpoint_shock``, summing to zero over each looped run's checkpoints (the run's
    level is the law's); the curves' own noise is independent given it.  A forecast at a
    fitted checkpoint (a held-out exit step) takes that checkpoint's shift from the
    posterior; a new checkpoint draws its own, shared by its rows.

    These are the spec's keys; the noise model is written once in :mod:`bayeslaw.model.noise`
    (the graph's and the simulator's arithmetic) and evaluated on posterior draws by
    :mod:`bayeslaw.posterior.noise`, whose docstrings describe it in full.
    """

    family: str
    sigma: Prior
    sigma_by: str | None = "run"
    sigma_spread: Prior | None = None
    nu: Prior | None = None
    sigma_centered: bool | str = "auto"
    sigma_decay: Prior | None = None
    ar1: Prior | None = None
    sigma_relative: bool = False
    walk: Prior | None = None
    walk_start: Prior | None = None
    walk_hurst: Prior | None = None
    outlier_share: Prior | None = None
    outlier_scale: Prior | None = None
    sigma_min_points: int | None = None
    shock: Prior | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form."""
        out: dict[str, Any] = {"family": self.family, "sigma": self.sigma.to_dict(),
                               "sigma_by": self.sigma_by or "none",
                               "sigma_centered": self.sigma_centered}
        if self.sigma_spread is not None:
            out["sigma_spread"] = self.sigma_spread.to_dict()
        if self.nu is not None:
            out["nu"] = self.nu.to_dict()
        if self.sigma_decay is not None:
            out["sigma_decay"] = self.sigma_decay.to_dict()
        if self.ar1 is not None:
            out["ar1"] = self.ar1.to_dict()
        if self.sigma_relative:
            out["sigma_relative"] = True
        if self.walk is not None:
            out["walk"] = self.walk.to_dict()
            out["walk_start"] = self.walk_start.to_dict()
        if self.walk_hurst is not None:
            out["walk_hurst"] = self.walk_hurst.to_dict()
        for key in ("outlier_share", "outlier_scale"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key).to_dict()
        if self.sigma_min_points is not None:  # only when set: existing caches keep their keys
            out["sigma_min_points"] = self.sigma_min_points
        if self.shock is not None:
            out["shock"] = self.shock.to_dict()
        return out


def link_width(prior: Prior, link: str) -> float:
    """The sd of a prior on a parameter's link scale (log, logit or identity), as a number.

    Exact for ``LogNormal`` (log link: its ``sigma``) and ``Normal``; moment-based for the
    others (a ``Beta`` on the logit scale: ``sqrt(trigamma(alpha) + trigamma(beta))``); 1.0
    where no closed form is at hand.  The fixed sd of unpooled levels.
    """
    q = dict(prior.params)
    if link == "logit":
        if prior.dist == "Beta":
            from scipy.special import polygamma

            return float(np.sqrt(polygamma(1, q["alpha"]) + polygamma(1, q["beta"])))
        return 1.0
    if link == "log":
        if prior.dist == "LogNormal":
            return float(q["sigma"])
        if prior.dist == "Gamma":  # sd of log X ~ sqrt(trigamma(alpha))
            from scipy.special import polygamma

            return float(np.sqrt(polygamma(1, q["alpha"])))
        return 1.0
    if prior.dist in ("Normal", "TruncatedNormal"):
        return float(q["sigma"])
    if prior.dist == "LogNormal":
        mu, s = q["mu"], q["sigma"]
        return float(np.sqrt(np.expm1(s**2) * np.exp(2 * mu + s**2)))
    if prior.dist == "Gamma":
        return float(np.sqrt(q["alpha"]) / q["beta"])
    if prior.dist == "HalfNormal":
        return float(q["sigma"] * np.sqrt(1 - 2 / np.pi))
    if prior.dist == "Exponential":
        return float(1 / q["lam"])
    if prior.dist == "Uniform":
        return float((q["upper"] - q["lower"]) / np.sqrt(12))
    if prior.dist == "Beta":
        a, b = q["alpha"], q["beta"]
        return float(np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))))
    return 1.0


def parse_prior(value: Any, where: str) -> Prior:
    """A prior from a spec's table ``value`` found at ``where`` (named in the error)."""
    if not isinstance(value, Mapping):
        raise SpecError(f"{where} must be a table like {{ dist = \"LogNormal\", mu = 0, "
                        f"sigma = 1 }}, got {plain(value)}")
    try:
        return Prior.from_dict(value)
    except SpecError as exc:
        raise SpecError(f"{where}: {exc}") from None


def parse_centered(value: Any, where: str) -> bool | str:
    """A ``centered`` setting: true, false or ``"auto"``."""
    if value == "auto" or isinstance(value, bool):
        return value
    raise SpecError(f"{where} must be true, false or \"auto\", got {plain(value)}")


def parse_flag(value: Any, where: str) -> bool:
    """A true / false setting (no other value is taken for one)."""
    if isinstance(value, bool):
        return value
    raise SpecError(f"{where} must be true or false, got {plain(value)}")


