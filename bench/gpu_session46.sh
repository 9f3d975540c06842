#!/usr/bin/env bash
# The forty-sixth session's calls (issues 15, 17). `bench/results/<card>/46-*` hold what came
# back.
#   a   The tests `45-one` owed at main's kernels (`978f0ce`'s suites: main's head has the
#       same kernel and test sources): the six `sort::` tests cut there, one process each;
#       memcheck and racecheck over the onesweep test; the top-k and compaction tests not
#       reached there (listed below), three processes a runtime; all within TEST_LIMIT (300)
#       s. Then, in the same call, the rows issue 15 and 17 mark against torch: the pair
#       sorts and sort i32 at 2^28, sort_with_indices 2^24, `unique` 2^28; and torch's sort
#       and set rows.
#   c   `a` and the branch's tests and A/B in one call (what ran: `46-c`), at branch `early-offsets` (`91c1287`: main, the counted
#       scatter's and the Lsd scatter's offsets read before the tile's loads): its suites'
#       `sort::` tests through CUDA (six processes), `sort::` through Vulkan (three), `sort_ops::`
#       and `props::sort_property` (one each runtime), the compaction's tests (three each),
#       memcheck and racecheck over the onesweep, Lsd boundary and three compaction tests,
#       within TEST_LIMIT (200) s; then its bench (sieve-bench-cuda-early.xz) against main's
#       (sieve-bench-cuda.xz, `978f0ce`: main's kernels), alternating (CUDA): `unique`'s run
#       starts, mask_select / argwhere 2^28 through the raw scatter, sort_with_indices 2^24 raw
#       Lsd; one pair through Vulkan where F_DIR has them (sieve-bench-vulkan[-early].xz; main's at `d9199a0`: the
#       same sort kernels, the compaction before the lean scatter) on sort_with_indices 2^24
#       (Lsd) and mask_select 2^28 (the raw scatter); then main's pair sorts
#       and `unique` at 2^28 and torch's sort and set rows.
#   d   (ran inline on `c`'s warm machine, F_DIR=.gpu55) The A/B `c` cut: early-offsets'
#       bench against main's, alternating (CUDA, 55 s a process): `unique` 2^28 with its run
#       starts alone, mask_select and argwhere 2^28 through the raw scatter.
#   e   (likewise, F_DIR=.gpu55) The Lsd scatter's A/B: sort_with_indices f32 and sort i32 at
#       2^24 through the raw Lsd passes, 40 s a process.
#   f   (likewise, F_DIR=.gpu54: main's CUDA suite) The three `sort::` tests `c` cut, one
#       process each within 165 s.
# usage: F_DIR=<suites and benches> bash bench/gpu_session46.sh a|c|d|e|f   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
a)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-300}
  for t in a_late_special_key_switches_every_pass all_equal_sorted_and_reversed \
      floats_in_pytorch_order_both_directions integers_with_duplicates \
      many_tiles_per_row_and_onesweep_refusal widest_accepted_tiles_run; do
    timeout $L .gpu/suite-cuda --exact sort::$t > "$OUT/tests-cuda-sort-$t.txt" 2>&1 &
  done
  sanitize_exact $L "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal
  BOTH=(sets::kthvalue_and_median_match_the_reference sets::order_statistics_gradients_go_to_the_chosen_element
    sets::searchsorted_tunings_match_the_reference split_ops::bad_bit_is_named split_ops::int_partition_of_views
    split_ops::stable_partition_every_dim_and_density topk::auto_rule_and_names
    topk::deterministic_and_one_output_only topk::index_dtypes topk::many_short_rows topk::random_floats_no_ties
    topk_ops::default_tuning_at_every_short_row_length topk_ops::empty_tensors_work
    topk_ops::float_topk_every_dim_k_and_direction)
  LIMIT=$L deal cuda 3 group- "${BOTH[@]}" props::sets_property small_devices::raw_topk_every_strategy_at_default_tunings
  LIMIT=$L deal vulkan 3 group- "${BOTH[@]}"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack a
  bench_rows cuda 130 --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none --case sort:268435456:i32:raw=none \
    --case sort_with_indices:16777216:f32:raw=none \
    --case unique:268435456:f32:distinct=1048576,raw=none
  pack a
  torch_rows sort,sets "sort|argsort|unique" 70
  pack a
  ;;
c)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-200}
  mapfile -t SORT < <(.gpu/suite-cuda --list sort:: 2>/dev/null | grep ': test$' | sed 's/: test$//' | grep -v dtypes_sort)
  LIMIT=$L deal cuda 6 group- "${SORT[@]}"
  LIMIT=$L split_suite vulkan 3 sort::
  for rt in cuda vulkan; do
    timeout $L .gpu/suite-$rt sort_ops:: props::sort_property > "$OUT/tests-$rt-sort_ops.txt" 2>&1 &
    mkdir -p "$OUT/c"; OUT="$OUT/c"
    LIMIT=$L split_suite $rt 3 "compact:: filter_ops:: sets:: split_ops:: props::filter_property props::split_property props::sets_property"
    OUT="${OUT%/c}"
  done
  for tool in memcheck racecheck; do
    timeout $L compute-sanitizer --tool $tool --error-exitcode 9 .gpu/suite-cuda --exact \
      sort::many_tiles_per_row_and_onesweep_refusal sort::every_length_across_an_lsd_tile_boundary \
      compact::mask_compaction_matches_reference compact::run_start_flags_match_reference \
      compact::bit_split_matches_reference > "$OUT/$tool-cuda-c.txt" 2>&1 &
  done
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  for f in "$OUT"/c/*.txt "$OUT"/*-c.txt; do echo "== ${f##*/} $(grep -c ' ok$' "$f") ok"; summary "$f"; done
  pack c
  AB_RUNTIMES=cuda AB_LIMIT=30 ab_benches early .gpu .gpu \
    "--case unique:268435456:f32:distinct=1048576,units=512 --case mask_select:268435456:f32:density=0.5,raw=scatter --case mask_select:268435456:f32:density=0.01,raw=scatter --case argwhere:268435456:bool:density=0.5,raw=scatter --case sort_with_indices:16777216:f32:raw=lsd" c ab-
  ab_summary ab- "unique|mask_select|argwhere|sort_with_indices|copy"
  pack c
  for v in "" -early; do
    [ -x .gpu/sieve-bench-vulkan$v ] || continue
    timeout 30 .gpu/sieve-bench-vulkan$v --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 \
      --json "$OUT/ab-vulkan$v.json" --case sort_with_indices:16777216:f32:raw=lsd \
      --case mask_select:268435456:f32:density=0.5,raw=scatter > "$OUT/ab-rows-vulkan$v.txt" 2>&1
    echo "== vulkan$v rc=$? at ${SECONDS}s"
    grep -E "^(sort_with_indices|mask_select|copy) " "$OUT/ab-rows-vulkan$v.txt" | grep -v skipped | cut -c1-150
    pack c
  done
  bench_rows cuda 80 --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none --case unique:268435456:f32:distinct=1048576,raw=none
  pack c
  torch_rows sort,sets "sort|argsort|unique" 55
  pack c
  ;;
d)
  AB_RUNTIMES=cuda AB_LIMIT=55 ab_benches early .gpu .gpu "--case unique:268435456:f32:distinct=1048576,units=512 --case mask_select:268435456:f32:density=0.5,raw=scatter --case argwhere:268435456:bool:density=0.5,raw=scatter" d ab-
  ab_summary ab- "unique|mask_select|argwhere|copy"
  pack d
  ;;
e)
  AB_RUNTIMES=cuda AB_LIMIT=40 ab_benches early .gpu .gpu "--case sort_with_indices:16777216:f32:raw=lsd --case sort:16777216:i32:raw=lsd" e ab-
  ab_summary ab- "sort|sort_with_indices|copy"
  pack e
  ;;
f)
  for t in a_late_special_key_switches_every_pass integers_with_duplicates widest_accepted_tiles_run; do
    timeout 165 .gpu/suite-cuda --exact sort::$t > "$OUT/tests-cuda-sort-$t.txt" 2>&1 &
  done
  wait; suite_summary
  pack f
  ;;
*) echo "usage: $0 a|c|d|e|f"; exit 2 ;;
esac
