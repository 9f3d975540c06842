#!/usr/bin/env bash
# Twenty-first session (issue 15).
#   a  `s21-cand` (main + `column-scan` + `rank-match`: the sort ranker's CUB-style counter
#      update, no shared atomics, no leader search, no shuffle): the sort, split, top-k, column
#      scan and cumulative tests through CUDA and Vulkan, memcheck over `sort::` and
#      `scans::columns`, racecheck over `sort::` (the ranker's plane synchronisations); then,
#      GPU quiet, main's bench (base) and the candidate's (cand), twice, interleaved, on the
#      sort rows the ranker serves below 2^28 and the column-scan rows (`--json`, written case
#      by case); Nsight Compute's SASS page of one onesweep pass of the candidate (as 17-d);
#      torch's scan and sort rows last. Files: tests-*.txt, memcheck-cuda.txt,
#      racecheck-cuda-0.txt, bench-*.txt, *.json, ncu-sass-onesweep.csv.gz.
#   b  `s21-cand` again with the look-back walk's flags as masks: `sort::`, `sort_ops::`,
#      `topk::` through CUDA and Vulkan, memcheck and racecheck over `sort::` (the onesweep walk
#      runs only on GPUs: lavapipe refuses it). Files: tests-*.txt, memcheck-cuda.txt,
#      racecheck-cuda-0.txt.
#   c  GPU quiet: the candidate's onesweep at 2^26 with walk windows 4, 8, 16; main's bench
#      (base) and the candidate's on the sort rows (2^28 keys, pairs 2^28 and 2^24,
#      [16384, 128]); the candidate's sort rows through Vulkan; torch's sort rows last.
#      Files: bench-*.txt, *.json, torch.json.
#   d  `late-loads` (`SortTuning::hold_keys`: hold only each key's digit through the ranking
#      and read the key again to stage it; a first pass's positions made at staging): `sort::`,
#      `sort_ops::` through CUDA and Vulkan (every device-wide strategy with `hold_keys` both
#      ways), memcheck over `sort::`; then, GPU quiet, 2^26 sweeps of hold x keys a unit for
#      keys alone and with positions (cand), main's rows beside (base), the likely winners at
#      2^28, and Nsight Compute's launch statistics and occupancy of a onesweep pass held both
#      ways. Files: tests-*.txt, memcheck-cuda.txt, bench-*.txt, *.json, ncu-*.txt.
#   e  (for the next session) `packed-ranks` (cand) against main (base): `sort::`, `sort_ops::`,
#      `topk::` through CUDA and Vulkan, racecheck over `sort::`; then, GPU quiet, the sort rows
#      through both benches (the Burn ops at main's new onesweep defaults among them: 2^28 and
#      2^24 pairs, argsort 2^28, [4096, 32768], [16384, 128], keys 2^28), Nsight's registers and
#      occupancy of a onesweep pass for each, torch's sort rows last. Files: tests-*.txt,
#      racecheck-cuda-0.txt, bench-*.txt, *.json, ncu-*.txt, torch.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=150 bash bench/gpu_session21.sh <a>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-150}
source "$here/gpu_prelude.sh"
S=sort_with_indices
case "$1" in
a)
  M="sort:: sort_ops:: split topk:: dtypes_sort:: scans::columns cumulative:: dims::"
  timeout $limit .gpu/suite-cuda --test-threads 3 $M > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 3 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  sanitize "sort:: scans::columns" "sort::"
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-*.txt; do
    echo "== $f"; summary "$f"
  done
  args=(--case $S:16777216:f32 --case $S:16384x128:f32 --case sort:67108864:i32
        --case cumsum:4096x32768:f32:dim=0 --case cummin:4096x32768:f32:dim=0
        --case cumsum:4096x32768:f32:dim=1)
  for round in 1 2; do
    for v in base cand; do
      b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
      timeout ${BENCH_LIMIT:-55} $b --no-burn --runs 10 --json "$OUT/$v-$round.json" "${args[@]}" \
        > "$OUT/bench-$v-$round.txt" 2>&1
      echo "== $v $round rc=$?"
      grep -E '^(sort|cumsum|cummin)' "$OUT/bench-$v-$round.txt" | grep -v skipped \
        | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'
    done
  done
  timeout ${NCU_LIMIT:-60} ncu --clock-control none --kernel-name regex:onesweep_kernel \
    --launch-skip 5 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv .gpu/sieve-bench-cuda --no-burn --runs 10 \
    --case sort:67108864:i32 2>&1 | gzip > "$OUT/ncu-sass-onesweep.csv.gz"
  echo "ncu rc=${PIPESTATUS[0]}"
  timeout ${TORCH_LIMIT:-80} python3 bench/torch_reference.py "$OUT/torch.json" --only=scan,sort \
    > /dev/null 2>&1
  echo "torch rc=$?"
  ;;
b)
  M="sort:: sort_ops:: topk::"
  timeout $limit .gpu/suite-cuda --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-vulkan.txt" 2>&1 &
  sanitize "sort:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-*.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
  ;;
c)
  rows() { grep -E '^(sort|argsort)' "$1" | grep -v skipped | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'; }
  W=sort:67108864:i32
  timeout 60 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/window.json" --case $W:window=4 \
    --case $W:window=8 --case $W:window=16 --case $W:window=4 > "$OUT/bench-window.txt" 2>&1
  echo "== window rc=$?"; rows "$OUT/bench-window.txt"
  args=(--case sort:268435456:i32 --case $S:268435456:f32 --case $S:16777216:f32 --case $S:16384x128:f32)
  for v in base cand; do
    b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
    timeout ${BENCH_LIMIT:-110} $b --no-burn --runs 10 --json "$OUT/$v.json" "${args[@]}" \
      > "$OUT/bench-$v.txt" 2>&1
    echo "== $v rc=$?"; rows "$OUT/bench-$v.txt"
  done
  timeout 60 .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $S:16777216:f32 --case $S:16384x128:f32 --case sort:16777216:i32 > "$OUT/bench-vulkan.txt" 2>&1
  echo "== vulkan rc=$?"; rows "$OUT/bench-vulkan.txt"
  timeout ${TORCH_LIMIT:-80} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > /dev/null 2>&1
  echo "torch rc=$?"
  ;;
d)
  rows() { grep -E '^(sort|argsort)' "$1" | grep -E 'lsd|onesweep' | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'; }
  M="sort:: sort_ops::"
  timeout $limit .gpu/suite-cuda --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-vulkan.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort:: --skip dtypes_sort > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
  K=sort:67108864:i32; P=$S:67108864:f32
  timeout ${SWEEP_LIMIT:-90} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/sweep.json" \
    --case $K:hold=1,epu=24 --case $K:hold=0,epu=24 --case $K:hold=0,epu=32 \
    --case $P:hold=1,epu=12 --case $P:hold=0,epu=12 --case $P:hold=1,epu=16 \
    --case $P:hold=0,epu=16 --case $P:hold=0,epu=24 > "$OUT/bench-sweep.txt" 2>&1
  echo "== sweep rc=$?"; rows "$OUT/bench-sweep.txt"
  timeout 30 .gpu/sieve-bench-cuda-base --no-burn --runs 10 --json "$OUT/base.json" \
    --case $K --case $P > "$OUT/bench-base.txt" 2>&1
  echo "== base rc=$?"; rows "$OUT/bench-base.txt"
  K=sort:268435456:i32; P=$S:268435456:f32
  timeout ${BIG_LIMIT:-90} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/big.json" \
    --case $K:hold=0,epu=24 --case $P:hold=0,epu=16 > "$OUT/bench-big.txt" 2>&1
  echo "== big rc=$?"; rows "$OUT/bench-big.txt"
  for h in ${NCU_HOLDS:-0}; do
    timeout 30 ncu --clock-control none --kernel-name regex:onesweep_kernel --launch-skip 5 \
      --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case sort:67108864:i32:hold=$h,epu=24 \
      > "$OUT/ncu-hold$h.txt" 2>&1
    echo "== ncu hold=$h rc=$?"
    grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|Duration|Block Limit" "$OUT/ncu-hold$h.txt" | head -9
  done
  ;;
e)
  M="sort:: sort_ops:: topk::"
  timeout $limit .gpu/suite-cuda --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 4 $M --skip dtypes_sort > "$OUT/tests-vulkan.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort:: --skip dtypes_sort > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/racecheck-cuda-0.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
  rows() { grep -E '^(sort|argsort)' "$1" | grep -v skipped | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'; }
  args=(--case sort:268435456:i32 --case $S:268435456:f32 --case argsort:268435456:f32
        --case $S:16777216:f32 --case $S:4096x32768:f32 --case $S:16384x128:f32)
  for v in base cand; do
    b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
    timeout ${BENCH_LIMIT:-150} $b --no-burn --runs 10 --json "$OUT/$v.json" "${args[@]}" \
      > "$OUT/bench-$v.txt" 2>&1
    echo "== $v rc=$?"; rows "$OUT/bench-$v.txt"
    timeout 30 ncu --clock-control none --kernel-name regex:onesweep_kernel --launch-skip 5 \
      --launch-count 1 --section LaunchStats --section Occupancy --section SpeedOfLight \
      $b --no-burn --runs 10 --case sort:67108864:i32 > "$OUT/ncu-$v.txt" 2>&1
    grep -E "Registers Per|Achieved Occupancy|Duration" "$OUT/ncu-$v.txt" | head -3
  done
  timeout ${TORCH_LIMIT:-80} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > /dev/null 2>&1
  echo "torch rc=$?"
  ;;
*) echo "usage: $0 <a|b|c|d|e>"; exit 2 ;;
esac
