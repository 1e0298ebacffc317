#!/bin/bash
# The test files whose prior draws come from tests/conftest.py's prior_fit (and two direct
# pm.sample_prior_predictive calls), 5a54845 (PyTensor's C backend) against the working tree
# (the Python linker, tests/density.py's compile_kwargs): cold (an empty PyTensor compile
# directory each run) old then new, then warm old then new; nothing else running.
#   bash benchmarks/results/suite_pyprior_2026-12-05/run.sh OLD_TREE NEW_TREE OUT_DIR
set -u
. /work/main/.venv/bin/activate
OLD=$1; NEW=$2; OUT=$3
FILES="tests/model/test_noise_models.py tests/laws/test_curve_power.py tests/laws/test_laws_more.py tests/plots/test_grid_layout.py tests/plots/test_curve_grid.py tests/plots/test_grid_speed_paths.py tests/evaluation/test_widening.py tests/report/test_curve_report.py tests/posterior/test_step_derived.py"
for kind in cold warm; do
  for side in old new; do
    tree=$OLD; [ "$side" = new ] && tree=$NEW
    flags=""
    if [ "$kind" = cold ]; then
      dir=$(mktemp -d /tmp/ptc_prior_XXXX); flags="base_compiledir=$dir"
    fi
    (cd "$tree" && PYTENSOR_FLAGS=$flags PYTHONPATH=$tree CI=true python -m pytest -q -p no:cacheprovider $FILES --durations=0) \
      > "$OUT/${kind}_${side}.txt" 2>&1
    echo "$kind $side: $(tail -1 "$OUT/${kind}_${side}.txt")"
  done
done
