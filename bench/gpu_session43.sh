#!/usr/bin/env bash
# The forty-third session's calls (issues 15 and 16). `bench/results/<card>/43-*` hold what
# came back.
#   tk  First the suites at `9b44fa5` (TS_DIR; the forty-second session's last two changes, run
#       on lavapipe only: `lsd_summed_max_tiles` 32 and `scan_and_store_tile`): nine tests over
#       both new paths, each in its own process through CUDA and through Vulkan, within
#       TEST_LIMIT (150) s (`gpu_session42.sh ft`'s list). Then issue 16's top-k mark in one
#       call: every standard top-k row and [16384, 256] k = 8 through the Burn op (and the
#       `cube` row), one bench process through Vulkan (1 s warm-up a row) and one through
#       CUDA, torch.topk on CUDA after them. Last, where Vulkan's [2^24] k = 1000 (2.1x CUDA
#       in `42-ab`) spends its time: the raw radix select at that shape through both runtimes
#       over the one-row cube's tunings (`row_units=`, `split=`, `row_sample=`, `bound=`;
#       `chunk_min=`: how the second select cuts the 128,000 candidates) and the device-wide
#       passes (`row_max=0`).
#   kt  (Ran at `336fff5`, whose `TopkTuning::row_long_max_k`, bench key `long_k=`, `ke`'s rule
#       replaced.) The suites and benches at the session's change (F_DIR: both; `row_long_max_k`: through
#       a row cube of fewer than 1024 units (Vulkan's 512) leaves rows past its limit to the
#       device-wide passes for a `k` past the minima bound's limit; `fill_index`): the tests over it, the two `tk` cut unfinished through CUDA and
#       the fills' users, one process each within TEST_LIMIT (240) s, memcheck and racecheck
#       over the long-row test; then the rows that `row_long_max_k` moves through both
#       runtimes (`long_k=` 0 / 256 / u32::MAX: which ran is in the row's params), [64, 128256]
#       against the device-wide passes (`row_max=0`), and torch.topk.
#   ke  (Written, not run: no machine twice; `kf` ran what the budget left.) The suites and
#       benches at the session's last two changes (F_DIR): rows past the row
#       cube's limit cut into chunks only where each chunk has a bound to try
#       (`TopkTuning::row_long_unbounded`, bench key `unbounded=`; replaced `row_long_max_k`),
#       and the row cube's tile of 8192 keys where shared memory allows
#       (`TopkTuning::row_elements_per_unit`, bench key `row_epu=`: Vulkan's 512-unit row cube
#       takes 16 keys a unit). The top-k and sampling tests they touch, one process each
#       through both runtimes within TEST_LIMIT (280) s, memcheck and racecheck over the
#       long-row and row-sampled tests; then the rows both knobs move (old and new values, the
#       same binary) and every standard top-k row through both runtimes' Burn ops, then
#       torch.topk.
#   kf  `ke` cut to what the device time left allows (two failed starts left 405 s): the tests
#       of `ke` but `topk::every_length_across_a_tile_boundary` and `topk::bad_calls_get_clear_errors`,
#       within TEST_LIMIT (150) s, memcheck over the long-row and row-sampled tests; then the rows
#       `row_epu=` moves through Vulkan and CUDA (Burn op, `cube` and raw at 8 and 16).
# Since the session's end every mode's one-process-a-test loop is the prelude's `each_test`
# and its sanitizer lines `sanitize_exact`; the calls ran the same commands inline, with `--exact` on every name (so `kf`'s `sampling::`
# matched no test; `each_test` runs a module as a filter).
# usage: TS_DIR=<suites> F_DIR=<benches> bash bench/gpu_session43.sh tk
#        F_DIR=<suites and benches> bash bench/gpu_session43.sh kt|ke|kf
#        (carry TS_DIR, F_DIR and ".gl")
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
tk) cp ${TS_DIR:?}/*.xz ${F_DIR:?}/*.xz .gpu/ ;;
kt | ke | kf) cp ${F_DIR:?}/*.xz .gpu/ ;;
esac
source "$here/gpu_prelude.sh"
begin
case "$1" in
tk)
  export SIEVE_PROP_CASES=100
  each_test ${TEST_LIMIT:-150} scan::every_length_across_a_tile_boundary scan::planes_off_fallback_matches \
      scan::odd_and_tiny_lengths compact::mask_compaction_matches_reference \
      sort::many_tiles_per_row_and_onesweep_refusal sort::all_equal_sorted_and_reversed \
      sort::many_short_rows topk::every_length_across_a_tile_boundary props::sort_property
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tk
  T=topk_with_indices
  C="--case $T:16777216:f32:k=10,raw=none --case $T:16777216:f32:k=1000,raw=none
     --case $T:16777216:f32:k=100000,raw=none --case $T:268435456:f32:k=10,raw=none
     --case $T:268435456:f32:k=1000,raw=none --case $T:268435456:f32:k=100000,raw=none
     --case $T:268435456:f32:k=1000,dist=all_equal,raw=none --case $T:4096x32768:f32:k=64,raw=none
     --case $T:16384x128:f32:k=8,raw=none --case $T:16384x256:f32:k=8,raw=none
     --case $T:64x128256:f32:k=50,raw=none --case $T:64x128256:f32:k=1000,raw=none
     --case $T:64x128256:f32:k=50,dist=tied,raw=none
     --case $T:64x128256:f32:k=1000,dist=tied,raw=none"
  R=radix_select
  W="--case $T:16777216:f32:k=1000,raw=$R,row_units=256/512/1024
     --case $T:16777216:f32:k=1000,raw=$R,split=32/64/256
     --case $T:16777216:f32:k=1000,raw=$R,row_sample=0,bound=0/1
     --case $T:16777216:f32:k=1000,raw=$R,row_max=0
     --case $T:16777216:f32:k=1000,raw=$R,chunk_min=4096/65536/131072"
  for v in rows sweep; do
    for rt in vulkan cuda; do
      warm=(); lim=100
      [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=150
      rows=$C; [ $v = sweep ] && rows=$W lim=$((lim / 2))
      timeout $lim .gpu/sieve-bench-$rt --no-burn --runs 10 --sample-ms 30 "${warm[@]}" \
        --json "$OUT/$rt-$v.json" $rows > "$OUT/rows-$rt-$v.txt" 2>&1
      echo "== $rt $v rc=$? at ${SECONDS}s"
      grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt-$v.txt" | grep -v skipped | grep -v " - " | cut -c1-140
      pack tk
    done
    [ $v = rows ] && torch_rows topk topk 90 && pack tk
  done
  ;;
kt)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-240}
  each_test $L sort::many_tiles_per_row_and_onesweep_refusal sort::all_equal_sorted_and_reversed \
      topk::long_rows_cut_within_the_long_row_budget topk::sampled_bound_and_its_fallback \
      topk_ops::default_tuning_on_rows_past_the_row_cube topk_ops::default_tuning_on_few_long_rows \
      props::topk_property
  T="topk::long_rows_cut_within_the_long_row_budget sort::all_equal_sorted_and_reversed"
  sanitize_exact $L "memcheck racecheck" $T
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack kt
  T=topk_with_indices
  C="--case $T:16777216:f32:k=1000,raw=radix_select,long_k=0/256/4294967295
     --case $T:16777216:f32:k=200,raw=radix_select,long_k=0/4294967295
     --case $T:16777216:f32:k=300,raw=radix_select,long_k=0/4294967295
     --case $T:33554432:f32:k=256,raw=radix_select,long_k=0/4294967295
     --case $T:4194304:f32:k=1000,raw=radix_select,long_k=0/4294967295
     --case $T:1048576:f32:k=1000,raw=radix_select,long_k=0/4294967295
     --case $T:16777216:f32:k=64,raw=radix_select,long_k=0/4294967295
     --case $T:64x128256:f32:k=1000,raw=radix_select,row_max=0/131072
     --case $T:64x128256:f32:k=1000,dist=tied,raw=radix_select,row_max=0/131072"
  for rt in vulkan cuda; do
    warm=(); lim=100
    [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=150
    timeout $lim .gpu/sieve-bench-$rt --no-burn --runs 10 --sample-ms 30 "${warm[@]}" \
      --json "$OUT/$rt.json" $C > "$OUT/rows-$rt.txt" 2>&1
    echo "== $rt rc=$? at ${SECONDS}s"
    grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt.txt" | grep -v skipped | grep -v " - " | cut -c1-150
    pack kt
  done
  torch_rows topk topk 90
  pack kt
  ;;
ke)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-280}
  each_test $L topk::long_rows_cut_within_the_long_row_budget topk::row_sampled_bound_and_its_fallback \
      topk::minima_bound_and_its_fallback topk::every_length_across_a_tile_boundary \
      topk::bad_calls_get_clear_errors topk_ops::default_tuning_on_rows_past_the_row_cube \
      topk_ops::default_tuning_on_few_long_rows topk_ops::default_tuning_at_every_short_row_length \
      props::topk_property sampling::
  T="topk::long_rows_cut_within_the_long_row_budget topk::row_sampled_bound_and_its_fallback"
  sanitize_exact $L "memcheck racecheck" $T
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack ke
  T=topk_with_indices R=radix_select
  W="--case $T:64x128256:f32:k=1000,raw=$R,row_epu=8/16
     --case $T:64x128256:f32:k=1000,dist=tied,raw=$R,row_epu=8/16
     --case $T:64x128256:f32:k=50,raw=$R,row_epu=8/16
     --case $T:4096x32768:f32:k=64,raw=$R,row_epu=8/16
     --case $T:1048576:f32:k=1000,raw=$R,row_epu=8/16
     --case $T:16777216:f32:k=1000,raw=$R,unbounded=0/1
     --case $T:16777216:f32:k=200,raw=$R,unbounded=0/1
     --case $T:33554432:f32:k=256,raw=$R,unbounded=0/1"
  C="--case $T:16777216:f32:k=10,raw=none --case $T:16777216:f32:k=1000,raw=none
     --case $T:16777216:f32:k=100000,raw=none --case $T:268435456:f32:k=10,raw=none
     --case $T:268435456:f32:k=1000,raw=none --case $T:268435456:f32:k=100000,raw=none
     --case $T:268435456:f32:k=1000,dist=all_equal,raw=none --case $T:4096x32768:f32:k=64,raw=none
     --case $T:16384x128:f32:k=8,raw=none --case $T:64x128256:f32:k=50,raw=none
     --case $T:64x128256:f32:k=1000,raw=none --case $T:64x128256:f32:k=50,dist=tied,raw=none
     --case $T:64x128256:f32:k=1000,dist=tied,raw=none"
  for v in sweep rows; do
    for rt in vulkan cuda; do
      warm=(); lim=70
      [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=110
      rows=$W; [ $v = rows ] && rows=$C
      timeout $lim .gpu/sieve-bench-$rt --no-burn --runs 10 --sample-ms 30 "${warm[@]}" \
        --json "$OUT/$rt-$v.json" $rows > "$OUT/rows-$rt-$v.txt" 2>&1
      echo "== $rt $v rc=$? at ${SECONDS}s"
      grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt-$v.txt" | grep -v skipped | grep -v " - " | cut -c1-150
      pack ke
    done
  done
  torch_rows topk topk 90
  pack ke
  ;;
kf)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-150}
  each_test $L topk::long_rows_cut_within_the_long_row_budget topk::row_sampled_bound_and_its_fallback \
      topk::minima_bound_and_its_fallback topk_ops::default_tuning_on_rows_past_the_row_cube \
      topk_ops::default_tuning_on_few_long_rows topk_ops::default_tuning_at_every_short_row_length \
      props::topk_property sampling::
  T="topk::long_rows_cut_within_the_long_row_budget topk::row_sampled_bound_and_its_fallback"
  sanitize_exact $L memcheck $T
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack kf
  T=topk_with_indices R=radix_select
  W="--case $T:64x128256:f32:k=1000,raw=$R,row_epu=8/16
     --case $T:64x128256:f32:k=1000,dist=tied,raw=$R,row_epu=8/16
     --case $T:64x128256:f32:k=50,raw=$R,row_epu=8/16
     --case $T:4096x32768:f32:k=64,raw=$R,row_epu=8/16"
  for rt in vulkan cuda; do
    warm=(); lim=45
    [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=70
    timeout $lim .gpu/sieve-bench-$rt --no-burn --runs 10 --sample-ms 30 "${warm[@]}" \
      --json "$OUT/$rt.json" $W > "$OUT/rows-$rt.txt" 2>&1
    echo "== $rt rc=$? at ${SECONDS}s"
    grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt.txt" | grep -v skipped | grep -v " - " | cut -c1-150
    pack kf
  done
  ;;
*) echo "usage: $0 tk|kt|ke|kf"; exit 2 ;;
esac
