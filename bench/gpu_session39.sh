#!/usr/bin/env bash
# Written at the end of the thirty-eighth session for the next one (benches in B_DIR, suites in
# TS_DIR, both built at main's HEAD; carry [B_DIR, TS_DIR, ".gl"] as a call needs them).
#   tv  main's HEAD through CUDA (4 processes) and Vulkan (3): the modules whose f32 sorts now
#       take the plain key map by default through CUDA (`SortTuning::plain_float_keys`, landed
#       in session 38 after `sort::` alone ran with it) and the greedy fix's `sampling::`,
#       500 cases a property; memcheck over `sort::` and `sets::`, racecheck over `sort::`.
#   pr  Rows. CUDA: torch's sort and set rows (`torch_reference.py --only=sort,sets`), then
#       the f32 sorts at 2^28 (keys alone, with indices, argsort; onesweep, plain=0/1), i32
#       keys, and `unique` 2^28 (the Burn op at its default: the map on); Vulkan: the map
#       through Lsd, plain=0/1 (f32 keys alone at 2^24 and 2^28, with indices at 2^24), to
#       decide its default there. `raw=` keeps each case to the strategy asked (session 38's
#       rows ran every strategy and were cut by their timeouts).
#   tf  Written after `tv`: the fix of `2467065` (`cube::restore_axes`, Burn-level strides, no
#       kernel changed) and the faster fill of `856ec46` (every workspace's zeroing) through
#       CUDA (6 processes) and Vulkan (4) over every module whose ops take a dim and the raw
#       sort, scan and compaction modules, 200 cases a property, within TF_LIMIT (300)
#       seconds; memcheck over the fill's test and one sort test beside them. Then random f32
#       keys alone at 2^28 (onesweep, raw call), main's bench before the fill (B_DIR) against
#       the new one (F_DIR), alternating processes, twice. F_DIR: benches and suites
#       (`build33.sh` puts suites in F_DIR's `s` twin).
#   tr  `tf`'s CUDA tests its 300 s cut (processes 0 and 1 of 6), as 4 processes within
#       TR_LIMIT (250) s, 200 cases a property, and `tv`'s failing seed of `sets_property` (500
#       cases) beside them. Suites from F_DIR's `s` twin.
#   vc  Issue 16's device-wide top-k cube sweep through Vulkan (`gpu_session36.sh vc`'s Vulkan
#       rows) with F_DIR's bench.
# usage: B_DIR=<benches> TS_DIR=<suites> bash bench/gpu_session39.sh tv|pr
#        F_DIR=<benches> B_DIR=<old benches> bash bench/gpu_session39.sh tf|vc
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
tv) cp ${TS_DIR:?}/*.xz .gpu/ ;;
pr) cp ${B_DIR:?}/*.xz .gpu/ ;;
tf) cp ${F_DIR:?}/*.xz ${F_DIR}s/*.xz .gpu/; cp ${B_DIR:?}/sieve-bench-cuda.xz .gpu/sieve-bench-cuda-old.xz ;;
vc) cp ${F_DIR:?}/*.xz .gpu/ ;;
tr) cp ${F_DIR:?}s/suite-cuda.xz .gpu/ ;;
esac
source "$here/gpu_prelude.sh"
begin
case "$1" in
tv)
  export SIEVE_PROP_CASES=500
  M="sort:: sort_ops:: sets:: topk:: topk_ops:: sampling:: props:: dims::"
  LIMIT=${TV_LIMIT:-480} split_suite cuda 4 "$M"
  LIMIT=${TV_LIMIT:-480} split_suite vulkan 3 "$M"
  LIMIT=${TV_LIMIT:-480} sanitize "sort:: sets:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tv
  ;;
pr)
  timeout 150 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort,sets \
    > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "^(sort|argsort|unique)" "$OUT/torch.txt" | cut -c1-120
  pack pr
  O1=raw=onesweep,plain=0/1
  bench_rows cuda 200 --case sort:268435456:f32:$O1 --case sort_with_indices:268435456:f32:$O1 \
    --case argsort:268435456:f32:$O1 --case sort:268435456:i32:raw=onesweep \
    --case unique:268435456:f32:distinct=1048576,raw=none
  pack pr
  L1=raw=lsd,plain=0/1
  bench_rows vulkan 200 --case sort:16777216:f32:$L1 --case sort_with_indices:16777216:f32:$L1 \
    --case sort:268435456:f32:$L1
  pack pr
  ;;
tf)
  export SIEVE_PROP_CASES=200
  M="props:: sets:: dims:: sort_ops:: topk_ops:: split_ops:: filter_ops:: cumulative::"
  M="$M sampling:: burn_ops:: sort:: scan:: compact:: soundness::"
  LIMIT=${TF_LIMIT:-300} split_suite cuda 6 "$M"
  LIMIT=${TF_LIMIT:-300} split_suite vulkan 4 "$M"
  timeout ${TF_LIMIT:-300} compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 soundness::fill sort::floats_in_pytorch_order_both_directions \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tf
  for round in 1 2; do
    for v in old new; do
      b=.gpu/sieve-bench-cuda; [ $v = old ] && b=.gpu/sieve-bench-cuda-old
      timeout 45 $b --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-$v-$round.json" \
        --case sort:268435456:f32:raw=onesweep,burn_op=0 > "$OUT/rows-cuda-$v-$round.txt" 2>&1
      echo "== cuda $v $round rc=$? at ${SECONDS}s"; sort_rows "$OUT/rows-cuda-$v-$round.txt"
      pack tf
    done
  done
  ;;
tr)
  export SIEVE_PROP_CASES=200
  T=(dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings props::empty_shapes_sort
    props::sets_property sampling::draw_kernel_matches_the_reference
    sampling::the_filters_on_their_own sampling::uniforms_match_the_reference_bit_for_bit
    scan::odd_and_tiny_lengths sets::median_finds_a_nan_in_a_lanes_last_place
    sets::unique_and_unique_consecutive_match_the_reference
    sort::every_length_across_an_lsd_tile_boundary sort_ops::long_rows_take_the_lsd_passes
    soundness::empty_shapes_on_the_cube_backend soundness::scan_counts_a_view_from_its_offset
    split_ops::flex_falls_back_to_stock_burn topk_ops::default_tuning_on_few_long_rows
    topk_ops::k_past_the_row_is_named sort_ops::bad_dim_is_named sets::unique_between_fused_ops
    sort::floats_in_pytorch_order_both_directions sort_ops::empty_tensors_work
    sort_ops::sort_gradient_follows_the_permutation soundness::empty_shapes_under_autodiff
    soundness::scan_refuses_short_buffers split_ops::int_partition_of_views
    topk_ops::default_tuning_on_rows_past_the_row_cube
    topk_ops::topk_gradient_lands_on_the_selected_positions)
  for ((g = 0; g < 4; g++)); do
    mine=()
    for ((i = g; i < ${#T[@]}; i += 4)); do mine+=("${T[$i]}"); done
    timeout ${TR_LIMIT:-250} .gpu/suite-cuda --exact --test-threads 2 "${mine[@]}" \
      > "$OUT/tests-cuda-$g.txt" 2>&1 &
  done
  SIEVE_PROP_SEED=3316228121434655988 SIEVE_PROP_CASES=500 timeout ${TR_LIMIT:-250} \
    .gpu/suite-cuda --exact props::sets_property > "$OUT/tests-cuda-seed.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tr
  ;;
vc)
  topk_cube_sweep_vulkan ${VC_LIMIT:-230}
  pack vc
  ;;
*) echo "usage: $0 <tv|pr|tf|tr|vc>"; exit 2 ;;
esac
