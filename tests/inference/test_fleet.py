"""Fleets of fits (bayeslaw.inference.fleet): Dask gives the tables the serial run gives; a failed
task is named and the rest kept; a scheduler given by its address; the serial fallback without Dask.

The fits are the reduced spec of the SBC test (no group effects, normal noise: about a second
each) on a 3 x 3 sweep of 8 points per curve, so that a local cluster of 2 worker processes,
a scheduler and worker started on loopback and the serial runs fit in CI. Equality is exact:
the same function with the same seeds and arguments runs in the worker as here (nutpie seeds
each chain; the cores it uses change only the speed).

This rests on every process running the compiled density numba loaded from its disk cache: a
process that compiled the model itself ran code whose log density differed in the last bit at
some points (measured: 3 of 200 points, 2e-13 nats), which moved the warm start's mode and the
chains (``benchmarks/results/fleet_2026-12-02.md``). The library now compiles a model numba has
not cached in a child process and loads it (:mod:`bayeslaw.inference.coldcompile`), in this
process and in every worker alike, so no test here warms the cache first. They fit a spec of
their own (``FLEET``: the reduced spec with one prior moved, a graph no other test compiles),
so that its first compile happens here, in whichever process fits it first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw import testing
from bayeslaw.cli.commands import main
from bayeslaw.errors import BayeslawError, FleetWarning, SpecError, TaskFailedWarning
from bayeslaw.evaluation import backtesting
from bayeslaw.inference import fleet
from bayeslaw.simulate import looped_sweep

from ..evaluation.test_checks import MATCHED
from ..extras import need

distributed = need("distributed", "dask.distributed runs the fleets", module_level=True)

SAMPLER = dict(draws=300, tune=300, chains=2)


def _spec_of_its_own():
    d = MATCHED.to_dict()
    d["priors"]["E"] = {**d["priors"]["E"], "mu": 0.7}  # 0.693 in MATCHED
    return bl.ModelSpec.from_dict(d)


FLEET = _spec_of_its_own()


def toml_text(d: dict) -> str:
    """A spec dict as TOML (scalars and lists first, then one table per dict)."""
    def value(v):
        return json.dumps(v) if isinstance(v, str | list) else repr(v).lower() \
            if isinstance(v, bool) else repr(v)

    def table(prefix, t):
        lines = [f"{k} = {value(v)}" for k, v in t.items() if not isinstance(v, dict)]
        out = ([f"[{prefix}]"] if prefix else []) + lines
        for k, v in t.items():
            if isinstance(v, dict):
                out += ["", *table(f"{prefix}.{k}" if prefix else k, v)]
        return out

    return "\n".join(table("", d)) + "\n"
#: the fits are short and the spec is misspecified for this sweep: convergence is not the point
pytestmark = pytest.mark.filterwarnings("ignore::bayeslaw.errors.ConvergenceWarning")


@pytest.fixture(scope="module")
def sweep():
    frame, _ = looped_sweep(seed=3, points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8),
                            D_range=(3e7, 2e10))
    return bl.load(frame)


@pytest.fixture(scope="module")
def fleet_files(sweep, tmp_path_factory):
    """The sweep as CSV and FLEET as TOML."""
    folder = tmp_path_factory.mktemp("fleet")
    csv, spec = folder / "sweep.csv", folder / "fleet.toml"
    sweep.frame.to_csv(csv, index=False)
    spec.write_text(toml_text(FLEET.to_dict()))
    assert bl.load_spec(spec) == FLEET
    return csv, spec


@pytest.fixture(scope="module")
def client():
    """A local cluster of 2 worker processes of one thread, shared by this module's tests."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def serial_backtest(sweep, fleet_files):
    return bl.backtest(sweep, FLEET, "kfold:3", n_boot=10, seed=4, **SAMPLER)


def _same_backtest(a, b):
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.forecasts.keys() == b.forecasts.keys()
    for key in a.forecasts:
        pd.testing.assert_frame_equal(a.forecasts[key], b.forecasts[key])


def test_backtest_on_a_local_cluster_equals_serial(sweep, serial_backtest, client):
    on_dask = bl.backtest(sweep, FLEET, "kfold:3", n_boot=10, seed=4, client=client,
                          **SAMPLER)
    _same_backtest(serial_backtest, on_dask)
    assert len(serial_backtest.table) == 6 and not on_dask.failures  # 3 folds x 2 methods
    # each worker compiled this structure at most once across its folds, kept its own
    # PyTensor compile folder, and may use its share of the cores
    compiles = client.run(lambda: len(
        __import__("bayeslaw.inference.modelcache").inference.modelcache.COMPILES))
    assert sorted(compiles.values()) in ([1, 1], [0, 1])
    folders = client.run(lambda: __import__("pytensor").config.compiledir)
    assert len(set(folders.values())) == 2
    assert all("bayeslaw-pytensor" in str(f) for f in folders.values())
    cores = client.run(lambda: os.environ[C.ENV_CORES])
    assert set(cores.values()) == {str(max(1, os.cpu_count() // 2))}


def test_sbc_on_a_local_cluster_equals_serial_and_resumes(sweep, fleet_files, client, tmp_path):
    kw = dict(n_sims=4, seed=1, **SAMPLER)
    serial = testing.sbc(sweep, FLEET, path=tmp_path / "serial.jsonl", **kw)
    on_dask = testing.sbc(sweep, FLEET, path=tmp_path / "dask.jsonl", client=client, **kw)
    assert serial.values == on_dask.values
    pd.testing.assert_frame_equal(serial.details, on_dask.details)

    def records(name):
        lines = (tmp_path / name).read_text().splitlines()
        return sorted((json.loads(line) for line in lines), key=lambda r: r["sim"])

    assert records("serial.jsonl") == records("dask.jsonl")
    # resumed on Dask: the stored records are reused, nothing is fitted again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = testing.sbc(sweep, FLEET, path=tmp_path / "dask.jsonl", client=client,
                            progress=True, **kw)
    assert again.values == serial.values


def test_a_failed_task_is_named_and_the_others_kept(sweep, fleet_files, client, capsys):
    jobs = {"good": sweep, "bad": {"data": sweep, "spec": None, "law": "no_such_law"}}
    single = bl.fit(sweep, FLEET, seed=2, progress=False, **SAMPLER)
    for where in ({}, {"client": client}):
        with pytest.warns(TaskFailedWarning, match=r"fit 'bad' failed: SpecError: unknown law"):
            fits = bl.fit_many(jobs, spec=FLEET, seed=2, progress=True, **SAMPLER, **where)
        assert list(fits) == ["good"] and list(fits.failures) == ["bad"]
        assert fits.failures["bad"].startswith("SpecError: unknown law 'no_such_law'")
        np.testing.assert_array_equal(fits["good"].draws("E"), single.draws("E"))
        progress = capsys.readouterr().err
        assert "fits: [" in progress and "2/2 (1 failed)" in progress and "bad FAILED" in progress
    # every task failed: the first one's own error, as a serial loop raises it
    with pytest.raises(SpecError, match="no_such_law"):
        bl.fit_many({"bad": jobs["bad"]}, client=client)


def test_a_failed_fold_keeps_the_other_folds(sweep, monkeypatch):
    real = backtesting._fold_rows

    def flaky(data, spec, part, *args, **kwargs):
        if part.name.endswith("fold 2"):  # a fit that fails: bayeslaw's own error
            raise BayeslawError("the sampler failed on this fold")
        return real(data, spec, part, *args, **kwargs)

    monkeypatch.setattr(backtesting, "_fold_rows", flaky)
    with pytest.warns(TaskFailedWarning, match="fold 2.*BayeslawError: the sampler failed.*; "
                                               "the other 2 kept"):
        result = bl.backtest(sweep, FLEET, "kfold:3", baseline=False, seed=4, **SAMPLER)
    assert len(result.table) == 2 and not result.table["split"].str.endswith("fold 2").any()
    assert list(result.failures) == ["kfold:3 fold 2"]
    assert any("fold 'kfold:3 fold 2' failed" in n for n in result.notes)


def test_without_dask_workers_run_serially_with_a_warning(sweep, monkeypatch, serial_backtest):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.warns(FleetWarning, match="workers=2 needs Dask"):
        result = bl.backtest(sweep, FLEET, "kfold:3", n_boot=10, seed=4, workers=2,
                             **SAMPLER)
    _same_backtest(serial_backtest, result)
    with pytest.raises(bl.ArgumentError, match="needs Dask"):
        fleet.run([fleet.Task("t", len, ((),))], client="tcp://127.0.0.1:1")


def _start(args, tmp_path, name):
    with open(tmp_path / f"{name}.log", "w") as log:  # the child keeps its own handle
        return subprocess.Popen([sys.executable, "-m", *args], stdout=log, stderr=log,
                                cwd=tmp_path)


@pytest.fixture()
def scheduler_address(tmp_path):
    """A ``dask scheduler`` and one ``dask worker`` (2 processes) on loopback; the address."""
    file = tmp_path / "scheduler.json"
    procs = [_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", str(file)], tmp_path, "scheduler")]
    try:
        deadline = time.time() + 120
        while not file.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        procs.append(_start(["distributed.cli.dask_worker", address, "--nworkers", "2",
                             "--nthreads", "1", "--no-dashboard"], tmp_path, "worker"))
        with distributed.Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=60)


def test_cli_on_a_scheduler_given_by_address(fleet_files, tmp_path, scheduler_address, capsys):
    assert scheduler_address.startswith("tcp://127.0.0.1:")
    csv, spec = fleet_files
    before = csv.read_bytes()
    common = ["backtest", str(csv), "--spec", str(spec), "--split", "kfold:3", "--draws",
              "200", "--tune", "200", "--chains", "2", "--seed", "4", "--n-boot", "10"]
    assert main([*common, "--out", str(tmp_path / "serial"), "--no-progress"]) == 0
    assert main([*common, "--out", str(tmp_path / "dask"), "--scheduler",
                 scheduler_address]) == 0
    assert (tmp_path / "serial" / "backtest.csv").read_text() == \
        (tmp_path / "dask" / "backtest.csv").read_text()
    # SBC from the command line on the same scheduler: every simulation recorded
    records = tmp_path / "sbc.jsonl"
    code = main(["sbc", str(csv), "--spec", str(spec), "--n-sims", "3", "--draws", "150",
                 "--tune", "150", "--chains", "2", "--seed", "5", "--out", str(records),
                 "--scheduler", scheduler_address])
    stored = [json.loads(line) for line in records.read_text().splitlines()]
    assert sorted(r["sim"] for r in stored) == [0, 1, 2]
    # every simulation recorded: the exit code is the verdict of these records (1 when the
    # ranks or a fit's convergence fail it, else 0)
    assert code == (0 if testing.sbc_verdict(stored).passed else 1), stored
    assert "sbc" in capsys.readouterr().out and records.with_suffix(".png").exists()
    assert csv.read_bytes() == before


def test_cli_fleet_options_are_checked(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fleet, "CONNECT_TIMEOUT", 2)  # nothing listens on port 9
    assert main(["backtest", "--split", "prefix:0.5", "--workers", "0"]) == 2
    assert "workers must be a positive number of processes, got 0" in capsys.readouterr().err
    assert main(["backtest", "--split", "prefix:0.5", "--workers", "2", "--scheduler",
                 "tcp://127.0.0.1:1"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["backtest", "--split", "prefix:0.5", "--scheduler", "tcp://127.0.0.1:9",
                 "--out", str(tmp_path / "x")]) == 2
    assert "no Dask scheduler answered at 'tcp://127.0.0.1:9'" in capsys.readouterr().err
    assert main(["sbc", "--out", str(tmp_path / "x.csv")]) == 2
    assert ".jsonl" in capsys.readouterr().err


def test_cores_per_worker_divides_each_host_among_its_workers():
    from bayeslaw.inference.workers import cores_per_worker

    workers = {"a": {"host": "h1"}, "b": {"host": "h1"}, "c": {"host": "h2"}}
    assert cores_per_worker(workers, {"a": 8, "b": 8, "c": 2}) == {"a": 4, "b": 4, "c": 2}
    assert cores_per_worker({"a": {"host": "h"}, "b": {"host": "h"}, "c": {"host": "h"}},
                            {"a": 2, "b": 2, "c": 2}) == {"a": 1, "b": 1, "c": 1}


def test_bad_cores_setting_is_named(monkeypatch, sweep, fleet_files):
    monkeypatch.setenv(C.ENV_CORES, "two")
    with pytest.raises(bl.ArgumentError, match="BAYESLAW_CORES='two'"):
        bl.fit(sweep, FLEET, **SAMPLER)


def test_fleet_run_checks_its_arguments():
    with pytest.raises(bl.ArgumentError, match="unique"):
        fleet.run([fleet.Task("a", len, ((),)), fleet.Task("a", len, ((),))])
    with pytest.raises(bl.ArgumentError, match="positive number of processes"):
        fleet.run([fleet.Task("a", len, ((),))], workers=0)
    with pytest.raises(bl.ArgumentError, match="not both"):
        fleet.run([fleet.Task("a", len, ((),))], workers=2, client="tcp://127.0.0.1:1")
    assert fleet.run([], workers=3) == []  # nothing to run: no cluster is started
    (out,) = fleet.run([fleet.Task("a", len, ((1, 2),))])
    assert out.ok and out.value == 2 and out.name == "a"


def _raise_local():
    class Local(BayeslawError):  # a class no other process can import: it won't pickle
        pass

    raise Local("cannot travel")


def test_an_error_is_kept_as_raised_here_and_as_text_from_a_worker():
    (here,) = fleet.run([fleet.Task("t", _raise_local)])
    assert type(here.error).__name__ == "Local" and here.error_text.startswith("Local: cannot")
    with pytest.raises(Exception, match="cannot travel") as raised:
        fleet.values([here], "task")
    assert type(raised.value).__name__ == "Local"  # what a serial loop would have raised
    portable = fleet.execute(fleet.Task("t", _raise_local), portable=True)
    assert type(portable.error) is RuntimeError and "Local: cannot travel" in str(portable.error)



def test_a_programming_error_in_a_worker_is_raised_not_kept(client):
    """At 23aba32 a bug in a task on Dask became a failed outcome (a partial result and a
    ``TaskFailedWarning``); it is raised here with the worker's traceback in a note, while a
    ``BayeslawError`` stays a failed task (the serial side: ``test_fleet_failures.py``)."""
    from .test_fleet_failures import buggy, fails

    with pytest.raises(AttributeError, match="no_such_attribute") as raised:
        fleet.run([fleet.Task("good", len, ((1, 2),)), fleet.Task("bug", buggy, (1,))],
                  client=client)
    assert any("task 'bug', in a Dask worker" in n for n in raised.value.__notes__)
    good, failed = fleet.run([fleet.Task("good", len, ((1, 2),)),
                              fleet.Task("fails", fails, (2,))], client=client)
    assert good.value == 2 and not failed.ok and not failed.fatal
    assert failed.error_text.startswith("BayeslawError: task 2 failed")
