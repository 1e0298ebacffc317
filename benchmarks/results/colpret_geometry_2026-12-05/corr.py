"""Rank correlations of two curves' coordinates in a fit saved by ``subset.py`` (with quantiles).

    python benchmarks/results/colpret_geometry_2026-12-05/corr.py SAVE.nc CURVE [CURVE ...]
"""

import sys

import arviz as az
import numpy as np

post = az.from_netcdf(sys.argv[1]).posterior
KEEP = ("m_by_run_value", "f_by_run_z", "beta_by_run_z", "q_by_run_z", "sigma_z", "sigma_run")
for lab in sys.argv[2:]:
    names, cols = [], []
    for v in KEEP:
        dim = post[v].dims[-1]
        labels = [str(x) for x in post[v][dim].values]
        x = post[v].isel({dim: labels.index(lab)}).values.ravel()
        names.append("log sigma_run" if v == "sigma_run" else v)
        cols.append(np.log(x) if v == "sigma_run" else x)
    r = np.corrcoef(np.argsort(np.argsort(np.array(cols)), axis=1))
    print(lab)
    for i, name in enumerate(names):
        print(f"  {name:16s}", " ".join(f"{r[i, j]:+.2f}" for j in range(len(names))),
              " q05/50/95", np.round(np.quantile(cols[i], [0.05, 0.5, 0.95]), 4).tolist())
