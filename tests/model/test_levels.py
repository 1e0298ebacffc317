"""``sampler.product_levels``: an exponent's levels sampled through their product with a share.

:func:`bayeslaw.model.levels.product_deviations` samples ``curve_bend``'s ``beta`` levels as
``y = z + (log f_r - log f) / sd`` (``z`` the usual standard-normal coordinate): the same model
in sheared coordinates, so the density at a point mapped from the plain model's coordinates
is the plain model's, with no Jacobian term, and every deterministic is the same.  No
sampling: each model is compiled once for its density (the Python linker, ``tests/density.py``).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw.errors import SpecError
from bayeslaw.model.graph import LossModel
from bayeslaw.model.plan import make_plan

from ..density import compile_logp


def _curves() -> bl.LossData:
    rng = np.random.default_rng(0)
    x = np.geomspace(0.2, 1.0, 7)
    return bl.load(pd.DataFrame([{"run": f"c{r}", "D": d * 1e9,
                                  "loss": (2.0 + r / 4) * d ** -0.1 + rng.normal(0, 0.01)}
                                 for r in range(4) for d in x]))


def _specs(first: str = "f") -> tuple[bl.ModelSpec, bl.ModelSpec]:
    """``curve_bend`` with ``beta`` non-centered, without and with ``product_levels``."""
    d = bl.load_spec("curve_bend").to_dict()
    for e in d["effects"]:
        if e["param"] == "beta":
            e["centered"] = False
    plain = bl.ModelSpec.from_dict(d)
    d["sampler"]["product_levels"] = [first, "beta"]
    return plain, bl.ModelSpec.from_dict(d)


def _log_share(logit: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -logit)


@pytest.mark.parametrize("first", ["f", "m"])
def test_the_product_coordinates_keep_the_density(first):
    """At points of the plain model mapped into the product coordinates (``beta_by_run_z``
    plus ``(log a_r - log a) / 0.7``; ``f`` has the logit link, ``m`` the log link with a
    centered effect sampled as values), the log density agrees to rtol 1e-12 and so do
    ``beta``'s deviations; at the unmapped point it differs (the shift matters)."""
    plain, product = _specs(first)
    data = _curves()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PyTensor's BLAS notice
        models = [LossModel(make_plan(s, data)).model for s in (plain, product)]
        logps = [compile_logp(m) for m in models]
        devs = [m.compile_fn(m.replace_rvs_by_values([m["beta_by_run"]])[0],
                             inputs=m.value_vars, on_unused_input="ignore", mode="FAST_COMPILE")
                for m in models]
    assert {v.name for v in models[0].value_vars} == {v.name for v in models[1].value_vars}
    rng = np.random.default_rng(3)
    start = models[0].initial_point()
    for _ in range(3):
        point = {k: rng.normal(0.0, 0.7, np.shape(v)) for k, v in start.items()}
        if first == "f":
            level, centre = point["f_logodds__"] + 1.1 * point["f_by_run_z"], point["f_logodds__"]
            shift = (_log_share(level) - _log_share(centre)) / 0.7
        else:  # m's levels are sampled as their log values
            shift = (point["m_by_run_value"] - point["m_log__"]) / 0.7
        mapped = {**point, "beta_by_run_z": point["beta_by_run_z"] + shift}
        want = float(logps[0](point))
        np.testing.assert_allclose(float(logps[1](mapped)), want, rtol=1e-12)
        np.testing.assert_allclose(devs[1](mapped), devs[0](point), rtol=1e-12, atol=1e-14)
        assert abs(float(logps[1](point)) - want) > 1e-6


def test_product_levels_is_checked_and_dropped_with_its_effects():
    """The key names two parameters in law order, the second an exponent whose one effect is
    non-centered by the first's group; complete pooling, or a user's effects without them,
    drop the default's key instead of failing."""
    plain, product = _specs()
    d = product.to_dict()
    for names, match in ((["beta", "f"], "'beta' must come before 'f'"),
                         (["f", "q"], "'q' has the logit link, not log"),
                         ("f", "must name two different parameters")):
        with pytest.raises(SpecError, match=match):
            bl.ModelSpec.from_dict({**d, "sampler": {**d["sampler"], "product_levels": names}})
    auto = {**d, "effects": [e if e["param"] != "beta" else {**e, "centered": "auto"}
                             for e in d["effects"]]}
    with pytest.raises(SpecError, match="the effect on 'beta' needs centered = false"):
        bl.ModelSpec.from_dict(auto)
    assert product.with_pooling("complete").sampler.product_levels == ()
    assert product.with_pooling("none").sampler.product_levels == ("f", "beta")
    shipped = bl.load_spec("curve_bend")
    mine = bl.load_spec({"law": "curve_bend", "effects": [
        e for e in shipped.to_dict()["effects"] if e["param"] != "beta"]})
    kept = bl.load_spec({"law": "curve_bend", "effects": d["effects"]})
    assert (mine.sampler.product_levels, kept.sampler.product_levels) == (
        (), shipped.sampler.product_levels)
