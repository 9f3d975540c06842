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
#   ff  `SortTuning::plain_float_keys` (`bench/plain_float_keys`: build B_DIR and TS_DIR from a
#       branch with its patch applied; f32 keys mapped by the sign flip alone where the sort's
#       first read met no -0.0 or NaN), never run through onesweep nor timed: through CUDA
#       `sort::` (every device-wide variant with it switched; onesweep runs there only)
#       beside the rows, f32 sorts with `plain=0/1` (2^28 keys alone, with indices, argsort)
#       and i32 keys for reference; through Vulkan 2^24 with indices. Then main's own build
#       in the same call for the default kernels.
#   tv  The thirty-sixth session's code on a GPU (it ran on lavapipe only): its Burn-level
#       fixes (outputs along a dim that is not last keep size-1 dims off stride 1;
#       `top_k_mask_logits`' `+inf`; the sets' empty shapes) and the new properties
#       (`sets_property`, `gradient_property`, `sampling_property`) with the modules their
#       changes touch, through CUDA and Vulkan, 500 cases a property; memcheck over the sets'
#       order statistics (Burn's fused kernels reading the restored strides). B_DIR: copied,
#       not run;
#       TS_DIR: the suites.
# usage: B_DIR=<benches> [TS_DIR=<suites>] bash bench/gpu_session36.sh vc|ff|tv
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${B_DIR:?}/*.xz .gpu/
case "$1" in ff | tv) cp ${TS_DIR:?}/*.xz .gpu/ ;; esac
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
ff)
  timeout 400 .gpu/suite-cuda --test-threads 2 sort:: --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  P=plain=0/1
  bench_rows cuda 200 --case sort:268435456:f32:$P --case sort_with_indices:268435456:f32:$P \
    --case argsort:268435456:f32:$P --case sort:268435456:i32
  pack ff
  bench_rows vulkan 120 --case sort_with_indices:16777216:f32:$P
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
tv)
  export SIEVE_PROP_CASES=500
  M="props:: sets:: sampling:: dims:: sort_ops:: topk_ops:: split_ops:: filter_ops:: cumulative::"
  LIMIT=500 split_suite cuda 4 "$M"
  LIMIT=500 split_suite vulkan 3 "$M"
  timeout 500 compute-sanitizer --tool memcheck --error-exitcode 3 .gpu/suite-cuda \
    --test-threads 1 sets::kthvalue_and_median_match_the_reference > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
*) echo "usage: $0 <vc|ff|tv>"; exit 2 ;;
esac
pack $1
