#!/usr/bin/env bash
# The forty-fourth session's calls (issues 15 and 16). `bench/results/<card>/44-*` hold what
# came back.
#   kv  The suites and benches at main's head (F_DIR; the forty-third session's final code,
#       whose last call, `43-kf`, ran no racecheck and not the long-row test's later cases):
#       the top-k and sampling tests it touched, one process each through both runtimes
#       within TEST_LIMIT (280) s, and the cumulative ops at default tunings (the
#       forty-second session's `scan_and_store_tile`, never run on a GPU through the Burn
#       ops) in one process a runtime; memcheck and racecheck over the long-row and
#       row-sampled tests. Then the long-row rule's rows (`unbounded=0/1`, raw radix select)
#       and every standard top-k row through both runtimes' Burn ops, then torch.topk.
#   cl  The suites and benches with the counting passes' loads in flight
#       (`SortTuning::count_loads`, bench key `loads=`: onesweep's counting pass loads a batch
#       of keys a unit before counting them; above 1, Lsd's per-tile counting loads a unit's
#       keys of the tile first). Every `sort::` test in its own process through both
#       runtimes, `sort_ops::` and `sets::` one process each, within TEST_LIMIT (200) s;
#       memcheck and racecheck over the onesweep test and the specials test. Then the sorts
#       the knob moves through CUDA (raw onesweep at 2^28 over `loads=`, Lsd at 2^24) and
#       the sort marks' Burn ops, Lsd through Vulkan, and torch's sort and set rows.
#   cu  What `cl`'s CUDA bench process left unrun at its limit, at the new default (8 loads):
#       the sort marks' Burn ops at 2^28 (keys, pairs, argsort), `unique` 2^28, sort_with_indices
#       2^24 and [16384, 128], and raw onesweep i32 keys at `loads=1/8` again; the pairs'
#       Burn ops through Vulkan at 2^28 and 2^24; torch's sort and set rows.
#   pf  Where the 2^28 sorts' time goes now, kernel by kernel (CubeCL's profiling logger, every
#       launch timed by the runtime; `bench/profile_summary.py`), through CUDA: raw onesweep
#       i32 keys, f32 pairs, and `unique` (Burn op); each in its own process.
#   tw  Onesweep's tiles with positions, wider (`pf`: the two uniform-digit passes of
#       sort_with_indices 2^28 take ~2.9 ms, ~50% of the copy's bandwidth; a 4096-key tile
#       writes ~16 keys a digit): raw onesweep at `units=256/512` x `epu=12/16/20`, CUDA.
#   fv  (Written, not run: the session's device time ran out.) The suites and bench at
#       onesweep's 20 keys a unit with positions (F_DIR: at least the CUDA suite and bench):
#       the sort tests over onesweep's default tiles, `sort_ops::` and `props::sort_property`
#       through CUDA, one process each within TEST_LIMIT (150) s; then the pair sorts' Burn ops at 2^28 and [4096, 32768] (onesweep with positions,
#       whose rows now take 6.4 tiles), raw onesweep at [4096, 32768] over `epu=16/20`, and
#       torch's sort rows.
#   ks  (Written, not run.) Onesweep's keys-only tile again after the counting pass's loads:
#       raw onesweep sort of i32 and f32 keys at 2^28 over `units=256/512` x `epu=24/28/32`,
#       CUDA, and `unique` 2^28 (whose sort is one of them).
# usage: F_DIR=<suites and benches> bash bench/gpu_session44.sh kv|cl|cu|pf|tw|fv|ks   (carry F_DIR and ".gl")
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
kv | cl | cu | pf | tw | fv | ks) cp ${F_DIR:?}/*.xz .gpu/ ;;
esac
source "$here/gpu_prelude.sh"
begin
case "$1" in
kv)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-280}
  each_test $L topk::long_rows_cut_within_the_long_row_budget topk::row_sampled_bound_and_its_fallback \
      topk::minima_bound_and_its_fallback topk::every_length_across_a_tile_boundary \
      topk::bad_calls_get_clear_errors topk_ops::default_tuning_on_rows_past_the_row_cube \
      topk_ops::default_tuning_on_few_long_rows topk_ops::default_tuning_at_every_short_row_length \
      props::topk_property sampling::
  for rt in cuda vulkan; do
    timeout $L .gpu/suite-$rt --exact --test-threads 3 small_devices::burn_cumsum_at_default_tunings \
      scans::every_op_and_dtype_at_default_tunings cumulative::every_op_every_dim_on_the_device \
      > "$OUT/tests-$rt-scan.txt" 2>&1 &
  done
  sanitize_exact $L "memcheck racecheck" topk::long_rows_cut_within_the_long_row_budget \
      topk::row_sampled_bound_and_its_fallback
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack kv
  T=topk_with_indices R=radix_select
  W="--case $T:16777216:f32:k=1000,raw=$R,unbounded=0/1
     --case $T:16777216:f32:k=200,raw=$R,unbounded=0/1
     --case $T:4194304:f32:k=1000,raw=$R,unbounded=0/1"
  C="--case $T:16777216:f32:k=10,raw=none --case $T:16777216:f32:k=1000,raw=none
     --case $T:16777216:f32:k=100000,raw=none --case $T:268435456:f32:k=10,raw=none
     --case $T:268435456:f32:k=1000,raw=none --case $T:268435456:f32:k=100000,raw=none
     --case $T:268435456:f32:k=1000,dist=all_equal,raw=none --case $T:4096x32768:f32:k=64,raw=none
     --case $T:16384x128:f32:k=8,raw=none --case $T:64x128256:f32:k=50,raw=none
     --case $T:64x128256:f32:k=1000,raw=none --case $T:64x128256:f32:k=50,dist=tied,raw=none
     --case $T:64x128256:f32:k=1000,dist=tied,raw=none"
  for rt in vulkan cuda; do
    warm=(); lim=75
    [ $rt = vulkan ] && warm=(--warm-ms 1000) lim=110
    timeout $lim .gpu/sieve-bench-$rt --no-burn --runs 10 --sample-ms 30 "${warm[@]}" \
      --json "$OUT/$rt.json" $C $W > "$OUT/rows-$rt.txt" 2>&1
    echo "== $rt rc=$? at ${SECONDS}s"
    grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt.txt" | grep -v skipped | grep -v " - " | cut -c1-150
    pack kv
  done
  torch_rows topk topk 90
  pack kv
  ;;
cl)
  L=${TEST_LIMIT:-200}
  each_test $L sort::floats_in_pytorch_order_both_directions sort::a_late_special_key_switches_every_pass \
      sort::integers_with_duplicates sort::every_length_across_an_lsd_tile_boundary \
      sort::many_tiles_per_row_and_onesweep_refusal sort::all_equal_sorted_and_reversed \
      sort::many_short_rows sort::deterministic_and_keys_only sort::widest_accepted_tiles_run \
      sort::wide_and_half_keys sort::bad_calls_get_clear_errors sort_ops:: sets::
  sanitize_exact $L "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal \
      sort::a_late_special_key_switches_every_pass
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack cl
  OS=raw=onesweep
  bench_rows cuda 200 --case sort:268435456:i32:$OS,loads=1/8/16 \
    --case sort:268435456:f32:$OS,loads=1/8 \
    --case sort_with_indices:268435456:f32:$OS,loads=1/8/16 --case argsort:268435456:f32:$OS,loads=1/8 \
    --case sort_with_indices:16777216:f32:raw=lsd,loads=1/8 \
    --case sort:268435456:i32:raw=none --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none --case sort_with_indices:16777216:f32:raw=none \
    --case unique:268435456:f32:distinct=1048576,raw=none
  pack cl
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan 150 \
    --case sort_with_indices:16777216:f32:raw=lsd,loads=1/8 \
    --case sort_with_indices:268435456:f32:raw=lsd,loads=1/8 --case sort:16777216:i32:raw=lsd,loads=1/8
  pack cl
  torch_rows sort,sets "sort|argsort|unique" 120
  pack cl
  ;;
cu)
  bench_rows cuda 200 --case sort:268435456:i32:raw=none --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none --case unique:268435456:f32:distinct=1048576,raw=none \
    --case sort_with_indices:16777216:f32:raw=none --case sort_with_indices:16384x128:f32:raw=none \
    --case sort:268435456:i32:raw=onesweep,loads=1/8
  pack cu
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan 150 \
    --case sort_with_indices:268435456:f32:raw=none --case sort_with_indices:16777216:f32:raw=none
  pack cu
  torch_rows sort,sets "sort|argsort|unique" 120
  pack cu
  ;;
pf)
  here=$PWD
  mkdir -p /tmp/prof && cd /tmp/prof
  for c in sort:268435456:i32:raw=onesweep sort_with_indices:268435456:f32:raw=onesweep \
      unique:268435456:f32:distinct=1048576,raw=none; do
    n=${c%%:*}
    printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-$n.log" > cubecl.toml
    timeout 80 $here/.gpu/sieve-bench-cuda --no-burn --runs 10 --case $c > "$OUT/prof-$n.txt" 2>&1
    echo "== profile $c rc=$? at ${SECONDS}s"
    (cd $here && python3 bench/profile_summary.py "$OUT/prof-$n.log" | head -16)
    gzip -f "$OUT/prof-$n.log"
    cd /tmp/prof; (cd $here; pack pf)
  done
  ;;
tw)
  bench_rows cuda 200 --case sort_with_indices:268435456:f32:raw=onesweep,units=256/512,epu=12/16/20
  pack tw
  ;;
fv)
  L=${TEST_LIMIT:-150}
  for t in sort::many_tiles_per_row_and_onesweep_refusal sort::all_equal_sorted_and_reversed \
      sort::floats_in_pytorch_order_both_directions sort::a_late_special_key_switches_every_pass \
      props::sort_property; do
    SIEVE_PROP_CASES=100 timeout $L .gpu/suite-cuda --exact $t > "$OUT/tests-cuda-${t#*::}.txt" 2>&1 &
  done
  timeout $L .gpu/suite-cuda sort_ops:: > "$OUT/tests-cuda-sort_ops.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack fv
  bench_rows cuda 120 --case sort_with_indices:268435456:f32:raw=none --case argsort:268435456:f32:raw=none \
    --case sort_with_indices:4096x32768:f32:raw=onesweep,epu=16/20
  pack fv
  torch_rows sort "sort|argsort" 40
  pack fv
  ;;
ks)
  OS=raw=onesweep,units=256/512,epu=24/28/32
  bench_rows cuda 240 --case sort:268435456:i32:$OS --case sort:268435456:f32:$OS \
    --case unique:268435456:f32:distinct=1048576,raw=none
  pack ks
  ;;
*) echo "usage: $0 kv|cl|cu|pf|tw|fv|ks"; exit 2 ;;
esac
