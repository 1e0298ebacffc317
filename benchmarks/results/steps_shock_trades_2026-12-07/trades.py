"""What the checkpoint shock's slow `b_by_T_m` trades with (issue 36 / 37; stop 73's next step).

Fits selection seed SEED's shocked step sweep (sd 0.01, T = 4 of T_m = 4 held out) with the
shock spec of `../steps_shock_pinned_2026-12-07/selection.py`, prints the fit's diagnosis and,
for every coordinate of `b_by_T_m` (and the shock's sd), the ten posterior correlations of
largest size with every other scalar of the posterior (each vector element its own column).

    python benchmarks/results/steps_shock_trades_2026-12-07/trades.py 6 [low_rank=true]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

import bayeslaw as bl
from bayeslaw.simulate import looped_step_sweep
from bayeslaw.spec.model_spec import ModelSpec

sys.path.insert(0, str(Path(__file__).parents[1] / "steps_shock_pinned_2026-12-07"))
from selection import spec_of  # noqa: E402


def columns(fit) -> dict[str, np.ndarray]:
    post = fit.idata.posterior
    out = {}
    for name in post.data_vars:
        v = post[name].values
        flat = v.reshape(v.shape[0] * v.shape[1], -1)
        for j in range(flat.shape[1]):
            out[name if flat.shape[1] == 1 else f"{name}[{j}]"] = flat[:, j]
    return out


def main() -> None:
    seed = int(sys.argv[1])
    frame, _ = looped_step_sweep(seed=seed, shock=0.01)
    data = bl.load(frame)
    held = ((data.frame["T_m"] == 4) & (data.frame["T"] == 4)).to_numpy()
    train = data.select(~held, "T = 4 of T_m = 4 held out")
    start = time.perf_counter()
    spec = spec_of(True)
    if len(sys.argv) > 2:  # KEY=VALUE of [sampler], e.g. low_rank=true
        key, value = sys.argv[2].split("=")
        d = spec.to_dict()
        d.setdefault("sampler", {})[key] = json.loads(value)
        spec = ModelSpec.from_dict(d)
        print(f"sampler.{key} = {d['sampler'][key]!r}")
    fit = bl.fit(train, spec=spec, seed=seed, progress=False)
    print(f"seed {seed}: fit {time.perf_counter() - start:.0f} s")
    print(fit.diagnostics.report() if hasattr(fit.diagnostics, "report") else fit.diagnostics)
    cols = columns(fit)
    names = list(cols)
    mat = np.corrcoef(np.array([cols[n] for n in names]))
    for i, n in enumerate(names):
        if not (n.startswith("b_by_T_m") or n.startswith("shock")):
            continue
        order = np.argsort(-np.abs(mat[i]))
        top = [(names[j], mat[i, j]) for j in order if j != i and not names[j].startswith(
            n.split("[")[0] + "[") and names[j] != n][:10]
        print(f"{n}: " + ", ".join(f"{m} {c:+.2f}" for m, c in top))


if __name__ == "__main__":
    main()
