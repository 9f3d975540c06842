#!/usr/bin/env bash
# The forty-first session's calls (issue 16: where the Vulkan top-k at [2^24] k = 100000 spends
# its time; issue 15: the sorts' launches at small sizes). Each mode's comment says what it ran;
# `bench/results/<card>/41-*` hold what came back.
#   pr  Probe, main's benches (F_DIR: sieve-bench-cuda.xz, sieve-bench-vulkan.xz, built at
#       `d145bd7`, the kernels main has): the stable sort with indices of one i32 row at 10^5,
#       2^18, 2^20, 2^22 and 2^24 keys, every raw strategy (Lsd, onesweep) and the Burn op; the
#       device-wide top-k at k = 100000 over 2^24, 2^26 and 2^28 keys (the Burn op, with and
#       without `flush=1`, and the `cube` row: sieve-burn's impl without Fusion); CUDA then
#       Vulkan, then torch's top-k rows.
#   tb  Branch `recount`'s tests (its suites in BR_DIR: suite-cuda.xz, suite-vulkan.xz):
#       `sort::`, `topk::`, `topk_ops::`, `props::sort_property`, `props::topk_property` through
#       CUDA (3 processes) and Vulkan (2), memcheck over the recount test and the tile-boundary
#       test, racecheck over the recount test, within TEST_LIMIT (240) s (CUDA_PROCS and VK_PROCS
#       processes: 3 and 2 unless set; `41-tb` ran at `05d9838`; `tx` reran them at `e688f2f`).
#   tx  `tb` and then the branch's own rows in one call (an A/B against main's benches was
#       planned, but the device machine was scarce and those did not fit the carry beside the
#       suites; the branch is `bench/recount/recount.patch`, not on main): the short sorts with every raw
#       strategy (`lsd` is what `Auto` took before, `recount` what it takes now) and the Burn
#       op; the device-wide top-k at k = 10^5 (Burn op, `cube`, `flush=1`) and [2^24] k = 1000;
#       CUDA then Vulkan, then torch's top-k rows (the mark: every Vulkan top-k row faster than
#       torch.topk on CUDA).
#   fl  Written at the session's end for the next one (not run: no device time was left): main's
#       Vulkan bench (F_DIR's sieve-bench-vulkan.xz) over the top-k Burn ops without and then
#       with `flush=1` (each call followed by `Device::flush`, as the sorts of 2^20 keys or more
#       do), one process each: does a flush help the Vulkan top-k beyond [2^24] k = 10^5 (0.465
#       -> 0.426 in `41-pr`, 0.467 -> 0.445 in `41-tx`)?
#   mt  Written for the next session (not run): main's suites (TS_DIR) over `sort::` (with the
#       new `sort::widest_accepted_tiles_run`: the tile account), `topk::`, `topk_ops::` and
#       `props::sort_property` through CUDA (6 processes: the JIT) and Vulkan (3), memcheck over
#       the widest-tile test, within TEST_LIMIT (240) s.
# usage: F_DIR=<benches> bash bench/gpu_session41.sh pr|fl   (carry F_DIR and ".gl")
#        TS_DIR=<suites> bash bench/gpu_session41.sh mt
#        BR_DIR=<suites> bash bench/gpu_session41.sh tb
#        TS_DIR=<suites> BR_DIR=<branch's benches> bash bench/gpu_session41.sh tx
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
case "$1" in
pr) cp ${F_DIR:?}/*.xz .gpu/ ;;
fl) cp ${F_DIR:?}/sieve-bench-vulkan.xz .gpu/ ;;
mt) cp ${TS_DIR:?}/*.xz .gpu/ ;;
tb) cp ${BR_DIR:?}/*.xz .gpu/ ;;
tx)
  cp ${TS_DIR:?}/*.xz ${BR_DIR:?}/*.xz .gpu/
  for f in .gpu/*-b.xz; do mv $f ${f%-b.xz}.xz; done
  ;;
esac
[ -f .gpu/sieve-bench-vulkan.xz ] && export VK_BENCH=.gpu/sieve-bench-vulkan
source "$here/gpu_prelude.sh"
begin
# branch_tests CUDA_PROCS VK_PROCS: the branch's tests (`tb`), each suite split over that many
# processes (CUDA_PROCS / VK_PROCS where set), with the sanitizers beside them.
branch_tests() {
  export SIEVE_PROP_CASES=200
  local L=${TEST_LIMIT:-240} R=sort::short_rows_take_recount_by_default
  local M="sort:: topk:: topk_ops:: props::sort_property props::topk_property"
  LIMIT=$L split_suite cuda ${CUDA_PROCS:-$1} "$M"
  LIMIT=$L split_suite vulkan ${VK_PROCS:-$2} "$M"
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda --exact $R \
    sort::every_length_across_an_lsd_tile_boundary > "$OUT/memcheck-cuda.txt" 2>&1 &
  timeout $L compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda --exact $R \
    > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
}
case "$1" in
pr)
  S=sort_with_indices T=topk_with_indices
  C="--case $S:100000:i32 --case $S:262144:i32 --case $S:1048576:i32 --case $S:4194304:i32
     --case $S:16777216:i32 --case $T:16777216:f32:k=100000,raw=none
     --case $T:16777216:f32:k=100000,raw=none,flush=1 --case $T:67108864:f32:k=100000,raw=none
     --case $T:268435456:f32:k=100000,raw=none"
  bench_rows cuda 150 $C
  pack pr
  bench_rows vulkan 200 $C
  pack pr
  torch_rows topk topk 100
  pack pr
  ;;
tb)
  branch_tests 3 2
  pack tb
  ;;
tx)
  branch_tests 6 3
  pack tx
  S=sort_with_indices T=topk_with_indices
  C="--case $S:100000:i32 --case sort:100000:i32 --case $S:4x100000:f32 --case $S:262144:i32
     --case $T:16777216:f32:k=100000,raw=none --case $T:16777216:f32:k=100000,raw=none,flush=1
     --case $T:67108864:f32:k=100000,raw=none --case $T:268435456:f32:k=100000,raw=none
     --case $T:16777216:f32:k=1000,raw=none"
  bench_rows cuda 70 $C
  pack tx
  bench_rows vulkan 110 $C
  pack tx
  torch_rows topk topk 60
  pack tx
  ;;
fl)
  T=topk_with_indices
  C="--case $T:16777216:f32:k=10,raw=none --case $T:16777216:f32:k=1000,raw=none
     --case $T:16777216:f32:k=100000,raw=none --case $T:67108864:f32:k=100000,raw=none
     --case $T:268435456:f32:k=10,raw=none --case $T:268435456:f32:k=100000,raw=none
     --case $T:64x128256:f32:k=50,raw=none --case $T:64x128256:f32:k=1000,raw=none
     --case $T:16384x128:f32:k=8,raw=none"
  for v in held flush; do
    W=(); [ $v = flush ] && W=(--with flush=1)
    bench_rows vulkan 80 "${W[@]}" $C
    mv "$OUT/rows-vulkan.txt" "$OUT/rows-vulkan-$v.txt"; mv "$OUT/vulkan.json" "$OUT/vulkan-$v.json"
    pack fl
  done
  ;;
mt)
  export SIEVE_PROP_CASES=200
  L=${TEST_LIMIT:-240} M="sort:: topk:: topk_ops:: props::sort_property"
  LIMIT=$L split_suite cuda 6 "$M"
  LIMIT=$L split_suite vulkan 3 "$M"
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda --exact \
    sort::widest_accepted_tiles_run > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack mt
  ;;
*) echo "usage: $0 pr|tb|tx|fl|mt"; exit 2 ;;
esac
