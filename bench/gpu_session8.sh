#!/usr/bin/env bash
# Eighth GPU session: the code from `57069a3` on, where the seventh session ran out of device
# time (docs/PERFORMANCE.md, "What ran on the H200 in the seventh session"): the bf16 fixes
# (scan stores round bf16 by bits; 16-bit gradients scatter-add in f32) are unchecked there, and
# most of topk::, sort::, props:: and the sanitizers over top-k and the sort were never reached.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda
# (for `rows`, `vulkan`), sieve-bench-vknr (for `vulkan`: bench/vulkan_robustness/build.sh).
#
# Lessons of the seventh session, which this plan keeps to:
# - a call that starts the machine costs ~90 s of device time before the command runs;
# - the whole suite, sanitizers and 12 dtype processes at once did not finish in 350 s
#   (libtest runs modules in name order, so the last ones - topk, sort, props - never ran):
#   split the suite by module groups and run the groups side by side;
# - at most 8 files come back from $OUT: every mode folds its logs before it ends, and every
#   process has its own `timeout` well inside the call's limit;
# - libtest filters are substrings: `scan::` also picks `dtypes_scan::`.
#
# usage: bash bench/gpu_session8.sh tests | sanitize | rows | vulkan
#   tests     (~420 s) three module groups x CUDA and Vulkan side by side, and dtypes_ops
#             through Vulkan for bf16, f16 and f32 (the bf16 gradient and rounding fixes)
#   sanitize  (~420 s) memcheck over top-k, the sort and the scans; racecheck over top-k and
#             over the sort and split
#   rows      gpu_session6.sh rows: scan family and top-k rows with torch in the same call
#   vulkan    gpu_session6.sh vulkan: issue 16's robustness on/off rows and the SPIR-V log
set -uo pipefail
here="$(dirname "$0")"
groups=(
  "topk:: topk_ops:: sort:: sort_ops:: split_ops::"
  "scan:: scans:: cumulative:: compact:: filter_ops:: burn_ops:: soundness:: backends::"
  "dims:: dtypes_scan:: dtypes_sort:: small_devices:: props::"
)
case "$1" in
tests)
  export LIMIT=${LIMIT:-400}
  source "$here/gpu_prelude.sh"
  for b in cuda vulkan; do
    for i in 0 1 2; do
      skip=""
      [ $i -lt 2 ] && skip="--skip dtypes_"
      SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-100} timeout $limit .gpu/suite-$b --test-threads 3 \
        $skip ${groups[$i]} > "$OUT/tests-$b-$i.txt" 2>&1 &
    done
  done
  for d in bf16 f16 f32; do
    SIEVE_DTYPES=$d SIEVE_TRACE=1 timeout $limit .gpu/suite-vulkan --test-threads 1 dtypes_ops:: \
      > "$OUT/dtypes-ops-vulkan-$d.txt" 2>&1 &
  done
  wait
  for b in cuda vulkan; do
    for i in 0 1 2; do echo "===== group $i: ${groups[$i]}"; cat "$OUT/tests-$b-$i.txt"; done \
      > "$OUT/tests-$b.txt"
    rm -f "$OUT"/tests-$b-?.txt
  done
  for d in bf16 f16 f32; do echo "===== $d"; cat "$OUT/dtypes-ops-vulkan-$d.txt"; done \
    > "$OUT/dtypes-ops-vulkan.txt"
  rm -f "$OUT"/dtypes-ops-vulkan-*.txt
  for f in tests-cuda tests-vulkan dtypes-ops-vulkan; do
    echo "== $f: $(grep -c 'ok$' "$OUT/$f.txt") ok"; summary "$OUT/$f.txt"
  done
  ;;
sanitize)
  export LIMIT=${LIMIT:-400}
  source "$here/gpu_prelude.sh"
  sanitize "topk:: sort:: scans:: --skip dtypes_" "topk:: --skip dtypes_;sort:: split_ops::"
  wait
  for f in memcheck-cuda racecheck-cuda-0 racecheck-cuda-1; do
    echo "== $f: $(grep -c 'ok$' "$OUT/$f.txt") ok"; summary "$OUT/$f.txt"
  done
  ;;
*)
  bash "$here/gpu_session6.sh" "$@"
  ;;
esac
