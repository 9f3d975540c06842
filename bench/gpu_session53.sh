#!/usr/bin/env bash
# The fifty-third session's calls (issue 17): `unique` by hashing (`sieve::distinct`) against
# its sort path and torch.unique, and its tests. F_DIR: the binaries (xz-compressed).
#   b  (F_DIR: sieve-bench-cuda) CUDA rows: `unique` 2^28 of 2^20 distinct (the hash path) and
#      of 2^24 distinct (its default table gives up and it sorts), 2^24 of 2^20 and of 2^14,
#      each with `stages=1` (the sort path whole timed beside: `stage=sort_path`) and the raw
#      hash path at tables of 2^21 to 2^23 slots (2^24 distinct: 2^25 and 2^26) and 4 / 8 / 16
#      elements a unit (`slots=`, `hepu=`); then torch 2.11's set rows.
#   t  (F_DIR: suite-cuda, suite-vulkan, sieve-bench-vulkan where the carry has room) The
#      set, compaction and set-property tests through CUDA and Vulkan (two processes a runtime)
#      beside memcheck and racecheck over the hashing test; then Vulkan's `unique` rows.
# usage: F_DIR=<dir> bash bench/gpu_session53.sh b|t   (carry the dir and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
U=unique
case "$1" in
b)
  S="slots=2097152/4194304/8388608,hepu=4/8/16"
  R="--case $U:268435456:f32:distinct=1048576,stages=1,$S"
  R="$R --case $U:268435456:f32:distinct=16777216,stages=1,slots=33554432/67108864"
  R="$R --case $U:16777216:f32:distinct=1048576,stages=1,$S"
  R="$R --case $U:16777216:f32:distinct=16384,stages=1"
  bench_rows cuda ${BENCH_LIMIT:-300} $R
  pack b53
  torch_rows sets unique ${TORCH_LIMIT:-150}
  pack b53
  ;;
t)
  for rt in cuda vulkan; do
    [ -f .gpu/suite-$rt ] && LIMIT=${TEST_LIMIT:-240} split_suite $rt 2 \
      "sets:: compact:: props::sets_property"
  done
  [ -f .gpu/suite-cuda ] && sanitize_exact ${TEST_LIMIT:-240} "memcheck racecheck" \
    sets::unique_by_hashing_matches_the_reference
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack t53
  if [ -f .gpu/sieve-bench-vulkan ]; then
    VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan ${VK_LIMIT:-150} \
      --case $U:268435456:f32:distinct=1048576,stages=1 \
      --case $U:16777216:f32:distinct=1048576,stages=1
    pack t53
  fi
  ;;
*) echo "usage: F_DIR=<dir> bash bench/gpu_session53.sh b|t" >&2; exit 2 ;;
esac
