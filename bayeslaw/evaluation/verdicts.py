"""The verdict of a check (:class:`CheckResult`), shared by :mod:`bayeslaw.testing` and SBC."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check, the figures behind it and what failed.

    Attributes
    ----------
    name : str
        Which check (``"convergence"``, ``"posterior predictive"``, ``"recovery"``, ``"sbc"``).
    passed : bool
    values : dict
        The numbers the verdict rests on.
    failures : list of str
        One line per failed criterion, naming the value and the threshold.
    details : DataFrame
        Per-parameter or per-point table behind the figures (for ``plot``).
    """

    name: str
    passed: bool
    values: dict[str, Any]
    failures: list[str] = field(default_factory=list)
    details: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def verdict(self) -> str:
        """``"PASS"`` or ``"FAIL"``."""
        return "PASS" if self.passed else "FAIL"

    def __str__(self) -> str:
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in self.values.items()
                          if not isinstance(v, dict | list))
        lines = [f"{self.verdict} {self.name}: {shown}"]
        lines += [f"  - {f}" for f in self.failures]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<CheckResult {self}>"

    def _repr_html_(self) -> str:
        import html

        colour = "#1a7f37" if self.passed else "#cf222e"
        items = "".join(f"<li>{html.escape(f)}</li>" for f in self.failures)
        return (f"<div><b style='color:{colour}'>{self.verdict}</b> "
                f"{html.escape(self.name)}<ul>{items}</ul>"
                + (self.details.to_html(float_format=_fmt) if not self.details.empty else "")
                + "</div>")

    def assert_ok(self) -> None:
        """Raise ``AssertionError`` listing the failures (for pytest)."""
        if not self.passed:
            raise AssertionError(str(self))

    def plot(self, ax: Any = None) -> Any:
        """The figure behind the verdict; returns the matplotlib Figure."""
        import matplotlib.pyplot as plt

        from ..plots.figures import log_ticks

        if self.name == "sbc":
            return plot_sbc(self)
        fig = ax.figure if ax is not None else plt.subplots(figsize=(6, 3.5))[0]
        ax = ax if ax is not None else fig.axes[0]
        d = self.details
        if self.name == "posterior predictive":
            ax.hist(d["T_rep"] - d["T_obs"], bins=40, color="0.6")
            ax.axvline(0.0, color="C3")
            ax.set_xlabel("T(y_rep) - T(y): deviance of the final losses")
            ax.set_title(f"p = {self.values['p_value']:.3f}, coverage "
                         f"{self.values['coverage']:.3f}")
        elif self.name == "recovery":
            y = np.arange(len(d))
            ax.errorbar(d["median"], y, xerr=[d["median"] - d["lower"], d["upper"] - d["median"]],
                        fmt="o", color="0.3")
            ax.plot(d["truth"], y, "x", color="C3", label="truth")
            ax.set_yticks(y, d.index)
            ax.set_xscale("log")
            log_ticks(ax.xaxis)
            ax.legend()
        else:  # convergence
            ax.barh(d.index, d["r_hat"], color="0.6")
            ax.axvline(self.values["max_rhat_threshold"], color="C3")
            ax.set_xlabel("R-hat")
        return fig


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def plot_sbc(result: CheckResult) -> Any:
    """Rank histograms and ECDF differences (with a 95% pointwise band) per parameter."""
    import matplotlib.pyplot as plt

    ranks = result.values["ranks"]
    n_ranks, bins = result.values["n_ranks"], result.values["bins"]
    names = list(ranks)
    fig, axes = plt.subplots(2, len(names), figsize=(2.2 * len(names), 4.2), squeeze=False)
    for j, name in enumerate(names):
        r = np.asarray(ranks[name])
        n = len(r)
        axes[0, j].hist(r, bins=bins, range=(0, n_ranks + 1), color="0.6")
        axes[0, j].axhline(n / bins, color="C3", lw=1)
        axes[0, j].set_title(name)
        z = np.linspace(0, 1, 101)
        ecdf = np.array([np.mean((r + 0.5) / (n_ranks + 1) <= q) for q in z])
        lo, hi = stats.binom.ppf([[0.025], [0.975]], n, z[None, :]) / n
        axes[1, j].fill_between(z, lo - z, hi - z, color="0.85")
        axes[1, j].plot(z, ecdf - z, color="C0")
        axes[1, j].set_xlabel("fractional rank")
    axes[0, 0].set_ylabel("count")
    axes[1, 0].set_ylabel("ECDF - uniform")
    fig.tight_layout()
    return fig
