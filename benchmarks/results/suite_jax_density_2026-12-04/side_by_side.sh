#!/bin/bash
# Side by side, each run with empty PyTensor and numba caches: old = a clone of a349356 in
# /work/suite50, new = the working tree of 0d33845 in /work/main (one venv, jax installed;
# the old tests never import it). Run under flock so that nothing else used the 2 cores.
OLD=${1:-/work/suite50}   # a clone of the old commit
NEW=${2:-/work/main}      # the new working tree
FILES="tests/laws/test_laws_more.py tests/model/test_logp_reference.py tests/spec/test_spec_model.py tests/inference/test_compiled.py tests/model/test_noise_models.py"
for which in old new; do
  dir=$OLD; [ $which = new ] && dir=$NEW
  rm -rf /tmp/side_pt_$which /tmp/side_nb_$which; mkdir -p /tmp/side_pt_$which /tmp/side_nb_$which
  cd $dir
  start=$(date +%s.%N)
  env CI=true PYTHONPATH=$dir PYTENSOR_FLAGS=base_compiledir=/tmp/side_pt_$which NUMBA_CACHE_DIR=/tmp/side_nb_$which \
    $NEW/.venv/bin/python -m pytest -q -p no:cacheprovider $FILES > /work/side_$which.log 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "$which rc=$rc wall=$(echo "$end - $start" | bc) s $(tail -1 /work/side_$which.log)"
done
