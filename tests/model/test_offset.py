"""``sampler.centered_values = "offset"``: a population value and its levels as one variable.

The levels' values and the population's offset from their mean, non-centered
(:func:`bayeslaw.model.transforms.offset_transform`): the same model as the centered
deviations, its density equal up to the transform's log-Jacobian ``log(sd / sqrt(k))``.
No sampling: each model is compiled once for its density.
"""

import warnings

import numpy as np
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan
from bayeslaw.simulate import looped_step_sweep, looped_sweep
from bayeslaw.spec import load_spec

from ..density import compile_logp, to_offset


def _specs(name: str) -> tuple[bl.ModelSpec, bl.ModelSpec]:
    """The shipped spec with every level centered, without and with the offset."""
    d = load_spec(name).to_dict()
    for e in d["effects"]:
        e["centered"] = True
    d["sampler"]["centered_values"] = False
    plain = load_spec(d)
    d["sampler"]["centered_values"] = "offset"
    return plain, load_spec(d)


def _data(name: str) -> bl.LossData:
    if name == "looped_steps":
        frame, _ = looped_step_sweep(seed=3, N=(1e8, 3e8, 1e9), D=tuple(np.geomspace(1e8, 2e10, 6)))
    else:
        frame, _ = looped_sweep(points=8, N=(1e8, 3e8, 1e9), T_m=(2, 4, 8), seed=3)
    return bl.load(frame)


def _joined(spec: bl.ModelSpec) -> dict[str, str]:
    """Effect name -> parameter, for each parameter's first effect (the one joined)."""
    first: dict[str, str] = {}
    for e in spec.effects:
        first.setdefault(e.param, e.name)
    return {name: param for param, name in first.items()}


@pytest.mark.parametrize("name", ["looped_total", "looped_steps"])
def test_offset_keeps_the_density(name):
    """At random points of the centered model, mapped into the offset coordinates (levels
    ``v = log(p) + d``, offset ``z = sqrt(k) (mean(v) - log(p)) / sd``), the log density is
    the centered model's plus ``sum log(sd / sqrt(k))`` over the joined terms, to rtol 1e-9.
    Every first effect of a LogNormal parameter is joined; the population value, the levels
    and the deviations stay in the posterior under their names."""
    plain, offset = _specs(name)
    data = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        a = LossModel(make_plan(plain, data)).model
        b = LossModel(make_plan(offset, data)).model
    joined = _joined(plain)
    assert {f"{e}_joint_offset__" for e in joined} == {
        v.name for v in b.value_vars if v.name.endswith("_joint_offset__")}
    free = {v.name for v in b.free_RVs}
    for e, p in joined.items():  # the names the posterior reads are all there, derived
        assert {p, e, f"{e}_value"} <= set(b.named_vars) and not {p, e, f"{e}_value"} & free
    la, lb = compile_logp(a), compile_logp(b)
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in a.initial_point().items()}
        other = dict(point)
        jacobian = to_offset(other, offset, b)
        assert jacobian != 0.0 and set(other) == {v.name for v in b.value_vars}
        assert float(lb(other)) == pytest.approx(float(la(point)) + jacobian, rel=1e-9)


def test_offset_prior_draws_follow_the_priors():
    """Prior draws through the joint variable: the population value's log is the prior's
    Normal and the levels scatter around it with the term's sd.  4,000 draws, seeded: the
    means within 4 standard errors, the sds' ratio within 0.05 of 1 (about 4.5 standard
    errors of a sd estimated from 4,000 normal draws). The levels' values are the
    population's log plus the deviations, as the graph derives them."""
    _, offset = _specs("looped_total")
    data = _data("looped_total")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        idata = bl.sample_prior_predictive(data, offset, draws=4000, seed=5)
    prior = idata.prior
    for e, p in _joined(offset).items():
        spec = offset.priors[p].params
        logs = np.log(prior[p].values.ravel())
        assert abs(logs.mean() - spec["mu"]) < 4 * spec["sigma"] / np.sqrt(logs.size)
        assert logs.std() / spec["sigma"] == pytest.approx(1.0, abs=0.05)
        dev = prior[e].values.reshape(logs.size, -1)
        sd = prior[f"{e}_sd"].values.reshape(-1, 1)
        z = (dev / sd).ravel()
        assert abs(z.mean()) < 4 / np.sqrt(z.size)  # iid N(0, 1) given the sd
        assert z.std() == pytest.approx(1.0, abs=0.05)
        np.testing.assert_allclose(prior[f"{e}_value"].values.reshape(logs.size, -1),
                                   logs[:, None] + dev, rtol=1e-9)  # log(exp(m)): roundoff


def test_offset_setting_and_key():
    """``"offset"`` round-trips, changes the compiled model's key (from ``true`` too), its
    joint is derived in the diagnosis, and any other string is an error naming the key."""
    from bayeslaw.posterior.result import _derived

    plain, offset = _specs("looped_total")
    assert load_spec(offset.to_dict()) == offset
    d = offset.to_dict()
    d["sampler"]["centered_values"] = True
    valued = load_spec(d)
    data = _data("looped_total")
    keys = {make_plan(s, data).key for s in (plain, valued, offset)}
    assert len(keys) == 3
    import arviz as az

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        b = LossModel(make_plan(offset, data)).model
    idata = az.from_dict(posterior={v: np.zeros((1, 2)) for v in b.named_vars})
    derived = set(_derived(idata, offset))
    for e, p in _joined(offset).items():
        assert {f"{e}_joint", e} <= derived and p not in derived
    d["sampler"]["centered_values"] = "offsets"
    with pytest.raises(SpecError, match=r"sampler.centered_values must be true, false, "
                                        r"\"offset\" or \"shifted\", got 'offsets'"):
        load_spec(d)


def test_offset_leaves_other_priors_as_values():
    """A parameter whose prior is not Normal on its link scale keeps ``centered_values =
    true``'s coordinates (its own variable and ``<effect>_value``)."""
    _, offset = _specs("looped_total")
    d = offset.to_dict()
    d["priors"]["b"] = {"dist": "Gamma", "alpha": 4.0, "beta": 8.0}
    spec = load_spec(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = LossModel(make_plan(spec, _data("looped_total"))).model
    names = {v.name for v in model.value_vars}
    assert {"b_log__", "b_by_N_value"} <= names and "b_by_N_joint_offset__" not in names
    assert "beta_by_N_joint_offset__" in names


def test_offset_transform_round_trip_and_start():
    """``backward(forward(x)) == x`` at random points (forward is what PyMC uses to place a
    start in the sampled coordinates), and without a warm start the joint starts at the
    prior's centre: the population value at its prior's median, its levels on it."""
    import pytensor.tensor as pt

    from bayeslaw.model.transforms import offset_transform

    rng = np.random.default_rng(1)
    for k in (2, 3, 5):
        tr = offset_transform(k)
        x, sd = rng.normal(0, 1, k + 1), np.exp(rng.normal())
        inputs = (None, None, pt.as_tensor(np.zeros(k + 1)), pt.as_tensor(1.0), pt.as_tensor(sd))
        y = tr.forward(pt.as_tensor(x), *inputs)
        np.testing.assert_allclose(tr.backward(y, *inputs).eval(), x, rtol=1e-12)
        v = x[1:]
        np.testing.assert_allclose(y.eval(), np.r_[v, np.sqrt(k) * (v.mean() - x[0]) / sd])
    _, offset = _specs("looped_total")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = LossModel(make_plan(offset, _data("looped_total"))).model
    start = model.initial_point()
    for e, p in _joined(offset).items():
        mu = offset.priors[p].params["mu"]
        np.testing.assert_allclose(start[f"{e}_joint_offset__"][:-1], mu)  # the levels
        assert start[f"{e}_joint_offset__"][-1] == 0.0  # no offset: the population on them


def test_shifted_keeps_the_density_and_the_values():
    """``centered_values = "shifted"``: a parameter's other centered terms sampled in an
    orthonormal basis whose first axis is their mean (``<name>_rot``), the first term's joint
    shifted by that mean.  At random points of the ``"offset"`` model mapped into these
    coordinates (``rot = H d``, the joint's levels plus the mean; its offset unchanged), the
    log density is the same to rtol 1e-9 (a shear and a rotation: unit Jacobian) and so is
    every run's value of ``b`` and ``beta``.  Left unshifted (``rot = H d`` alone) the density
    differs: the test can fail."""
    from bayeslaw.model.levels import mean_basis
    from bayeslaw.posterior.result import _derived

    _, offset = _specs("looped_steps")
    d = offset.to_dict()
    d["sampler"]["centered_values"] = "shifted"
    shifted = load_spec(d)
    assert load_spec(shifted.to_dict()) == shifted
    data = _data("looped_steps")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        a = LossModel(make_plan(offset, data)).model
        b = LossModel(make_plan(shifted, data)).model
    assert make_plan(offset, data).key != make_plan(shifted, data).key
    rotated = {"b_by_T_m": "b_by_N", "beta_by_T_m": "beta_by_N"}  # term -> the joined term
    assert {f"{r}_rot" for r in rotated} == {v.name for v in b.value_vars
                                             if v.name.endswith("_rot")}
    la, lb = compile_logp(a), compile_logp(b)
    runs = [m.compile_fn(m.replace_rvs_by_values([m[f"{p}_run"] for p in ("b", "beta")]),
                         inputs=m.value_vars, on_unused_input="ignore") for m in (a, b)]
    rng = np.random.default_rng(1)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in a.initial_point().items()}
        other, unshifted = dict(point), dict(point)
        for term, joined in rotated.items():
            dev = other.pop(term)
            k = len(dev)
            other[f"{term}_rot"] = unshifted[f"{term}_rot"] = mean_basis(k) @ dev
            del unshifted[term]
            level = other[f"{joined}_joint_offset__"].copy()
            level[:-1] += dev.mean()
            other[f"{joined}_joint_offset__"] = level
        assert float(lb(other)) == pytest.approx(float(la(point)), rel=1e-9)
        assert abs(float(lb(unshifted)) - float(la(point))) > 1e-3
        for x, y in zip(runs[0](point), runs[1](other), strict=True):
            np.testing.assert_allclose(y, x, rtol=1e-9)
    np.testing.assert_allclose(mean_basis(4) @ mean_basis(4).T, np.eye(4), atol=1e-15)
    idata = __import__("arviz").from_dict(posterior={v: np.zeros((1, 2)) for v in b.named_vars})
    derived = set(_derived(idata, shifted))
    assert set(rotated) <= derived and not {f"{r}_rot" for r in rotated} & derived
