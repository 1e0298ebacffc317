"""The code passes ruff (pydocstyle numpy convention, bugbear, isort, pyupgrade)."""

import shutil
import subprocess

from .conftest import ROOT


def test_ruff_clean():
    ruff = shutil.which("ruff")
    assert ruff, "ruff is in the [test] extra"
    proc = subprocess.run([ruff, "check", "bayeslaw", "tests", "benchmarks", "notebooks",
                           "docs"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
