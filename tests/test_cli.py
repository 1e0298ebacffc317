"""The command line: success and failure paths (user errors exit 2 without a traceback)."""

import subprocess
import sys

import pandas as pd
import pytest

from bayeslaw.cli import main
from bayeslaw.fit import Fit


@pytest.fixture()
def small_csv(tmp_path, small_sweep):
    data, _ = small_sweep
    path = tmp_path / "sweep.csv"
    data.frame.to_csv(path, index=False)
    return path


def test_fit_command_writes_outputs(small_csv, tmp_path, capsys, small_fit):
    out = tmp_path / "out"
    before = small_csv.read_bytes()
    code = main(["fit", str(small_csv), "--out", str(out), "--draws", "30", "--tune", "30",
                 "--chains", "2", "--seed", "3", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0  # not strict: failed diagnostics warn only
    assert "warning:" in captured.err and "R-hat" in captured.err
    assert small_csv.read_bytes() == before
    assert {"grid.png", "grid.svg", "coefficients.csv", "coefficients.md", "diagnostics.md",
            "fit.nc"} <= {p.name for p in out.iterdir()}
    fit = Fit.load(out / "fit.nc")
    assert fit.provenance["seed"] == 3 and fit.provenance["sampler"]["draws"] == 30
    assert fit.provenance["sha256"] == fit.data.sha256 and fit.data.source == str(small_csv)
    table = pd.read_csv(out / "coefficients.csv", index_col=0)
    assert table.loc["E", "mean"] == pytest.approx(float(fit.draws("E").mean()))
    code = main(["fit", str(small_csv), "--out", str(out), "--draws", "30", "--tune", "30",
                 "--chains", "2", "--seed", "3", "--no-progress", "--strict"])
    assert code == 3


def _run(*args):
    return subprocess.run([sys.executable, "-m", "bayeslaw.cli", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("args, message", [
    (["fit", "missing.csv"], "data file 'missing.csv' does not exist"),
    (["fit", "{good}", "--law", "nope"], "unknown law 'nope'"),
    (["fit", "{bad}"], "column 'loss' must be numeric; row 2"),
    (["fit", "{good}", "--spec", "{badspec}"], "is not valid TOML"),
    (["fit", "{good}", "--column", "step"], "--column takes OLD=NEW"),
])
def test_user_errors_exit_2_without_traceback(tmp_path, small_csv, args, message):
    bad = tmp_path / "bad.csv"
    bad.write_text("run,N,D,loss\nr1,1e8,1e9,3.0\nr1,1e8,2e9,oops\n")
    badspec = tmp_path / "bad.toml"
    badspec.write_text("law = [unclosed\n")
    args = [a.format(bad=bad, good=small_csv, badspec=badspec) for a in args]
    proc = _run(*args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: ")
