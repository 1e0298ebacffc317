"""Selection seeds for `sampler.centered_values = "shifted"` with the checkpoint shock.

The rows of `../steps_shock_pinned_2026-12-07/selection.py --shocked-only` (the shocked step
sweep, T = 4 of T_m = 4 held out, the shock spec), with the spec's `centered_values` set to
"shifted" (the depths' mean of `b` and `beta` moved into the sizes' values: same density);
`--values offset` gives the shipped coordinates again.

    python benchmarks/results/steps_shock_trades_2026-12-07/selection_shifted.py --seeds 6,7,8,9,10
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "steps_shock_pinned_2026-12-07"))
import selection  # noqa: E402

from bayeslaw.spec.model_spec import ModelSpec  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="6,7,8,9,10")
    ap.add_argument("--values", default="shifted", help="sampler.centered_values")
    ap.add_argument("--plain", action="store_true",
                    help="the unshocked sweep fitted with the shipped spec instead")
    args = ap.parse_args()
    shipped = selection.spec_of

    def spec_of(with_shock: bool) -> ModelSpec:
        d = shipped(with_shock).to_dict()
        d["sampler"]["centered_values"] = args.values
        return ModelSpec.from_dict(d)

    selection.spec_of = spec_of
    print(f"centered_values = {args.values!r}")
    print("| seed | sweep shock sd | spec | in 50% | in 90% | mean log density | median abs. "
          "error | fit s | warm start | worst R-hat | divergences | thresholds | shock sd |")
    print("| " + " | ".join(["---"] * 13) + " |", flush=True)
    for seed in [int(s) for s in args.seeds.split(",")]:
        print(selection.row(seed, 0.0 if args.plain else 0.01, not args.plain), flush=True)


if __name__ == "__main__":
    main()
