#!/usr/bin/env bash
# Written at the end of the thirty-fifth session for the next one (benches in B_DIR; carry
# [B_DIR, ".gl"]).
#   vc  Fewer buffer atomics in the device-wide top-k through Vulkan (issue 16's last top-k
#       row, [2^24] k = 100000: 0.672 ms through Vulkan against torch.topk's 0.432 on an H100,
#       `h100/35-lc`). `35-ra` found the cost in cubecl-spirv's acquire / release buffer
#       atomics: each cube of a digit pass adds its nonzero bins (up to 2048) into the row's
#       global histogram. Fewer cubes a pass mean fewer such adds (the bins fill up):
#       `cubes=` (`TopkTuning::target_cubes`; 4096 through wgpu, 64 a multiprocessor through
#       CUDA) swept on the device-wide rows, raw radix select, both runtimes.
# usage: B_DIR=<benches> bash bench/gpu_session36.sh vc
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${B_DIR:?}/*.xz .gpu/
source "$here/gpu_prelude.sh"
rm -rf /tmp/o
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
case "$1" in
vc)
  R=raw=radix_select C=cubes=4096/2048/1024/512 T=topk_with_indices
  L="--case $T:16777216:f32:k=100000,$R,$C --case $T:268435456:f32:k=10,$R,$C"
  L="$L --case $T:268435456:f32:k=100000,$R,$C --case $T:268435456:f32:k=1000,dist=all_equal,$R,$C"
  bench_rows cuda 150 $(echo "$L" | sed 's#cubes=4096/2048/1024/512#cubes=8448/4096/2048/1024#g')
  pack vc
  bench_rows vulkan 240 $L
  ;;
*) echo "usage: $0 <vc>"; exit 2 ;;
esac
pack $1
