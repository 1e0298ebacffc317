"""ColPret's context curves that repeat an x, and the relative spread of y there (issue 35).

Run from the repository root::

    python benchmarks/results/colpret_whiten_2026-12-05/repeats.py     # output: repeats.txt

Context rows only (``role == "context"``); no target row is read.
"""

import pandas as pd

frame = pd.read_csv("../shared/data/nslpfn_bench/ColPret.csv")
context = frame[frame.role == "context"]
rows = []
for curve, table in context.groupby("curve"):
    repeated = table[table.x.duplicated(keep=False)]
    if len(repeated):
        spread = repeated.groupby("x").y.agg(lambda v: (v.max() - v.min()) / v.mean())
        rows.append((curve, len(repeated), float(spread.median()), float(spread.max())))
out = pd.DataFrame(rows, columns=["curve", "rows", "median_rel_spread", "max_rel_spread"])
print(f"curves: {context.curve.nunique()}, repeating an x in their context: {len(out)}")
print(out.sort_values("max_rel_spread", ascending=False).to_string(index=False))
