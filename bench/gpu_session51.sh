#!/usr/bin/env bash
# The fifty-first session's calls (issues 15, 17).
#   rs  `unique`'s run starts through the word rank at the compaction's tiles (`units=` x
#       `epu=`: with the flag words a unit's word holds its `epu` flags, so 32 is the widest),
#       then CubeCL's profiling logger over one `unique` 2^28 (count / scan / scatter of its
#       run starts, kernel by kernel). F_DIR: sieve-bench-cuda.xz.
#       On an H200 (the card issues 15 and 17 read their marks on), the marks follow in the
#       same call: torch 2.11's rows (every family but sampling's), then sieve's Burn ops on
#       the marked sort, top-k, filter, cumsum and set rows (`marks` below), CUDA only.
#   fin The session's final build (see the mode).
#   wt  Branch `word-chunks` (F_DIR: its suites and CUDA bench): the word-rank scatter at 1,
#       2, 4 and 8 count tiles a cube (`wtiles=`) on `unique` 2^28's run starts, and on
#       mask_select / argwhere 2^28 at density 0.005 (under 1 in 100: the word rank) with the
#       words on (one value a case: the filter bench's `words=` and `wtiles=` do not sweep);
#       then the denser run starts at 16 and 32 elements a unit (the other way on, `51-rs`);
#       then the compaction's tests.
#   mk  The marks on whatever card comes (issues 15, 16, 17; meant for an H200; F_DIR:
#       sieve-bench-cuda.xz and sieve-bench-vulkan.xz at main's code, `.gpu51m`): `marks`
#       (torch's rows, then sieve's Burn ops through CUDA), then issue 16's rows through
#       Vulkan (the copy, cumsum, mask_select, argwhere, sort_with_indices and top-k).
# usage: F_DIR=<dir> bash bench/gpu_session51.sh rs|fin|wt|mk   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
# marks: issue 15's and 17's marked rows, torch's then sieve's Burn ops, into rs.tgz.
marks() {
  torch_rows filter,sort,topk,sets "copy|cumsum|mask_select|argwhere|sort|argsort|topk|unique|searchsorted" 150
  pack rs
  local T=topk_with_indices B=64x128256
  bench_rows cuda 200 --case sort:268435456:i32 --case sort_with_indices:268435456:f32 \
    --case argsort:268435456:f32 --case sort_with_indices:16777216:f32 \
    --case sort_with_indices:16384x128:f32 --case unique:268435456:f32:distinct=1048576 \
    --case searchsorted:16777216:f32:keys=1048576 \
    --case $T:268435456:f32:k=10 --case $T:268435456:f32:k=1000 --case $T:268435456:f32:k=100000 \
    --case $T:268435456:f32:k=1000,dist=all_equal --case $T:$B:f32:k=50 --case $T:$B:f32:k=1000 \
    --case $T:$B:f32:k=50,dist=tied --case $T:$B:f32:k=1000,dist=tied \
    --case mask_select:16777216:f32:density=0.01 --case mask_select:16777216:f32:density=0.5 \
    --case argwhere:16777216:bool:density=0.5 --case mask_select:268435456:f32:density=0.01 \
    --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool:density=0.5 \
    --case cumsum:1048576:f32 --case cumsum:16777216:f32
  pack rs
}
# run_starts: the `rs` mode's rows, and its profile except on an H200 (whose time goes to
# the marks).
run_starts() {
  bench_rows cuda 150 --case unique:268435456:f32:distinct=1048576,units=256/512/1024,epu=16/32
  pack rs
  grep -q H200 "$OUT/card.txt" && return
  local here=$PWD
  mkdir -p /tmp/prof && cd /tmp/prof
  printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-unique.log" > cubecl.toml
  timeout 80 $here/.gpu/sieve-bench-cuda --no-burn --runs 10 \
    --case unique:268435456:f32:distinct=1048576,raw=none > "$OUT/prof-unique.txt" 2>&1
  echo "== profile rc=$? at ${SECONDS}s"
  cd $here && python3 bench/profile_summary.py "$OUT/prof-unique.log" | head -20
  gzip -f "$OUT/prof-unique.log"
  pack rs
}
case "$1" in
rs)
  run_starts
  grep -q H200 "$OUT/card.txt" && marks
  ;;
fin)
  # The session's final build (F_DIR: both suites and the CUDA bench): `rs` (its marks on an
  # H200), then the compaction's modules through both runtimes with memcheck and racecheck
  # (`scatter_tiles_kernel`'s placement built once, `scatter_words`' fields taken once).
  run_starts
  grep -q H200 "$OUT/card.txt" && marks
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=$((${TEST_LIMIT:-200} < ${CALL_S:-580} - SECONDS ? ${TEST_LIMIT:-200} : ${CALL_S:-580} - SECONDS)) compaction_tests
  pack rs
  ;;
mk)
  marks
  T=topk_with_indices
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan ${VK_LIMIT:-200} --case cumsum:268435456:f32 \
    --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool:density=0.5 \
    --case sort_with_indices:268435456:f32 --case sort_with_indices:16384x128:f32 \
    --case $T:268435456:f32:k=10 --case $T:64x128256:f32:k=1000 --case $T:16384x128:f32:k=8
  pack rs
  ;;
wt)
  R="--case unique:268435456:f32:distinct=1048576,wtiles=1/2/4/8"
  for w in 1 2 4 8; do
    R="$R --case mask_select:268435456:f32:density=0.005,raw=counted,words=1,wtiles=$w"
    R="$R --case argwhere:268435456:bool:density=0.005,raw=counted,words=1,wtiles=$w"
  done
  R="$R --case unique:268435456:f32:distinct=16777216,epu=16/32 --case unique:16777216:f32:distinct=8388608,epu=16/32"
  bench_rows cuda ${BENCH_LIMIT:-200} $R
  pack wt
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=$((${TEST_LIMIT:-200} < ${CALL_S:-580} - SECONDS ? ${TEST_LIMIT:-200} : ${CALL_S:-580} - SECONDS)) compaction_tests
  pack wt
  ;;
esac
