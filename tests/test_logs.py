"""Training logs in: TensorBoard, W&B and MLflow written by their real writers (W&B's live
path against a fake client that records its calls), every point arriving, the errors naming
the run, ``bayeslaw import`` and the README's examples.

The readers and writers are in the ``test`` extra: outside CI a missing one skips its test,
in CI (``CI=true``) it fails.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import shlex
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.cli import main

ROOT = Path(__file__).resolve().parent.parent
#: more than TensorBoard's EventAccumulator keeps per tag by default (10,000)
LONG = 10_001


def _need(module: str) -> types.ModuleType:
    """Import ``module``; skip without it, except in CI, where it must be installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is in the test extra: it must be installed in CI (CI=true)")
        pytest.skip(f"needs {module} (pip install '.[test]'); it runs in CI (CI=true)")


def _loss(step: np.ndarray, n: float) -> np.ndarray:
    return 2.0 + 4e2 / n**0.3 + 5.0 / (np.maximum(step, 0.5) * 1024.0) ** 0.1


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()


def write_tensorboard(folder: Path, runs: dict[str, tuple[float, list[int]]]) -> Path:
    """One subfolder per run, written by tensorboardX: hparams, loss, lr, a tokens counter."""
    tbx = _need("tensorboardX")
    _need("tensorboard")
    for name, (n, steps) in runs.items():
        writer = tbx.SummaryWriter(str(folder / name))
        writer.add_hparams({"model.n_params": n, "T_m": 2}, {"hparam/loss": 2.5})
        for s, loss in zip(steps, _loss(np.asarray(steps, float), n), strict=True):
            writer.add_scalar("train/loss", loss, s)
            writer.add_scalar("train/lr", 3e-4, s)
            writer.add_scalar("train/tokens_seen", s * 1024.0, s)
        writer.close()
    return folder


def write_wandb_export(path: Path, runs: dict[str, int]) -> Path:
    """A line plot's CSV export: ``Step``, then ``<run> - <metric>`` and its __MIN / __MAX."""
    steps = np.arange(1, max(runs.values()) + 1)
    frame = pd.DataFrame({"Step": steps})
    for name, count in runs.items():
        col = f"{name} - train/loss"
        values = np.where(steps <= count, _loss(steps.astype(float), 1e8), np.nan)
        frame[col] = values
        frame[f"{col}__MIN"] = values
        frame[f"{col}__MAX"] = values
    frame.to_csv(path, index=False)
    return path


class FakeRun:
    """A W&B ``Run`` whose ``scan_history`` pages through logged rows; ``history`` refuses."""

    def __init__(self, name: str, steps: int, config: dict, calls: list):
        self.name, self.id, self.config, self._steps, self._calls = name, name[::-1], config, \
            steps, calls

    def scan_history(self, keys=None, page_size=1000, min_step=None, max_step=None):
        self._calls.append(("scan_history", self.name, keys, page_size))
        for s in range(1, self._steps + 1):
            yield {"_step": s, "_runtime": 0.1 * s, "train/loss": float(_loss(s, 1e8)),
                   "lr": 3e-4, "note": "text"}

    def history(self, *args, **kwargs):  # pragma: no cover - must not be called
        self._calls.append(("history", self.name))
        raise AssertionError("history() returns a sample of the rows")


def fake_wandb(monkeypatch, runs: dict[str, int], calls: list) -> None:
    """A ``wandb`` module whose ``Api()`` serves ``runs`` and records every call."""

    class Api:
        def runs(self, path, **kwargs):
            calls.append(("runs", path))
            return [FakeRun(name, steps, {"model": {"n_params": 1e8 * (i + 1)}}, calls)
                    for i, (name, steps) in enumerate(runs.items())]

        def run(self, path):
            calls.append(("run", path))
            name, steps = next(iter(runs.items()))
            return FakeRun(name, steps, {"model": {"n_params": 1e8}}, calls)

    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(Api=Api))


def write_mlflow(store: Path, runs: dict[str, int], monkeypatch) -> Path:
    """An MLflow store written by MLflow's client: a SQLite file (``.db``) or ``mlruns/``."""
    _need("mlflow")
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    if store.suffix == ".db":
        uri = f"sqlite:///{store}"
    else:
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        uri = store.as_uri()
    with warnings.catch_warnings():  # MLflow's and SQLAlchemy's deprecations
        warnings.simplefilter("ignore")
        client = MlflowClient(tracking_uri=uri)
        exp = client.create_experiment("sweep")
        for i, (name, count) in enumerate(runs.items()):
            run = client.create_run(exp, run_name=name).info.run_id
            client.log_param(run, "n_params", str(1e8 * (i + 1)))
            steps = np.arange(1, count + 1)
            metrics = [Metric("loss", float(v), int(s), int(s)) for s, v
                       in zip(steps, _loss(steps.astype(float), 1e8), strict=True)]
            metrics += [Metric("tokens_seen", float(s * 2048), int(s), int(s)) for s in steps]
            for k in range(0, len(metrics), 1000):
                client.log_batch(run, metrics=metrics[k:k + 1000])
            client.set_terminated(run)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    return store


# ---------------------------------------------------------------------------------------------
# every point arrives


def test_tensorboard_keeps_every_point(tmp_path):
    logs = write_tensorboard(tmp_path / "tb", {"n1": (1e8, list(range(LONG + 1))),
                                               "n2": (3e8, list(range(1, 51)))})
    before = _digest(logs)
    data = bl.load(logs, config_map={"model.n_params": "N"}, tokens_per_step=1024)
    f = data.frame
    assert _digest(logs) == before  # input never modified
    assert len(f[f.run == "n1"]) == LONG and len(f[f.run == "n2"]) == 50  # step 0 left out
    assert f[f.run == "n1"]["step"].tolist() == list(range(1, LONG + 1))
    np.testing.assert_allclose(f["D"], f["step"] * 1024.0)
    assert f.groupby("run")["N"].first().to_dict() == {"n1": 1e8, "n2": 3e8}
    assert set(f["T_m"]) == {2.0}  # an hparam named as a column comes by itself
    np.testing.assert_allclose(f["lr"], 3e-4, rtol=1e-6)  # the logged lr -> schedule table
    assert data.schedules is not None and set(data.schedules) == {"n1", "n2"}
    assert any("step 0" in n for n in data.notes)
    # the tokens counter, named or found, gives the same D
    counted = bl.load(logs, config_map={"model.n_params": "N"}, tokens_metric="train/tokens_seen")
    np.testing.assert_allclose(counted.frame["D"], f["D"])


def test_wandb_export_keeps_every_point(tmp_path):
    path = write_wandb_export(tmp_path / "export.csv", {"run-a": LONG, "run-b": 40})
    pd.DataFrame({"run": ["run-a", "run-b"], "N": [1e8, 3e8], "T_m": [2, 4]}).to_csv(
        tmp_path / "runs.csv", index=False)
    data = bl.load(path, meta=tmp_path / "runs.csv", tokens_per_step=1024)
    counts = data.frame.groupby("run").size().to_dict()
    assert counts == {"run-a": LONG, "run-b": 40}
    assert data.frame.groupby("run")["T_m"].first().to_dict() == {"run-a": 2, "run-b": 4}
    assert "read from wandb logs" in data.notes[0]
    # the export read as a plain table when forced: its columns are not a tidy table
    with pytest.raises(bl.DataError, match="lacks column"):
        bl.load(path, source="table")


def test_wandb_live_runs_use_scan_history(tmp_path, monkeypatch):
    calls: list = []
    fake_wandb(monkeypatch, {"big": LONG, "small": 30}, calls)
    data = bl.load("wandb:team/sweep", config_map={"model.n_params": "N"},
                   tokens_per_step=2048)
    assert data.frame.groupby("run").size().to_dict() == {"big": LONG, "small": 30}
    assert data.frame.groupby("run")["N"].first().to_dict() == {"big": 1e8, "small": 2e8}
    assert calls[0] == ("runs", "team/sweep")
    assert [c[0] for c in calls[1:]] == ["scan_history", "scan_history"]
    assert not any(c[0] == "history" for c in calls)
    assert "lr" in data.frame.columns  # a scalar named lr


@pytest.mark.parametrize("store", ["mlflow.db", "mlruns"])
def test_mlflow_keeps_every_point(tmp_path, monkeypatch, store):
    count = LONG if store.endswith(".db") else 300  # the file store is slow to write
    path = write_mlflow(tmp_path / store, {"a": count, "b": 20}, monkeypatch)
    before = path.read_bytes() if path.is_file() else _digest(path)
    data = bl.load(path, config_map={"n_params": "N"})  # D from the tokens counter found
    assert data.frame.groupby("run").size().to_dict() == {"a": count, "b": 20}
    np.testing.assert_allclose(data.frame["D"], data.frame["step"] * 2048.0)
    assert data.frame.groupby("run")["N"].first().to_dict() == {"a": 1e8, "b": 2e8}
    assert (path.read_bytes() if path.is_file() else _digest(path)) == before
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ


# ---------------------------------------------------------------------------------------------
# errors name the run, the scalar and the fix


@pytest.fixture()
def tb_logs(tmp_path):
    return write_tensorboard(tmp_path / "tb", {"n1": (1e8, list(range(1, 30))),
                                               "n2": (3e8, list(range(1, 30)))})


def test_run_missing_from_meta_table(tb_logs, tmp_path):
    pd.DataFrame({"run": ["n1"], "N": [1e8]}).to_csv(tmp_path / "runs.csv", index=False)
    with pytest.raises(bl.DataError, match=r"run 'n2' of the logs is missing from meta table"):
        bl.load(tb_logs, meta=tmp_path / "runs.csv", tokens_per_step=1024)


def test_run_without_N(tb_logs):
    with pytest.raises(bl.DataError, match=r"run 'n1' .* has no N .*--map model.n_params=N"):
        bl.load(tb_logs, tokens_per_step=1024)


def test_non_monotonic_step(tmp_path):
    logs = write_tensorboard(tmp_path / "tb", {"resumed": (1e8, [1, 2, 3, 4, 2, 3])})
    with pytest.raises(bl.DataError, match=r"run 'resumed' .* logs step 2 after step 4"):
        bl.load(logs, config_map={"model.n_params": "N"}, tokens_per_step=1024)


def test_missing_and_ambiguous_metric(tb_logs, tmp_path):
    with pytest.raises(bl.DataError, match=r"no scalar 'val/loss'; its scalars are \['train/"):
        bl.load(tb_logs, metric="val/loss", config_map={"model.n_params": "N"},
                tokens_per_step=1024)
    path = tmp_path / "two.csv"
    frame = pd.DataFrame({"Step": [1, 2]})
    for col in ("r - train/loss", "r - val/loss"):
        frame[col] = frame[f"{col}__MIN"] = frame[f"{col}__MAX"] = [3.0, 2.9]
    frame.to_csv(path, index=False)
    with pytest.raises(bl.DataError, match=r"several scalars .*\['train/loss', 'val/loss'\]"):
        bl.load(path, tokens_per_step=1)
    frame.rename(columns=lambda c: c.replace("loss", "ppl")).to_csv(path, index=False)
    with pytest.raises(bl.DataError, match=r"no scalar whose name contains 'loss'.*--metric"):
        bl.load(path, tokens_per_step=1)


def test_missing_extra_names_it(tb_logs, monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "tensorboard"] + ["tensorboard"]:
        monkeypatch.setitem(sys.modules, name, None)  # as if it were not installed
    with pytest.raises(bl.DataError, match=re.escape('pip install "bayeslaw[tensorboard]"')):
        bl.load(tb_logs, tokens_per_step=1024)
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(bl.DataError, match=re.escape('pip install "bayeslaw[wandb]"')):
        bl.load("wandb:team/sweep", tokens_per_step=1024)


def test_log_options_on_a_table_are_refused(tmp_path, tidy_frame):
    with pytest.raises(bl.ArgumentError, match=r"\['metric'\] apply to training logs"):
        bl.load(tidy_frame, metric="loss")


# ---------------------------------------------------------------------------------------------
# bayeslaw import


def test_import_command_writes_the_tidy_table(tb_logs, tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    code = main(["import", str(tb_logs), "--map", "model.n_params=N", "--tokens-per-step",
                 "1024", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert len(table) == 2 * 29 and {"run", "step", "D", "loss", "lr", "N", "T_m"} == set(table)
    again = bl.load(out)  # the written table loads as it is, lr column and all
    assert len(again) == len(table)
    code = main(["import", str(tb_logs), "--tokens-per-step", "1024", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: run 'n1'") and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# the README's section "From your training logs", run as written


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## From your training logs", 1)[1].split("\n## ", 1)[0]


def test_readme_training_log_examples_run(tmp_path, monkeypatch, capsys):
    section = _readme_section()
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    commands = re.findall(r"^    (bayeslaw import .*)$", section, re.M)
    assert len(blocks) == 3 and len(commands) >= 1
    monkeypatch.chdir(tmp_path)
    write_tensorboard(Path("tb_logs"), {"n1": (1e8, list(range(1, 40))),
                                        "n2": (3e8, list(range(1, 40)))})
    write_wandb_export(Path("wandb_export.csv"), {"run-a": 40, "run-b": 30})
    pd.DataFrame({"run": ["run-a", "run-b"], "N": [1e8, 3e8]}).to_csv("runs.csv", index=False)
    write_mlflow(tmp_path / "mlflow.db", {"a": 40, "b": 30}, monkeypatch)
    fake_wandb(monkeypatch, {"big": 50, "small": 30}, [])
    for block in blocks:
        scope: dict = {}
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
        assert len(scope["data"]) > 0
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0, capsys.readouterr().err


def test_fit_parser_takes_the_log_options(tb_logs):
    from bayeslaw.arguments import build_parser
    from bayeslaw.cli import _load_data

    args = build_parser().parse_args(["fit", str(tb_logs), "--map", "model.n_params=N",
                                      "--tokens-per-step", "1024", "--metric", "train/loss"])
    assert len(_load_data(args).runs) == 2
