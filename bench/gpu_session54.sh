#!/usr/bin/env bash
# The fifty-fourth session's calls (issues 15, 16, 17), after `gpu_session53.sh b` (the hash
# path's rows and sweeps; F_DIR `.gpu54c`).
#   t   (F_DIR: suite-cuda.xz and suite-vulkan.xz, `.gpu54t`) The set, compaction, search
#       and sampling tests and the set property through CUDA and Vulkan (three processes a
#       runtime) beside memcheck and racecheck over the hashing test, under `timeout`.
#   mk  (F_DIR: sieve-bench-cuda.xz and sieve-bench-vulkan.xz, `.gpu54m`) The marks of issues
#       15 and 17 (`gpu_session51.sh`'s `marks`: torch 2.11's rows, then sieve's Burn ops
#       through CUDA), then issue 16's Vulkan rows and `unique`'s (the hash path) through Vulkan.
#   g   (F_DIR: sieve-bench-cuda.xz, suite-cuda.xz, suite-vulkan.xz, `.gpu54g`) The insert
#       that claims chunks and stops soon after a give-up: `unique` through CUDA at 2^28 of
#       2^24 distinct (the table gives up: `raw_hash_gave_up` rows time step one and the count
#       read) and of 2^20, 2^24 of 2^20, 2^14 and 2^24 distinct, each with the sort path
#       beside it (`stages=1`) and the raw hash path at `hcubes=` 0 (a cube a chunk) and 16
#       (2^28 of 2^20: 0 / 4 / 16 / 64 x `hepu=` 4 / 8; 2^24 of 2^20: x 4 / 8); torch 2.11's
#       set rows; then `t`'s tests.
#   v   (F_DIR: sieve-bench-vulkan.xz) `g`'s `unique` rows through Vulkan.
# usage: F_DIR=<dir> bash bench/gpu_session54.sh t|mk|g|v   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
U=unique
H="stages=1,hcubes=0/16"
G="--case copy:268435456:f32 --case $U:268435456:f32:distinct=16777216,$H"
G="$G --case $U:268435456:f32:distinct=1048576,stages=1,hcubes=0/4/16/64,hepu=4/8"
G="$G --case $U:16777216:f32:distinct=1048576,$H,hepu=4/8"
G="$G --case $U:16777216:f32:distinct=16384,$H --case $U:16777216:f32:distinct=16777216,$H"
tests() {
  for rt in cuda vulkan; do
    LIMIT=${TEST_LIMIT:-240} split_suite $rt 3 "sets:: compact:: search sampling props::sets_property"
  done
  sanitize_exact ${TEST_LIMIT:-240} "memcheck racecheck" sets::unique_by_hashing_matches_the_reference
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
}
case "$1" in
t)
  tests
  pack t54
  ;;
g)
  bench_rows cuda ${BENCH_LIMIT:-150} $G
  pack g54
  torch_rows sets unique ${TORCH_LIMIT:-100}
  pack g54
  tests
  pack g54
  ;;
v)
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan ${VK_LIMIT:-200} $G
  pack v54
  ;;
mk)
  # `marks` as session 51 wrote it (torch's rows, then the Burn ops through CUDA).
  eval "$(sed -n '/^marks() {/,/^}/p' "$(dirname "$0")/gpu_session51.sh")"
  marks
  T=topk_with_indices
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan ${VK_LIMIT:-200} --case cumsum:268435456:f32 \
    --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool:density=0.5 \
    --case sort_with_indices:268435456:f32 --case sort_with_indices:16384x128:f32 \
    --case $T:268435456:f32:k=10 --case $T:64x128256:f32:k=1000 --case $T:16384x128:f32:k=8 \
    --case unique:268435456:f32:distinct=1048576,stages=1 --case unique:16777216:f32:distinct=1048576,stages=1
  pack rs
  ;;
*) echo "usage: F_DIR=<dir> bash bench/gpu_session54.sh t|mk|g|v" >&2; exit 2 ;;
esac
