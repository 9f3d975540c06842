#!/usr/bin/env bash
# Fifth GPU session (issue 14): the scan tile's one-fold-per-element store (`00036b6` on) on
# the H200, from prebuilt binaries in .gpu/ (xz-compressed; carry [".gpu", ".gl"]):
# `suite-cuda` (NVRTC), `suite-vulkan` (wgpu's SPIR-V compiler), `sieve-bench-cuda`.
# Every process under `timeout`.
#
# usage: bash bench/gpu_session5.sh sweep | rows | tests | final | profile
#   sweep  the scan family at 2^28 f32 through CUDA, each strategy forced, at 16 to 64
#          elements per unit (sieve only), then dtypes_ops (the public ops x every dtype)
#          through CUDA and Vulkan
#   rows   the scan family's standard rows (stock Burn where its row is <= 2^20) through CUDA,
#          then bench/torch_reference.py: one call, one card
#   tests  the whole suite through CUDA and Vulkan (props at SIEVE_PROP_CASES, default 500),
#          compute-sanitizer memcheck over MEMCHECK and racecheck over each `;`-separated
#          group of RACECHECK, all concurrently
#   final  what one call of the remaining device time holds: `rows` (torch with --scans, and
#          the look-back at 32 elements per unit beside the default 64), then concurrently:
#          the suite through CUDA and Vulkan but dtypes_ops, dtypes_ops through Vulkan one
#          process per dtype (SIEVE_DTYPES, SIEVE_TRACE), memcheck and racecheck as `tests`
#   profile  (not run yet; for the next look at cummin against cumsum) the look-back forced at
#          2^28 for cumsum and cummin, f32 and i32 (i32 folds are exact like minima: the rows
#          split the look-back path's cost from the fold's), then Nsight Compute over one
#          look-back launch of cumsum f32, cummin f32 and cummin i32
set -uo pipefail
source "$(dirname "$0")/gpu_prelude.sh"
case "$1" in
sweep)
  args=()
  for op in cumsum cummin cummax; do
    for c in reduce_then_scan,epu=16 reduce_then_scan,epu=32 decoupled_lookback,epu=16 \
      decoupled_lookback,epu=32 decoupled_lookback,epu=64; do
      args+=(--case "$op:268435456:f32:dim=0,strategy=$c")
    done
  done
  args+=(--case "cumprod:268435456:f32:dim=0,strategy=decoupled_lookback,epu=32")
  args+=(--case "mask_select:268435456:f32:density=0.5")
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --json "$OUT/sweep-cuda.json" \
    "${args[@]}" > "$OUT/sweep-cuda.txt" 2>&1
  echo "sweep rc=$?"; grep -E "^(cum|copy|mask)" "$OUT/sweep-cuda.txt" | grep -v skipped
  for b in cuda vulkan; do
    timeout ${DTYPES_LIMIT:-300} .gpu/suite-$b --test-threads 2 --nocapture dtypes_ops \
      > "$OUT/dtypes-ops-$b.txt" 2>&1 &
  done
  wait
  for b in cuda vulkan; do echo "== dtypes-ops-$b"; summary "$OUT/dtypes-ops-$b.txt"; done
  grep -h -i "skip\|lacks" "$OUT"/dtypes-ops-*.txt | sort | uniq -c | head -20
  ;;
rows | final)
  args=()
  for c in cumsum:1048576:f32 cumsum:16777216:f32 cumsum:268435456:f32 \
    cumsum:4096x32768:f32:dim=0 cumsum:4096x32768:f32:dim=1; do
    args+=(--case "$c")
  done
  for op in cumprod cummin cummax; do
    for c in 1048576:f32:dim=0 16777216:f32:dim=0 268435456:f32:dim=0 4096x32768:f32:dim=1; do
      args+=(--case "$op:$c")
    done
  done
  for op in cumsum cummin cummax; do
    args+=(--case "$op:268435456:f32:dim=0,strategy=decoupled_lookback,epu=32")
  done
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(cum|copy)" "$OUT/bench-cuda.txt" | grep -v skipped
  timeout ${TORCH_LIMIT:-240} python3 bench/torch_reference.py "$OUT/torch.json" --scans \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cum|copy)" "$OUT/torch.txt"
  [ "$1" = rows ] && exit 0
  limit=${TESTS_LIMIT:-330}
  for b in cuda vulkan; do
    SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-200} timeout $limit .gpu/suite-$b --test-threads 6 \
      --skip dtypes_ops > "$OUT/tests-$b.txt" 2>&1 &
  done
  for d in f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8; do
    SIEVE_DTYPES=$d SIEVE_TRACE=1 timeout $limit .gpu/suite-vulkan --test-threads 1 --exact \
      dtypes_ops::every_dtype_through_every_op dtypes_ops::float_dtype_gradients_keep_the_dtype \
      > "$OUT/dtypes-ops-vulkan-$d.txt" 2>&1 &
  done
  sanitize "scans:: cumulative:: scan::" "scans::;scan:: compact::"
  wait
  for f in tests-cuda tests-vulkan memcheck-cuda racecheck-cuda-0 racecheck-cuda-1; do
    echo "== $f"; summary "$OUT/$f.txt"
  done
  for d in f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8; do
    f="$OUT/dtypes-ops-vulkan-$d.txt"
    echo "== dtypes_ops vulkan $d: $(grep -E '^test result' "$f" | head -1)"
    grep -B2 -E "NVVM|panicked" "$f" | grep -E "trace:|NVVM|panicked" | head -4
  done
  # Eight files at most come back: keep the per-dtype logs in one.
  for d in f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8; do
    echo "===== $d"; cat "$OUT/dtypes-ops-vulkan-$d.txt"
  done > "$OUT/dtypes-ops-vulkan.txt"
  rm -f "$OUT"/dtypes-ops-vulkan-*.txt
  for f in memcheck-cuda racecheck-cuda-0 racecheck-cuda-1; do
    echo "===== $f"; cat "$OUT/$f.txt"
  done > "$OUT/sanitizers.txt"
  rm -f "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-*.txt "$OUT/torch.txt"
  ;;
profile)
  args=()
  for c in cumsum:268435456:f32 cumsum:268435456:i32 cummin:268435456:f32 \
    cummin:268435456:i32 cummax:268435456:i32; do
    args+=(--case "$c:dim=0,strategy=decoupled_lookback")
  done
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --json "$OUT/split-cuda.json" \
    "${args[@]}" > "$OUT/split-cuda.txt" 2>&1
  echo "split rc=$?"; grep -E "^(cum|copy)" "$OUT/split-cuda.txt" | grep -v skipped
  for c in cumsum:268435456:f32 cummin:268435456:f32 cummin:268435456:i32; do
    timeout ${NCU_LIMIT:-150} ncu --kernel-name regex:lookback --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section ComputeWorkloadAnalysis \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case "$c:dim=0,strategy=decoupled_lookback" \
      > "$OUT/ncu-${c//:/-}.txt" 2>&1
    echo "ncu $c rc=$?"
  done
  ;;
tests)
  for b in cuda vulkan; do
    SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-500} timeout $limit .gpu/suite-$b --test-threads 4 \
      > "$OUT/tests-$b.txt" 2>&1 &
  done
  sanitize "${MEMCHECK:-scans:: scan:: compact:: cumulative::}" \
    "${RACECHECK:-scans:: cumulative::;scan:: dims::;compact::}"
  wait
  for f in tests-cuda tests-vulkan memcheck-cuda \
    $(cd "$OUT" && ls racecheck-cuda-*.txt | sed 's/.txt$//'); do
    echo "== $f"; summary "$OUT/$f.txt"
  done
  grep -h -i "skip\|lacks\|flush" "$OUT"/tests-*.txt | sort | uniq -c | head -20
  ;;
esac
