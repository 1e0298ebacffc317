"""The disk cache of nutpie's PyTensor functions (``bayeslaw.inference.fncache``).

A hit hands one data set's compiled function to another of the same structure, rebound by the
shared variables' names: these tests check that it then computes exactly what a fresh compile
of the other data computes, that the key tells graphs apart (and not data), and that a
damaged file is compiled again, loudly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.inference import compiled, fncache
from bayeslaw.inference.modelcache import get_model


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and this test's events only."""
    monkeypatch.setattr(fncache, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(fncache, "EVENTS", [])
    return tmp_path


def _density(parts, points):
    return [(float(lp), np.asarray(g, float)) for lp, g in map(parts["logp_pt"], points)]


def test_a_hit_computes_what_a_fresh_compile_of_the_new_data_computes(cache, monkeypatch):
    """The default spec on the first fold of the bundled sweep's 5-fold split (the held-out
    runs' noise levels non-centered, so both functions read a data variable, ``sigma_order``:
    two loaded functions each hold a copy of it), stored; the same structure with every loss
    shifted by 0.01 then loaded (the model cache swaps the data into the same PyMC model):
    log density and gradient at five points equal a fresh compile's bit for bit, and numba's
    keys of the callbacks are the same (so numba's cache serves both)."""
    from bayeslaw.evaluation.splits import parse_split

    data = bl.load(bl.bundled_path())
    part = parse_split(data, "kfold:5")[0]
    first = data.select(part.train, part.name)
    other = bl.load(first.frame.assign(loss=first.frame["loss"] + 0.01))
    spec = bl.load_spec()
    stored = compiled._callbacks(get_model(spec, first, like=data).model)
    assert "sigma_order" in {v.name for v in stored["expand_pt"].get_shared()}
    assert fncache.EVENTS == ["stored", "stored"]
    rng = np.random.default_rng(0)
    points = [np.asarray(stored["initial_point_fn"](1), float) + 0.1 * rng.normal(size=stored["n"])
              for _ in range(5)]
    before = _density(stored, points)  # the first data's density
    hit = compiled._callbacks(get_model(spec, other, like=data).model)
    assert fncache.EVENTS[2:] == ["hit", "hit"]
    monkeypatch.setattr(fncache, "ENABLED", False)
    fresh = compiled._callbacks(get_model(spec, other, like=data).model)
    assert fncache.EVENTS[4:] == ["uncached", "uncached"]
    for (a, ga), (b, gb), (c, _) in zip(_density(hit, points), _density(fresh, points),
                                        before, strict=True):
        assert a == b and np.array_equal(ga, gb)
        assert a != c  # rebound: not the first data's density
    assert ({k: key for k, (_, key) in hit["functions"].items()}
            == {k: key for k, (_, key) in fresh["functions"].items()})
    expanded = [np.asarray(hit["expand_pt"](p)[0]) for p in points]
    for p, e in zip(points, expanded, strict=True):
        assert np.array_equal(e, np.asarray(fresh["expand_pt"](p)[0]))


def _graph(constant: float, name: str = "y"):
    import pytensor
    import pytensor.tensor as pt

    x = pt.vector("x")
    y = pytensor.shared(np.array([1.0, 2.0]), name=name)
    return x, y, [pt.sum(constant * (x - y) ** 2)]


def test_the_key_tells_graphs_apart_and_not_their_data():
    x, y, out = _graph(2.0)
    key = fncache.graph_key([x], out, "v")
    y.set_value(np.array([5.0, -1.0]))  # other data: the same key
    assert fncache.graph_key([x], out, "v") == key
    x2, _, out2 = _graph(2.0)  # the same graph built again (other objects)
    assert fncache.graph_key([x2], out2, "v") == key
    for other in (_graph(3.0), _graph(2.0, name="z")):  # a constant, a shared name
        assert fncache.graph_key([other[0]], other[2], "v") != key
    assert fncache.graph_key([x], out, "w") != key  # versions and settings
    with pytest.raises(fncache.Unkeyable, match="local function"):
        fncache.encode(lambda v: v)
    with pytest.raises(fncache.Unkeyable, match="no stable text"):
        fncache.encode(object())


def test_a_damaged_file_is_compiled_again_and_replaced(cache):
    import pymc.pytensorf as pytensorf

    x, y, out = _graph(2.0)
    with fncache.cached_compiles("t"):
        fn = pytensorf.compile([x], out, mode="FAST_COMPILE")
    (path,) = list(cache.glob("*.pkl"))
    path.write_bytes(b"not a pickle")
    with fncache.cached_compiles("t"), pytest.warns(RuntimeWarning, match="could not be used"):
        again = pytensorf.compile([x], out, mode="FAST_COMPILE")
    with fncache.cached_compiles("t"), warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = pytensorf.compile([x], out, mode="FAST_COMPILE")
    assert fncache.EVENTS == ["stored", "stored", "hit"]
    v = np.array([0.5, 3.0])
    want = 2.0 * np.sum((v - y.get_value()) ** 2)
    assert float(fn(v)[0]) == float(again(v)[0]) == float(loaded(v)[0]) == want


def test_the_folder_keeps_to_its_size_limit(cache, monkeypatch):
    """Three graphs stored under a limit that holds two files: the one used longest ago goes
    (a hit counts as a use)."""
    import os

    import pymc.pytensorf as pytensorf

    graphs = [_graph(c) for c in (1.0, 2.0, 3.0)]
    with fncache.cached_compiles("t"):
        for x, _, out in graphs[:2]:
            pytensorf.compile([x], out, mode="FAST_COMPILE")
    first, second = sorted(cache.glob("*.pkl"), key=lambda f: f.stat().st_mtime)
    os.utime(first, (1, 1))
    os.utime(second, (2, 2))
    with fncache.cached_compiles("t"):
        pytensorf.compile([graphs[0][0]], graphs[0][2], mode="FAST_COMPILE")  # a hit: first
    monkeypatch.setattr(fncache, "MAX_BYTES", first.stat().st_size + second.stat().st_size)
    with fncache.cached_compiles("t"):
        pytensorf.compile([graphs[2][0]], graphs[2][2], mode="FAST_COMPILE")
    assert fncache.EVENTS == ["stored", "stored", "hit", "stored"]
    assert first.exists() and not second.exists() and len(list(cache.glob("*.pkl"))) == 2
