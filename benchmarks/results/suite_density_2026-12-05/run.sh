#!/bin/bash
. /work/main/.venv/bin/activate
T="tests/model/test_logp_reference.py tests/laws/test_laws_more.py::test_default_spec_builds_with_finite_logp tests/spec/test_spec_model.py tests/inference/test_compiled.py::test_raw_density_is_the_models"
for rep in 1 2; do
for v in head new; do
  if [ $v = head ]; then dir=/tmp/wt_head; else dir=/work/main; fi
  (cd $dir && PYTHONPATH=$dir python -m pytest -q -p no:cacheprovider $T --durations=0 > /work/exp/dens/${v}_$rep.txt 2>&1)
  tail -1 /work/exp/dens/${v}_$rep.txt
done; done
