"""Shared fixtures: small simulated sweeps and one session-wide fit (compiled once)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI") == "true":
            raise RuntimeError(f"{SHARED_DATA} missing in CI")
        pytest.skip("../shared/data not present")
    return SHARED_DATA


@pytest.fixture()
def tidy_frame() -> pd.DataFrame:
    """A valid 3 x 3 sweep with 4 points per run."""
    rows = []
    for t in (2, 4, 8):
        for n in (1e8, 3e8, 9e8):
            for d in (1e8, 1e9, 5e9, 1e10):
                rows.append({"run": f"n{n:g}_t{t}", "N": n, "D": d, "T_m": t,
                             "loss": 2 + 1e3 / n**0.3 + 50 / d**0.2 + 0.2 / t**0.5,
                             "lr": 3e-4})
    return pd.DataFrame(rows)
