"""What a fit's folder costs after the sampling: figures and files, two versions side by side.

Issue 34 (item 3): ``bayeslaw fit`` spent as long on its outputs as on the sampling.  Run
from the repository root::

    python benchmarks/bench_figures.py --old PATH --new PATH [--fit FIT.nc] [--repeats 3]
        [--out FILE]

``--old`` and ``--new`` are checkouts of the repository (``git worktree add`` of each
commit; the old may have the flat layout of 23aba32).  A fit of the bundled sweep
(``--fit``, or a fresh default fit, seed 1, saved once) is loaded by each version in its own
process, which times, one after the other:

* ``bayeslaw.write_fit_outputs`` into an empty folder, the first figure of the process (what
  ``bayeslaw fit`` pays after sampling: coefficient tables, diagnostics, ``grid.png``,
  ``grid.svg``, ``grid_zoom.png`` and ``fit.nc``), then again into another folder;
* ``bayeslaw.write_grid_figures`` alone (the three figures), then ``Fit.save`` alone.

The versions alternate (old, new, new, old, ...: each ``--repeats`` pair in both orders), so
that a drift of the shared machine falls on both; the ratio new / old of the medians is the
figure, with the seconds beside it.  ``--out`` writes the table as Markdown, atomically, with
the command.  Nothing else should run on the machine meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: What one process runs: load the fit, write the figures, print the parts' seconds (JSON).
CHILD = r"""
import json, sys, time
from pathlib import Path
import matplotlib
matplotlib.use("Agg")
import bayeslaw as bl

fit = bl.Fit.load(sys.argv[1])
out = Path(sys.argv[2])
try:  # the plateau zoom's range, in either version's layout
    from bayeslaw.plots.sweep import grid_zoom
    zoom = grid_zoom(fit.data.frame)
except ImportError:
    from bayeslaw.grid_figure import plateau_ylim
    zoom = plateau_ylim(fit.data.frame)
times = {}
t = time.perf_counter()
bl.write_fit_outputs(fit, out / "first")
times["fit folder, first in the process"] = time.perf_counter() - t
t = time.perf_counter()
bl.write_fit_outputs(fit, out / "second")
times["fit folder, again"] = time.perf_counter() - t
t = time.perf_counter()
bl.write_grid_figures(fit, out / "figures", zoom=zoom)
times["grid figures (grid.png, grid.svg, grid_zoom.png)"] = time.perf_counter() - t
t = time.perf_counter()
fit.save(out / "figures" / "fit.nc")
times["fit file (fit.nc)"] = time.perf_counter() - t
times["module"] = bl.__file__
print(json.dumps(times))
"""


def run_child(checkout: Path, fit: Path, out: Path) -> dict[str, float]:
    """One process of ``checkout`` writing the figures of ``fit`` under ``out``."""
    for sub in ("first", "second", "figures"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(checkout), "MPLBACKEND": "Agg"}
    # run inside the checkout: an editable install of the other version would win otherwise
    done = subprocess.run([sys.executable, "-c", CHILD, str(fit), str(out)], env=env,
                          cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the figure run failed:\n{done.stderr[-3000:]}")
    times = json.loads(done.stdout.strip().splitlines()[-1])
    module = Path(times.pop("module")).resolve()
    if not module.is_relative_to(checkout.resolve()):
        raise SystemExit(f"{checkout}: the child imported bayeslaw from {module}")
    return times


def bundled_fit(path: Path) -> Path:
    """A default fit of the bundled sweep (seed 1), saved to ``path`` once."""
    if not path.exists():
        import bayeslaw as bl

        bl.fit(bl.load(bl.bundled_path()), seed=1, progress=False).save(path)
    return path


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", type=Path, required=True)
    p.add_argument("--new", type=Path, required=True)
    p.add_argument("--fit", type=Path, help="a saved fit (default: the bundled sweep, fitted "
                   "once into the temporary folder)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_figures_"))
    fit = (args.fit or bundled_fit(work / "fit.nc")).resolve()
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    order = []
    for k in range(args.repeats):
        order += ["old", "new"] if k % 2 == 0 else ["new", "old"]
    for i, side in enumerate(order):
        runs[side].append(run_child(getattr(args, side).resolve(), fit, work / f"{side}{i}"))
        print(f"{side}: " + ", ".join(f"{v:.2f}" for v in runs[side][-1].values()) + " s",
              flush=True)
    parts = list(runs["old"][0])
    command = shlex.join(["python", "benchmarks/bench_figures.py", *(argv or sys.argv[1:])])
    lines = ["# A fit folder's outputs after sampling, two versions side by side", "",
             f"Command: `{command}`",
             f"Old: {git_head(args.old)}; new: {git_head(args.new)}; fit: the bundled sweep "
             f"(default spec, seed 1) unless --fit; {args.repeats} runs a version, "
             "alternating (old, new, new, old, ...); each run one fresh process.", "",
             "| part | old median (s) | new median (s) | ratio new / old |",
             "| --- | --- | --- | --- |"]
    for part in parts:
        old = float(np.median([r[part] for r in runs["old"]]))
        new = float(np.median([r[part] for r in runs["new"]]))
        lines.append(f"| {part} | {old:.2f} | {new:.2f} | {new / old:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        sys.path.insert(0, str(ROOT))
        from bayeslaw.files import atomic_write_text

        atomic_write_text(Path(args.out), text)


def git_head(checkout: Path) -> str:
    """The commit of a checkout (with ``+`` when it has uncommitted changes)."""
    head = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain", "--",
                            "bayeslaw"], capture_output=True, text=True).stdout.strip()
    return head + ("+" if dirty else "")


def results_header(title: str, script: str) -> list[str]:
    """A results file's first lines: its title, the command that made it, commit and date."""
    import time

    return [f"# {title}", "",
            f"Command: `python benchmarks/{script} " + " ".join(sys.argv[1:]) + "`",
            f"Commit: {git_head(Path.cwd())}; date: {time.strftime('%Y-%m-%d')}"]


def emit(lines: list[str], out: Path | None) -> int:
    """Print a results file's ``lines`` and write them to ``out`` (atomically) if given."""
    from bayeslaw.files import atomic_write_text

    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        atomic_write_text(out, text)
    return 0


if __name__ == "__main__":
    main()
