"""Loaders of ../shared/data and the Chinchilla replication (seeded MCMC)."""

import numpy as np
import pandas as pd
import pytest

from bayeslaw.data.public import load_chinchilla, load_misfitting
from bayeslaw.errors import DataError
from bayeslaw.inference.sampling import fit


@pytest.fixture(scope="module")
def chinchilla(shared_data):
    return load_chinchilla(shared_data / "chinchilla_epoch" / "svg_extracted_data.csv")


def test_chinchilla_loader(chinchilla, shared_data):
    raw = pd.read_csv(shared_data / "chinchilla_epoch" / "svg_extracted_data.csv")
    assert len(chinchilla) == 245 and not chinchilla.has_runs
    row = raw.iloc[0]
    match = chinchilla.frame[np.isclose(chinchilla.frame["N"], row["Model Size"])]
    assert np.isclose(match["D"], row["Training FLOP"] / (6 * row["Model Size"])).any()


def test_misfitting_loader_keeps_horizon_apart(shared_data):
    path = shared_data / "misfitting" / "scaling_results.csv"
    curves = load_misfitting(path)
    assert curves.frame["run"].nunique() == 240 and curves.frame["N"].nunique() == 11
    assert (curves.frame.groupby("run")["horizon"].nunique() == 1).all()
    assert curves.frame["portion"].min() < 0.01  # intermediate checkpoints are kept, labelled
    final = load_misfitting(path, final_only=True)
    assert len(final) == 240
    # the last checkpoint is the horizon (2 runs overran their planned 250 steps to step 256:
    # their horizon is that checkpoint), and no checkpoint lies past its run's horizon
    assert np.allclose(final.frame["portion"], 1.0)
    assert (curves.frame["D"] <= curves.frame["horizon"]).all()
    assert any("past the planned steps" in note for note in curves.notes)
    late = load_misfitting(path, min_portion=0.1)
    assert late.frame["portion"].min() >= 0.1
    assert late.frame["run"].nunique() == 240  # every run keeps its later checkpoints
    early = curves.frame["portion"] < 0.1
    assert len(late) == len(curves) - early.sum()
    with pytest.raises(DataError, match="min_portion"):
        load_misfitting(path, min_portion=1.5)


def test_misfitting_min_tokens_drops_the_early_transient_by_tokens(shared_data):
    path = shared_data / "misfitting" / "scaling_results.csv"
    curves = load_misfitting(path, min_portion=0.1)
    past = load_misfitting(path, min_portion=0.1, min_tokens=1e9)
    assert past.frame["D"].min() >= 1e9
    kept = curves.frame["D"] >= 1e9
    assert len(past) == kept.sum()
    # runs that never reach 1e9 tokens go whole; the others keep every checkpoint past it
    short = curves.frame.groupby("run")["D"].max() < 1e9
    assert set(past.frame["run"]) == set(short.index[~short])
    assert any(f"({short.sum()} shorter run(s) dropped whole)" in n for n in past.notes)
    with pytest.raises(DataError, match="min_tokens=1e\\+12 drops every checkpoint"):
        load_misfitting(path, min_tokens=1e12)
    with pytest.raises(DataError, match="min_tokens"):
        load_misfitting(path, min_tokens=-1.0)


def test_loader_rejects_wrong_file(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="lacks column"):
        load_chinchilla(bad)
    with pytest.raises(DataError, match="lacks column"):
        load_misfitting(bad)


@pytest.mark.slow
def test_chinchilla_replication_contains_epoch_refit(chinchilla):
    """The posterior's 90% intervals contain Epoch AI's published refit (Besiroglu 2024)."""
    result = fit(chinchilla, law="chinchilla", seed=3, draws=1000, tune=1000, chains=4)
    assert result.diagnostics.max_rhat <= 1.01 and result.diagnostics.divergences == 0
    epoch = {"E": 1.82, "A": 482.0, "alpha": 0.35, "B": 2085.0, "beta": 0.37}
    for name, value in epoch.items():
        lo, hi = np.quantile(result.draws(name), [0.05, 0.95])
        assert lo <= value <= hi, f"{name}: {value} outside 90% interval [{lo:.4g}, {hi:.4g}]"
