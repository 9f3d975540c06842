#!/usr/bin/env bash
# Twenty-second session (issue 15).
#   a  `rank-sum` (cand: the ranker's highest peer moves the counter, so a key's rank is one
#      register through the prefix; keys-only passes may read keys again, `reread=1`) against
#      main's kernels with the same bench (base): Nsight's registers and occupancy of one
#      onesweep pass of the candidate (keys held, keys read again, pairs); GPU quiet, the sort
#      rows (2^28 keys and pairs with the Burn op and the raw onesweep row, 2^24 pairs); then
#      `sort::`, `sort_ops::`, `topk::` through CUDA and Vulkan in what time is left. Files:
#      ncu-*.txt, bench-*.txt, *.json, tests-*.txt.
#   b  `rank-sum` with keys-only passes reading keys again by default (cand) against main's
#      kernels (base): Nsight's registers of a keys-only onesweep pass at the defaults; GPU
#      quiet, sort i32 2^28 (the Burn op, raw onesweep, raw Lsd reading again and holding),
#      sort_with_indices 2^24 (base, cand, base, cand), torch's sort rows; then memcheck and
#      racecheck over `sort::`. Files: ncu-*.txt, bench-*.txt, *.json, torch.json,
#      memcheck-cuda.txt, racecheck-cuda-0.txt.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: bash bench/gpu_session22.sh <a|b>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
S=sort_with_indices
rows() { grep -E '^(sort|argsort)' "$1" | grep -v skipped | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'; }
case "$1" in
a)
  i=0
  for c in sort:67108864:i32:raw=onesweep sort:67108864:i32:raw=onesweep,reread=1 \
           $S:67108864:f32:raw=onesweep; do
    timeout 40 ncu --clock-control none --kernel-name regex:onesweep_kernel --launch-skip 5 \
      --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c > "$OUT/ncu-cand-$i.txt" 2>&1
    echo "== ncu $c rc=$?"
    grep -E "Registers Per|Theoretical Occupancy|Duration" "$OUT/ncu-cand-$i.txt" | head -3
    i=$((i + 1))
  done
  K=sort:268435456:i32; P=$S:268435456:f32
  base=(--case $K:raw=onesweep --case $P:raw=onesweep --case $S:16777216:f32)
  cand=("${base[@]}" --case $K:raw=onesweep,reread=1 --case $K:raw=onesweep,reread=1,epu=32)
  for v in base cand; do
    b=.gpu/sieve-bench-cuda; args=("${cand[@]}")
    [ $v = base ] && b=.gpu/sieve-bench-cuda-base && args=("${base[@]}")
    timeout ${BENCH_LIMIT:-170} $b --no-burn --runs 10 --json "$OUT/$v.json" "${args[@]}" \
      > "$OUT/bench-$v.txt" 2>&1
    echo "== $v rc=$? at ${SECONDS}s"; rows "$OUT/bench-$v.txt"
  done
  left=$(( ${BUDGET:-570} - SECONDS ))
  echo "== tests with ${left}s"
  M="sort:: sort_ops:: topk::"
  timeout $left .gpu/suite-cuda --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $left .gpu/suite-vulkan --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-vulkan.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
  ;;
b)
  timeout 40 ncu --clock-control none --kernel-name regex:onesweep_kernel --launch-skip 5 \
    --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case sort:67108864:i32:raw=none \
    > "$OUT/ncu-cand.txt" 2>&1
  echo "== ncu rc=$?"; grep -E "Registers Per|Theoretical Occupancy|Duration" "$OUT/ncu-cand.txt" | head -3
  K=sort:268435456:i32
  timeout 120 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cand.json" \
    --case $K:raw=onesweep --case $K:raw=lsd --case $K:raw=lsd,reread=0 > "$OUT/bench-cand.txt" 2>&1
  echo "== cand rc=$? at ${SECONDS}s"; rows "$OUT/bench-cand.txt"
  for round in 1 2; do
    for v in base cand; do
      b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
      timeout 30 $b --no-burn --runs 10 --json "$OUT/$v-2p24-$round.json" --case $S:16777216:f32 \
        > "$OUT/bench-$v-2p24-$round.txt" 2>&1
      echo "== $v $round rc=$?"; rows "$OUT/bench-$v-2p24-$round.txt"
    done
  done
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > /dev/null 2>&1
  echo "torch rc=$? at ${SECONDS}s"
  limit=$(( ${BUDGET:-400} - SECONDS ))  # what is left, for the prelude's `sanitize`
  sanitize "sort:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  for f in "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-0.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
  ;;
*) echo "usage: $0 <a|b>"; exit 2 ;;
esac
