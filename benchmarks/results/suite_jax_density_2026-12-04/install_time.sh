#!/bin/bash
# fresh venv + pip install ".[test]" of two trees, one after the other, twice (old, new, old, new)
for round in 1 2; do
for which in old new; do
  dir=$1; [ $which = new ] && dir=$2
  rm -rf /tmp/iv_$which; python3.11 -m venv /tmp/iv_$which
  start=$(date +%s.%N)
  (cd $dir && /tmp/iv_$which/bin/pip install -q ".[test]" > /tmp/iv_$which.log 2>&1)
  rc=$?
  end=$(date +%s.%N)
  echo "round $round $which rc=$rc install $(echo "$end - $start" | bc) s"
done; done
