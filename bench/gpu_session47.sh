#!/usr/bin/env bash
# The forty-seventh session's calls (issues 15, 16, 17), written at the end of the
# forty-sixth. `bench/results/<card>/47-*` hold what came back.
#   one The top-k tests `45-one` cut (top-k's kernels unchanged since), three processes a
#       runtime, and the compaction's tests (with `reread_values` both ways) three a runtime,
#       memcheck and racecheck over four of them, within TEST_LIMIT (220) s. Then why the compaction's scatter takes ~1.8x its
#       count pass on `unique`'s run starts (`44-pf`; not the offset read, `46-d`): the
#       compaction tile swept on `unique` 2^28's run starts alone (`units=256/512` x
#       `epu=8/16/32`, `stage=run_starts_raw` rows), beside them the single look-back pass
#       into outputs of n elements and the count read (`lookback=1`: what `unique` could do
#       through CUDA instead of the counted form), each tile also with the values written
#       loaded again after the rank instead of held through it (`reread=1`, `26b2c34`), and
#       on mask_select 2^28 d = 0.5 (and d = 0.01 with and without `reread`: the values of
#       vectors without a survivor never loaded) through
#       the raw scatter (one case a tile: the filter bench takes one value a key); then Nsight
#       Compute over `unique` 2^27's count and scatter kernels (registers, occupancy, stalls).
#   v   Issue 16's compaction rows through both runtimes in one call: mask_select 2^28 at
#       d = 0.5 and 0.01, argwhere 2^28, the Burn ops and the raw scatter, copy.
#   t   (written after the calls) The six compaction-family tests `47-one`'s CUDA process
#       did not reach, one process each through CUDA within TEST_LIMIT (200) s.
#   fwt (written after the calls, for the next session) `bench/flag_words/flag-words.patch` (the
#       count pass leaves each unit's flags as a word, the scatter reads them and loads only
#       the values it writes) through its suites (F_DIR: suite-cuda.xz, suite-vulkan.xz
#       built with the patch): the compaction's modules three processes a runtime, memcheck
#       and racecheck over four compaction tests, within TEST_LIMIT (220) s.
#   fw  (moved to `gpu_session48.sh ab`, which ran it as `48-ab`) Its bench against main's, alternating processes (CUDA; F_DIR:
#       sieve-bench-cuda.xz at main, sieve-bench-cuda-words.xz with the patch, 55 s a
#       process): `unique` 2^28 and its run starts alone, mask_select 2^28 d = 0.5 and 0.01
#       and argwhere 2^28 d = 0.01 through the raw scatter and the raw counted form.
#   m   The marks issues 15 and 17 read against torch in one call, on whichever card comes:
#       the pair sorts, sort i32 and sort_with_indices 2^24; `unique` 2^28 with its two stages
#       timed alone (`stages=1`: the keys-only sort and the run starts); torch's sort and set
#       rows.
# What ran (H100, `bench/results/h100/47-*`): `one` (`47-one`; its bench was cut at 150 s
# before printing: the 12-tile `unique` sweep with checks takes longer); then, inline on the
# warm machine with F_DIR=.gpu57b (the two benches), the mask_select `reread` rows and `m`
# (`47-rr`: `m` run as a nested script, whose `begin` cleared the staging folder, so only its
# output tail came back), `unique`'s look-back row (`47-lb`), Nsight over mask_select's scatter
# (`47-ncu`) and the run-start tile sweep (`47-sw`). `v` did not run.
# F_DIR: suites and benches at main's head (suite-{cuda,vulkan}.xz, sieve-bench-{cuda,vulkan}.xz).
# usage: F_DIR=<dir> bash bench/gpu_session47.sh one|t|fwt|v|m   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
one)
  export SIEVE_PROP_CASES=100
  TOPK=(topk::auto_rule_and_names
    topk::deterministic_and_one_output_only topk::index_dtypes topk::many_short_rows
    topk::random_floats_no_ties topk_ops::default_tuning_at_every_short_row_length
    topk_ops::empty_tensors_work topk_ops::float_topk_every_dim_k_and_direction)
  LIMIT=${TEST_LIMIT:-220} deal cuda 3 topk- "${TOPK[@]}" small_devices::raw_topk_every_strategy_at_default_tunings
  LIMIT=${TEST_LIMIT:-220} deal vulkan 3 topk- "${TOPK[@]}"
  # The compaction's tests run `reread_values` both ways (new since the last GPU run).
  compaction_tests
  pack one
  M=mask_select:268435456:f32:density=0.5,raw=scatter S=mask_select:268435456:f32:density=0.01,raw=scatter
  bench_rows cuda 150 --case unique:268435456:f32:distinct=1048576,units=256/512,epu=8/16/32,reread=0/1,lookback=1 \
    --case $M --case $M,reread=1 --case $M,epu=32 --case $M,epu=8 --case $M,units=256 \
    --case $S --case $S,reread=1
  pack one
  timeout 90 ncu --kernel-name regex:'count_tiles|scatter_tiles' --launch-skip 2 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
    --case unique:134217728:f32:distinct=1048576 > "$OUT/ncu-unique.txt" 2>&1
  echo "== ncu rc=$? at ${SECONDS}s"
  grep -E "^  [a-z_]+kernel|^\s+(Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Block Size|Grid Size|Theoretical Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued|Block Limit)" "$OUT/ncu-unique.txt" | cut -c1-160
  pack one
  ;;
v)
  R="--case mask_select:268435456:f32:density=0.5,raw=scatter --case mask_select:268435456:f32:density=0.01,raw=scatter --case argwhere:268435456:bool:density=0.5,raw=scatter"
  bench_rows cuda 90 $R
  pack v
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan 150 $R
  pack v
  ;;
t)
  for t in sets::kthvalue_and_median_match_the_reference \
      sets::order_statistics_gradients_go_to_the_chosen_element \
      sets::searchsorted_tunings_match_the_reference split_ops::bad_bit_is_named \
      split_ops::int_partition_of_views split_ops::stable_partition_every_dim_and_density; do
    SIEVE_PROP_CASES=100 timeout ${TEST_LIMIT:-200} .gpu/suite-cuda --exact $t \
      > "$OUT/tests-cuda-${t//::/-}.txt" 2>&1 &
  done
  wait; suite_summary
  pack t
  ;;
fwt)
  export SIEVE_PROP_CASES=100
  compaction_tests
  pack fwt
  ;;
m)
  bench_rows cuda 150 --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none --case sort:268435456:i32:raw=none \
    --case sort_with_indices:16777216:f32:raw=none \
    --case unique:268435456:f32:distinct=1048576,raw=none,stages=1
  pack m
  torch_rows sort,sets "sort|argsort|unique" 70
  pack m
  ;;
*) echo "usage: $0 one|t|fwt|v|m"; exit 2 ;;
esac
