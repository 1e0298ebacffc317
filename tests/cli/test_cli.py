"""The command line: success and failure paths (user errors exit 2 without a traceback)."""

import io
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayeslaw import constants as C
from bayeslaw.cli.arguments import build_parser
from bayeslaw.cli.commands import main
from bayeslaw.errors import ConvergenceWarning
from bayeslaw.posterior.result import Fit

from ..conftest import cli_env


@pytest.fixture()
def small_csv(tmp_path, small_sweep):
    data, _ = small_sweep
    path = tmp_path / "sweep.csv"
    data.frame.to_csv(path, index=False)
    return path


def test_fit_command_writes_outputs(small_csv, tmp_path, capsys):
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
    # the diagnosis says why and what to change: 30 tuning steps did not mix the chains
    err = capsys.readouterr().err
    assert "worst R-hat: " in err and "set tune = 60 in [sampler]" in err, err
    assert "set tune = 60 in [sampler]" in (out / "diagnostics.md").read_text()


def _run(*args):
    return subprocess.run([sys.executable, "-m", "bayeslaw.cli", *args], capture_output=True,
                          text=True, timeout=300, env=cli_env(Path(tempfile.mkdtemp())))


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


STORED = str(Path(__file__).parents[1] / "fixtures" / "small_fit.nc")


def test_predict_grid_to_stdout(capsys):
    from io import StringIO

    code = main(["predict", STORED, "--N", "1e8,3e9", "--D", "2e10,1e11", "--T_m", "4"])
    assert code == 0
    table = pd.read_csv(StringIO(capsys.readouterr().out))
    assert list(table.columns) == ["N", "D", "T_m", "median", "lower_50", "upper_50",
                                   "lower_90", "upper_90"]
    assert len(table) == 4
    assert (table["lower_90"] <= table["median"]).all()
    assert (table["median"] <= table["upper_90"]).all()


def _raw_and_mapped(capsys, args, inner):
    """``bayeslaw predict`` as given, then with ``inner`` (an inner fit, short chains):
    both tables and the second call's captured output."""
    from io import StringIO

    assert main(args) == 0
    raw = pd.read_csv(StringIO(capsys.readouterr().out))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains: plumbing only
        assert main(args + inner) == 0
    out = capsys.readouterr()
    return raw, pd.read_csv(StringIO(out.out)), out


def test_predict_recalibrated_from_an_inner_backtest(capsys):
    """``--recalibrate prefix:0.5``: one inner fit on the stored fit's data; the bands move, the
    count of inner held-out points is the hand count, and an epistemic band is refused."""
    args = ["predict", STORED, "--N", "1e8,3e9", "--D", "2e10", "--T_m", "4", "--seed", "3"]
    inner = ["--recalibrate", "prefix:0.5", "--draws", "100", "--tune", "200", "--chains", "2"]
    raw, cal, out = _raw_and_mapped(capsys, args, inner)
    frame = Fit.load(STORED).data.frame
    n_inner = int((frame["D"] > 0.5 * frame.groupby("run")["D"].transform("max")).sum())
    assert f"recalibrated from prefix:0.5: {n_inner} held-out points" in out.err
    assert list(cal.columns) == list(raw.columns)
    assert (cal[["N", "D", "T_m"]] == raw[["N", "D", "T_m"]]).all().all()
    bands = ["lower_90", "lower_50", "median", "upper_50", "upper_90"]
    assert not np.allclose(cal[bands], raw[bands])
    assert (np.diff(cal[bands].to_numpy(), axis=1) >= 0).all()
    assert main(args + inner + ["--epistemic"]) == 2
    assert "--recalibrate maps predictive bands" in capsys.readouterr().err


def test_predict_widened_past_the_run(capsys):
    """``--widen prefix:0.5``: one inner fit; the median stays, each band widens by the
    printed ``scale (1 + rate d)`` with ``d`` the e-folds past the run's last point (to the
    printed three digits), and ``--recalibrate`` with it is refused."""
    import re

    args = ["predict", STORED, "--run", "N1B_T8", "--D", "1e11", "--seed", "3"]
    inner = ["--widen", "prefix:0.5", "--draws", "100", "--tune", "200", "--chains", "2"]
    raw, wide, out = _raw_and_mapped(capsys, args, inner)
    scale, rate = (float(v) for v in
                   re.search(r"scale ([\d.e+-]+), rate ([\d.e+-]+)", out.err).groups())
    last = Fit.load(STORED).data.frame.query("run == 'N1B_T8'")["D"].max()
    k = scale * (1 + rate * np.maximum(np.log(raw["D"] / last), 0))
    np.testing.assert_allclose(wide["median"], raw["median"], rtol=1e-12)
    np.testing.assert_allclose(wide["upper_90"] - wide["lower_90"],
                               k * (raw["upper_90"] - raw["lower_90"]), rtol=1e-2)
    assert main(args + inner + ["--recalibrate", "prefix:0.5"]) == 2
    assert "give one of --recalibrate and --widen" in capsys.readouterr().err


def test_predict_widened_for_calibration_per_span(capsys):
    """``--widen prefix:0.5 --widen-criterion msce --widen-span``: the pair comes from the msce
    learner's grid (a scale and rate the log-density optimizer would not land on exactly), the
    distance is in units of the run's fitted span, and either option without ``--widen`` is
    refused."""
    import re

    from bayeslaw.evaluation.widen import MSCE_RATES, MSCE_SCALES

    args = ["predict", STORED, "--run", "N1B_T8", "--D", "1e11", "--seed", "3"]
    inner = ["--widen", "prefix:0.5", "--widen-criterion", "msce", "--widen-span",
             "--draws", "100", "--tune", "200", "--chains", "2"]
    raw, wide, out = _raw_and_mapped(capsys, args, inner)
    assert "(msce)" in out.err and "per run's fitted span" in out.err
    scale, rate = (float(v) for v in
                   re.search(r"scale ([\d.e+-]+), rate ([\d.e+-]+)", out.err).groups())
    assert np.isclose(MSCE_SCALES, scale, rtol=6e-3).any()
    assert np.isclose(MSCE_RATES, rate, rtol=6e-3, atol=1e-12).any()
    frame = Fit.load(STORED).data.frame.query("run == 'N1B_T8'")["D"]
    span = np.log(frame.max() / frame.min())
    k = scale * (1 + rate * np.maximum(np.log(raw["D"] / frame.max()), 0) / span)
    np.testing.assert_allclose(wide["median"], raw["median"], rtol=1e-12)
    np.testing.assert_allclose(wide["upper_90"] - wide["lower_90"],
                               k * (raw["upper_90"] - raw["lower_90"]), rtol=1e-2)
    for option in (["--widen-span"], ["--widen-criterion", "msce"], ["--widen-tails"]):
        assert main(args + option) == 2
        assert "give --widen SPLIT with them" in capsys.readouterr().err


def test_predict_widened_with_tails_keeps_the_50_band_shape(capsys):
    """``--widen-tails``: the tail comes from the grid (:data:`TAILS`), the 50% band widens by
    the factor alone, and the 90% band by at least as much (by more where the tail is not 0)."""
    import re

    from bayeslaw.evaluation.widen import TAILS

    args = ["predict", STORED, "--run", "N1B_T8", "--D", "1e11", "--seed", "3",
            "--levels", "0.5,0.9"]
    inner = ["--widen", "prefix:0.5", "--widen-criterion", "coverage", "--widen-tails",
             "--draws", "100", "--tune", "200", "--chains", "2"]
    raw, wide, out = _raw_and_mapped(capsys, args, inner)
    scale, rate, tail = (float(v) for v in re.search(
        r"scale ([\d.e+-]+), rate ([\d.e+-]+) per e-fold of D, tail ([\d.e+-]+)",
        out.err).groups())
    assert np.isclose(TAILS, tail, atol=1e-3).any()
    last = Fit.load(STORED).data.frame.query("run == 'N1B_T8'")["D"].max()
    k = scale * (1 + rate * np.maximum(np.log(raw["D"] / last), 0))
    np.testing.assert_allclose(wide["median"], raw["median"], rtol=1e-12)
    np.testing.assert_allclose(wide["upper_50"] - wide["lower_50"],
                               k * (raw["upper_50"] - raw["lower_50"]), rtol=2e-2)
    ratio = (wide["upper_90"] - wide["lower_90"]) / (k * (raw["upper_90"] - raw["lower_90"]))
    assert np.all(ratio > (1.02 if tail > 0 else 0.98))


def test_predict_points_run_levels_epistemic(tmp_path):
    pts = tmp_path / "pts.csv"
    pd.DataFrame({"N": [3e8], "D": [5e10], "T_m": [2]}).to_csv(pts, index=False)
    out = tmp_path / "p.csv"
    assert main(["predict", STORED, "--points", str(pts), "--levels", "0.8,0.95",
                 "--epistemic", "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert {"lower_80", "upper_95"} <= set(table.columns)
    out2 = tmp_path / "r.csv"
    assert main(["predict", STORED, "--run", "N1B_T8", "--D", "1e11", "--out", str(out2)]) == 0
    run = pd.read_csv(out2)
    assert run["D"].max() == pytest.approx(1e11) and (run["run"] == "N1B_T8").all()


@pytest.mark.parametrize("args, message", [
    (["predict", STORED, "--N", "1e8"], "needs --D (tokens)"),
    (["predict", STORED, "--N", "1e8", "--D", "1e9", "--T_m", "4", "--P", "2"],
     "has no P term: drop --P"),
    (["predict", STORED, "--N", "1e8", "--D", "1e9"], "needs --T_m"),
    (["predict", STORED, "--run", "x", "--N", "1"], "exactly one of"),
    (["predict", STORED, "--run", "nope", "--D", "1e11"], "run 'nope' is not in the fit"),
    (["predict", "missing.nc", "--run", "x", "--D", "1"], "fit file 'missing.nc' does not exist"),
    (["predict", STORED, "--N", "abc", "--D", "1"], "--N takes comma-separated numbers"),
    (["predict", STORED, "--points", "{csv}", "--D", "1"], "not both: drop --points or --D"),
    (["predict", STORED, "--N", "1e8", "--D", "0", "--T_m", "4"], "positive finite numbers"),
    (["predict", STORED, "--N", "1e8", "--D", "1e9", "--T_m", "4", "--levels", ","],
     "--levels takes comma-separated band probabilities"),
    (["check", STORED, "--levels", ""], "--levels takes comma-separated band probabilities"),
    (["plot", STORED, "--out", "x.gif"], "use a .png, .svg or .pdf"),
    (["predict", "{csv}", "--run", "x", "--D", "1"], "is not a bayeslaw fit file"),
])
def test_predict_plot_errors(tmp_path, args, message, capsys):
    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n1,2\n")
    args = [a.format(csv=csv) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


COMMANDS = ("fit", "backtest", "predict", "plot", "check", "report")


def test_options_are_spelled_one_way_across_commands():
    """Every ``--seed`` defaults to ``DEFAULT_SEED``; band levels are ``--levels`` (``check``
    takes no ``--prob``)."""
    parser = build_parser()
    first = {"fit": [], "backtest": ["--split", "prefix:0.5"], "predict": ["x.nc"],
             "plot": ["x.nc"], "check": ["x.nc"], "report": ["x.nc"]}
    seeds = {c: vars(parser.parse_args([c, *first[c]])).get("seed", "none") for c in COMMANDS}
    assert seeds == {**dict.fromkeys(COMMANDS, C.DEFAULT_SEED), "plot": "none"}
    assert parser.parse_args(["predict", "x.nc"]).levels == "0.5,0.9"
    assert parser.parse_args(["check", "x.nc"]).levels == "0.9"
    assert parser.parse_args(["check", "x.nc", "--levels", "0.5,0.9"]).levels == "0.5,0.9"
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["check", "x.nc", "--prob", "0.9"])
    assert exc.value.code == 2


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_every_command(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: bayeslaw {command}")
    if command != "plot":
        assert f"(default {C.DEFAULT_SEED})" in out


def test_check_command_checks_each_level(capsys):
    """``check --levels 0.5,0.9``: one posterior predictive check per band, as the library's."""
    from bayeslaw.testing import posterior_predictive_check

    loose = ["--max-rhat", "1.1", "--min-ess", "50"]  # the stored fit's short chains
    code = main(["check", STORED, "--levels", "0.5,0.9", *loose])
    out = capsys.readouterr().out
    fitted = Fit.load(STORED)
    want = [posterior_predictive_check(fitted, prob=p, seed=C.DEFAULT_SEED) for p in (0.5, 0.9)]
    assert out.splitlines()[0].startswith("PASS convergence")
    for r in want:
        assert str(r) in out and f"prob={r.values['prob']:g}" in str(r)
    assert code == (0 if all(r.passed for r in want) else 1)


def test_plot_command_extends_and_adds_N(tmp_path):
    out = tmp_path / "grid.svg"
    assert main(["plot", STORED, "--extend-to", "1e11", "--add-N", "3e9", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "T_m = 8, N = 3B" in text


@pytest.mark.slow
def test_backtest_command(small_csv, tmp_path, capsys):
    out = tmp_path / "bt"
    # 100 draws cannot converge: the warnings name the split, and --strict exits 3 saying why
    with pytest.warns(ConvergenceWarning, match=r"split '(inner )?prefix:0.5': sampling did not"):
        code = main(["backtest", str(small_csv), "--split", "prefix:0.5", "--out", str(out),
                     "--draws", "100", "--tune", "200", "--chains", "2", "--n-boot", "5",
                     "--seed", "2", "--recalibrate", "--strict"])
    assert code == 3
    err = capsys.readouterr().err
    assert "split 'prefix:0.5' (bayeslaw) did not converge:" in err
    table = pd.read_csv(out / "backtest.csv")
    assert not table.loc[table["method"] == "bayeslaw", "converged"].item()
    assert list(table["method"]) == ["bayeslaw", "bayeslaw, recalibrated", "baseline"]
    assert {"mape", "coverage_50", "coverage_90", "crps", "r2", "lpd"} <= set(table.columns)
    # the recalibration learned from the training part's own prefix:0.5 (counted by hand)
    frame = pd.read_csv(small_csv)
    train = frame[frame["D"] <= 0.5 * frame.groupby("run")["D"].transform("max")]
    inner_test = train["D"] > 0.5 * train.groupby("run")["D"].transform("max")
    rec = table.set_index("method").loc["bayeslaw, recalibrated"]
    assert rec["n_calibration"] == inner_test.sum() > 0
    assert rec["n_test"] == len(frame) - len(train) and np.isnan(rec["lpd"])
    # a share of whole points, inside its interval, and moved by the recalibration
    raw = table.set_index("method").loc["bayeslaw"]
    assert (rec["coverage_90"] * rec["n_test"]) == pytest.approx(
        round(rec["coverage_90"] * rec["n_test"]))
    assert rec["coverage_90_low"] <= rec["coverage_90"] <= rec["coverage_90_high"]
    assert rec["crps"] > 0 and rec["crps"] != raw["crps"]
    for png in ("forecast_prefix_0.5.png", "forecast_prefix_0.5_recalibrated.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    assert "| prefix:0.5 | bayeslaw |" in (out / "backtest.md").read_text()
    assert main(["backtest", str(small_csv), "--split", "bogus", "--out", str(out)]) == 2
    assert "unknown split 'bogus'" in capsys.readouterr().err


def test_schedule_commands(tmp_path, capsys):
    """``--schedule`` on fit, backtest (no --law or --spec: the schedule picks the law),
    predict (a what-if cool-down) and plot; input files untouched."""
    from bayeslaw.simulate import schedule_sweep

    frame, _ = schedule_sweep(points=8, N=(5e7, 1e8, 2e8), horizons=(2e9,))
    plan = ["schedule", "warmup", "decay_start", "decay_shape", "final_lr_ratio"]
    curves, table = tmp_path / "curves.csv", tmp_path / "plan.csv"
    frame.drop(columns=plan).to_csv(curves, index=False)
    frame.groupby("run", as_index=False)[plan].first().to_csv(table, index=False)
    before = (curves.read_bytes(), table.read_bytes())
    out = tmp_path / "bt"
    # 100 draws do not converge (the warning names the split): this checks the plumbing
    with pytest.warns(ConvergenceWarning, match="split 'prefix:0.5': sampling did not"):
        code = main(["backtest", str(curves), "--schedule", str(table), "--split",
                     "prefix:0.5", "--draws", "100", "--tune", "100", "--chains", "2",
                     "--no-baseline", "--out", str(out), "--no-progress"])
    assert code == 0
    scores = pd.read_csv(next(out.glob("*.csv")))
    assert (scores["mape"] < 0.02).all()
    fit_out = tmp_path / "fit"
    assert main(["fit", str(curves), "--schedule", str(table), "--method", "laplace",
                 "--out", str(fit_out), "--no-progress"]) == 0
    fit = Fit.load(fit_out / "fit.nc")
    assert fit.spec.law == "multi_power" and set(fit.data.schedules) == set(frame["run"])
    whatif = pd.read_csv(table)
    whatif.loc[whatif["schedule"] == "wsd", "decay_start"] = 1.2e9
    whatif.to_csv(tmp_path / "whatif.csv", index=False)
    run = next(r for r in frame["run"].unique() if "wsd0.9" in r)
    points = frame[frame["run"] == run].drop(columns=["loss", *plan]).iloc[4:]
    points.to_csv(tmp_path / "points.csv", index=False)
    medians = []
    for schedule in (table, tmp_path / "whatif.csv"):
        capsys.readouterr()
        assert main(["predict", str(fit_out / "fit.nc"), "--points",
                     str(tmp_path / "points.csv"), "--schedule", str(schedule),
                     "--epistemic"]) == 0
        medians.append(pd.read_csv(io.StringIO(capsys.readouterr().out))["median"])
    # a cool-down from 60% of the run instead of 90%: lower losses before the horizon
    assert (medians[1].iloc[:-1] < medians[0].iloc[:-1] - 1e-3).all()
    assert main(["plot", str(fit_out / "fit.nc"), "--schedule", str(tmp_path / "whatif.csv"),
                 "--out", str(tmp_path / "whatif.png")]) == 0
    assert (tmp_path / "whatif.png").stat().st_size > 10_000
    assert (curves.read_bytes(), table.read_bytes()) == before
    late = frame[frame["run"] == run].drop(columns=["loss", *plan]).assign(D=3e9).iloc[:1]
    late.to_csv(tmp_path / "late.csv", index=False)
    assert main(["predict", str(fit_out / "fit.nc"), "--points", str(tmp_path / "late.csv")]) == 2
    assert "past the end of the run's known learning-rate schedule" in capsys.readouterr().err
