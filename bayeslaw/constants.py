"""Constants shared across modules: column names, default probabilities, sampler defaults."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    #: The installed package's version (in provenance, reports and ``bayeslaw --version``).
    VERSION = version("bayeslaw")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    VERSION = "0.0.0+unknown"

#: Required and optional column names of a tidy loss table.
RUN, N, D, T_M, LOSS = "run", "N", "D", "T_m", "loss"
#: Covariates of the other laws: parallel streams (ParScale), and the unshared and recurrent
#: (shared) parameters of a looped model.
P, N_ONCE, N_REC = "P", "N_once", "N_rec"
#: A run's planned tokens (its learning-rate schedule ends there): optional, one per run.
HORIZON = "horizon"
#: The terms of a learning-rate schedule (:mod:`bayeslaw.data.schedules`) that vary along a run:
#: the rate as a share of its peak, the forward area, the drop so far, the annealing area.
LR_NORM, LR_AREA, LR_DROP, ANNEAL_AREA = "lr_norm", "lr_area", "lr_drop", "anneal_area"
#: A looped LM's step-wise losses (:mod:`bayeslaw.data.steps`): the exit step ``T`` of a row (empty
#: or ``"total"`` on a total-loss row), the exit probability ``q`` of step T at that checkpoint
#: and the run's entropy weight (beta_H of the training objective).
T_STEP, Q_EXIT, ENTROPY_WEIGHT = "T", "q", "entropy_weight"
#: The most exit steps the step-wise laws carry (one weight column per step; Ouro's deepest
#: T_m is 8).
MAX_EXIT_STEPS = 8
#: Columns :func:`bayeslaw.load` adds to a step table: each row's weight of exit step k (one-hot
#: on a step row; the logged q, or 1 for every step up to T_m where q is latent, on a total row),
#: the entropy of the logged q (0 on step rows), the 1 that marks a total row of a table whose q
#: is latent, the run each curve belongs to and the kind of curve (``step`` / ``total``).
EXIT_WEIGHTS = tuple(f"exit_w{k}" for k in range(1, MAX_EXIT_STEPS + 1))
EXIT_ENTROPY, EXIT_LATENT, LOOPED_RUN, EXIT_KIND = ("exit_H", "exit_latent", "looped_run",
                                                   "exit_kind")
#: Covariates that vary along a run, as ``D`` does: the schedule's point terms and the exit
#: weights (a total row's logged q changes from checkpoint to checkpoint).
POINT_COLUMNS = (LR_NORM, LR_AREA, LR_DROP, ANNEAL_AREA, *EXIT_WEIGHTS, EXIT_ENTROPY,
                 EXIT_LATENT)
#: ``D`` is required too, except in a table of final losses (one row per run).
REQUIRED_COLUMNS = (N, D, LOSS)

#: Credible-band probabilities drawn in figures and returned by predictions.
BAND_PROBS = (0.5, 0.9)
#: Probability of the interval in coefficient tables (ArviZ's default HDI convention).
TABLE_PROB = 0.94

#: Sampler defaults (overridable per spec and on the command line).
DEFAULT_DRAWS = 1000
DEFAULT_TUNE = 1000
DEFAULT_CHAINS = 4
DEFAULT_SEED = 20251030
DEFAULT_TARGET_ACCEPT = 0.9

#: Convergence thresholds applied after every fit (Vehtari et al. 2021).
MAX_RHAT = 1.01
MIN_ESS = 400
MIN_BFMI = 0.3

#: The methods ``bl.fit`` takes: those that sample (MCMC diagnostics apply) and those that draw
#: from an approximation (:mod:`bayeslaw.inference.approx`; no diagnostics apply).
SAMPLING_METHODS = ("nuts", "by_curve")
APPROXIMATE_METHODS = ("laplace", "pathfinder")
METHODS = (*SAMPLING_METHODS, *APPROXIMATE_METHODS)

#: Version of the saved-fit file layout; bump on incompatible change.
FIT_FORMAT_VERSION = 1

#: ``centered = "auto"``: a group effect is centered when each of its levels holds at least
#: this many observations. Measured at 37f6b95 (not saved; benchmarks/results/
#: looped_total_sampler_2026-11-30.md): 600-1000 points per level mixed at tree depth 4 centered
#: and 9-10 non-centered; 75 points per level mixed only non-centered (ESS 18 vs 560).
CENTERED_MIN_POINTS = 200

#: Environment variable with the cores one fit may use (nutpie's ``cores``): set in every Dask
#: worker by :mod:`bayeslaw.inference.workers` (the host's CPUs over its worker processes), or
#: by hand.
ENV_CORES = "BAYESLAW_CORES"
