"""The grid figures with every draw and with 1,000, side by side in one process.

Run: ``python benchmarks/results/figures_2026-12-05_side_by_side.py FIT.nc`` (its output is
in ``figures_2026-12-05.md``).
"""

import statistics
import sys
import tempfile
import time
import warnings

import bayeslaw as bl
import bayeslaw.plots.panels as pn
from bayeslaw.plots.sweep import grid_zoom
from bayeslaw.report.folders import headless, write_grid_figures

warnings.simplefilter("ignore")
headless()
fit = bl.Fit.load(sys.argv[1])
out = tempfile.mkdtemp()
write_grid_figures(fit, out, zoom=grid_zoom(fit.data.frame))  # warm-up
seconds: dict = {None: [], 1000: []}
for order in ([None, 1000], [1000, None], [None, 1000]):
    for k in order:
        pn.FIGURE_DRAWS = k
        t = time.perf_counter()
        write_grid_figures(fit, out, zoom=grid_zoom(fit.data.frame))
        seconds[k].append(time.perf_counter() - t)
for k, v in seconds.items():
    print(f"FIGURE_DRAWS={k}: write_grid_figures seconds {', '.join(f'{x:.2f}' for x in v)}")
ratio = statistics.median(seconds[1000]) / statistics.median(seconds[None])
print(f"ratio of medians (1000 / every draw): {ratio:.2f}")
