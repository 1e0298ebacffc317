"""bayeslaw's own build of nutpie's compiled model (``bayeslaw.inference.compiled``): the same
density, gradient and draws as the PyMC model, a digamma equal to scipy's, callbacks that a
second process loads from disk instead of compiling, and draws that do not depend on it."""

import ctypes
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import bayeslaw as bl

from ..density import compile_logp, compile_logp_dlogp


@pytest.fixture(scope="module")
def small_density(small_sweep):
    """The small sweep's default model, compiled as ``fit`` compiles it (shared cache entry)."""
    from bayeslaw.inference.modelcache import compiled_for
    from bayeslaw.model.plan import make_plan
    from bayeslaw.spec.catalog import load_spec

    spec = load_spec(law="looped_total")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        entry, compiled = compiled_for(make_plan(spec, small_sweep[0]), small_sweep[0])
    return entry, compiled


def test_digamma_matches_scipy():
    """The cacheable digamma of PyTensor's numba backend (Student-t gradients in nu)."""
    import pytensor
    import pytensor.tensor as pt
    from scipy.special import psi

    from bayeslaw.inference.compiled import register_cached_digamma

    register_cached_digamma()
    x = pt.dvector("x")
    f = pytensor.function([x], pt.psi(x), mode="NUMBA")
    positive = np.concatenate([np.geomspace(1e-6, 1e6, 200),
                               [0.5, 1.0, 1.4616321449683622, 2.0, 5.5, 9.999, 10.0, 10.001]])
    # the recurrence sums up to 10 terms and the series is truncated below 1e-15: a few ulps
    # of the sum (absolute where psi crosses 0 at x ~ 1.4616)
    np.testing.assert_allclose(f(positive), psi(positive), rtol=1e-13, atol=1e-15)
    # x < 0 goes through the reflection psi(1 - x) - pi / tan(pi x): within 1e-3 of a pole,
    # tan loses digits in proportion (2e-12 measured at -49.999); nu never gets there
    negative = -np.geomspace(1e-3, 50, 100)[1:] + 1e-3
    np.testing.assert_allclose(f(negative), psi(negative), rtol=1e-10)
    poles = np.array([0.0, -0.0, -1.0, -2.0, -7.0])  # -inf, inf, then NaN, as scipy
    np.testing.assert_array_equal(f(poles), psi(poles))


def test_raw_density_is_the_models(small_density):
    """Identity map: logp and gradient equal the graph's (:mod:`tests.density`) at points
    around the start; the expansion equals the PyTensor function it wraps."""
    from bayeslaw.inference.warmstart import LogDensity

    entry, compiled = small_density
    entry.density.identity()
    model = entry.model.model
    both = compile_logp_dlogp(model)
    free = {v.name for v in model.value_vars}
    names, slices, shapes = zip(*[(n, sl, sh) for n, sl, sh in zip(*compiled.shape_info,
                                                                    strict=True)
                                  if n in free], strict=True)
    density = LogDensity(compiled)
    x0 = compiled.initial_point_func(3)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = x0 + 0.05 * rng.standard_normal(len(x0))
        point = {name: x[sl].reshape(shape) for name, sl, shape in zip(names, slices, shapes,
                                                                         strict=True)}
        lp, grad = density(x)
        logp, flat = both(point)
        np.testing.assert_allclose(lp, float(logp), rtol=1e-10)
        # the graph's gradient is ordered by model.value_vars, nutpie's by shape_info
        order = [v.name for v in model.value_vars]
        sizes = [int(np.prod(point[name].shape)) for name in order]
        parts = dict(zip(order, np.split(flat, np.cumsum(sizes)[:-1]), strict=True))
        expected = np.concatenate([parts[name].ravel() for name in names])
        np.testing.assert_allclose(grad, expected, rtol=1e-9, atol=1e-9)
    out = np.zeros(compiled.n_expanded)
    proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64,
                             ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    x = np.ascontiguousarray(x0)
    code = proto(compiled.compiled_expand_func.address)(
        compiled.n_dim, compiled.n_expanded, x.ctypes.data, out.ctypes.data,
        compiled.user_data.ctypes.data)
    assert code == 0
    (values,) = compiled.expand_func(x)
    np.testing.assert_allclose(out, values, rtol=1e-12)


COLD_WARM = """
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
import bayeslaw as bl
from bayeslaw.inference import modelcache
from bayeslaw.simulate import looped_sweep

modelcache.COMPILE_IN_CHILD = sys.argv[2] == "child"
frame, _ = looped_sweep(seed=5, points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8),
                        D_range=(3e7, 2e10))
fit = bl.fit(bl.load(frame), draws=100, tune=100, chains=2, seed=4)
post = fit.idata.posterior
np.save(sys.argv[1], np.concatenate([post[v].values.ravel() for v in sorted(post.data_vars)]))
"""


def test_a_cold_and_a_warm_process_draw_the_same(tmp_path):
    """Issue 34, item 2: a fit's draws depend on its data, spec, settings and seed, not on
    whether numba's cache held the model.  Two processes fit the small default looped sweep
    with a fresh, empty PyTensor compile directory: in the first, a child process compiles
    the model (numba's cache lacks it) and the first loads it; the second loads it.  Their
    draws are identical bit for bit, and both callbacks of the second come from the cache
    (a Student-t likelihood puts digamma, which needed a cacheable implementation, in the
    gradient).  With ``COMPILE_IN_CHILD = False`` the first process compiles the model
    itself, and every one of its draws differed from the second's
    (``benchmarks/results/cold_warm_2026-12-05/README.md``): so this test can fail.  Only a
    fresh compile directory shows it: a new constant in the graph, with the rest of the cache
    warm, gave identical draws (what differs is in kernels the graphs share)."""
    path = tmp_path / "cold_warm.py"
    path.write_text(COLD_WARM)
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={tmp_path / 'pytensor'}"}
    runs = []
    for name in ("cold", "warm"):
        run = subprocess.run([sys.executable, str(path), str(tmp_path / f"{name}.npy"),
                              "child"], capture_output=True, text=True, timeout=900,
                             check=False, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        runs.append(run.stderr)
    assert "(in a child process, then loaded)" in runs[0], runs[0][-2000:]
    assert "(loaded from disk)" in runs[1], runs[1][-2000:]
    cold, warm = (np.load(tmp_path / f"{name}.npy") for name in ("cold", "warm"))
    assert cold.size == warm.size > 100 * 2 * 20
    np.testing.assert_array_equal(cold, warm)


KEYS = """
import json, warnings
warnings.simplefilter("ignore")
import numpy as np
import bayeslaw as bl
from bayeslaw.inference.compiled import cache_keys
from bayeslaw.inference.modelcache import get_model
from bayeslaw.simulate import design, schedule_sweep

sweep = bl.load(design((1e8, 3e8, 1e9), (2, 4, 8), np.geomspace(3e7, 2e10, 8)).assign(loss=3.0))
keys = {"default": cache_keys(get_model(bl.load_spec(), bl.load(bl.bundled_path())).model)}
for noise in ("walk", "ar1"):
    d = bl.load_spec(law="looped_total").to_dict()
    d["effects"] = []
    d["likelihood"] = {"family": "normal", "sigma": d["likelihood"]["sigma"], "sigma_by": "none"}
    if noise == "walk":
        for name in ("walk", "walk_start"):
            d["likelihood"][name] = {"dist": "LogNormal", "mu": -3.5, "sigma": 0.5}
    else:
        d["likelihood"]["ar1"] = {"dist": "Uniform", "lower": -0.9, "upper": 0.9}
    keys[noise] = cache_keys(get_model(bl.ModelSpec.from_dict(d), sweep).model)
d = bl.load_spec().to_dict()  # a walk with the default spec's group effects and noise
for name in ("walk", "walk_start"):
    d["likelihood"][name] = {"dist": "LogNormal", "mu": -3.5, "sigma": 0.5}
keys["walk+effects"] = cache_keys(get_model(bl.ModelSpec.from_dict(d), sweep).model)
scheduled = bl.load(schedule_sweep(points=6, N=(1e8, 3e8, 1e9), horizons=(2e9,))[0])
d = bl.load_spec("multi_power").to_dict()  # the annealing sum's terms: containers of their
d["likelihood"]["ar1"] = {"dist": "Uniform", "lower": -0.9, "upper": 0.9}  # own length
keys["multi_power+ar1"] = cache_keys(get_model(bl.ModelSpec.from_dict(d), scheduled).model)
print(json.dumps(keys))
"""


def test_every_process_gets_the_same_cache_keys(tmp_path):
    """A model's numba cache keys are the same in every process that builds it, or a process
    never loads what another cached (the compile child's included: a fresh clone's CI failed
    on it).  PyTensor merges the unknown lengths of containers in the order of a set of
    variables, hashed by address; a random-walk or AR(1) likelihood differentiates through
    slices whose shapes it then built in another order in each process.  Before the
    containers were declared of the mask's shape, the walk spec's logp key differed in every
    one of 4 pairs of processes (issue 34, item 2), and this test failed on the walk and
    AR(1) keys with the old graph: so it can fail, though only as likely as two processes
    lay out their variables differently (they did in every run tried)."""
    path = tmp_path / "keys.py"
    path.write_text(KEYS)
    # the two processes run side by side (each is one thread of graph rewriting: CI's second
    # core halves the wait); PYTHONHASHSEED did not matter, but need not be shared either
    procs = [subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}) for seed in ("1", "2")]
    runs = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-2000:]
            runs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            proc.kill()  # nothing left running when one fails (a no-op on a finished one)
    assert set(runs[0]) == {"default", "walk", "ar1", "walk+effects", "multi_power+ar1"}
    for name, keys in runs[0].items():
        assert set(keys) == {"logp", "expand"} and None not in keys.values(), (name, keys)
    assert runs[0] == runs[1]


def test_the_folds_of_a_backtest_share_one_compiled_model():
    """A 5-fold backtest of the bundled sweep compiles its model once (issue 34, item 5).

    Each fold holds out other runs, whose per-run noise levels are built non-centered (no
    data: a funnel if centered); which levels those are is data (``sigma_order``), not graph,
    so the folds' plans share one key.  A later fold's density, swapped into the first fold's
    compiled model, is that fold's own model's (PyMC, built afresh from its plan).
    """
    from bayeslaw.evaluation.splits import parse_split
    from bayeslaw.inference import modelcache
    from bayeslaw.inference.warmstart import LogDensity
    from bayeslaw.model.graph import LossModel
    from bayeslaw.model.plan import make_plan
    from bayeslaw.spec.catalog import resolve_spec

    data = bl.load(bl.bundled_path())
    spec = resolve_spec(None, law=None, columns=frozenset(data.columns))
    trains = [data.select(part.train, part.name) for part in parse_split(data, "kfold:5")]
    plans = [make_plan(spec, data, train) for train in trains]
    assert len({plan.key for plan in plans}) == 1
    assert len({plan.centered for plan in plans}) == 5  # each fold centers other levels
    before = len(modelcache.COMPILES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        for k, (plan, train) in enumerate(zip(plans, trains, strict=True)):
            entry, compiled = modelcache.compiled_for(plan, train)
            if k not in (1, 4):
                continue
            entry.density.identity()
            own = LossModel(plan)  # this fold's own graph, its levels as it says
            own.set_data(train)
            fresh = own.model
            logp = compile_logp(fresh)
            names, slices, shapes = compiled.shape_info
            free = {v.name for v in fresh.value_vars}
            density = LogDensity(compiled)
            x0 = compiled.initial_point_func(k)
            rng = np.random.default_rng(k)
            for _ in range(2):
                x = x0 + 0.05 * rng.standard_normal(len(x0))
                point = {n: x[sl].reshape(sh) for n, sl, sh in zip(names, slices, shapes,
                                                                   strict=True) if n in free}
                np.testing.assert_allclose(density(x)[0], float(logp(point)), rtol=1e-10)
    assert len(modelcache.COMPILES) - before <= 1  # none when an earlier test compiled it


def test_a_failed_child_compile_warns_with_the_childs_error():
    """Where the child process cannot compile a model, the caller is told why (the child's
    error) and that it compiles the model itself; the next model gets a new child."""
    from bayeslaw.inference import coldcompile

    with pytest.warns(RuntimeWarning, match=r"child process failed \(\w+Error: .*compiling it "
                                            "in this process instead"):
        assert coldcompile.compile_elsewhere(None, None, None) is False
    assert "child" not in coldcompile._child  # stopped: the next compile starts a new one


def test_a_model_that_cannot_be_sent_to_the_child_warns_and_is_compiled_here():
    """A plan cloudpickle cannot send (here a lock) is compiled in the calling process, with
    a warning naming why; no child is started for it."""
    import threading

    from bayeslaw.inference import coldcompile

    coldcompile._stop()
    with pytest.warns(RuntimeWarning, match=r"the model cannot be sent: TypeError"):
        assert coldcompile.compile_elsewhere(threading.Lock(), None, None) is False
    assert "child" not in coldcompile._child
