"""Seconds of ``write_fit_outputs`` and of one ``plot_grid``, two libraries side by side.

    python benchmarks/results/figures_2026-12-05b/outputs_time.py FIT.nc OLD_CHECKOUT NEW_CHECKOUT

Each round runs one child process per library (``PYTHONPATH`` on its checkout), the two in
turn, five rounds. A child loads ``FIT.nc``, writes the output folder once untimed (its
first figure pays matplotlib's font and tick set-up), then times three more writes and three
``plot_grid`` calls of the full figure (drawn, not saved) and prints their medians. Run with
nothing else on the machine.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, statistics, sys, tempfile, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from bayeslaw.posterior.result import Fit
from bayeslaw.plots.sweep import plot_grid
from bayeslaw.report.folders import write_fit_outputs
fit = Fit.load(sys.argv[1])
out = Path(tempfile.mkdtemp())
write_fit_outputs(fit, out)
writes, grids = [], []
for _ in range(3):
    t = time.perf_counter(); write_fit_outputs(fit, out); writes.append(time.perf_counter() - t)
for _ in range(3):
    t = time.perf_counter(); fig = plot_grid(fit); fig.canvas.draw()
    grids.append(time.perf_counter() - t); plt.close(fig)
print(json.dumps({"outputs": statistics.median(writes), "grid": statistics.median(grids)}))
"""


def main() -> None:
    fit, old, new = sys.argv[1:4]
    rows = {"old": [], "new": []}
    for _ in range(5):
        for name, checkout in (("old", old), ("new", new)):
            run = subprocess.run([sys.executable, "-c", CHILD, fit], capture_output=True,
                                 text=True, check=True, cwd=tempfile.gettempdir(),
                                 env={**os.environ, "PYTHONPATH": checkout})
            rows[name].append(json.loads(run.stdout.strip().splitlines()[-1]))
    for key in ("outputs", "grid"):
        old_s = [r[key] for r in rows["old"]]
        new_s = [r[key] for r in rows["new"]]
        ratios = [n / o for n, o in zip(new_s, old_s, strict=True)]
        print(f"{key}: old {' '.join(f'{x:.2f}' for x in old_s)} s | new "
              f"{' '.join(f'{x:.2f}' for x in new_s)} s | new / old per round "
              f"{' '.join(f'{x:.2f}' for x in ratios)} (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
