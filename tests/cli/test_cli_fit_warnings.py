"""``bayeslaw fit`` keeps the warnings of a fit that fails (at 23aba32 they were recorded
and dropped when ``fit`` raised: a ``WarmStartWarning`` before the failure was lost)."""

from __future__ import annotations

import warnings

import pytest

from bayeslaw.cli.commands import main
from bayeslaw.errors import ConvergenceError, WarmStartWarning
from bayeslaw.inference import sampling as inference


def test_warnings_before_a_failed_fit_reach_the_user(tidy_frame, tmp_path, monkeypatch,
                                                     capsys):
    csv = tmp_path / "sweep.csv"
    tidy_frame.to_csv(csv, index=False)

    def failing_fit(*args, **kwargs):
        warnings.warn("the warm start found no usable mode", WarmStartWarning, stacklevel=2)
        raise ConvergenceError("the sampler failed")

    monkeypatch.setattr(inference, "fit", failing_fit)
    with pytest.warns(WarmStartWarning, match="the warm start found no usable mode"):
        code = main(["fit", str(csv), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "error: the sampler failed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
