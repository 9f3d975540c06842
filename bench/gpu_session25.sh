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
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda.
# usage: bash bench/gpu_session25.sh <a|b>
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
*) echo "usage: $0 <a|b>"; exit 2 ;;
esac
pack $1
