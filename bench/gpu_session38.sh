#!/usr/bin/env bash
# Written in the thirty-eighth session.
#   vs  The greedy-draw fix (`6362b97`: `sample_from_logits` / `min_p_sample` pick greedy rows
#       from the logits, not `x - max`, which NVIDIA's Vulkan ties for a subnormal against 0.0;
#       `props::sampling_property` failed there at seed 10078313415260086078 in `tv`):
#       that seed through Vulkan, `sampling::` through Vulkan and CUDA, a fresh
#       `sampling_property` through CUDA; then `gpu_session36.sh vc`'s rows (issue 16's
#       device-wide top-k cube sweep) after the tests, not beside them (VS_ROWS=0: tests only).
#       B_DIR: benches, TS_DIR: suites (carry both and ".gl").
#   ff  The plain f32 key map (then `bench/plain_float_keys`, since landed; branch `plain-float-keys`): PF_DIR
#       holds that branch's sieve-bench-{cuda,vknr}-pf and suite-cudapf, B_DIR main's benches.
#       Rows first, alternating processes main / branch twice (CUDA 2^28 f32 sorts keys
#       alone, with indices, argsort, i32 keys for scale; the branch at plain=0 and plain=1),
#       Vulkan 2^24 with indices once each; then `sort::` through the branch's CUDA suite
#       (onesweep: lavapipe never ran it), memcheck over it.
#   vf  For a short budget, one call: `vs`'s tests, then `ff`'s CUDA rows (no Vulkan rows, no
#       branch tests; the rows check every output against the CPU sort). C_DIR holds
#       suite-{cuda,vulkan}, sieve-bench-cuda (main) and sieve-bench-cuda-pf.
#   pt  The branch's `sort::` through CUDA (3 processes, every device-wide variant with the
#       plain map switched; onesweep runs there), memcheck over its two special-key tests,
#       racecheck over the new one, within PT_LIMIT seconds. PF_DIR holds suite-cudapf.
# usage: B_DIR=... TS_DIR=... bash bench/gpu_session38.sh vs
#        B_DIR=... PF_DIR=... bash bench/gpu_session38.sh ff
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
vs) cp ${B_DIR:?}/*.xz ${TS_DIR:?}/*.xz .gpu/ ;;
ff) cp ${B_DIR:?}/*.xz ${PF_DIR:?}/*.xz .gpu/ ;;
vf) cp ${C_DIR:?}/*.xz .gpu/ ;;
pt) cp ${PF_DIR:?}/*.xz .gpu/ ;;
esac
source "$here/gpu_prelude.sh"
rm -rf /tmp/o
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
# ff_cuda_rows: main's and the branch's CUDA rows, alternating processes, twice.
ff_cuda_rows() {
  M="--case sort:268435456:f32 --case sort_with_indices:268435456:f32 --case argsort:268435456:f32"
  M="$M --case sort:268435456:i32"
  P=plain=0/1
  B="--case sort:268435456:f32:$P --case sort_with_indices:268435456:f32:$P"
  B="$B --case argsort:268435456:f32:$P --case sort:268435456:i32"
  for round in 1 2; do
    # A second round only where it fits the call (FF_END seconds).
    [ $round = 2 ] && [ $SECONDS -gt $((${FF_END:-540} - 200)) ] && break
    timeout 80 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
      --json "$OUT/cuda-main-$round.json" $M > "$OUT/rows-cuda-main-$round.txt" 2>&1
    echo "== cuda main $round rc=$? at ${SECONDS}s"; sort_rows "$OUT/rows-cuda-main-$round.txt"
    timeout 120 .gpu/sieve-bench-cuda-pf --no-burn --runs 10 --sample-ms 30 \
      --json "$OUT/cuda-pf-$round.json" $B > "$OUT/rows-cuda-pf-$round.txt" 2>&1
    echo "== cuda pf $round rc=$? at ${SECONDS}s"; sort_rows "$OUT/rows-cuda-pf-$round.txt"
    pack $1
  done
}
case "$1" in
vs | vf)
  SIEVE_PROP_SEED=10078313415260086078 SIEVE_PROP_CASES=500 timeout 180 .gpu/suite-vulkan \
    --exact props::sampling_property > "$OUT/tests-vulkan-seed.txt" 2>&1 &
  timeout 180 .gpu/suite-vulkan --test-threads 2 sampling:: > "$OUT/tests-vulkan-0.txt" 2>&1 &
  timeout 180 .gpu/suite-cuda --test-threads 2 sampling:: > "$OUT/tests-cuda-0.txt" 2>&1 &
  SIEVE_PROP_CASES=500 timeout 180 .gpu/suite-cuda --exact props::sampling_property \
    > "$OUT/tests-cuda-props.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack $1
  [ "$1" = vf ] && { ff_cuda_rows vf; exit 0; }
  [ "${VS_ROWS:-1}" = 0 ] && exit 0
  R=raw=radix_select C=cubes=4096/2048/1024/512 T=topk_with_indices
  L="--case $T:16777216:f32:k=100000,$R,$C --case $T:268435456:f32:k=10,$R,$C"
  L="$L --case $T:268435456:f32:k=100000,$R,$C --case $T:268435456:f32:k=1000,dist=all_equal,$R,$C"
  bench_rows cuda 130 $(echo "$L" | sed 's#cubes=4096/2048/1024/512#cubes=8448/4096/2048/1024#g')
  pack vs
  bench_rows vulkan 200 $L
  pack vs
  ;;
ff)
  ff_cuda_rows ff
  P=plain=0/1
  timeout 60 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 \
    --json "$OUT/vulkan-main.json" --case sort_with_indices:16777216:f32 \
    > "$OUT/rows-vulkan-main.txt" 2>&1
  echo "== vulkan main rc=$? at ${SECONDS}s"; sort_rows "$OUT/rows-vulkan-main.txt"
  timeout 60 .gpu/sieve-bench-vknr-pf --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 \
    --json "$OUT/vulkan-pf.json" --case sort_with_indices:16777216:f32:$P \
    > "$OUT/rows-vulkan-pf.txt" 2>&1
  echo "== vulkan pf rc=$? at ${SECONDS}s"; sort_rows "$OUT/rows-vulkan-pf.txt"
  pack ff
  LIMIT=${FF_LIMIT:-200} SKIP=dtypes_sort split_suite cudapf 3 sort::
  SIEVE_PROP_CASES=20 timeout ${FF_LIMIT:-200} compute-sanitizer --tool memcheck \
    --error-exitcode 9 .gpu/suite-cudapf --test-threads 2 sort:: --skip dtypes_sort \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack ff
  ;;
pt)
  LIMIT=${PT_LIMIT:-200} SKIP=dtypes_sort split_suite cudapf 3 sort::
  T="sort::a_late_special_key_switches_every_pass sort::floats_in_pytorch_order_both_directions"
  timeout ${PT_LIMIT:-200} compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cudapf --test-threads 2 $T > "$OUT/memcheck-cuda.txt" 2>&1 &
  timeout ${PT_LIMIT:-200} compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cudapf --exact sort::a_late_special_key_switches_every_pass \
    > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack pt
  ;;
*) echo "usage: $0 <vs|ff|vf|pt>"; exit 2 ;;
esac
