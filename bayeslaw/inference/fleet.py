"""Fleets of independent tasks (folds, refits, simulations, fits): serially, or on Dask.

:func:`run` takes a list of :class:`Task` (a name and a module-level function with its
arguments) and runs every one of them:

* **serially in this process** (``client=None, workers=None``: the default, and what runs
  when ``dask.distributed`` is not installed), one after another as before;
* **on a local cluster of processes** (``workers=K``): ``K`` worker processes of one thread,
  started for the call and closed after it;
* **on any** ``dask.distributed`` **scheduler** (``client=`` a ``distributed.Client`` or an
  address such as ``"tcp://10.0.0.5:8786"``).

On Dask each worker process keeps its compiled models across its tasks
(:mod:`bayeslaw.inference.modelcache` is per process, so a structure is compiled once per worker, or
loaded from numba's disk cache), gets a PyTensor compile folder of its own and the cores one
fit may use (:mod:`bayeslaw.inference.workers`). Tasks in one process run one at a time (a lock),
since the compiled-model cache swaps data into shared models.

Every task runs through :func:`execute`, in the worker or here: the same function, seeds and
arguments give the same result, so a fleet's results equal the serial run's. Its warnings are
recorded and issued here, as each task finishes, with the task's name; a task that fails (a
:class:`~bayeslaw.errors.BayeslawError` or the sampler's own error: :func:`task_failure`) is
kept as a failed :class:`Outcome` (its error, type and traceback) and the others go on; any
other error is a bug and is raised, as a serial loop would raise it. The
caller decides what a failure means (:func:`values`: a :class:`TaskFailedWarning` naming each
failed task when others succeeded, the first error raised when none did). A progress bar over
the tasks is drawn on stderr (by default when stderr is a terminal, not in CI or pytest).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import time
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ArgumentError, BayeslawError, FleetWarning, TaskFailedWarning

#: Tasks in one process run one at a time (the compiled-model cache is not thread-safe).
_LOCK = threading.Lock()
#: Seconds to wait for a scheduler given by its address to answer.
CONNECT_TIMEOUT = 30


@dataclass(frozen=True)
class Task:
    """One unit of a fleet: ``fn(*args, **kwargs)``, named for progress and failures.

    ``fn`` must be a module-level function (a worker imports it by name).
    """

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What running a :class:`Task` gave: its value, or its error; its warnings; its time."""

    name: str
    value: Any = None
    error: BaseException | None = None
    error_text: str = ""
    warnings: tuple[tuple[str, type[Warning], str, int], ...] = ()
    seconds: float = 0.0
    #: the error is a bug (not a :func:`task_failure`): raised by :func:`run`, not kept
    fatal: bool = False

    @property
    def ok(self) -> bool:
        """Whether the task returned (did not raise)."""
        return not self.error_text


def default_progress() -> bool:
    """Whether to show a progress bar: stderr is a terminal, not CI, not under pytest."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return sys.stderr.isatty() and not ci and "PYTEST_CURRENT_TEST" not in os.environ


#: The samplers whose own errors fail one task: errors of their classes, or raised from
#: their code (nutpie's Rust sampler reports as ``RuntimeError`` / ``ValueError``; pathfinder's
#: "All paths failed" is a ``ValueError`` of pymc-extras)
SAMPLERS = ("pymc", "pymc_extras", "nutpie")


def task_failure(error: BaseException) -> bool:
    """Whether ``error`` is a task's failure (kept as a failed :class:`Outcome`), not a bug.

    A :class:`~bayeslaw.errors.BayeslawError` (bad input, a fit that cannot run, strict
    convergence) and the sampler's own failures (an error class of :data:`SAMPLERS`, such as
    PyMC's ``SamplingError`` and ``ParallelSamplingError``, or a ``RuntimeError`` /
    ``ValueError`` raised from their code) fail one task. Anything else (``TypeError``,
    ``AttributeError``, ``AssertionError``, ...) is a programming error: :func:`run` raises
    it rather than returning a partial result.
    """
    if isinstance(error, BayeslawError):
        return True
    if type(error).__module__.split(".")[0] in SAMPLERS:
        return True
    frames = traceback.extract_tb(error.__traceback__)
    return isinstance(error, RuntimeError | ValueError) and any(
        f"{os.sep}{name}{os.sep}" in frame.filename for frame in frames[-1:]
        for name in SAMPLERS)


def execute(task: Task, portable: bool = False) -> Outcome:
    """Run ``task`` in this process: its value or its failure, and its recorded warnings.

    An error that is not a :func:`task_failure` is raised here (serially) or, in a Dask
    worker (``portable``), returned as a ``fatal`` outcome that :func:`run` raises. With
    ``portable`` an error that cannot be pickled back is replaced by a ``RuntimeError`` with
    its text; here the error is kept as it is.
    """
    with _LOCK, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            value, error, text = task.fn(*task.args, **task.kwargs), None, ""
        except Exception as exc:  # a failure is kept (the caller names the task), a bug not
            value, error = None, exc
            text = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        seconds = time.perf_counter() - t0
    fatal = error is not None and not task_failure(error)
    if fatal and not portable:  # a bug, raised here with the warnings the task gave first
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        raise error
    if portable and error is not None and not _picklable(error):
        error = RuntimeError(text.splitlines()[0])
    recorded = tuple((str(w.message), w.category, w.filename, w.lineno) for w in caught)
    return Outcome(task.name, value, error, text, recorded, seconds, fatal)


def _picklable(obj: Any) -> bool:
    """Whether ``obj`` survives a trip from a worker (an error's own arguments may not)."""
    try:
        pickle.loads(pickle.dumps(obj))
    except Exception:  # any failure to pickle means: send its text instead
        return False
    return True


def run(tasks: Sequence[Task], *, client: Any = None, workers: int | None = None,
        progress: bool | None = None, label: str = "tasks",
        on_done: Callable[[int, Outcome], None] | None = None) -> list[Outcome]:
    """Run every task; their outcomes in the order of ``tasks``.

    Parameters
    ----------
    tasks : sequence of Task
        Names must be unique (they name failures and progress).
    client : distributed.Client or str, optional
        A Dask client, or a scheduler's address to connect to.
    workers : int, optional
        Without ``client``: the size of a local cluster of processes started for this call.
        Neither: serially in this process.
    progress : bool, optional
        A progress bar over the tasks on stderr (default :func:`default_progress`).
    label : str
        What the tasks are, for the progress bar (``"backtest folds"``).
    on_done : callable, optional
        Called here as ``on_done(index, outcome)`` when each task finishes (in the order they
        finish), after its warnings are issued: an SBC appends its record at once.
    """
    names = [t.name for t in tasks]
    if len(set(names)) != len(names):
        raise ArgumentError(f"task names must be unique, got {names}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ArgumentError(f"workers must be a positive number of processes, got {workers!r}")
    if workers is not None and client is not None:
        raise ArgumentError("give workers=K (a local cluster) or client= (a Dask client or "
                            "scheduler address), not both")
    if not tasks:  # nothing to do (a resumed SBC with every record stored): no cluster
        return []
    bar = Progress(len(tasks), label, default_progress() if progress is None else progress)
    outcomes: list[Outcome | None] = [None] * len(tasks)
    registry: dict[Any, Any] = {}

    def finish(i: int, outcome: Outcome) -> None:
        for message, category, filename, lineno in outcome.warnings:
            warnings.warn_explicit(message, category, filename, lineno, registry=registry)
        if outcome.fatal:  # a bug in a worker's task: raised as a serial run raises it
            raise _with_worker_text(outcome)
        outcomes[i] = outcome
        bar.update(outcome)
        if on_done is not None:
            on_done(i, outcome)

    try:
        with connect(client, workers, len(tasks)) as dask_client:
            if dask_client is None:
                for i, task in enumerate(tasks):
                    finish(i, execute(task))
            else:
                _run_dask(dask_client, tasks, finish)
    finally:
        bar.close()
    return [o for o in outcomes if o is not None]


def _run_dask(client: Any, tasks: Sequence[Task], finish: Callable[[int, Outcome], None]
              ) -> None:
    """Submit every task to ``client``; ``finish`` each as it completes."""
    from distributed import as_completed

    tag = uuid.uuid4().hex[:8]
    futures = {client.submit(execute, task, True, key=f"bayeslaw-{tag}-{i}", pure=False): i
               for i, task in enumerate(tasks)}
    for future in as_completed(futures):
        i = futures[future]
        try:
            outcome = future.result()
        except Exception as exc:  # the worker died, or the task could not reach it
            outcome = Outcome(tasks[i].name, None, exc, f"{type(exc).__name__}: {exc}")
        finish(i, outcome)


def _with_worker_text(outcome: Outcome) -> BaseException:
    """A fatal outcome's error, with the worker's traceback (as text) in a note."""
    error = outcome.error or RuntimeError(outcome.error_text)
    error.add_note(f"task {outcome.name!r}, in a Dask worker:\n{outcome.error_text}")
    return error


@contextlib.contextmanager
def connect(client: Any, workers: int | None, n_tasks: int) -> Iterator[Any]:
    """The Dask client to run on (set up by :mod:`bayeslaw.inference.workers`), or None."""
    if client is None and workers is None:
        yield None
        return
    try:
        import distributed
    except ImportError:
        if client is not None:
            raise ArgumentError(f"client={client!r} needs Dask: pip install "
                                "'bayeslaw[dask]'") from None
        warnings.warn(f"workers={workers} needs Dask (pip install 'bayeslaw[dask]'); the "
                      f"{n_tasks} tasks run serially in this process", FleetWarning,
                      stacklevel=4)
        yield None
        return
    with contextlib.ExitStack() as stack:
        if isinstance(client, str):
            client = stack.enter_context(_client_at(distributed, client))
        elif client is None:
            cluster = stack.enter_context(_local_cluster(distributed, workers))
            client = stack.enter_context(distributed.Client(cluster))
        from .workers import plugin_for

        client.register_plugin(plugin_for(client))
        yield client


def _local_cluster(distributed: Any, workers: int) -> Any:
    """A local cluster of ``workers`` processes of one thread (no dashboard)."""
    try:
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=40)
    except RuntimeError as exc:  # "Nanny failed to start": most often the missing guard
        raise ArgumentError(
            f"the local cluster's {workers} worker processes failed to start ({exc}); a "
            "script that starts workers must run its code under `if __name__ == "
            "'__main__':` (each worker process imports the script), as with any "
            "multiprocessing; see the log above for other causes") from exc


def _client_at(distributed: Any, address: str) -> Any:
    """A client of the scheduler at ``address``; an error naming it when none answers."""
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise ArgumentError(f"no Dask scheduler answered at {address!r} ({exc}): start one "
                            "(dask scheduler) or give its address as tcp://HOST:PORT"
                            ) from None


def values(outcomes: Sequence[Outcome], what: str) -> dict[str, Any]:
    """The values of the tasks that returned, by name; failures warned about by name.

    When every task failed, the first one's error is raised (as a serial loop would have);
    otherwise each failed task gets a :class:`TaskFailedWarning` naming it and its error, and
    the others' values are kept. ``what`` names the tasks (``"backtest fold"``).
    """
    failed = [o for o in outcomes if not o.ok]
    if failed and len(failed) == len(outcomes):
        error = failed[0].error or RuntimeError(failed[0].error_text)
        if error.__traceback__ is None:  # raised in a worker: its traceback came as text
            error.add_note(f"{what} {failed[0].name!r}, in a Dask worker:\n"
                           f"{failed[0].error_text}")
        raise error
    for o in failed:
        warnings.warn(f"{what} {o.name!r} failed: {o.error_text.splitlines()[0]}; the other "
                      f"{len(outcomes) - len(failed)} kept", TaskFailedWarning, stacklevel=3)
    return {o.name: o.value for o in outcomes if o.ok}


def failures(outcomes: Sequence[Outcome]) -> dict[str, str]:
    """The failed tasks' errors (type and message, one line each), by name."""
    return {o.name: o.error_text.splitlines()[0] for o in outcomes if not o.ok}


class Progress:
    """A progress bar over tasks on stderr: redrawn on a terminal, a line per task elsewhere."""

    def __init__(self, total: int, label: str, enabled: bool) -> None:
        self.total, self.label, self.enabled = total, label, enabled and total > 0
        self.done, self.failed, self.t0 = 0, 0, time.perf_counter()
        self.tty = sys.stderr.isatty()

    def update(self, outcome: Outcome) -> None:
        """One more task finished."""
        self.done += 1
        self.failed += not outcome.ok
        if not self.enabled:
            return
        width = 24
        filled = width * self.done // self.total
        state = "done" if outcome.ok else "FAILED"
        line = (f"{self.label}: [{'#' * filled}{'.' * (width - filled)}] {self.done}/"
                f"{self.total} ({self.failed} failed), {time.perf_counter() - self.t0:.0f} s;"
                f" {outcome.name} {state} in {outcome.seconds:.1f} s")
        sys.stderr.write(f"\r\x1b[2K{line}" if self.tty else line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.enabled and self.tty and self.done:
            sys.stderr.write("\n")
            sys.stderr.flush()
