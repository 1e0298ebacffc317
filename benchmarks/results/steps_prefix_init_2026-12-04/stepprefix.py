"""Prefix fits of the step law on the simulated step sweep, shipped spec or one variant.

    python stepprefix.py SEED SHARE VARIANT

VARIANT: ``mode`` (the shipped spec, warm start at the mode), ``prior`` (``[sampler] init =
"prior"``), ``noncentered_T_m`` (every ``T_m`` effect non-centered; the shipped
``centered = "auto"`` centers them in these fits), ``tight_T_m`` (the ``T_m`` effects' sds
Gamma(2, 40), half the shipped prior mean), ``no_T_m_b_beta`` (no ``T_m`` effects on ``b``
and ``beta``) or ``noncentered_c_gamma`` (the step term's ``T_m`` effects non-centered).
"""
import sys
import time
import warnings

import numpy as np

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.simulate import looped_step_sweep

warnings.filterwarnings("ignore")
seed, share, variant = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
table, _ = looped_step_sweep(seed=seed)
data = bl.load(table)
f = data.frame
position = f.groupby(C.RUN).cumcount() / f.groupby(C.RUN)[C.D].transform("size")
out = np.asarray(position >= share, bool)
train = data.select(~out, "prefix")
d = bl.load_spec(law="looped_steps").to_dict()
if variant == "prior":
    d["sampler"]["init"] = "prior"
elif variant == "noncentered_T_m":
    for e in d["effects"]:
        if e["group"] == "T_m":
            e["centered"] = False
elif variant == "tight_T_m":
    for e in d["effects"]:
        if e["group"] == "T_m":
            e["scale"] = {"dist": "Gamma", "alpha": 2.0, "beta": 40.0}
elif variant == "no_T_m_b_beta":
    d["effects"] = [e for e in d["effects"]
                    if not (e["group"] == "T_m" and e["param"] in ("b", "beta"))]
elif variant == "noncentered_c_gamma":
    for e in d["effects"]:
        if e["group"] == "T_m" and e["param"] in ("c", "gamma"):
            e["centered"] = False
elif variant != "mode":
    raise SystemExit(f"unknown variant {variant!r}")
spec = bl.ModelSpec.from_dict(d)
t0 = time.perf_counter()
fit = bl.fit(train, spec, seed=seed, progress=False, like=data)
seconds = time.perf_counter() - t0
print(f"seed {seed} prefix {share} {variant}: {fit.diagnostics}; {seconds:.0f} s", flush=True)
