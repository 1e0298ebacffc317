"""The multi-power law's annealing sum over its nonzero terms, as the model's graph takes it,
equals the dense sum over every level at every point, with its gradient (issue 34, item 6).

The graph hands :func:`bayeslaw.laws.multi_power.annealing_sum` the sparse layout
(:class:`~bayeslaw.laws.multi_power.LevelPairs`, built by ``LossModel.data_values``); numpy
callers (forecasts) take the dense sum. Both are compared here on a simulated sweep with a
schedule of every kind, on a row subset whose runs are uneven (padded cells) and one run
without rows, with the sum's parameters scalar or one value per run.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

import bayeslaw as bl
from bayeslaw.laws.multi_power import NODE_COLUMNS, PAIRS, LevelPairs, annealing_sum
from bayeslaw.model.graph import LossModel, cov_data_name
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import schedule_sweep

REF = {"N": 1e8, "D": 1e9}


@pytest.fixture(scope="module")
def layout():
    """The padded containers of a row subset: uneven runs, the last run without rows."""
    frame, _ = schedule_sweep(points=8, N=(1e8, 3e8, 1e9), horizons=(2e9,), law="multi_power",
                              seed=3)
    data = bl.load(frame)
    runs = data.frame["run"].to_numpy()
    rng = np.random.default_rng(0)
    keep = (rng.random(len(runs)) < 0.7) & (runs != runs[-1])
    model = LossModel(make_plan(bl.load_spec("multi_power"), data))
    values = model.data_values(data.select(keep, "a test's subset"))
    assert (values["mask"] == 0).any() and (values["mask"].sum(axis=1) == 0).any()
    return values


def _theta(shape: tuple[int, int] | None, varied: tuple[str, ...], seed: int) -> dict:
    rng = np.random.default_rng(seed)
    centre = {"d": 0.1, "kappa": 10.0, "zeta": 0.5, "omega": 0.5}
    return {k: (v * np.exp(rng.normal(0.0, 0.5, (shape[0], 1))) if k in varied else v)
            for k, v in centre.items()}


@pytest.mark.parametrize("varied", [(), ("kappa",), ("omega", "zeta"),
                                    ("d", "kappa", "zeta", "omega")])
def test_the_sparse_sum_equals_the_dense_sum_at_every_point(layout, varied):
    mask = layout["mask"]
    theta = _theta(mask.shape, varied, seed=len(varied))
    dense = annealing_sum(np, {
        "lr_area": layout[cov_data_name("lr_area")],
        "lr_drop": layout[cov_data_name("lr_drop")],
        **{c: layout[cov_data_name(c)][:, None] for c in NODE_COLUMNS}}, theta, REF)
    pairs = LevelPairs(shape=mask.shape, **{
        k: pt.as_tensor(layout[f"pair_{k}"]) for k in ("point", "run", "level", "since",
                                                       "weight")})
    sparse = annealing_sum(pt, {PAIRS: pairs}, {k: pt.as_tensor(v) for k, v in theta.items()},
                           REF).eval()
    observed = mask > 0
    assert (dense[observed] > 0).mean() > 0.5  # most points have passed a level (not constant)
    np.testing.assert_allclose(sparse[observed], dense[observed], rtol=1e-12, atol=0)
    assert not sparse[~observed].any()  # padded cells take nothing
    # fewer terms than the dense sum's (cells x levels), and none of them zero
    assert 0 < len(layout["pair_point"]) < mask.size * len(NODE_COLUMNS)
    assert (layout["pair_since"] > 0).all() and (layout["pair_weight"] > 0).all()


def test_in_numba_the_sparse_sum_and_its_gradient_equal_the_dense_ones(layout):
    """What nutpie runs: both sums compiled in NUMBA mode with ``kappa`` and ``zeta`` per run
    (the gathers by run and level), their values and gradients in every parameter; then
    the same compiled function on a layout with no terms at all (a constant schedule)."""
    import pytensor

    mask = layout["mask"]
    runs = mask.shape[0]
    sym = {"d": pt.dscalar("d"), "omega": pt.dscalar("omega"),
           "kappa": pt.tensor("kappa", shape=(None, 1)), "zeta": pt.tensor("zeta", shape=(None, 1))}
    dense_cov = {"lr_area": pt.as_tensor(layout[cov_data_name("lr_area")]),
                 "lr_drop": pt.as_tensor(layout[cov_data_name("lr_drop")]),
                 **{c: pt.as_tensor(layout[cov_data_name(c)][:, None]) for c in NODE_COLUMNS}}
    boxes = {k: pytensor.shared(layout[f"pair_{k}"], name=f"pair_{k}")
             for k in ("point", "run", "level", "since", "weight")}
    pairs = LevelPairs(shape=mask.shape, **boxes)
    # a weighted sum over the observed cells, so every cell's gradient counts
    weights = pt.as_tensor(np.where(mask > 0, np.random.default_rng(1).random(mask.shape), 0.0))
    totals = [pt.sum(weights * annealing_sum(pt, cov, sym, REF)) for cov in (dense_cov,
                                                                            {PAIRS: pairs})]
    inputs = list(sym.values())
    outputs = [t for total in totals for t in (total, *pytensor.grad(total, inputs))]
    f = pytensor.function(inputs, outputs, mode="NUMBA")
    theta = _theta(mask.shape, ("kappa", "zeta"), seed=7)
    args = [np.asarray(theta[k], float) for k in sym]
    assert args[2].shape == (runs, 1)
    out = f(*args)
    dense, sparse = out[:5], out[5:]
    assert dense[0] > 0 and all(np.any(g != 0) for g in dense[1:])
    for a, b in zip(dense, sparse, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-14)
    for box in boxes.values():  # no point past any level: every term gone
        box.set_value(box.get_value()[:0])
    empty = f(*args)[5:]
    assert all(not np.any(v) for v in empty)
