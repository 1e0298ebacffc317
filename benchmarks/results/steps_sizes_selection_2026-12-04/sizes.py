"""The step backtest's sizes-held-out split on other seeds of the simulated step sweep.

    python benchmarks/results/steps_sizes_selection_2026-12-04/sizes.py SEED [SEED ...]

As ``benchmarks/bench_steps.py``'s "sizes held out (two largest N)" row (the shipped
``looped_steps`` spec; the two largest N left out of the fit, their step rows scored), for
each seed: the 50% and 90% bands' coverage per curve with the interval over curves, the
share of held-out losses above the median, by held-out N, and the true N effects of ``b``
and ``beta`` that the simulation drew for those levels (the population's draws, which the
forecast cannot know).
"""
import sys
import warnings

import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.evaluation.metrics import coverage_by_curve
from bayeslaw.simulate import looped_step_sweep

warnings.filterwarnings("ignore")
print("| seed | 50% band per curve | 90% band per curve | above the median, by N | "
      "true b / beta effects of the held-out N | R-hat | divergences |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for seed in [int(s) for s in sys.argv[1:]]:
    table, truth = looped_step_sweep(seed=seed)
    data = bl.load(table)
    f = data.frame
    big = sorted(f[C.N].unique())[-2:]
    out = f[C.N].isin(big).to_numpy()
    scored = out & (f[C.EXIT_KIND] == "step").to_numpy()
    fit = bl.fit(data.select(~out, "sizes held out"), seed=seed, progress=False, like=data)
    test = f[scored].reset_index(drop=True)
    pred = bl.predict(fit, test, seed=seed).table
    y, curves = test[C.LOSS].to_numpy(), test[C.RUN].to_numpy()
    cells = []
    for p in (0.5, 0.9):
        tag = int(100 * p)
        lower, upper = pred[f"lower_{tag}"].to_numpy(), pred[f"upper_{tag}"].to_numpy()
        cov = coverage_by_curve(y, lower, upper, curves, p)
        cells.append(f"{cov.rate:.2f} [{cov.low:.2f}, {cov.high:.2f}]")
    high = y > pred["median"].to_numpy()
    above = ", ".join(f"{n / 1e9:.2f}B {np.mean(high[(test[C.N] == n).to_numpy()]):.0%}"
                      for n in big)
    effects = ", ".join(f"{n / 1e9:.2f}B {truth.effects['b_by_N'][n]:+.3f} / "
                        f"{truth.effects['beta_by_N'][n]:+.3f}" for n in big)
    d = fit.diagnostics
    print(f"| {seed} | {cells[0]} | {cells[1]} | {above} | {effects} | {d.max_rhat:.3f} | "
          f"{d.divergences} |", flush=True)
