"""The function cache's effect on a warm process, side by side (issue 34, the warm fixed cost).

    python benchmarks/results/fncache_2026-12-06/callbacks_ab.py [ROUNDS] [--cli]

Each round runs two fresh processes in turn (the order alternating by round), one with the
cache (``bayeslaw.inference.fncache``) and one with ``BAYESLAW_FUNCTION_CACHE=0``.  By
default each builds the default spec's model of the bundled sweep and times
``compiled.compile_model`` (nutpie's functions, PyTensor's rewriting and loading numba's
cached callbacks).  With ``--cli`` each runs the README's first command's fit,
``bayeslaw fit --out DIR`` (a temporary folder), and times the whole command.  One warm-up
pair first fills both caches.  Prints each process's seconds, the medians and their ratio.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import time, warnings
warnings.simplefilter("ignore")
import bayeslaw as bl, pymc, nutpie
from bayeslaw.inference import compiled, fncache
from bayeslaw.inference.modelcache import get_model
model = get_model(bl.load_spec(), bl.load(bl.bundled_path())).model
start = time.perf_counter()
compiled.compile_model(model)
print(f"{time.perf_counter() - start:.3f} {fncache.EVENTS}")
"""


def run(cached: bool) -> tuple[float, str]:
    env = dict(os.environ, BAYESLAW_FUNCTION_CACHE="1" if cached else "0")
    if CLI:
        with tempfile.TemporaryDirectory() as out_dir:
            start = time.perf_counter()
            subprocess.run([str(Path(sys.executable).parent / "bayeslaw"), "fit", "--out",
                            out_dir], env=env, capture_output=True, check=True)
            return time.perf_counter() - start, "(the whole command)"
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()[-1]
    seconds, events = out.split(" ", 1)
    return float(seconds), events


def main(rounds: int) -> None:
    run(True), run(False)  # warm-up: both caches filled
    times: dict[bool, list[float]] = {True: [], False: []}
    for i in range(rounds):
        for cached in ((True, False) if i % 2 == 0 else (False, True)):
            seconds, events = run(cached)
            times[cached].append(seconds)
            print(f"round {i + 1} {'cache' if cached else 'no cache'}: {seconds:.2f} s {events}")
    on, off = statistics.median(times[True]), statistics.median(times[False])
    what = "bayeslaw fit" if CLI else "compile_model"
    print(f"median {what}: cache {on:.2f} s, no cache {off:.2f} s, ratio {on / off:.2f}")


CLI = "--cli" in sys.argv

if __name__ == "__main__":
    numbers = [a for a in sys.argv[1:] if a.isdigit()]
    main(int(numbers[0]) if numbers else 5)
