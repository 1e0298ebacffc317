"""Packaging: a non-editable wheel ships the default specs and the bundled sweep."""

import subprocess
import sys
import zipfile

import pandas as pd

from bayeslaw.simulate import bundled_path, looped_sweep

from .conftest import ROOT


def test_wheel_ships_specs_and_data(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    wheel = next(tmp_path.glob("bayeslaw-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"bayeslaw/_models/looped_total.toml", "bayeslaw/_models/chinchilla.toml",
            "bayeslaw/datasets/looped_sweep.csv"} <= names


def test_bundled_sweep_regenerates_exactly(tmp_path):
    from bayeslaw.simulate import write_bundled

    path = write_bundled(tmp_path / "sweep.csv")
    assert path.read_bytes() == bundled_path().read_bytes()
    frame = pd.read_csv(bundled_path())
    assert frame["run"].nunique() == 15 and frame.groupby("run").size().eq(200).all()
    first = frame.groupby("run")["loss"].first()
    last = frame.groupby("run")["loss"].last()
    assert first.between(9.5, 12.5).all() and last.between(2.0, 3.5).all()
    assert looped_sweep(points=3)[0]["D"].max() == 2e10
