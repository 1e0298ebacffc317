"""Approximate posteriors (``fit(method="laplace" | "pathfinder")``): exact where the theory
says so, labelled approximate in every output, refused by ``bayeslaw check``, and a 5-fold
backtest that compiles each model structure once (no MCMC: Laplace draws)."""

import json
import warnings

import numpy as np
import pytest

from bayeslaw.errors import ApproximationWarning, ConvergenceError

from ..extras import need


def _laplace_fit(data, **kwargs):
    from bayeslaw.inference.sampling import fit

    with pytest.warns(ApproximationWarning, match="approximate posterior \\(laplace\\)"):
        return fit(data, law="looped_total", method="laplace", seed=3, **kwargs)


@pytest.fixture(scope="module")
def laplace_fit(small_sweep):
    return _laplace_fit(small_sweep[0])


def test_laplace_is_exact_for_a_normal_posterior():
    """y_i ~ N(mu, 1), mu ~ N(0, 10): the posterior is normal, so Laplace's draws have its
    mean and variance up to Monte Carlo error (4,000 draws: 4 standard errors of the mean,
    and the variance's 99.99% chi-square range)."""
    import pymc as pm
    from scipy import stats

    from bayeslaw.inference.approx import laplace
    from bayeslaw.inference.compiled import compile_model

    y = np.random.default_rng(5).normal(0.8, 1.0, size=30)
    with pm.Model() as model:
        pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", model["mu"], 1.0, observed=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        density = compile_model(model)
    idata, info = laplace(density.compiled, density, seed=2, n_draws=4000)
    var = 1.0 / (len(y) + 1.0 / 100.0)
    mean = y.sum() * var
    draws = idata.posterior["mu"].values.ravel()
    assert draws.shape == (4000,) and info["start_evaluations"] > 0
    assert abs(draws.mean() - mean) < 4 * np.sqrt(var / 4000)
    lo, hi = stats.chi2.ppf([5e-5, 1 - 5e-5], 3999) / 3999
    assert lo < draws.var(ddof=1) / var < hi


def test_an_approximate_fit_says_so_everywhere(laplace_fit, tmp_path):
    import matplotlib.pyplot as plt

    from bayeslaw.plots.sweep import plot_grid
    from bayeslaw.posterior.result import Fit
    from bayeslaw.report.build import build_report

    f = laplace_fit
    assert f.approximate and f.method == "laplace" and "approximate: laplace" in repr(f)
    assert f.idata.posterior.sizes["chain"] == 1
    assert f.idata.posterior.sizes["draw"] == 4000  # the spec's 4 chains x 1,000 draws
    table = f.summary()
    assert (table["method"] == "laplace (approximate)").all() and "r_hat" not in table
    assert np.isfinite(table["mean"]).all() and (table["sd"] > 0).all()
    assert not f.diagnostics.ok and "approximate posterior (laplace)" in str(f.diagnostics)
    assert f.diagnostics.to_dict()["approximate"] == "laplace"
    with pytest.raises(ConvergenceError, match="approximate posterior"):
        f.check(strict=True)
    fig = plot_grid(f)
    assert "approximate: laplace" in fig._suptitle.get_text()
    plt.close(fig)
    md = build_report(f).to_markdown()
    assert "(approximate: laplace) Diagnostics" in md and "APPROXIMATE" in md
    path = f.save(tmp_path / "fit.nc")
    import arviz as az

    attrs = az.from_netcdf(path, engine="h5netcdf").posterior.attrs
    assert attrs["bayeslaw_method"] == "laplace (approximate)"
    assert json.loads(attrs["bayeslaw_provenance"])["method"] == "laplace"
    back = Fit.load(path)
    assert back.approximate and back.method == "laplace"
    pred = back.predict(f.data.frame.head(5))
    assert np.isfinite(pred.table["median"]).all()


def test_an_approximation_whose_draws_collapsed_says_its_bands_are_too_narrow(laplace_fit):
    """pathfinder on ColPret's 192 curves returned 4,000 copies of one point (its importance
    resampling collapsed; sd 1e-17 on every coefficient) with only a Pareto k in its warning.
    An approximate fit whose distinct draws are under a tenth of its draws now says how many
    it holds; Laplace's own independent draws do not trigger it."""
    from bayeslaw.posterior.result import Fit, distinct_draws

    f = laplace_fit
    assert distinct_draws(f.idata.posterior) == (4000, 4000)
    with pytest.warns(ApproximationWarning) as plain:
        f.check()
    assert "distinct" not in str(plain[0].message)
    post = f.idata.posterior
    picks = np.repeat([0, 1, 2], [3000, 900, 100])  # 3 distinct points among 4,000 draws
    collapsed = f.idata.copy()
    collapsed.posterior = post.isel(draw=picks).assign_coords(draw=np.arange(4000))
    g = Fit.from_draws(collapsed, f.spec, f.data, f.provenance)
    assert distinct_draws(g.idata.posterior) == (3, 4000)
    with pytest.warns(ApproximationWarning, match="its 4000 draws hold only 3 distinct point"):
        g.check()


def test_check_refuses_an_approximate_fit(laplace_fit, tmp_path, capsys):
    from bayeslaw.cli.commands import main

    path = laplace_fit.save(tmp_path / "fit.nc")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "approximate posterior (laplace)" in err and "--method nuts" in err
    assert "Traceback" not in err


def test_strict_refuses_an_approximate_method(small_sweep):
    from bayeslaw.inference.sampling import fit

    with pytest.raises(ConvergenceError, match="strict=True needs MCMC diagnostics"):
        fit(small_sweep[0], method="laplace", strict=True)
    with pytest.raises(Exception, match="method must be one of"):
        fit(small_sweep[0], method="advi")


def test_pathfinder_gives_a_labelled_fit(small_sweep):
    need("pymc_extras", "the optional extra bayeslaw[approx]")
    from bayeslaw.inference.sampling import fit

    with pytest.warns(ApproximationWarning, match="approximate posterior \\(pathfinder\\)"):
        f = fit(small_sweep[0], method="pathfinder", seed=1, draws=250, chains=2)
    assert f.approximate and f.idata.posterior.sizes["draw"] == 500
    assert np.isfinite(f.summary()["mean"]).all()
    info = f.provenance["sampling"]
    assert info["successful_paths"] >= 1 and np.isfinite(info["pareto_k"])


def test_pathfinder_without_the_extra_names_it(small_sweep, monkeypatch):
    import sys

    from bayeslaw.errors import BayeslawError
    from bayeslaw.inference.sampling import fit

    monkeypatch.setitem(sys.modules, "pymc_extras", None)
    with pytest.raises(BayeslawError, match=r"bayeslaw\[approx\]"):
        fit(small_sweep[0], method="pathfinder")


def test_a_five_fold_backtest_compiles_each_structure_once(small_sweep):
    """Count the compiles: every structure the folds need is compiled at most once (and not
    at all when an earlier test compiled it), and a second backtest compiles nothing."""
    from bayeslaw.evaluation.backtesting import backtest
    from bayeslaw.evaluation.splits import parse_split
    from bayeslaw.inference import modelcache
    from bayeslaw.model.plan import make_plan
    from bayeslaw.spec.catalog import load_spec

    data, spec = small_sweep[0], load_spec(law="looped_total")
    parts = parse_split(data, "kfold:5", seed=1)
    assert len(parts) == 5
    needed = {make_plan(spec, data, data.select(p.train, "train")).key for p in parts}
    cached = set(modelcache.CACHE)
    before = len(modelcache.COMPILES)
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximationWarning)
            res = backtest(data, spec, "kfold:5", seed=1, baseline=False, method="laplace",
                           draws=100, chains=2)
        assert len(res.table) == 5 and np.isfinite(res.table["mape"]).all()
    new = modelcache.COMPILES[before:]
    assert len(new) == len(set(new))  # never the same structure twice
    assert set(new) == needed - cached


def test_every_fit_prints_and_stores_its_seconds(small_sweep, laplace_fit, capsys):
    """The timing line on stderr and the provenance agree; a refit of a structure already
    compiled in this process says it came from memory."""
    capsys.readouterr()
    f = _laplace_fit(small_sweep[0])
    err = capsys.readouterr().err
    info = f.provenance["sampling"]
    assert info["compiled"] == "in memory" and info["compile_s"] >= 0
    assert f"compile {info['compile_s']:.1f} s (in memory)" in err
    assert f"mode {info['start_s']:.1f} s" in err and "(laplace, approximate)" in err


def test_the_progress_bar_follows_the_terminal_rule(monkeypatch):
    import sys

    from bayeslaw.inference.sampling import default_progress

    assert default_progress() is False  # under pytest
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert default_progress() is True
    monkeypatch.setenv("CI", "true")
    assert default_progress() is False
    monkeypatch.setenv("CI", "0")
    assert default_progress() is True
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert default_progress() is False


def test_laplace_refuses_a_point_short_of_the_mode(small_sweep, monkeypatch):
    """At 23aba32 Laplace drew around whatever point L-BFGS returned, without checking that
    the gradient vanished there. A point half a posterior sd from the mode is refused, naming
    the gradient norm and the Newton step to the mode in posterior sds (0.5)."""
    import re
    from dataclasses import replace

    from bayeslaw.errors import BayeslawError
    from bayeslaw.inference import warmstart
    from bayeslaw.inference.sampling import fit

    real = warmstart.find_mode

    def short_of_the_mode(compiled, start, **kwargs):
        mode = real(compiled, start, **kwargs)
        # half a posterior sd along the first axis of the Laplace approximation (L e_1)
        return replace(mode, point=mode.point + 0.5 * np.linalg.cholesky(mode.cov)[:, 0])

    monkeypatch.setattr(warmstart, "find_mode", short_of_the_mode)
    with pytest.raises(BayeslawError, match="stopped short of the posterior's mode") as raised:
        fit(small_sweep[0], law="looped_total", method="laplace", seed=3)
    text = str(raised.value)
    assert "gradient norm" in text and "method='nuts'" in text
    step = float(re.search(r"a Newton step of ([0-9.]+) posterior sds", text).group(1))
    # about 0.5: the posterior is about normal near its mode (0.63 measured when written: the
    # gradient half a sd out is not exactly the quadratic's)
    assert 0.35 < step < 0.9, text
