"""What a fleet's task failure is (bayeslaw.inference.fleet.task_failure), serially: a BayeslawError
or the sampler's own error is kept as a failed task, a programming error is raised (the Dask
side is in test_fleet.py, which needs dask.distributed)."""

from __future__ import annotations

import warnings

import pytest

from bayeslaw.errors import BayeslawError, ConvergenceError, TaskFailedWarning
from bayeslaw.inference import fleet


def buggy(x):
    return x.no_such_attribute  # a programming error, not a task's failure


def fails(x):
    raise BayeslawError(f"task {x} failed")


def asserts(x):
    assert x > 5, "an assertion of the code, not of a test"


@pytest.mark.parametrize("bug, error", [(buggy, AttributeError), (asserts, AssertionError),
                                        (len, TypeError)])
def test_a_programming_error_is_raised_not_kept(bug, error):
    """At 23aba32 ``execute`` kept every ``Exception`` as a failed task: the Python API then
    returned a partial result with only a ``TaskFailedWarning``. Now it is raised."""
    tasks = [fleet.Task("good", len, ((1, 2),)), fleet.Task("bug", bug, (1,))]
    with pytest.raises(error):
        fleet.run(tasks)


def test_a_bayeslaw_error_is_a_failed_task_and_the_others_kept():
    good, failed = fleet.run([fleet.Task("good", len, ((1, 2),)),
                              fleet.Task("fails", fails, (2,))])
    assert good.ok and good.value == 2
    assert not failed.ok and not failed.fatal and isinstance(failed.error, BayeslawError)
    assert failed.error_text.startswith("BayeslawError: task 2 failed")
    with pytest.warns(TaskFailedWarning, match="'fails' failed: BayeslawError: task 2"):
        assert fleet.values([good, failed], "task") == {"good": 2}


def test_what_counts_as_a_task_failure():
    import pymc.exceptions

    assert fleet.task_failure(BayeslawError("x")) and fleet.task_failure(ConvergenceError("x"))
    assert fleet.task_failure(pymc.exceptions.SamplingError("initial point"))
    for bug in (TypeError("x"), AttributeError("x"), NameError("x"), AssertionError("x"),
                RuntimeError("x"), ValueError("x")):  # not raised inside the sampler
        assert not fleet.task_failure(bug)
    # an error raised from inside nutpie (its Rust sampler reports as RuntimeError)
    code = compile("raise RuntimeError('chain 0 failed')", "/site-packages/nutpie/sample.py",
                   "exec")
    try:
        exec(code)
    except RuntimeError as exc:
        assert fleet.task_failure(exc)


def test_the_samplers_other_failures_are_task_failures():
    """PyMC's multi-chain failure (not a SamplingError) and pathfinder's "All paths failed"
    (a ValueError of pymc-extras) fail one task; at first they were raised as bugs."""
    from pymc.sampling.parallel import ParallelSamplingError

    assert fleet.task_failure(ParallelSamplingError("Chain 0 failed with: boom", 0))
    code = compile("raise ValueError('All paths failed')",
                   "/site-packages/pymc_extras/inference/pathfinder/pathfinder.py", "exec")
    with pytest.raises(ValueError) as info:
        exec(code)
    assert fleet.task_failure(info.value)


def _warns_then_breaks():
    warnings.warn("before the bug", UserWarning, stacklevel=1)
    raise TypeError("a bug")


def test_a_bug_is_raised_with_the_warnings_the_task_gave_first():
    with pytest.warns(UserWarning, match="before the bug"), pytest.raises(TypeError, match="a bug"):
        fleet.run([fleet.Task("t", _warns_then_breaks)], progress=False)
