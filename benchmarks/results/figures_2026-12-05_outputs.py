"""Seconds of the bundled fit's output folder (``write_fit_outputs``), its figures alone, the
saved fit and the summary: one default fit, then 3 repeats in the same process."""

import tempfile
import time
import warnings
from functools import partial
from pathlib import Path

import bayeslaw as bl
from bayeslaw.plots.sweep import grid_zoom
from bayeslaw.report.folders import write_fit_outputs, write_grid_figures


def seconds(step) -> float:
    t0 = time.perf_counter()
    step()
    return time.perf_counter() - t0


def main() -> None:
    warnings.simplefilter("ignore")
    fit = bl.fit(bl.load(bl.bundled_path()), seed=1, progress=False)
    for repeat in range(1, 4):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            row = {
                "outputs": seconds(partial(write_fit_outputs, fit, out / "o")),
                "figures alone": seconds(partial(write_grid_figures, fit, out / "f",
                                                 zoom=grid_zoom(fit.data.frame))),
                "save": seconds(partial(fit.save, out / "x.nc")),
                "summary": seconds(fit.summary),
            }
        print(f"repeat {repeat}: " + ", ".join(f"{k} {v:.2f} s" for k, v in row.items()))


if __name__ == "__main__":
    main()
