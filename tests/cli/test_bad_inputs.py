"""Bad input of every kind: a specific error naming the key, column, row or value; never a
raw exception, a silent load or a crash (issue items 9, 12, 13, 14, 16, 18 and the
finite initial point).  Each of these loaded, fitted or crashed at 23aba32."""

import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.cli.arguments import build_parser
from bayeslaw.errors import ArgumentError, DataError, SpecError
from bayeslaw.spec.catalog import load_spec

from ..conftest import cli_env

# -- item 9: spec values -----------------------------------------------------------------


@pytest.mark.parametrize("bad, match", [
    # text where a number belongs: a raw ValueError (exit 1, traceback) at 23aba32
    ({"priors": {"E": {"dist": "LogNormal", "mu": "x", "sigma": 1}}},
     r"priors\.E: prior LogNormal parameter mu = 'x' must be a finite number"),
    ({"fixed": {"t2": "abc"}}, r"fixed\.t2 must be a finite number, got 'abc'"),
    ({"reference": {"N": "abc"}}, r"\[reference\] needs a positive N .* got 'abc'"),
    ({"priors": {"E": {"dist": "LogNormal", "mu": [1], "sigma": 1}}},
     r"parameter mu = \[1\] must be a finite number"),
    ({"fixed": {"t2": True}}, r"fixed\.t2 must be a finite number, got True"),
    # values that loaded and then crashed the sampler
    ({"reference": {"N": math.nan}}, r"\[reference\] needs a positive N .* got nan"),
    ({"reference": {"D": 1e308}}, r"\[reference\] needs a positive D .*at most 1e\+30.*1e\+308"),
    ({"priors": {"E": {"dist": "LogNormal", "mu": 0.7, "sigma": -0.4}}},
     r"priors\.E: prior LogNormal parameter sigma = -0\.4 must be positive"),
    ({"priors": {"gamma": {"dist": "Gamma", "alpha": 2, "beta": 0}}},
     r"priors\.gamma: prior Gamma parameter beta = 0\.0 must be positive"),
    ({"priors": {"gamma": {"dist": "Uniform", "lower": 2, "upper": 1}}},
     r"priors\.gamma: prior Uniform needs lower < upper, got lower = 2\.0, upper = 1\.0"),
    ({"effects": [{"param": "b", "group": "N", "pooling": "none", "scale": math.nan}]},
     r"effects\[0\]: pooling='none' needs a positive number 'scale'.*got nan"),
    ({"effects": 5}, r"\[\[effects\]\] must be a list of tables, got 5"),
    ({"priors": 5}, r"spec section 'priors' must be a table, got 5"),
    ({"likelihood": {"sigma_by": 3}}, r"likelihood\.sigma_by must name a group column.*got 3"),
    ({"sampler": {"sum_split": [[1], "E"]}}, r"sum_split must name two or more different"),
])
def test_bad_spec_values_name_key_and_value(bad, match):
    with pytest.raises(SpecError, match=match):
        load_spec(bad, law="looped_total")


def test_bad_spec_value_in_a_toml_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[priors.E]\ndist = "LogNormal"\nmu = "zero"\nsigma = 0.4\n')
    before = path.read_bytes()
    with pytest.raises(SpecError, match="priors.E: prior LogNormal parameter mu = 'zero'"):
        load_spec(path, law="looped_total")
    assert path.read_bytes() == before


# -- item 16: the user's [fixed] wins over the default's prior -----------------------------


def test_user_fixed_wins_over_the_default_prior():
    default = load_spec(law="chinchilla")
    assert "a" in default.priors and "a" in default.sampler.sum_split
    spec = load_spec({"fixed": {"a": 1e-6}}, law="chinchilla")
    assert spec.fixed["a"] == 1e-6 and "a" not in spec.priors and "a" not in spec.free_params
    # the default's sum_split ["E", "a", "b"] loses the fixed parameter, keeps the rest
    assert spec.sampler.sum_split == ("E", "b")
    # a group effect of the default on a parameter the user fixed goes with its prior
    looped = load_spec({"fixed": {"b": 0.5}}, law="looped_total")
    assert looped.fixed["b"] == 0.5
    assert [e.name for e in looped.effects] == ["beta_by_N", "beta_by_T_m"]
    # both from the user is still refused
    with pytest.raises(SpecError, match=r"\['a'\] are both fixed and given a prior"):
        load_spec({"fixed": {"a": 1.0}, "priors": {"a": {"dist": "LogNormal", "mu": 0,
                                                          "sigma": 1}}}, law="chinchilla")


def _two_sizes() -> pd.DataFrame:
    rows = [{"run": f"n{n:g}", "N": n, "D": d, "loss": 2 + 1e3 / n**0.3 + 50 / d**0.2}
            for n in (1e8, 3e8) for d in np.geomspace(1e8, 1e10, 6)]
    return pd.DataFrame(rows)


def test_too_few_N_levels_advice_works_end_to_end(tmp_path):
    """The level error's advice, followed as written, gives a spec that fits."""
    data = bl.load(_two_sizes())
    with pytest.raises(DataError) as exc:
        bl.fit(data, law="chinchilla", method="laplace")
    message = str(exc.value)
    assert "fix that term's parameters in the spec" in message
    advice = re.search(r"\[fixed\] (.*)\)$", message).group(1)
    assert advice == "a = ..., alpha = ..."
    names = [part.split(" = ")[0] for part in advice.split(", ")]
    path = tmp_path / "fixed.toml"
    path.write_text("law = \"chinchilla\"\n[fixed]\n"
                    + "".join(f"{n} = {v}\n" for n, v in zip(names, (0.3, 0.35), strict=True)))
    with pytest.warns(bl.ApproximationWarning):
        fit = bl.fit(data, spec=path, method="laplace", draws=50, chains=1, seed=1)
    post = fit.idata.posterior
    assert "a" not in post and "alpha" not in post and "E" in post and "b" in post
    assert np.all(np.isfinite(post["E"].values))


# -- items 12, 13, 18: table values --------------------------------------------------------


def _frame(**change) -> pd.DataFrame:
    frame = pd.DataFrame({"run": ["r1"] * 3 + ["r2"] * 3 + ["r3"] * 3,
                          "N": [1e8] * 3 + [3e8] * 3 + [1e9] * 3,
                          "D": [1e8, 1e9, 1e10] * 3,
                          "loss": [3.5, 3.0, 2.8, 3.3, 2.9, 2.6, 3.1, 2.7, 2.4]})
    for column, (row, value) in change.items():
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    return frame


@pytest.mark.parametrize("change, match", [
    # item 12: True / False loaded as 1.0 / 0.0
    ({"loss": (4, True)}, r"column 'loss' must be numeric; row 5 of <DataFrame> has True"),
    ({"N": (0, np.True_)}, r"column 'N' must be numeric; row 1 of <DataFrame> has True"),
    # item 13: values a float64 law cannot evaluate
    ({"loss": (2, 1e300)}, r"column 'loss' has 1e\+300 in row 3 .* largest value taken \(1e\+06\)"),
    ({"D": (8, 1e308)}, r"column 'D' has 1e\+308 in row 9 .* largest value taken \(1e\+30\)"),
    ({"N": (3, -1e31)}, r"column 'N' has -1e\+31 in row 4"),
    # item 18: printed as nan, not np.float64(nan)
    ({"loss": (6, np.float64("nan"))}, r"missing or infinite value \(nan\) in row 7 of"),
    ({"D": (1, np.float64("inf"))}, r"missing or infinite value \(inf\) in row 2 of"),
])
def test_bad_table_values_name_column_row_and_value(change, match):
    with pytest.raises(DataError, match=match) as exc:
        bl.load(_frame(**change))
    assert "np." not in str(exc.value)


def test_boolean_loss_column_in_a_csv(tmp_path):
    path = tmp_path / "bool.csv"
    frame = _frame()
    frame["loss"] = [True, False] * 4 + [True]
    frame.to_csv(path, index=False)
    before = path.read_bytes()
    with pytest.raises(DataError, match=r"column 'loss' must be numeric; row 1 of .* has True"):
        bl.load(path)
    assert path.read_bytes() == before


def test_tokens_per_step_may_not_push_D_past_the_bound():
    with pytest.raises(DataError, match=r"D times tokens_per_step=1e\+25 is 1e\+33 in row 1"):
        bl.load(_frame(), tokens_per_step=1e25)


# -- item 14: seeds -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["-1", "4294967296", "x"])
def test_bad_seed_is_an_argument_error(seed, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["fit", "--seed", seed])
    assert exc.value.code == 2
    assert "argument --seed: a seed is a whole number" in capsys.readouterr().err


def test_fit_refuses_a_negative_seed():
    with pytest.raises(ArgumentError, match="seed must be a whole number from 0 to 4294967295, "
                                            "got -1"):
        bl.fit(bl.load(_frame()), law="size_only", seed=-1)


def test_sbc_refuses_seeds_past_the_last_one():
    """Simulation i is fitted with seed + i: a seed the CLI accepts (2**32 - 1) made every
    simulation after the first fail as a task; now refused before anything runs."""
    from bayeslaw import testing

    with pytest.raises(ArgumentError, match="seed \\+ n_sims must stay within"):
        testing.sbc(bl.load(_frame()), "size_only", n_sims=2, seed=2**32 - 1)


# -- a finite initial point: nutpie and PyMC never get a model they cannot start ----------


def test_start_problem_names_the_parameter_and_the_run():
    import pymc as pm

    from bayeslaw.inference.warmstart import start_problem

    with pm.Model() as model:
        E = pm.LogNormal("E", mu=800.0, sigma=1.0)  # exp(800): inf at the prior's centre
        pm.Normal("loss", mu=E, sigma=1.0, observed=[1.0, 2.0])
    kind, message = start_problem(model, ["r1", "r2"], seed=1)
    assert kind == "spec" and "E = inf" in message
    with pm.Model() as model:
        E = pm.LogNormal("E", mu=0.0, sigma=1.0)
        pm.Normal("loss", mu=E, sigma=1.0, observed=[1.0, 1e300])
    kind, message = start_problem(model, ["r1", "r2"], seed=1)
    assert kind == "data" and "run(s) ['r2']" in message
    with pm.Model() as model:
        E = pm.LogNormal("E", mu=0.0, sigma=1.0)
        pm.Normal("loss", mu=E, sigma=1.0, observed=[1.0, 2.0])
    assert start_problem(model, ["r1", "r2"], seed=1) is None


def test_fit_refuses_a_model_it_cannot_start():
    """A prior centred at exp(800) = inf: named, not a sampler crash (exit 139)."""
    spec = {"priors": {"E": {"dist": "LogNormal", "mu": 800.0, "sigma": 0.4}},
            "sampler": {"sum_split": []}}
    with pytest.raises(SpecError, match=r"the model cannot start: .*E = inf"):
        bl.fit(bl.load(_frame()), spec=spec, law="size_only", method="laplace")


# -- the command line: every bad input above exits 2 with one line ------------------------

SPECS = {
    "text_prior": '[priors.E]\ndist = "LogNormal"\nmu = "x"\nsigma = 0.4\n',
    "text_fixed": '[fixed]\nt2 = "abc"\n',
    "text_reference": '[reference]\nN = "abc"\n',
    "nan_reference": "[reference]\nN = nan\n",
    "negative_sigma": '[priors.E]\ndist = "LogNormal"\nmu = 0.7\nsigma = -0.4\n',
    "uniform_reversed": '[priors.gamma]\ndist = "Uniform"\nlower = 2.0\nupper = 1.0\n',
}
TABLES = {"huge_loss": {"loss": (2, 1e300)},
          "huge_D": {"D": (8, 1e308)}, "nan_loss": {"loss": (6, math.nan)}}


@pytest.mark.parametrize("case, match", [
    *[(f"spec:{k}", m) for k, m in [
        ("text_prior", "mu = 'x' must be a finite number"),
        ("text_fixed", "fixed.t2 must be a finite number, got 'abc'"),
        ("text_reference", "[reference] needs a positive N"),
        ("nan_reference", "got nan"),
        ("negative_sigma", "sigma = -0.4 must be positive"),
        ("uniform_reversed", "needs lower < upper")]],
    ("table:bool_loss", "column 'loss' must be numeric; row 1 of"),
    ("table:huge_loss", "column 'loss' has 1e+300 in row 3"),
    ("table:huge_D", "column 'D' has 1e+308 in row 9"),
    ("table:nan_loss", "missing or infinite value (nan) in row 7"),
    ("seed:-1", "argument --seed: a seed is a whole number from 0"),
])
def test_fit_command_exits_2_on_bad_input(tmp_path, case, match):
    kind, name = case.split(":")
    table = tmp_path / "t.csv"
    frame = _frame(**TABLES.get(name, {}))
    if name == "bool_loss":  # a column of true / false: read as 1.0 / 0.0 at 23aba32
        frame["loss"] = [True, False] * 4 + [True]
    frame.to_csv(table, index=False)
    args = ["fit", str(table), "--law", "looped_total" if kind == "spec" else "chinchilla",
            "--out", str(tmp_path / "out"), "--no-progress"]
    if kind == "spec":
        (tmp_path / "s.toml").write_text(SPECS[name])
        args += ["--spec", str(tmp_path / "s.toml")]
    if kind == "seed":
        args += ["--seed", name]
    proc = subprocess.run([sys.executable, "-m", "bayeslaw.cli", *args], capture_output=True,
                          text=True, timeout=120, env=cli_env(Path(tempfile.mkdtemp())))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and match in lines[-1], proc.stderr
    if kind != "seed":  # argparse prints its usage above its error line
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert not (tmp_path / "out").exists()


def test_level_advice_names_only_parameters_the_spec_still_learns():
    """looped_total's default spec fixes t1: the advice to fix the N term named it too."""
    rows = [{"run": f"n{n:g}_t{t}", "N": n, "T_m": t, "D": d, "loss": 3.0 + 1e8 / n + 0.1 / t}
            for n in (1e8, 3e8) for t in (1, 2, 4) for d in (1e8, 1e9, 1e10)]
    spec = bl.load_spec("looped_total")
    assert "t1" in spec.fixed
    with pytest.raises(DataError, match=r"\[fixed\] a = \.\.\., alpha = \.\.\.\)$"):
        bl.fit(bl.load(pd.DataFrame(rows)), spec, method="laplace")
