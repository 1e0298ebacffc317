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

from ..density import compile_logp


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


def _joined(spec: bl.ModelSpec) -> dict[str, list[str]]:
    """Parameter -> its effects' names, the first one first (every one is centered here)."""
    out: dict[str, list[str]] = {}
    for e in spec.effects:
        out.setdefault(e.param, []).append(e.name)
    return out


def _offset_point(point: dict, joined: dict[str, list[str]]) -> tuple[dict, float]:
    """A point of the centered model in the offset coordinates, and the log-Jacobian.

    Written from the transform's definition, not with it: the first term's values ``v = m +
    d_1 + sum_t mean(d_t)``, ``z_t = sqrt(k_t) mean(d_t) / sd_t``, a later term's zero-sum
    part ``H_t^T d_t``; the log-Jacobian ``log(sd_1 / sqrt(k_1)) + sum_{t>1} log sd_t``.
    """
    from bayeslaw.model.transforms import zero_sum_basis

    other, jacobian = dict(point), 0.0
    for p, names in joined.items():
        centre = other.pop(f"{p}_log__")
        d = [other.pop(n) for n in names]
        sd = [np.exp(point[f"{n}_sd_log__"]) for n in names]
        later = []
        for dt, st in zip(d[1:], sd[1:], strict=True):
            later += [zero_sum_basis(len(dt)).T @ dt, [np.sqrt(len(dt)) * dt.mean() / st]]
            jacobian += np.log(st)
        first = centre + d[0] + sum(dt.mean() for dt in d[1:])
        z_1 = np.sqrt(len(d[0])) * d[0].mean() / sd[0]
        other[f"{names[0]}_joint_offset__"] = np.concatenate([first, [z_1], *later])
        jacobian += np.log(sd[0] / np.sqrt(len(d[0])))
    return other, jacobian


def test_zero_sum_basis():
    """Orthonormal columns, each summing to zero."""
    from bayeslaw.model.transforms import zero_sum_basis

    for k in (2, 3, 5):
        h = zero_sum_basis(k)
        assert h.shape == (k, k - 1)
        np.testing.assert_allclose(h.T @ h, np.eye(k - 1), atol=1e-12)
        np.testing.assert_allclose(h.sum(axis=0), 0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["looped_total", "looped_steps"])
def test_offset_keeps_the_density(name):
    """At random points of the centered model, mapped into the offset coordinates
    (:func:`_offset_point`), the log density is the centered model's plus the transform's
    log-Jacobian, to rtol 1e-9.  Every LogNormal parameter with effects is joined with all
    its terms (b and beta by N and by T_m); the population value, the first term's levels
    and every term's deviations stay in the posterior under their names."""
    plain, offset = _specs(name)
    data = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        a = LossModel(make_plan(plain, data)).model
        b = LossModel(make_plan(offset, data)).model
    joined = _joined(plain)
    assert any(len(names) > 1 for names in joined.values())
    assert {f"{names[0]}_joint_offset__" for names in joined.values()} == {
        v.name for v in b.value_vars if v.name.endswith("_joint_offset__")}
    for p, names in joined.items():  # the names the posterior reads are all there
        assert {p, f"{names[0]}_value", *names} <= set(b.named_vars)
        assert p not in b.free_RVs
    la, lb = compile_logp(a), compile_logp(b)
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.3, np.shape(v)) for k, v in a.initial_point().items()}
        other, jacobian = _offset_point(point, joined)
        assert set(other) == {v.name for v in b.value_vars}
        assert float(lb(other)) == pytest.approx(float(la(point)) + jacobian, rel=1e-9)


def test_offset_prior_draws_follow_the_priors():
    """Prior draws through the joint variable: the population value's log is the prior's
    Normal and the levels scatter around it with the term's sd.  4,000 draws, seeded: the
    means within 4 standard errors, the sds' ratio within 0.05 of 1 (about 4.5 standard
    errors of a sd estimated from 4,000 normal draws)."""
    _, offset = _specs("looped_total")
    data = _data("looped_total")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        idata = bl.sample_prior_predictive(data, offset, draws=4000, seed=5)
    prior = idata.prior
    for p, names in _joined(offset).items():
        spec = offset.priors[p].params
        logs = np.log(prior[p].values.ravel())
        assert abs(logs.mean() - spec["mu"]) < 4 * spec["sigma"] / np.sqrt(logs.size)
        assert logs.std() / spec["sigma"] == pytest.approx(1.0, abs=0.05)
        for e in names:
            dev = prior[e].values.reshape(logs.size, -1)
            z = (dev / prior[f"{e}_sd"].values.reshape(-1, 1)).ravel()
            assert abs(z.mean()) < 4 / np.sqrt(logs.size)  # (draws' levels are independent)
            assert z.std() == pytest.approx(1.0, abs=0.05)
        first = prior[names[0]].values.reshape(logs.size, -1)
        np.testing.assert_allclose(prior[f"{names[0]}_value"].values.reshape(logs.size, -1),
                                   logs[:, None] + first, rtol=1e-9)  # log(exp(m)): roundoff


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
    for p, names in _joined(offset).items():
        assert {f"{names[0]}_joint", names[0]} <= derived and p not in derived
        assert not set(names[1:]) & derived  # a later term's deviations are its own
    d["sampler"]["centered_values"] = "offsets"
    with pytest.raises(SpecError, match=r"sampler.centered_values must be true, false or "
                                        r"\"offset\", got 'offsets'"):
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
    assert {"b_log__", "b_by_N_value", "b_by_T_m"} <= names
    assert "b_by_N_joint_offset__" not in names and "beta_by_N_joint_offset__" in names
