"""Seconds to compile a shipped spec's logp and gradient with PyTensor's C backend (issue 34).

    PYTENSOR_FLAGS=base_compiledir=DIR python benchmarks/results/cold_logp_2026-12-04/cold_logp.py \
        SPEC {two|one|nofusion}

``two``: ``compile_logp`` then ``compile_dlogp`` (what ``tests/laws/test_laws_more.py`` does);
``one``: one function of both; ``nofusion``: the two without PyTensor's elementwise fusion.
Run from the repository root (the tests' synthetic tables). Prints the seconds and the logp.
"""
import sys
import time
import warnings

warnings.filterwarnings("ignore")
sys.path.insert(0, "tests/laws")
from test_laws_more import synthetic  # noqa: E402

from bayeslaw.model.graph import LossModel  # noqa: E402
from bayeslaw.model.plan import make_plan  # noqa: E402
from bayeslaw.spec.catalog import load_spec  # noqa: E402

name, how = sys.argv[1], sys.argv[2]
spec = load_spec(name)
model = LossModel(make_plan(spec, synthetic(name))).model
point = model.initial_point()
t = time.perf_counter()
if how == "two":
    logp = model.compile_logp()(point)
    model.compile_dlogp()(point)
elif how == "nofusion":
    from pytensor.compile.mode import get_mode

    mode = get_mode("FAST_RUN").excluding("fusion")
    logp = model.compile_logp(mode=mode)(point)
    model.compile_dlogp(mode=mode)(point)
else:
    logp, _ = model.compile_fn([model.logp(), model.dlogp()], point_fn=True)(point)
print(name, how, round(time.perf_counter() - t, 1), float(logp))
