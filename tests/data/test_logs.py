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
from bayeslaw.cli.commands import main
from bayeslaw.data import schedules
from bayeslaw.data import training_logs as logs
from bayeslaw.spec.catalog import resolve_spec

ROOT = Path(__file__).resolve().parents[2]
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


def constant_lr(step: float) -> float:
    return 3e-4


def warmup_cosine_lr(step: float) -> float:
    """A learning rate that changes along the run: 5 steps of warm-up, a cosine over 40."""
    return 3e-4 * min(step / 5.0, 1.0) * 0.5 * (1.0 + np.cos(np.pi * min(step, 40) / 40.0))


def write_tensorboard(folder: Path, runs: dict[str, tuple[float, list[int]]], *,
                      lr=constant_lr, hparams: dict | None = None,
                      counter_from: int = 0) -> Path:
    """One subfolder per run, written by tensorboardX: hparams, loss, lr, a tokens counter.

    ``lr(step)`` is the logged rate, ``hparams`` more hparams, and the tokens counter is
    logged from step ``counter_from`` on.
    """
    tbx = _need("tensorboardX")
    _need("tensorboard")
    for name, (n, steps) in runs.items():
        writer = tbx.SummaryWriter(str(folder / name))
        writer.add_hparams({"model.n_params": n, "T_m": 2, **(hparams or {})},
                           {"hparam/loss": 2.5})
        for s, loss in zip(steps, _loss(np.asarray(steps, float), n), strict=True):
            writer.add_scalar("train/loss", loss, s)
            writer.add_scalar("train/lr", lr(s), s)
            if s >= counter_from:
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
    np.testing.assert_allclose(f["lr"], 3e-4, rtol=1e-6)  # the logged lr, a column
    # constant along each run: a run's setting, as in a table's lr column (no schedule)
    assert data.schedules is None and any("constant along every run" in n for n in data.notes)
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
    (cwd := tmp_path / "cwd").mkdir()
    monkeypatch.chdir(cwd)  # reading writes nothing where it runs (a file: URI once did)
    data = bl.load(path, config_map={"n_params": "N"})  # D from the tokens counter found
    assert list(cwd.iterdir()) == []
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


@pytest.fixture()
def export(tmp_path):
    """A W&B export of two runs (no N in it: a meta table gives it)."""
    return write_wandb_export(tmp_path / "export.csv", {"run-a": 30, "run-b": 20})


@pytest.mark.parametrize("column", ["loss", "D", "step", "lr"])
def test_meta_table_may_not_name_a_logged_column(export, tmp_path, column):
    meta = tmp_path / "meta.csv"
    pd.DataFrame({"run": ["run-a", "run-b"], "N": [1e8, 3e8], column: [9.0, 9.0]}).to_csv(
        meta, index=False)
    said = rf"has column\(s\) \['{column}'\], which the logs give point by point"
    with pytest.raises(bl.DataError, match=rf"meta table '.*meta.csv' {said}"):
        bl.load(export, meta=meta, tokens_per_step=1024)
    with pytest.raises(bl.DataError, match=rf"the meta table {said}"):
        bl.load(export, meta=pd.read_csv(meta), tokens_per_step=1024)


def test_config_map_may_not_name_a_logged_column(tb_logs):
    with pytest.raises(bl.ArgumentError, match=r"config_map maps 'T_m' to 'loss', a column"):
        bl.load(tb_logs, config_map={"model.n_params": "N", "T_m": "loss"}, tokens_per_step=1024)


BAD_META = {"empty": (b"", r"meta table '.*meta.csv' is empty"),
            "ragged": (b"run,N\nrun-a,1e8\nrun-b,3e8,7,8\n",
                       r"cannot read meta table '.*meta.csv' as a CSV \(Error tokenizing data"),
            "binary": (b"run,N\n\xff\xfe\x00\x81,1\n", r"cannot read meta table '.*meta.csv'")}


@pytest.mark.parametrize("case", list(BAD_META))
def test_unreadable_meta_file_is_named(export, tmp_path, case):
    content, says = BAD_META[case]
    (tmp_path / "meta.csv").write_bytes(content)
    with pytest.raises(bl.DataError, match=says):
        bl.load(export, meta=tmp_path / "meta.csv", tokens_per_step=1024)


def test_meta_value_that_is_not_a_number_is_named(export, tmp_path):
    pd.DataFrame({"run": ["run-a", "run-b"], "N": ["1e8", "125M"]}).to_csv(
        tmp_path / "meta.csv", index=False)
    with pytest.raises(bl.DataError, match=r"column 'N' must be numeric; row 31 .* '125M'"):
        bl.load(export, meta=tmp_path / "meta.csv", tokens_per_step=1024)


def test_step_zero_with_a_tokens_counter_is_left_out(tmp_path):
    # the counter is logged from step 1, the loss from step 0 (before training)
    tb = write_tensorboard(tmp_path / "tb", {"n1": (1e8, list(range(30)))}, counter_from=1)
    counted = bl.load(tb, config_map={"model.n_params": "N"}, tokens_metric="train/tokens_seen")
    per_step = bl.load(tb, config_map={"model.n_params": "N"}, tokens_per_step=1024)
    pd.testing.assert_frame_equal(counted.frame, per_step.frame)
    assert counted.frame["step"].tolist() == list(range(1, 30))
    np.testing.assert_allclose(counted.frame["D"], counted.frame["step"] * 1024.0)
    for data in (counted, per_step):
        assert "1 point(s) at D = 0 (step 0) left out" in data.notes
    # a step after 0 that the counter does not reach is still refused
    late = write_tensorboard(tmp_path / "late", {"n1": (1e8, list(range(30)))}, counter_from=3)
    with pytest.raises(bl.DataError, match=r"run 'n1' .* step 1 is outside the steps of the "
                                           r"tokens counter \(3 to 29\)"):
        bl.load(late, config_map={"model.n_params": "N"}, tokens_metric="train/tokens_seen")


def test_mlflow_reader_lets_unexpected_warnings_through(tmp_path, monkeypatch):
    path = write_mlflow(tmp_path / "mlflow.db", {"a": 5}, monkeypatch)
    from mlflow.tracking import MlflowClient

    original = MlflowClient.get_metric_history

    def truncating(self, run_id, key, *args, **kwargs):
        warnings.warn(f"metric {key!r} history truncated", UserWarning, stacklevel=2)
        return original(self, run_id, key, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "get_metric_history", truncating)
    # MLflow's own known deprecation stays silent (filterwarnings = error), this one arrives
    with pytest.warns(UserWarning, match="metric '(loss|tokens_seen)' history truncated"):
        data = bl.load(path, config_map={"n_params": "N"})
    assert len(data) == 5


# ---------------------------------------------------------------------------------------------
# run-level columns from the configs, as the README says


def test_config_keys_named_as_columns_are_taken(tmp_path):
    hparams = {"schedule": "cosine", "warmup": 5 * 1024.0, "horizon": 40 * 1024.0,
               "peak_lr": 3e-4, "seed": 7, "data.name": "web"}
    tb = write_tensorboard(tmp_path / "tb", {"n1": (1e8, list(range(1, 30))),
                                             "n2": (3e8, list(range(1, 30)))},
                           lr=warmup_cosine_lr, hparams=hparams)
    data = bl.load(tb, config_map={"model.n_params": "N", "data.name": "dataset"},
                   tokens_per_step=1024)
    first = data.frame.groupby("run").first()
    assert first["schedule"].tolist() == ["cosine", "cosine"]
    assert first["warmup"].tolist() == [5120.0, 5120.0]
    assert first["horizon"].tolist() == [40960.0, 40960.0]
    np.testing.assert_allclose(first["peak_lr"], 3e-4, rtol=1e-6)  # a shipped spec's group
    assert first["dataset"].tolist() == ["web", "web"]  # any other group key: mapped
    assert "seed" not in data.frame.columns  # a key not named as a column stays out...
    left = [n for n in data.notes if n.startswith("config keys not taken")]
    assert len(left) == 1 and "seed" in left[0] and "data.name" not in left[0], data.notes
    assert set(data.schedules) == {"n1", "n2"}
    # the planned rest of the cosine continues the logged rate to the horizon
    np.testing.assert_allclose(data.schedules["n1"].D[-1], 40960.0)


def test_config_columns_list_the_schedule_columns():
    assert set(logs.SCHEDULE_COLUMNS) == set(schedules.PLAN_COLUMNS)
    assert set(logs.SCHEDULE_COLUMNS) <= set(logs.CONFIG_COLUMNS)


# ---------------------------------------------------------------------------------------------
# bayeslaw import, then load: the same model as loading the logs


def _law(data) -> str:
    """The law ``bl.fit`` picks for ``data`` without a spec or law."""
    return resolve_spec(None, law=None, columns=data.columns).law


@pytest.mark.parametrize(("lr", "law"), [(constant_lr, "looped_total"),
                                         (warmup_cosine_lr, "looped_multi_power")])
def test_import_then_load_gives_the_direct_model(tmp_path, capsys, lr, law):
    tb = write_tensorboard(tmp_path / "tb", {"n1": (1e8, list(range(1, 30))),
                                             "n2": (3e8, list(range(1, 40)))}, lr=lr)
    direct = bl.load(tb, config_map={"model.n_params": "N"}, tokens_per_step=1024)
    out = tmp_path / "sweep.csv"
    assert main(["import", str(tb), "--map", "model.n_params=N", "--tokens-per-step", "1024",
                 "--out", str(out)]) == 0, capsys.readouterr().err
    imported = bl.load(out)
    assert _law(direct) == _law(imported) == law
    assert (direct.schedules is None) == (imported.schedules is None) == (lr is constant_lr)
    columns = sorted(direct.frame.columns)
    assert columns == sorted(imported.frame.columns)
    pd.testing.assert_frame_equal(direct.frame[columns], imported.frame[columns],
                                  check_dtype=False, rtol=1e-12)
    for run, schedule in (direct.schedules or {}).items():
        again = imported.schedules[run]
        np.testing.assert_allclose(again.D, schedule.D, rtol=1e-12)
        np.testing.assert_allclose(again.eta, schedule.eta, rtol=1e-12)
        assert again.window == schedule.window
    if lr is warmup_cosine_lr:  # the terms are the schedule's, not a constant rate's
        assert direct.frame["lr_drop"].max() > 0.1


# ---------------------------------------------------------------------------------------------
# the command line on each bad input: exit 2, one line naming the problem


CLI_BAD = {"meta with loss": (b"run,N,loss\nrun-a,1e8,9\nrun-b,3e8,9\n", [],
                              "has column(s) ['loss'], which the logs give"),
           "empty meta": (b"", [], "is empty"),
           "ragged meta": (b"run,N\nrun-a,1e8\nrun-b,3e8,7,8\n", [], "cannot read meta table"),
           "map to loss": (b"run,N\nrun-a,1e8\nrun-b,3e8\n", ["--map", "x=loss"],
                           "config_map maps 'x' to 'loss'")}


@pytest.mark.parametrize("command", ["import", "fit"])
@pytest.mark.parametrize("case", list(CLI_BAD))
def test_cli_exits_2_on_bad_log_input(export, tmp_path, capsys, command, case):
    content, extra, says = CLI_BAD[case]
    meta = tmp_path / "meta.csv"
    meta.write_bytes(content)
    out = tmp_path / ("sweep.csv" if command == "import" else "fit-out")
    code = main([command, str(export), "--meta", str(meta), "--tokens-per-step", "1024",
                 *extra, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err
    assert "Traceback" not in err and not out.exists()
    assert meta.read_bytes() == content  # input never modified


# ---------------------------------------------------------------------------------------------
# bayeslaw import


def test_import_command_writes_the_tidy_table(tb_logs, tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    code = main(["import", str(tb_logs), "--map", "model.n_params=N", "--tokens-per-step",
                 "1024", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out)
    assert len(table) == 2 * 29 and {"run", "step", "D", "loss", "lr", "N", "T_m"} == set(table)
    assert table.groupby("run")["N"].first().to_dict() == {"n1": 1e8, "n2": 3e8}
    np.testing.assert_allclose(table["D"], table["step"] * 1024.0)
    np.testing.assert_allclose(table["loss"], _loss(table["step"].to_numpy(float),
                                                    table["N"].to_numpy()), rtol=1e-6)
    again = bl.load(out)  # the written table loads as it is, lr column and all
    pd.testing.assert_frame_equal(again.frame[list(table.columns)], table, check_dtype=False)
    direct = bl.load(tb_logs, config_map={"model.n_params": "N"}, tokens_per_step=1024)
    assert _law(again) == _law(direct) == "looped_total"  # a constant lr: no schedule
    code = main(["import", str(tb_logs), "--tokens-per-step", "1024", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: run 'n1'") and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# the user guide's page "From your training logs" (docs/user_guide/logs.md), run as written


def _readme_section() -> str:
    return (ROOT / "docs" / "user_guide" / "logs.md").read_text(encoding="utf-8")


def test_readme_training_log_examples_run(tmp_path, monkeypatch, capsys):
    section = _readme_section()
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    commands = re.findall(r"^(bayeslaw import .*)$", section, re.M)
    assert len(blocks) == 3 and len(commands) >= 1
    monkeypatch.chdir(tmp_path)
    write_tensorboard(Path("tb_logs"), {"n1": (1e8, list(range(1, 40))),
                                        "n2": (3e8, list(range(1, 40)))})
    write_wandb_export(Path("wandb_export.csv"), {"run-a": 40, "run-b": 30})
    pd.DataFrame({"run": ["run-a", "run-b"], "N": [1e8, 3e8]}).to_csv("runs.csv", index=False)
    write_mlflow(tmp_path / "mlflow.db", {"a": 40, "b": 30}, monkeypatch)
    fake_wandb(monkeypatch, {"big": 50, "small": 30}, [])
    checked = []
    for block in blocks:
        scope: dict = {}
        exec(compile(block, "README.md", "exec"), scope)  # noqa: S102 - the README's own code
        for name in ("data", "live"):
            if name in scope:
                _check_readme_table(scope[name].frame, scope[name].source)
                checked.append(scope[name].source)
    for command in commands:
        args = shlex.split(command)[1:]
        assert main(args) == 0, capsys.readouterr().err
        _check_readme_table(pd.read_csv(args[args.index("--out") + 1]), args[1])
        checked.append(args[1])
    assert set(checked) == set(README_TABLES)


#: What each README example reads (the logs written above): each run's N and point count,
#: tokens per step, and the N its logged loss was computed with (None: the run's own).
README_TABLES = {
    "tb_logs": ({"n1": (1e8, 39), "n2": (3e8, 39)}, 2**20, None),
    "wandb_export.csv": ({"run-a": (1e8, 40), "run-b": (3e8, 30)}, 2**20, 1e8),
    "wandb:my-team/my-sweep": ({"big": (1e8, 50), "small": (2e8, 30)}, 2**20, 1e8),
    "mlflow.db": ({"a": (1e8, 40), "b": (2e8, 30)}, 2048, 1e8),
}


def _check_readme_table(frame: pd.DataFrame, where: str) -> None:
    """The README example's table holds the logged values: N, counts, D, every loss."""
    runs, per_step, n_loss = README_TABLES[where]
    by_run = frame.groupby("run", sort=False)
    assert by_run["N"].first().to_dict() == {r: n for r, (n, _) in runs.items()}
    assert by_run.size().to_dict() == {r: k for r, (_, k) in runs.items()}
    np.testing.assert_allclose(frame["D"], frame["step"] * float(per_step))
    n = frame["N"].to_numpy(float) if n_loss is None else n_loss
    np.testing.assert_allclose(frame["loss"], _loss(frame["step"].to_numpy(float), n),
                               rtol=1e-6)


def test_fit_parser_takes_the_log_options(tb_logs):
    from bayeslaw.cli.arguments import build_parser
    from bayeslaw.cli.commands import _load_data

    args = build_parser().parse_args(["fit", str(tb_logs), "--map", "model.n_params=N",
                                      "--tokens-per-step", "1024", "--metric", "train/loss"])
    assert len(_load_data(args).runs) == 2
