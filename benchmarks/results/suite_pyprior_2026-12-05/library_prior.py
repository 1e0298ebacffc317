"""The library's prior draws (the ``pm.sample_prior_predictive`` call of
``bayeslaw.sample_prior_predictive``) under PyTensor's C backend (mode ``c``: PyMC's default)
and ``FAST_COMPILE`` (Python thunks), on the bundled sweep (``multi_power`` on a simulated
schedule sweep).  Run from the repository root:

    PYTENSOR_FLAGS=base_compiledir=<empty folder> python library_prior.py c   # cold rows
    python library_prior.py FAST_COMPILE                                      # warm rows
"""

import sys
import time
import warnings

import numpy as np
import pymc as pm

import bayeslaw as bl
from bayeslaw.inference.modelcache import get_model
from bayeslaw.simulate import schedule_sweep


def main(mode: str) -> None:
    warnings.simplefilter("ignore")
    bundled = bl.load(bl.bundled_path())
    scheduled = bl.load(schedule_sweep(points=12, N=(1e8, 3e8, 1e9), horizons=(2e9,))[0])
    for law, draws in (("looped_total", 500), ("looped_total", 4000), ("chinchilla", 500),
                       ("multi_power", 500)):
        data = scheduled if law == "multi_power" else bundled
        model = get_model(bl.load_spec(law=law), data)
        start = time.perf_counter()
        with model.model:
            kwargs = {} if mode == "c" else {"compile_kwargs": {"mode": mode}}
            idata = pm.sample_prior_predictive(draws=draws, random_seed=1, **kwargs)
        seconds = time.perf_counter() - start
        checksum = np.nansum(idata.prior_predictive["loss"].values)
        print(f"{mode:12s} {law:14s} draws {draws:5d}  {seconds:6.2f} s  checksum {checksum:.12g}")


if __name__ == "__main__":
    main(sys.argv[1])
