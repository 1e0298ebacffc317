#!/bin/bash
# The density tests' files, d2ca627 (JAX, tests/density.py before) against the working tree
# (PyTensor's Python linker), interleaved old/new/old/new, nothing else running, caches warm.
#   bash benchmarks/results/suite_pydensity_2026-12-05/run.sh OLD_TREE NEW_TREE OUT_DIR
# The two process-spawning compile tests of test_compiled.py are left out: they do not use
# tests/density.py (their times are in the full-suite run).
set -u
. /work/main/.venv/bin/activate
OLD=$1; NEW=$2; OUT=$3
FILES="tests/model/test_logp_reference.py tests/laws/test_laws_more.py tests/spec/test_spec_model.py tests/model/test_noise_models.py tests/model/test_offset.py tests/inference/test_compiled.py"
DESELECT="--deselect tests/inference/test_compiled.py::test_a_cold_and_a_warm_process_draw_the_same --deselect tests/inference/test_compiled.py::test_every_process_gets_the_same_cache_keys"
for round in 1 2; do
  for side in old new; do
    tree=$OLD; [ "$side" = new ] && tree=$NEW
    (cd "$tree" && PYTHONPATH=$tree CI=true python -m pytest -q -p no:cacheprovider $FILES $DESELECT --durations=0) \
      > "$OUT/${side}_$round.txt" 2>&1
    tail -1 "$OUT/${side}_$round.txt"
  done
done
