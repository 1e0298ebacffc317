#!/usr/bin/env bash
# The suite of two checkouts side by side, file by file (issue 33's "no slower", measured so
# that a drift of the shared machine falls on both): for each test file both checkouts have
# (matched by file name; test_kernel.py became test_arithmetic.py), run the old and the new
# file one after the other in their own pytest processes, alternating which goes first, each
# checkout with its own PyTensor / numba compile cache (warm them with one full run each
# first). Then compare the per-test durations of the tests both have:
#
#   benchmarks/suite_interleaved.sh OLD_CHECKOUT NEW_CHECKOUT OUT_DIR CACHE_OLD CACHE_NEW
#   python benchmarks/compare_suites.py OUT_DIR/old.log OUT_DIR/new.log \
#       --renamed test_kernel.py=test_arithmetic.py
#
# Needs a Python with both checkouts' requirements active (each is put first on PYTHONPATH).
# Never run it beside another MCMC job on a 2-core machine.
set -u
old_root=$1; new_root=$2; out=$3; cache_old=$4; cache_new=$5
export CI=true
mkdir -p "$out"; : > "$out/old.log"; : > "$out/new.log"; : > "$out/order.txt"
i=0
for of in $(cd "$old_root" && ls tests/test_*.py notebooks/*.ipynb); do
  name=$(basename "$of"); nname=$name
  [ "$name" = test_kernel.py ] && nname=test_arithmetic.py
  nf=$(cd "$new_root" && find tests notebooks -name "$nname" | head -1)
  [ -z "$nf" ] && { echo "no new file for $of" >> "$out/order.txt"; continue; }
  i=$((i+1))
  if [ $((i % 2)) = 1 ]; then sides="old new"; else sides="new old"; fi
  for side in $sides; do
    if [ "$side" = new ]; then w=$new_root; f=$nf; c=$cache_new; else w=$old_root; f=$of; c=$cache_old; fi
    s=$(date +%s.%N)
    (cd "$w" && PYTENSOR_FLAGS=base_compiledir=$c NUMBA_CACHE_DIR=$c/numba PYTHONPATH=$w \
      python -m pytest -p no:cacheprovider --durations=0 -vv "$f" >> "$out/$side.log" 2>&1)
    rc=$?
    e=$(date +%s.%N)
    echo "$side $f rc=$rc $(echo "$e - $s" | bc)" >> "$out/order.txt"
  done
done
echo done >> "$out/order.txt"
