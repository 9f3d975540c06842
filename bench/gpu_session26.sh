#!/usr/bin/env bash
# Written at the end of the twenty-fifth session for the next one (issue 15).
#   a  the twenty-fifth session's last code on the GPU (one gather kernel for the sort's decode,
#      top-k's finish and its composition of positions; Lsd's per-tile counts in 8 copies):
#      the CUDA suite as 7 processes and the Vulkan suite as 3 (`split_suite`) over the
#      modules that gather or sort (`dtypes_sort` too: its narrow and wide keys decode), memcheck over `topk::` and racecheck over `sort::` beside
#      them, within LIMIT (480 s). Files: a.tgz.
#   b  GPU quiet: batched top-k at [64, 128256] (uniform and tied, k = 50 and 1000) through the
#      raw radix select at `split=` 32 (default: 64 rows take no chunks) / 128 / 256 / 512
#      (2, 4, 8 chunks a row: all 132 SMs busy), 30 ms and 3 ms samples (tied k = 50 is 0.52x
#      torch at 3 ms, mark 0.5x); Nsight Compute's kernel durations of one `unique` 2^28 call
#      (15.8 ms against torch's 6.5: where?); torch's top-k and set rows. Files: b.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda.
# usage: bash bench/gpu_session26.sh <a|b>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
T=topk_with_indices
M="sort:: sort_ops:: topk:: topk_ops:: dtypes_sort sampling:: sets:: small_devices::"
stage_out
case "$1" in
a)
  export LIMIT=${LIMIT:-480} SKIP=none_skipped
  split_suite cuda 7 "$M"; split_suite vulkan 3 "$M"
  sanitize "topk::" "sort::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
b)
  W=raw=radix_select,split=32/128/256/512
  for ms in 30 3; do
    timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms $ms \
      --json "$OUT/topk-$ms.json" --case $T:64x128256:f32:k=50,$W \
      --case $T:64x128256:f32:k=1000,$W --case $T:64x128256:f32:k=50,dist=tied,$W \
      --case $T:64x128256:f32:k=1000,dist=tied,$W > "$OUT/bench-topk-$ms.txt" 2>&1
    echo "== topk $ms ms rc=$? at ${SECONDS}s"
    grep -E '^topk' "$OUT/bench-topk-$ms.txt" | grep -E 'sieve|cube' | awk '{print $2, $4, $5, $6}'
    pack b
  done
  timeout 120 ncu --metrics gpu__time_duration.sum --csv .gpu/sieve-bench-cuda --no-burn \
    --runs 10 --case unique:268435456:f32:distinct=1048576 > "$OUT/ncu-unique.csv" 2>&1
  echo "== ncu unique rc=$? at ${SECONDS}s"
  grep gpu__time_duration "$OUT/ncu-unique.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120 | head -40
  pack b
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk,sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  ;;
*) echo "usage: $0 <a|b>"; exit 2 ;;
esac
pack $1
