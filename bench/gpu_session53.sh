#!/usr/bin/env bash
# The fifty-third session's call (issue 17): `unique` by hashing (`sieve::distinct`) against
# its sort path and torch.unique, and its tests. F_DIR: the binaries (suite-cuda,
# sieve-bench-cuda, suite-vulkan; sieve-bench-vulkan where the carry has room).
#   h  CUDA rows: `unique` 2^28 of 2^20 distinct (the hash path), of 2^24 distinct (its table
#      gives up and it sorts), 2^24 of 2^20 and of 2^14, each with `stages=1` (the sort path
#      whole timed beside: `stage=sort_path`); torch 2.11's set rows; the set, compaction and
#      set-property tests through CUDA and Vulkan (two processes a runtime) beside memcheck and
#      racecheck over the hashing test; Vulkan's `unique` rows where its bench came.
# usage: F_DIR=<dir> bash bench/gpu_session53.sh h   (carry the dir and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
h)
  U=unique
  R="--case $U:268435456:f32:distinct=1048576,stages=1 --case $U:268435456:f32:distinct=16777216,stages=1"
  R="$R --case $U:16777216:f32:distinct=1048576,stages=1 --case $U:16777216:f32:distinct=16384,stages=1"
  bench_rows cuda ${BENCH_LIMIT:-200} $R
  pack h53
  torch_rows sets unique ${TORCH_LIMIT:-120}
  pack h53
  for rt in cuda vulkan; do
    [ -f .gpu/suite-$rt ] && LIMIT=${TEST_LIMIT:-200} split_suite $rt 2 \
      "sets:: compact:: props::sets_property"
  done
  [ -f .gpu/suite-cuda ] && sanitize_exact ${TEST_LIMIT:-200} "memcheck racecheck" \
    sets::unique_by_hashing_matches_the_reference
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack h53
  if [ -f .gpu/sieve-bench-vulkan ]; then
    VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan ${VK_LIMIT:-120} \
      --case $U:268435456:f32:distinct=1048576,stages=1
    pack h53
  fi
  ;;
*) echo "usage: F_DIR=<dir> bash bench/gpu_session53.sh h" >&2; exit 2 ;;
esac
