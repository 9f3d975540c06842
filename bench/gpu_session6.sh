#!/usr/bin/env bash
# Sixth GPU session (issues 14 and 15): the code as committed from `b51cb4c` on (the scan's
# 64-element look-back tiles and exact-fold butterfly, and top-k rebuilt on the shared radix
# parts: one digit select, one minima bound, ThresholdBisection gone) has not run on a GPU.
# From prebuilt binaries in .gpu/ (xz-compressed; carry [".gpu", ".gl"]): `suite-cuda`
# (NVRTC), `suite-vulkan` (wgpu's SPIR-V compiler), `sieve-bench-cuda`. Every process under
# `timeout`.
#
# usage: bash bench/gpu_session6.sh check | rows | vulkan | profile
#   check    the whole suite through CUDA and Vulkan but dtypes_ops, dtypes_ops through
#            Vulkan one process per dtype (SIEVE_DTYPES, SIEVE_TRACE: the bf16 NVVM failure
#            of session 5 should be gone with the host-made argwhere mask), memcheck over the
#            scans, the compaction and top-k, racecheck over three groups, all concurrently
#   rows     one call, one card: the scan family's rows and every top-k row (the refactor
#            changed the rank cube's bound and the digit kernel: "no other row slower"), with
#            stock Burn where it finishes, then bench/torch_reference.py (every row)
#   vulkan   (issue 16) the same Vulkan rows twice from `sieve-bench-vknr` (built by
#            bench/vulkan_robustness/build.sh): the device as cubecl-wgpu creates it
#            (robustBufferAccess and VK_EXT_robustness2 on), then SIEVE_VK_ROBUSTNESS=off;
#            the CUDA copy row beside them
#   profile  bench/gpu_session5.sh profile (look-back cumsum/cummin f32 vs i32, then ncu)
set -uo pipefail
source "$(dirname "$0")/gpu_prelude.sh"
dtypes="f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8"
case "$1" in
check)
  limit=${TESTS_LIMIT:-420}
  for b in cuda vulkan; do
    SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-200} timeout $limit .gpu/suite-$b --test-threads 6 \
      --skip dtypes_ops > "$OUT/tests-$b.txt" 2>&1 &
  done
  for d in $dtypes; do
    SIEVE_DTYPES=$d SIEVE_TRACE=1 timeout $limit .gpu/suite-vulkan --test-threads 1 --exact \
      dtypes_ops::every_dtype_through_every_op dtypes_ops::float_dtype_gradients_keep_the_dtype \
      > "$OUT/dtypes-ops-vulkan-$d.txt" 2>&1 &
  done
  timeout $limit .gpu/suite-cuda --test-threads 2 dtypes_ops \
    > "$OUT/dtypes-ops-cuda.txt" 2>&1 &
  sanitize "scans:: cumulative:: compact:: dtypes_scan:: topk::" \
    "scans:: cumulative::;topk:: dtypes_sort::;compact:: scan::"
  wait
  for f in tests-cuda tests-vulkan dtypes-ops-cuda memcheck-cuda racecheck-cuda-0 \
    racecheck-cuda-1 racecheck-cuda-2; do
    echo "== $f"; summary "$OUT/$f.txt"
  done
  for d in $dtypes; do
    f="$OUT/dtypes-ops-vulkan-$d.txt"
    echo "== dtypes_ops vulkan $d: $(grep -E '^test result' "$f" | head -1)"
    grep -B2 -E "NVVM|panicked" "$f" | grep -E "trace:|NVVM|panicked" | head -4
  done
  # Eight files at most come back: one per suite, the rest folded.
  for d in $dtypes; do echo "===== $d"; cat "$OUT/dtypes-ops-vulkan-$d.txt"; done \
    > "$OUT/dtypes-ops-vulkan.txt"
  rm -f "$OUT"/dtypes-ops-vulkan-*.txt
  for f in memcheck-cuda racecheck-cuda-0 racecheck-cuda-1 racecheck-cuda-2; do
    echo "===== $f"; cat "$OUT/$f.txt"
  done > "$OUT/sanitizers.txt"
  rm -f "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-*.txt
  ;;
rows)
  args=(--case copy:268435456:f32)
  for op in cumsum cumprod cummin cummax; do
    for c in 1048576:f32:dim=0 16777216:f32:dim=0 268435456:f32:dim=0 4096x32768:f32:dim=1; do
      args+=(--case "$op:$c")
    done
  done
  for c in 16777216:f32:k=10 16777216:f32:k=1000 16777216:f32:k=100000 268435456:f32:k=10 \
    268435456:f32:k=1000 268435456:f32:k=100000 268435456:f32:k=1000,dist=all_equal \
    4096x32768:f32:k=64 16384x128:f32:k=8 64x128256:f32:k=50 64x128256:f32:k=1000; do
    args+=(--case "topk_with_indices:$c")
  done
  timeout ${BENCH_LIMIT:-360} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(cum|copy|topk)" "$OUT/bench-cuda.txt" | grep -v skipped
  timeout ${TORCH_LIMIT:-200} python3 bench/torch_reference.py "$OUT/torch.json" \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cum|copy|topk)" "$OUT/torch.txt"
  ;;
vulkan)
  args=()
  for c in copy:268435456:f32 cumsum:268435456:f32:dim=0 mask_select:268435456:f32:density=0.5 \
    argwhere:268435456:bool:density=0.5 sort_with_indices:16777216:f32 \
    topk_with_indices:268435456:f32:k=10 topk_with_indices:64x128256:f32:k=1000 \
    topk_with_indices:16384x128:f32:k=8; do
    args+=(--case "$c")
  done
  for robustness in on off; do
    if [ $robustness = off ]; then export SIEVE_VK_ROBUSTNESS=off; fi
    timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-vknr --no-burn \
      --json "$OUT/vulkan-robustness-$robustness.json" "${args[@]}" \
      > "$OUT/vulkan-robustness-$robustness.txt" 2>&1
    echo "vulkan robustness $robustness rc=$?"
    grep -E "sieve experiment|^(copy|cum|mask|argw|sort|topk)" \
      "$OUT/vulkan-robustness-$robustness.txt" | grep -v skipped
  done
  unset SIEVE_VK_ROBUSTNESS
  timeout 120 .gpu/sieve-bench-cuda --no-burn --json "$OUT/cuda-copy.json" \
    --case copy:268435456:f32 > "$OUT/cuda-copy.txt" 2>&1
  echo "cuda copy rc=$?"; grep -E "^copy" "$OUT/cuda-copy.txt"
  # The SPIR-V the H200's Vulkan gets (explicit shared layout, subgroups), as text, for
  # spirv-as / spirv-val / reading at home: the copy, the scan tile, the sort's ranker, top-k.
  CUBECL_DEBUG_LOG="$OUT/spirv-h200.log" timeout 120 .gpu/sieve-bench-vknr --no-burn --runs 10 \
    --case copy:1048576:f32 --case cumsum:1048576:f32:dim=0 \
    --case sort_with_indices:1048576:f32 --case topk_with_indices:1048576:f32:k=10 \
    > /dev/null 2>&1
  echo "spirv log rc=$? $(grep -c START_KERNEL_COMPILATION "$OUT/spirv-h200.log") kernels"
  ;;
profile)
  bash "$(dirname "$0")/gpu_session5.sh" profile
  ;;
esac
