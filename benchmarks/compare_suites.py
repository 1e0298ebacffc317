"""Two runs of the test suite side by side: whole time, and the tests both runs have.

Reads two logs of ``python -m pytest -p no:cacheprovider --durations=0 -vv`` (old, new),
sums each test's setup, call and teardown seconds, and matches the tests of the two runs by
file name and test name (the folder is ignored: tests moved into ``tests/<package>/`` in
issue 33; a renamed file is matched through ``--renamed old.py=new.py``).  Prints the ratio
new / old of pytest's wall time, of the summed durations of the matched tests, and the
seconds of the tests only one run has::

    python benchmarks/compare_suites.py old.log new.log --renamed test_kernel.py=test_arithmetic.py
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^\s*([0-9.]+)s (setup|call|teardown)\s+(\S+)")
TOTAL = re.compile(r"in ([0-9.]+)s")


def durations(log: Path, renamed: dict[str, str]) -> tuple[dict[str, float], float]:
    """Per-test seconds keyed by ``file::test`` (file name only) and pytest's wall time."""
    per: dict[str, float] = defaultdict(float)
    wall = float("nan")
    for line in log.read_text(errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            path, _, test = m.group(3).partition("::")
            name = Path(path).name
            per[f"{renamed.get(name, name)}::{test}"] += float(m.group(1))
        elif line.startswith("=") and " passed" in line and TOTAL.search(line):
            wall = float(TOTAL.search(line).group(1))
    return dict(per), wall


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--renamed", action="append", default=[],
                   help="old_file.py=new_file.py: a test file renamed between the runs")
    args = p.parse_args(argv)
    renamed = dict(r.split("=", 1) for r in args.renamed)
    old, old_wall = durations(args.old, renamed)
    new, new_wall = durations(args.new, {})
    both = sorted(set(old) & set(new))
    s_old = sum(old[k] for k in both)
    s_new = sum(new[k] for k in both)
    print(f"pytest wall time: old {old_wall:.1f} s, new {new_wall:.1f} s, "
          f"ratio {new_wall / old_wall:.3f}")
    print(f"{len(both)} tests in both: old {s_old:.1f} s, new {s_new:.1f} s, "
          f"ratio {s_new / s_old:.3f}")
    only_new = sorted(set(new) - set(old))
    only_old = sorted(set(old) - set(new))
    print(f"only new: {len(only_new)} tests, {sum(new[k] for k in only_new):.1f} s; "
          f"only old: {len(only_old)} tests, {sum(old[k] for k in only_old):.1f} s")
    files: dict[str, float] = defaultdict(float)
    for k in both:
        files[k.split("::")[0]] += new[k] - old[k]
    print("largest per-file differences in the matched tests, new - old (s):")
    for name, diff in sorted(files.items(), key=lambda kv: -abs(kv[1]))[:8]:
        print(f"  {name}: {diff:+.1f}")


if __name__ == "__main__":
    main()
