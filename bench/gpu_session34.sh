#!/usr/bin/env bash
# The thirty-fourth session's calls.
#   tv  The suites in TS_DIR (carry [TS_DIR, ".gl"]) at main's final code: `topk::`,
#       `topk_ops::` and `sampling::` whole (the long rows' candidates limit, the in-cube
#       capacity change and the second level had run on lavapipe only), the six
#       `dims::*_dim_minus_3` tests `33-tf` did not reach, and through CUDA the ten others
#       that process left; 5 processes a runtime. memcheck over `topk::`'s long-row and
#       tile tests, racecheck over the cut rows' test (4 cases: racecheck is slow).
#   (34-lx ran inline: see bench/results/h100/34-lx/README.md.)
#   pu  Where `unique`'s keys-only sort loses (issue 17: unique 2^28 8.27 ms against torch's
#       6.47, the sort of its keys ~7.0 alone): the Burn `sort` of 2^28 keys through CUDA,
#       integers from 0..2^20 as f32 (`unique`'s keys: a skewed top digit), random f32 and
#       random i32, each process under CubeCL's profiling logger (every launch timed by the
#       runtime, in launch order: the passes one by one), then timed alone (30 ms samples).
#       Files: pu.tgz (logs gzipped; `bench/profile_summary.py` reads them).
#   lc  Longer rows through the row cube (benches in B_DIR): rows past `row_cube_max_len` are
#       cut into at most `row_split_cubes` chunks (one a multiprocessor), so [2^26] and
#       [2^28] never fit and run device-wide; `split=` lets them be cut into chunks of 2^17
#       (512 / 2048) and selected again. Raw radix select, both runtimes, against the
#       default, k = 10 / 64; the threshold between merging a long row's chunks and
#       selecting again (`row_merge_max_chunks`, 16: untimed between 16 and 128 chunks) at
#       [8, 2^21], [4, 2^22], [2, 2^23] k = 10 / 64 (16 / 33 / 66 chunks a row on 132
#       multiprocessors) with `merge_chunks=0` (select again) and `=1000` (merge); the Burn op
#       [2^24] k = 1000 / 100000 through both runtimes (issue 16: every Vulkan top-k row under
#       torch.topk on CUDA); torch's top-k rows last.
# usage: TS_DIR=<suites> bash bench/gpu_session34.sh tv | B_DIR=<benches> bash bench/gpu_session34.sh pu|lc
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
if [ "${1:-}" = tv ]; then cp ${TS_DIR:?}/*.xz .gpu/; else cp ${B_DIR:?}/*.xz .gpu/; fi
source "$here/gpu_prelude.sh"
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
case "$1" in
tv)
  export LIMIT=${LIMIT:-500} SKIP="dtypes_sort|_on_flex|_on_ndarray"
  BOTH="topk:: topk_ops:: sampling:: _dim_minus_3"
  CUDA="sets::order_statistics_gradients_go_to_the_chosen_element
    sets::unique_and_unique_consecutive_match_the_reference small_devices::burn_sorts_at_default_tunings
    small_devices::forced_strategies_and_tunings_that_cannot_fit_are_refused
    small_devices::raw_topk_every_strategy_at_default_tunings dtypes_ops::every_dtype_through_every_op
    compact::run_start_flags_match_reference"
  split_suite cuda 5 "$BOTH $CUDA"; split_suite vulkan 5 "$BOTH"
  SIEVE_PROP_CASES=8 timeout $LIMIT compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 topk::random_floats_no_ties topk::floats_with_specials_every_strategy \
    topk::every_length_across_a_tile_boundary topk::candidates_shrink_over_many_tiles \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  SIEVE_PROP_CASES=4 timeout $LIMIT compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 topk::random_floats_no_ties > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
pu)
  here=$PWD
  for c in sort:268435456:f32:distinct=1048576 sort:268435456:f32 sort:268435456:i32; do
    n=$(echo "$c" | tr ':=' '__')
    mkdir -p /tmp/prof && cd /tmp/prof
    printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-$n.log" > cubecl.toml
    timeout 60 $here/.gpu/sieve-bench-cuda --no-burn --runs 10 --with raw=none --case $c > "$OUT/prof-$n.txt" 2>&1
    echo "== profile $c rc=$? at ${SECONDS}s"; cd $here
    python3 bench/profile_summary.py "$OUT/prof-$n.log" | head -12
    gzip -f "$OUT/prof-$n.log"; pack pu
  done
  timeout 90 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" \
    --case sort:268435456:f32:distinct=1048576 --case sort:268435456:f32 --case sort:268435456:i32 \
    --case unique:268435456:f32:distinct=1048576,stages=1 > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"
  grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda.txt" | grep -v skipped | cut -c1-150
  ;;
lc)
  R=raw=radix_select A=topk_with_indices:67108864:f32 B=topk_with_indices:268435456:f32
  L=""
  for k in 10 64; do
    L="$L --case $A:k=$k,$R --case $A:k=$k,$R,split=512 --case $B:k=$k,$R --case $B:k=$k,$R,split=2048"
  done
  for shape in 8x2097152 4x4194304 2x8388608; do
    for k in 10 64; do
      L="$L --case topk_with_indices:$shape:f32:k=$k,$R,merge_chunks=0/1000"
    done
  done
  L="$L --case topk_with_indices:16777216:f32:k=1000,$R --case topk_with_indices:16777216:f32:k=100000,$R"
  timeout 200 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $L > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack lc
  timeout 300 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $L > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack lc
  timeout 90 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
*) echo "usage: $0 <tv|pu|lc>"; exit 2 ;;
esac
pack $1
