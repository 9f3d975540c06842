#!/usr/bin/env bash
# The forty-second session's calls (issues 15 and 16: fewer launches for short sorts and the
# device-wide top-k). `bench/results/<card>/42-*` hold what came back.
#   tt  Main's suites (TS_DIR: suite-cuda.xz, suite-vulkan.xz) over the modules the session's
#       three changes touch: `Lsd` passes of rows of few tiles summing their counts in the
#       scatter (`TileOffsets::Summed`), reduce-then-scan rows of few tiles in one launch
#       (`scan_row_tiles_kernel`), the top-k's three fills in one launch. CUDA in 10 processes
#       (the JIT), Vulkan in 4, memcheck and racecheck over the tests that cross both kinds'
#       limits, within TEST_LIMIT (330) s.
#   ab  Rows, old against new: OLD_DIR's benches (built before the changes) and F_DIR's, one
#       process each through CUDA then Vulkan (1 s warm-up a row), the same rows (short sorts
#       through Lsd, device-wide top-k, the compaction at 2^26); then the new bench's
#       `summed=` sweep (SortTuning::lsd_summed_max_tiles; 0 = always scan); then torch's
#       top-k rows.
#   ft  The suites at `9b44fa5` (TS_DIR; after `tt`: the tile kernels' shared store helper,
#       `lsd_summed_max_tiles` 32): nine tests over both new paths, each in its own process
#       through CUDA and through Vulkan, within TEST_LIMIT (150) s. Written at the session's
#       end, not run: the device time was spent (suites in `.gpu44s` if the checkout survives).
# `tt`'s sanitizer lines are the prelude's `sanitize_exact` since the forty-third session (the
# call ran the same two commands inline).
# usage: TS_DIR=<suites> bash bench/gpu_session42.sh tt|ft     (carry TS_DIR and ".gl")
#        OLD_DIR=<benches> F_DIR=<benches> bash bench/gpu_session42.sh ab
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
tt | ft) cp ${TS_DIR:?}/*.xz .gpu/ ;;
ab)
  cp ${F_DIR:?}/*.xz .gpu/
  for f in ${OLD_DIR:?}/*.xz; do b=${f##*/}; cp $f .gpu/${b%.xz}-old.xz; done
  ;;
esac
source "$here/gpu_prelude.sh"
begin
case "$1" in
tt)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-330}
  M="scan:: scans:: compact:: filter_ops:: sort:: topk:: topk_ops:: props::"
  LIMIT=$L split_suite cuda 10 "$M"
  LIMIT=$L split_suite vulkan 4 "$M"
  T="sort::many_tiles_per_row_and_onesweep_refusal scan::every_length_across_a_tile_boundary
     scan::planes_off_fallback_matches"
  sanitize_exact $L "memcheck racecheck" $T
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tt
  ;;
ab)
  S=sort_with_indices T=topk_with_indices
  C="--case $S:100000:i32:raw=lsd --case sort:100000:i32:raw=lsd --case $S:4x100000:f32:raw=lsd
     --case $S:262144:i32:raw=lsd --case $S:1048576:i32:raw=lsd
     --case $T:16777216:f32:k=100000,raw=none --case $T:16777216:f32:k=1000,raw=none
     --case $T:67108864:f32:k=100000,raw=none --case $T:64x128256:f32:k=1000,raw=none
     --case $T:268435456:f32:k=10,raw=none
     --case mask_select:67108864:f32:raw=scatter --case argwhere:67108864:bool:raw=scatter"
  W="--case $S:100000:i32:raw=lsd,summed=0/64 --case $S:262144:i32:raw=lsd,summed=0/64
     --case $S:1048576:i32:raw=lsd,summed=0/128/256 --case $T:16777216:f32:k=100000,raw=none"
  for rt in cuda vulkan; do
    warm=(); lim=70
    [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=110
    for v in old new sweep; do
      b=.gpu/sieve-bench-$rt; [ $v = old ] && b=.gpu/sieve-bench-$rt-old
      rows=$C; [ $v = sweep ] && rows=$W
      timeout $lim $b --no-burn --runs 10 --sample-ms 30 "${warm[@]}" --json "$OUT/$rt-$v.json" \
        $rows > "$OUT/rows-$rt-$v.txt" 2>&1
      echo "== $rt $v rc=$? at ${SECONDS}s"
      grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt-$v.txt" | grep -v skipped | grep -v " - " | cut -c1-140
      pack ab
    done
  done
  torch_rows topk topk 60
  pack ab
  ;;
ft)
  export SIEVE_PROP_CASES=100
  for rt in cuda vulkan; do
    i=0
    for t in scan::every_length_across_a_tile_boundary scan::planes_off_fallback_matches \
      scan::odd_and_tiny_lengths compact::mask_compaction_matches_reference \
      sort::many_tiles_per_row_and_onesweep_refusal sort::all_equal_sorted_and_reversed \
      sort::many_short_rows topk::every_length_across_a_tile_boundary props::sort_property; do
      timeout ${TEST_LIMIT:-150} .gpu/suite-$rt --exact $t > "$OUT/tests-$rt-$i.txt" 2>&1 &
      i=$((i + 1))
    done
  done
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack ft
  ;;
*) echo "usage: $0 tt|ft|ab"; exit 2 ;;
esac
