#!/usr/bin/env bash
# Fourth GPU session (issues 13 and 14): the code since `5c126c4` on the H200, from prebuilt
# binaries in .gpu/ (xz-compressed; carry [".gpu", ".gl"]): `suite-cuda` (NVRTC),
# `suite-vulkan` (wgpu's SPIR-V compiler), `sieve-bench-cuda`. Every process under `timeout`.
#
# usage: bash bench/gpu_session4.sh tests | rows | rows2 | ab | props
#   tests  the whole suite (props skipped) through CUDA and Vulkan, the dtype modules
#          (`dtypes_*`) with their output kept (which dtypes a device lacks); the property
#          suite at SIEVE_PROP_CASES (default 1000) through both; compute-sanitizer memcheck
#          over MEMCHECK and racecheck over each `;`-separated group of RACECHECK (the modules
#          whose code changed since the last sanitized run), all concurrently
#   rows   huge::huge_sort_with_i64_indices (2^31+8 keys, i64 indices), then the bench rows
#          that run the scan engine (cumsum, the compaction, sort, top-k), sieve only
#   rows2  top-k's 2^24 rows in a fresh process, the scan family's rows (cumsum, cumprod,
#          cummin, cummax), then dtypes_sort::topk_every_dtype alone through CUDA
#   ab     the bench of 5c126c4 and of HEAD alternated on the rows slower than session 2
#   props  the property suite alone through CUDA and Vulkan at SIEVE_PROP_CASES (2000)
set -uo pipefail
source "$(dirname "$0")/gpu_prelude.sh"
case "$1" in
tests)
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 4 --skip props:: --skip dtypes_ \
      > "$OUT/tests-$b.txt" 2>&1 &
    # The dtype modules print which dtypes the device lacks: keep their output.
    timeout $limit .gpu/suite-$b --test-threads 2 --nocapture dtypes_ > "$OUT/dtypes-$b.txt" 2>&1 &
    SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-1000} timeout $limit .gpu/suite-$b --test-threads 6 \
      props:: > "$OUT/props-$b.txt" 2>&1 &
  done
  sanitize "${MEMCHECK:-scans:: scan:: dims::}" "${RACECHECK:-scans::;scan:: dims::;compact::}"
  wait
  for f in tests-cuda dtypes-cuda props-cuda tests-vulkan dtypes-vulkan props-vulkan memcheck-cuda \
    $(cd "$OUT" && ls racecheck-cuda-*.txt | sed 's/.txt$//'); do
    echo "== $f"; summary "$OUT/$f.txt"
  done
  grep -h -i "skip\|lacks\|flush" "$OUT"/dtypes-*.txt | sort | uniq -c | head -20
  ;;
rows)
  s=$SECONDS
  SIEVE_HUGE=1 timeout 240 .gpu/suite-cuda --ignored --exact huge::huge_sort_with_i64_indices \
    --nocapture > "$OUT/huge-i64-sort.txt" 2>&1
  echo "huge i64 sort rc=$? $((SECONDS - s)) s"; summary "$OUT/huge-i64-sort.txt"
  args=()
  for c in cumsum:1048576:f32 cumsum:16777216:f32 cumsum:268435456:f32 \
    cumsum:4096x32768:f32:dim=0 cumsum:4096x32768:f32:dim=1 \
    mask_select:16777216:f32:density=0.5 mask_select:16777216:f32:density=0.01 \
    mask_select:268435456:f32:density=0.5 argwhere:268435456:bool:density=0.5 \
    compact_rows:64x1048576:f32:density=0.1 stable_partition:268435456:f32:density=0.5 \
    sort_with_indices:16777216:f32 sort_with_indices:268435456:f32 \
    topk_with_indices:16777216:f32:k=10 topk_with_indices:64x128256:f32:k=50 \
    topk_with_indices:4096x32768:f32:k=64; do
    args+=(--case "$c")
  done
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -v "^ *$" "$OUT/bench-cuda.txt" | tail -60
  ;;
rows2)
  # Top-k's 2^24 rows first, in a fresh process (the earlier call ran them after the 2^28
  # sorts and measured them 22-35% slower than the session before), then the scan family.
  args=()
  for c in topk_with_indices:16777216:f32:k=10 topk_with_indices:16777216:f32:k=1000 \
    topk_with_indices:16777216:f32:k=100000 mask_select:16777216:f32:density=0.5 \
    mask_select:16777216:f32:density=0.01 cumsum:16777216:f32 cumsum:268435456:f32 \
    cumprod:16777216:f32:dim=0 cumprod:268435456:f32:dim=0 cummin:16777216:f32:dim=0 \
    cummin:268435456:f32:dim=0 cummax:16777216:f32:dim=0 cummax:268435456:f32:dim=0 \
    cumsum:4096x32768:f32:dim=1 cumprod:4096x32768:f32:dim=1 cummin:4096x32768:f32:dim=1 \
    cummax:4096x32768:f32:dim=1; do
    args+=(--case "$c")
  done
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "auto|dim\":[01]}" "$OUT/bench-cuda.txt" | grep -v skipped | head -40
  s=$SECONDS
  timeout ${TOPK_LIMIT:-240} .gpu/suite-cuda --exact dtypes_sort::topk_every_dtype --nocapture \
    > "$OUT/topk-dtypes-cuda.txt" 2>&1
  echo "topk_every_dtype rc=$? $((SECONDS - s)) s"; summary "$OUT/topk-dtypes-cuda.txt"
  ;;
ab)
  # A/B on the same card in one call: the bench binary of 5c126c4 (the code session 2
  # measured; `sieve-bench-old`) and of HEAD (`sieve-bench-cuda`), alternated twice, on the
  # rows that measured slower today than in session 2.
  args=()
  for c in topk_with_indices:16777216:f32:k=10 topk_with_indices:16777216:f32:k=100000 \
    mask_select:16777216:f32:density=0.5 mask_select:16777216:f32:density=0.01 \
    cumsum:16777216:f32; do
    args+=(--case "$c")
  done
  for round in 1 2; do
    for b in old cuda; do
      timeout 100 .gpu/sieve-bench-$b --no-burn --json "$OUT/ab-$b-$round.json" "${args[@]}" \
        > "$OUT/ab-$b-$round.txt" 2>&1
      echo "== $b round $round rc=$?"
      grep -E '"strategy":"(auto|radix_select|scatter)"' "$OUT/ab-$b-$round.txt" | grep -v padded
    done
  done
  ;;
props)
  # The property suite alone, through CUDA and Vulkan at once, at SIEVE_PROP_CASES (2000).
  for b in cuda vulkan; do
    SIEVE_PROP_CASES=${SIEVE_PROP_CASES:-2000} timeout $limit .gpu/suite-$b --test-threads 8 \
      props:: > "$OUT/props-$b.txt" 2>&1 &
  done
  wait
  for b in cuda vulkan; do echo "== props-$b"; grep -E "^test |test result" "$OUT/props-$b.txt"; done
  ;;
esac
