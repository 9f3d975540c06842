#!/usr/bin/env bash
# The thirty-third session's calls (its other calls are `gpu_session32.sh tf` with TS_DIR and
# `gpu_session32.sh a` with A_DIR).
#   lr  Long rows through the one-cube-per-row select (the branch `long-rows`: rows past
#       `row_cube_max_len` whose chunks fit it), against the device-wide passes in the same
#       process (`split=0`: no chunks, so such rows go device-wide as before), through CUDA
#       and Vulkan (2 s warm-up a row), 30 ms samples: [2^24] k = 10 / 32 / 100 uniform,
#       k = 10 tied and all equal, [8, 2^21] k = 10, and [2^24] k = 1000 (device-wide either
#       way); each case the Burn op and the raw radix select; torch's top-k rows in the same
#       call. Benches in B_DIR (.gpu33b unless set; carry [B_DIR, ".gl"]). Files: lr.tgz.
#   ar  The standard rows of `gpu_session32.sh a` without its 2^28 sorts and where-rows, with
#       [2^24] k = 10 and 1000, the Burn ops (`raw=none`), then torch's filter, sort, sampling
#       and set rows. Ran once with both runtimes in one call (limits 110 s / 180 s): both
#       processes ran past them (`33-ar`). RT=cuda (300 s, with torch) or RT=vulkan (420 s)
#       runs one runtime a call.
#   ks  Top-k rows the next steps need, raw radix select, both runtimes: [2^24] k = 1000 and
#       100000 with the device-wide sampled bound from 2^24 (`sample_min=16777216`) against
#       the default (from 2^26; Vulkan's launches may tip it), and the cut rows at k = 48 and
#       64 (`split_max=8448`) against device-wide (`split=0`), between `33-lr`'s 32 (won) and
#       100 (lost); k = 16 and 32 at the defaults against `split=0` (rows past the row cube's
#       limit cut up to the candidates limit whatever the in-cube sort's capacity: through
#       Vulkan k = 32 is cut, 128 chunks), and k = 10 cut into 264 and 528 chunks (two and four
#       a multiprocessor). Ran in part, inline, with the session's last minutes (`33-ks`).
#       Then the second level (`l2=1`: rows past the limit cut into up to a row of the row
#       cube's candidates, selected again over them) at k = 100 / 256 / 1000 against the
#       default (device-wide there); and the few-chunk long rows a review flagged as untimed
#       ([2^18] k = 4000: 2 chunks of 2^17; k = 10: 16 chunks) against `split=0`.
#   tc  The tests `33-tf` did not reach, from the suites in TS_DIR (carry [TS_DIR, ".gl"]):
#       the six top-k tests and six `dims::` tests through both runtimes, and through CUDA
#       the ten others that process left.
# usage: bash bench/gpu_session33.sh <lr|ar|ks|tc>
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
if [ "${1:-}" = tc ]; then cp ${TS_DIR:-.gpu33bs}/*.xz .gpu/; else cp ${B_DIR:-.gpu33b}/*.xz .gpu/; fi
source "$here/gpu_prelude.sh"
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
case "$1" in
lr)
  T=topk_with_indices R=raw=radix_select
  L=""
  for p in k=10 k=32 k=100 k=10,dist=tied k=10,dist=all_equal; do
    L="$L --case $T:16777216:f32:$p,$R --case $T:16777216:f32:$p,$R,split=0"
  done
  L="$L --case $T:8x2097152:f32:k=10,$R --case $T:8x2097152:f32:k=10,$R,split=0
     --case $T:16777216:f32:k=1000,$R"
  for round in 1 2; do
    timeout 100 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-$round.json" $L > "$OUT/rows-cuda-$round.txt" 2>&1
    echo "== cuda $round rc=$? at ${SECONDS}s"; pack lr
    timeout 150 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan-$round.json" $L > "$OUT/rows-vulkan-$round.txt" 2>&1
    echo "== vulkan $round rc=$? at ${SECONDS}s"; pack lr
  done
  timeout 90 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*-1.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-140; done
  ;;
ar)
  # `gpu_session32.sh a`'s standard rows without its 2^28 sorts and where-rows (device time).
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  R=$(sed -n '/^  R="--case copy/,/keys=1048576"$/p' "$here/gpu_session32.sh" | sed 's/^  R="//; s/"$//; s/\$T/topk_with_indices/g')
  R="$R --case topk_with_indices:16777216:f32:k=10 --case topk_with_indices:16777216:f32:k=1000"
  RT=${RT:-both}; [ $RT = both ] && LC=110 LV=180 || LC=300 LV=420
  if [ $RT != vulkan ]; then
    timeout $LC $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
    echo "== cuda rc=$? at ${SECONDS}s"; pack ar
  fi
  if [ $RT != cuda ]; then
    timeout $LV $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
    echo "== vulkan rc=$? at ${SECONDS}s"; pack ar
  fi
  if [ $RT != vulkan ]; then
    timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,sort,topk,sample,sets > "$OUT/torch.txt" 2>&1
    echo "== torch rc=$? at ${SECONDS}s"
  fi
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
ks)
  T=topk_with_indices:16777216:f32 R=raw=radix_select
  K="--case $T:k=1000,$R --case $T:k=1000,$R,sample_min=16777216
     --case $T:k=100000,$R --case $T:k=100000,$R,sample_min=16777216
     --case $T:k=48,$R,split_max=8448 --case $T:k=48,$R,split=0
     --case $T:k=64,$R,split_max=8448 --case $T:k=64,$R,split=0
     --case $T:k=16,$R --case $T:k=16,$R,split=0 --case $T:k=32,$R --case $T:k=32,$R,split=0
     --case $T:k=10,$R,split=264/528
     --case $T:k=100,$R,l2=1 --case $T:k=256,$R,l2=1 --case $T:k=256,$R --case $T:k=1000,$R,l2=1
     --case topk_with_indices:262144:f32:k=4000,$R --case topk_with_indices:262144:f32:k=4000,$R,split=0
     --case topk_with_indices:262144:f32:k=10,$R --case topk_with_indices:262144:f32:k=10,$R,split=0"
  timeout 90 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $K > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack ks
  timeout 150 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $K > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
tc)
  export LIMIT=${LIMIT:-420} SKIP="dtypes_sort|_on_flex|_on_ndarray"
  BOTH="topk::candidates_shrink_over_many_tiles topk::index_dtypes topk::radix_select_reports_its_counting_passes
    topk_ops::default_tuning_at_every_short_row_length topk_ops::every_strategy_on_int_views
    topk_ops::topk_gradient_lands_on_the_selected_positions _dim_minus_3"
  CUDA="sampling::draws_follow_the_filtered_distribution sampling::seed_dtypes_half_logits_and_views_draw_the_same
    sampling::uniforms_match_the_reference_bit_for_bit sets::order_statistics_gradients_go_to_the_chosen_element
    sets::unique_and_unique_consecutive_match_the_reference small_devices::burn_sorts_at_default_tunings
    small_devices::forced_strategies_and_tunings_that_cannot_fit_are_refused
    small_devices::raw_topk_every_strategy_at_default_tunings dtypes_ops::every_dtype_through_every_op
    compact::run_start_flags_match_reference"
  split_suite cuda 4 "$BOTH $CUDA"; split_suite vulkan 2 "$BOTH"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
*) echo "usage: $0 <lr|ar|ks|tc>"; exit 2 ;;
esac
pack $1
