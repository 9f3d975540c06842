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
# usage: bash bench/gpu_session33.sh lr
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${B_DIR:-.gpu33b}/*.xz .gpu/
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
  timeout 110 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack ar
  timeout 180 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack ar
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,sort,sample,sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
*) echo "usage: $0 <lr|ar>"; exit 2 ;;
esac
pack $1
