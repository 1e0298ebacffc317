"""The share of curves whose held-out point is inside a band, judged over curves."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from bayeslaw.evaluation.metrics import clopper_pearson


def assert_band_shares(table: pd.DataFrame, probs: Sequence[float] = (0.5, 0.9)) -> None:
    """One held-out point a curve (``table``: a prediction's table with ``loss``): for each
    level, the share of curves inside its band has a 95% Clopper-Pearson interval that holds
    the level (the curves are independent: the unit is the curve)."""
    for p in probs:
        k = int(((table["loss"] >= table[f"lower_{p * 100:g}"])
                 & (table["loss"] <= table[f"upper_{p * 100:g}"])).sum())
        low, high = clopper_pearson(k, len(table))
        assert low <= p <= high, f"{k} of {len(table)} curves inside the {p:.0%} band"
