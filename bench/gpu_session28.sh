#!/usr/bin/env bash
# Written at the end of the twenty-seventh session for the next one (issue 16's marks in one
# call; the property suite through Vulkan on the H200).
#   a  Issue 16's rows and the other top-k rows through Vulkan (each row after 2000 ms of
#      untimed samples: NVIDIA's driver lets a Vulkan process's SM clock fall to idle,
#      `27-c`) and CUDA, 30 ms samples, no raw strategy rows, the SM clock logged; torch's
#      scan, filter, sort, top-k, sampling and set rows in the same call (issue 17's sampling
#      and unique marks through CUDA too). The copy rows with `read=1` (each call
#      also reads 16 bytes back) against the plain ones: one small read's round trip on each
#      runtime, the count read's reproduction (the inline-read step that followed was measured
#      in `30-a` and dropped). Files: a.tgz (then
#      `python3 bench/table.py` over cuda.json / vulkan.json / torch.json).
#   b  `props::` through Vulkan (three processes) and CUDA (three), at the suite's default
#      cases. Files: b.tgz.
#   c  Why `unique`'s keys-only sort takes 6.99 ms at 2^28 (`27-c`) against 6.15-6.25 for
#      uniform i32 keys (`25-b`): the onesweep sort of the same 2^28 keys (2^20 distinct
#      integers as f32, `distinct=`), of uniform f32 and of uniform i32 keys, raw, with the
#      counting pass's bin copies at 1 / 8 / 32; unique's stages beside them; and the row
#      select's split for [64, 128256] k = 50, uniform and tied (issue 15's tied mark, 0.52x
#      torch in `25-c`), at 1 / 2 / 4 chunks a row (CUDA, 30 ms samples). Files: c.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): sieve-bench-vknr, sieve-bench-cuda,
# suite-cuda, suite-vulkan (see .gpu/BUILT_AT; rebuild with the build script in the notes if
# the library changed since).
# usage: bash bench/gpu_session28.sh <a|b|c>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
stage_out
case "$1" in
a)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda T=topk_with_indices
  R="--case copy:16777216:f32 --case copy:16777216:f32:read=1 --case cumsum:268435456:f32 --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool
     --case $T:268435456:f32:k=10 --case $T:268435456:f32:k=1000 --case $T:268435456:f32:k=100000
     --case $T:268435456:f32:k=1000,dist=all_equal --case $T:16777216:f32:k=10 --case $T:16777216:f32:k=1000
     --case $T:4096x32768:f32:k=64 --case $T:16384x128:f32:k=8
     --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
     --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
     --case sort_with_indices:16384x128:f32 --case sort_with_indices:64x128256:f32:descending=true
     --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8 --case top_k_top_p_sample:256x128256:f32:k=50,p=0.9,t=0.8
     --case searchsorted:16777216:f32:keys=1048576 --case sort_with_indices:16777216:f32"
  # The rows whose host data and checks take longest, in their own processes (a process cut
  # by its limit writes no JSON).
  BIG="--case unique:268435456:f32:distinct=1048576 --case sort_with_indices:268435456:f32"
  nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
  smi=$!
  timeout 240 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-vulkan.txt" | grep -v skipped | cut -c1-150
  timeout 80 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan-big.json" $BIG > "$OUT/rows-vulkan-big.txt" 2>&1
  echo "== vulkan big rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-vulkan-big.txt" | grep -v skipped | cut -c1-150
  kill $smi; gzip -f "$OUT/smi.csv"
  pack a
  # (The inline read, `SIEVE_VK_READ=inline`, was measured in `30-a` and is not taken again.)
  timeout 120 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda.txt" | grep -v skipped | cut -c1-150
  timeout 60 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda-big.json" $BIG > "$OUT/rows-cuda-big.txt" 2>&1
  echo "== cuda big rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda-big.txt" | grep -v skipped | cut -c1-150
  pack a
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,sort,topk,sample,sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  ;;
b)
  export LIMIT=450
  split_suite vulkan 3 "props::"; split_suite cuda 3 "props::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
c)
  C=.gpu/sieve-bench-cuda S=sort:268435456
  timeout 400 $C --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" \
    --case $S:f32:distinct=1048576,raw=onesweep,parts=1/8/32 --case $S:f32:raw=onesweep,parts=8 \
    --case $S:i32:raw=onesweep,parts=8 --case unique:268435456:f32:distinct=1048576,stages=1 \
    --case topk_with_indices:64x128256:f32:k=50,dist=tied,raw=radix_select,split=64/132/264 \
    --case topk_with_indices:64x128256:f32:k=50,raw=radix_select,split=64/132/264 > "$OUT/cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; grep -E "^(copy|sort|unique|topk)" "$OUT/cuda.txt" | grep -v skipped | cut -c1-150
  ;;
*) echo "usage: $0 <a|b|c>"; exit 2 ;;
esac
pack $1
