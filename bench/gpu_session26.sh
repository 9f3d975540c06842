#!/usr/bin/env bash
# Written at the end of the twenty-fifth session for the next one (issue 15).
#   a  the twenty-fifth session's last code on the GPU (one gather kernel for the sort's decode,
#      top-k's finish and its composition of positions; Lsd's per-tile counts in 8 copies):
#      the CUDA suite as 7 processes and the Vulkan suite as 3 (`split_suite`) over the
#      modules that gather or sort (`dtypes_sort` too: its narrow and wide keys decode),
#      memcheck over `topk::` and racecheck over `sort::` beside them, within LIMIT (480 s).
#      Files: a.tgz.
#   b  GPU quiet: Nsight Compute's kernel durations of the first `unique` 2^28 call (its first
#      60 launches; 15.8 ms against torch's 6.5 in `25-c`/`25-d`: which kernels?), then torch's
#      set rows. (A batched top-k
#      `split` sweep is not worth a call: the default already cuts 64 rows in two, one cube a
#      multiprocessor, and two chunks beat four on every row in `18-c`; the tied k = 50 row is
#      0.44x torch raw, 0.52x through the Burn op at 3 ms samples: the pipeline's fill.) Files:
#      b.tgz.
#   c  issue 16, where Vulkan loses on the copy (1.44 TB/s against CUDA's 3.9): each row in a
#      fresh process of the Vulkan bench built with bench/vulkan_robustness's patch (it prints
#      the memory types and which one each size class of buffer got): a 2^24 copy alone, a 2^28
#      copy alone, 2^28 then 2^24 (`23-e`: processes that held 2^28 buffers ran 2^24 4x slower),
#      both with robustness off, the 2^28 copy forced into each memory type, launch shapes
#      (vectors a unit, units a cube), the 2^24 sort fresh / after a 2^28 copy / robustness
#      off, cumsum 2^28 both ways; the CUDA copy rows beside them. Files: c.tgz.
#   d  `unique`'s values through the compaction by run starts (`f55874a`): the CUDA suite as 3
#      processes and the Vulkan suite as 2 over `compact::`, `sets::`, `filter_ops::`,
#      memcheck over `compact::run_start` and `sets::unique`, racecheck over
#      `compact::run_start`; then (GPU quiet) unique 2^24 / 2^28 through the Burn op and
#      torch's set rows in the same call. Files: d.tgz.
#   e  racecheck over `topk::` (without `dtypes_sort`) as three processes, within 420 s (b's
#      single process ran out of time). Files: e.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda,
# sieve-bench-vknr (c: bench/vulkan_robustness/build.sh).
# usage: [LIMIT=270] bash bench/gpu_session26.sh <a|b|c|d|e>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
M="sort:: sort_ops:: topk:: topk_ops:: dtypes_sort sampling:: sets:: small_devices::"
stage_out
case "$1" in
a)
  export LIMIT=${LIMIT:-480} SKIP=none_skipped
  split_suite cuda 7 "$M"; split_suite vulkan 3 "$M"
  sanitize "topk::" "sort::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
b)
  # `a`'s racecheck over `sort::` also matched `dtypes_sort` and ran out its time: again, without
  # it, and over `topk::` beside it (its finish now the shared gather), before the profile.
  sanitize "--exact none" "sort:: --skip dtypes_sort;topk:: --skip dtypes_sort"
  wait
  for f in "$OUT"/racecheck-cuda-*.txt; do echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"; done
  timeout 150 ncu --metrics gpu__time_duration.sum --launch-count 60 --csv .gpu/sieve-bench-cuda --no-burn \
    --runs 10 --case unique:268435456:f32:distinct=1048576 > "$OUT/ncu-unique.csv" 2>&1
  echo "== ncu unique rc=$? at ${SECONDS}s"
  grep gpu__time_duration "$OUT/ncu-unique.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120 | head -40
  pack b
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  ;;
c)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  c24=copy:16777216:f32 c28=copy:268435456:f32
  run() {
    local name=$1; shift
    echo "== $name ${SIEVE_VK_ROBUSTNESS:+robustness $SIEVE_VK_ROBUSTNESS }${SIEVE_VK_MEMORY_TYPE:+type $SIEVE_VK_MEMORY_TYPE} at ${SECONDS}s"
    timeout 60 "$@" --no-burn --runs 10 > "$OUT/$name.txt" 2>&1
    grep -E "^\[sieve|^(copy|cumsum|sort_with)| cpu ms" "$OUT/$name.txt" | cut -c1-240 | awk '!seen[$0]++'
  }
  run cuda-copy $C --case $c24 --case $c28 --case $c28:per_unit=4 --case $c28:per_unit=16
  run vk-24 $V --case $c24
  run vk-28 $V --case $c28
  run vk-28-then-24 $V --case $c28 --case $c24
  SIEVE_VK_ROBUSTNESS=off run vk-28-then-24-off $V --case $c28 --case $c24
  SIEVE_VK_ROBUSTNESS=off run vk-24-off $V --case $c24
  run vk-shapes $V --case $c28:per_unit=4 --case $c28:per_unit=16 --case $c28:units=1024 \
    --case $c28:units=64 --case $c28:per_unit=64,units=512
  for t in 0 1 2 3 4 5 6 7; do SIEVE_VK_MEMORY_TYPE=$t run vk-type$t $V --case $c28 --case $c24; done
  pack c
  run vk-sort24 $V --case sort_with_indices:16777216:f32
  run vk-sort24-after28 $V --case $c28 --case sort_with_indices:16777216:f32
  SIEVE_VK_ROBUSTNESS=off run vk-sort24-off $V --case sort_with_indices:16777216:f32
  run vk-cumsum28 $V --case cumsum:268435456:f32:dim=0
  SIEVE_VK_ROBUSTNESS=off run vk-cumsum28-off $V --case cumsum:268435456:f32:dim=0
  run cuda-cumsum28 $C --case cumsum:268435456:f32:dim=0
  ;;
d)
  export LIMIT=${LIMIT:-300}
  M="compact:: sets:: filter_ops::"
  split_suite cuda 3 "$M"; split_suite vulkan 2 "$M"
  sanitize "compact::run_start sets::unique" "compact::run_start"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack d
  timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 15 --sample-ms 30 --json "$OUT/rows.json" \
    --case unique:16777216:f32:distinct=1048576 --case unique:268435456:f32:distinct=1048576 \
    > "$OUT/bench-rows.txt" 2>&1
  echo "== bench rc=$? at ${SECONDS}s"; grep -E "^(copy|unique)" "$OUT/bench-rows.txt" | cut -c1-200
  pack d
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep unique "$OUT/torch.txt"
  pack d
  # Issue 16 (after `c`): the Vulkan copy's speed by buffer size, each size in a fresh process
  # (the pool's pages grow with it): where between 2^24 (2.5 TB/s) and 2^28 (1.3) it falls.
  for e in 25 26 27; do
    timeout 40 .gpu/sieve-bench-vknr --no-burn --runs 10 --case copy:$((1 << e)):f32 > "$OUT/vk-copy-$e.txt" 2>&1
    grep -E "buffer of|^copy" "$OUT/vk-copy-$e.txt" | cut -c1-110
  done
  ;;
e)
  for g in 0 1 2; do
    mapfile -t n < <(.gpu/suite-cuda --list topk:: 2>/dev/null | grep ': test$' | sed 's/: test$//' \
      | grep -v dtypes_sort | awk -v g=$g 'NR%3==g')
    SIEVE_PROP_CASES=20 timeout 420 compute-sanitizer --tool racecheck --error-exitcode 9 \
      .gpu/suite-cuda --exact --test-threads 2 "${n[@]}" > $OUT/racecheck-topk-$g.txt 2>&1 &
  done
  wait
  for f in $OUT/racecheck-topk-*.txt; do echo "== $f $(grep -c ' ok$' $f) ok"; summary $f; done
  ;;
*) echo "usage: $0 <a|b|c|d|e>"; exit 2 ;;
esac
pack $1
