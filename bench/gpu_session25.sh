#!/usr/bin/env bash
# Written at the end of the twenty-fourth session for the next one's first calls (issue 15):
# the twenty-fourth session's code (Lsd tiles with positions at 32 keys a unit, keys-only
# onesweep tiles at 28, the counting bins' copies) has not run the CUDA suite whole.
#   a  the CUDA suite alone over `sort::`, `sort_ops::`, `topk::`, `huge::`, `small_devices::`
#      (6 test threads, nothing beside it: in `24-a`/`24-c` the same modules, run beside the
#      Vulkan suite and two sanitizers, were cut at 330-400 s). Files: a.tgz (~560 s).
#   b  memcheck and racecheck over `sort::` and the Vulkan suite over the same modules, beside
#      each other; then, GPU quiet, sort i32 2^28 through the Burn op at 30 ms samples (is it
#      <= 6.3 ms?) and raw onesweep at 8 and 16 bin copies; sort i32 2^24 and
#      sort_with_indices f32 2^24 raw Lsd at 1 and 8 per-tile bin copies (`lsd_parts`); torch's
#      sort rows. Files: b.tgz (~560 s).
#   b2 what `a` and `b` were for, at once (`25-a` ran 20 of the 50 tests in 540 s: one process's
#      JIT is one queue): the CUDA suite as 6 processes and the Vulkan suite as 3
#      (`split_suite`), memcheck and racecheck over `sort::` beside them, within LIMIT (500 s);
#      then b's rows while time is left. Files: b2.tgz.
#   c  GPU quiet, the standard rows through CUDA (3 ms samples, `cuda.json` written case by
#      case; CUDA_LIMIT, 300 s), torch's standard rows (150 s), then the Vulkan rows of issue
#      16's marks in a fresh process until LIMIT. Files: c.tgz.
#   d  the standard CUDA rows `c` did not reach (its 290 s ended in argsort 2^28), issue 15's
#      first, with `lsd_count_parts` 8 (from `b2`'s rows): sorts, then top-k, then unique,
#      within LIMIT (300 s). Files: d.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda,
# sieve-bench-vulkan.
# usage: bash bench/gpu_session25.sh <a|b|b2|c|d>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
S=sort_with_indices
M="sort:: sort_ops:: topk:: huge:: small_devices::"
stage_out
case "$1" in
a)
  timeout ${LIMIT:-540} .gpu/suite-cuda --test-threads 6 $M --skip dtypes_sort \
    > "$OUT/tests-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s $(grep -c ' ok$' "$OUT/tests-cuda.txt") ok"
  summary "$OUT/tests-cuda.txt"
  ;;
b)
  SUITES=vulkan tests_and_sanitizers "$M"
  pack b
  K=sort:268435456:i32
  timeout 120 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/rows.json" \
    --case copy:268435456:f32 --case $K:raw=onesweep,parts=8/16 \
    --case sort:16777216:i32:raw=lsd,lsd_parts=1/8 --case $S:16777216:f32:raw=lsd,lsd_parts=1/8 \
    > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-rows.txt"; pack b
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  ;;
b2)
  export LIMIT=${LIMIT:-500}
  split_suite cuda 6 "$M"; split_suite vulkan 3 "$M"
  sanitize "sort:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary; pack b2
  timeout $(( 575 - SECONDS )) .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
    --json "$OUT/rows.json" --case copy:268435456:f32 --case sort:268435456:i32:raw=onesweep \
    --case sort:16777216:i32:raw=lsd,lsd_parts=1/8 --case $S:16777216:f32:raw=lsd,lsd_parts=1/8 \
    > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-rows.txt"
  ;;
c)
  timeout ${CUDA_LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "== cuda rows rc=$? at ${SECONDS}s"; pack c
  timeout 150 python3 bench/torch_reference.py "$OUT/torch.json" > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; pack c
  T=topk_with_indices
  timeout $(( ${LIMIT:-560} - SECONDS )) .gpu/sieve-bench-vulkan --no-burn --runs 10 \
    --json "$OUT/vulkan.json" --case copy:268435456:f32 --case cumsum:268435456:f32:dim=0 \
    --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool:density=0.5 \
    --case $T:268435456:f32:k=1000 --case $T:64x128256:f32:k=1000 --case $T:16384x128:f32:k=8 \
    --case $S:16384x128:f32 --case $S:64x128256:f32:descending=true --case $S:16777216:f32 \
    > "$OUT/bench-vulkan.txt" 2>&1
  echo "== vulkan rows rc=$? at ${SECONDS}s"
  for f in "$OUT"/bench-*.txt; do
    echo "== $f"; grep -E '"auto"|  cube  |^copy' "$f" | awk '{print $1, $2, $4, $6}' | cut -c1-100
  done
  ;;
d)
  T=topk_with_indices; N=268435456
  timeout ${LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    --case copy:$N:f32 --case sort:$N:i32 --case argsort:$N:f32 --case $S:16777216:f32 \
    --case $S:64x128256:f32:descending=true --case $S:16384x128:f32 --case $S:4096x32768:f32 \
    --case $T:$N:f32:k=10 --case $T:$N:f32:k=1000 --case $T:$N:f32:k=100000 \
    --case $T:$N:f32:k=1000,dist=all_equal --case $T:64x128256:f32:k=50 \
    --case $T:64x128256:f32:k=1000 --case $T:64x128256:f32:k=50,dist=tied \
    --case $T:64x128256:f32:k=1000,dist=tied --case $T:16384x128:f32:k=8 \
    --case $T:4096x32768:f32:k=64 --case unique:$N:f32:distinct=1048576 \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "== cuda rows rc=$? at ${SECONDS}s"
  grep -E '"auto"|^copy' "$OUT/bench-cuda.txt" | awk '{print $1, $2, $4, $6}' | cut -c1-100
  ;;
*) echo "usage: $0 <a|b|b2|c|d>"; exit 2 ;;
esac
pack $1
