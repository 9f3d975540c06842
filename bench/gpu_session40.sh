#!/usr/bin/env bash
# Written at the end of the thirty-ninth session for the next one. One call (~540 s):
#   tv  The tests session 39 left unrun through a GPU, from main's HEAD: the new
#       `dims::outputs_along_a_dim_feed_fused_ops_as_read` with `dims::` and `sets::` through
#       CUDA (3 processes) and Vulkan (2), `dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings`
#       through CUDA in a process of its own (never reached at `856ec46`: ~300 s of JIT), memcheck
#       over the new test, within TV_LIMIT (300) s; then issue 16's device-wide top-k cube sweep
#       through Vulkan (`gpu_session39.sh vc`'s rows, VC_LIMIT 230 s), after the tests, not
#       beside them.
#   bt, ab, cs, fin, c2, fy, mk, tt  The session's later calls (each mode's comment says what it
#       ran; `bench/results/h100/40-*` and `h200/40-*` hold what came back).
# usage: F_DIR=<benches> bash bench/gpu_session40.sh tv   (suites in F_DIR's `s` twin; carry
#        F_DIR, its twin and ".gl")
#        M_DIR=<main's benches> BR_DIR=<branch's benches> bash bench/gpu_session40.sh ab
#        (main's sieve-bench-cuda and -vulkan, the branch's ending -b; carry both and ".gl")
#        BR_DIR=<branch's benches> bash bench/gpu_session40.sh bt   (its suites in BR_DIR's
#        `s` twin; carry that and ".gl")
#        BR_DIR=<branch's benches> bash bench/gpu_session40.sh cs
#        F_DIR=<benches> bash bench/gpu_session40.sh fin|c2|fy|mk   (as tv)
#        TS_DIR=<suites> bash bench/gpu_session40.sh tt
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
if [ "$1" = tt ]; then
  cp ${TS_DIR:?}/*.xz .gpu/
elif [ "$1" = cs ]; then
  cp ${BR_DIR:?}/*.xz .gpu/
  for f in .gpu/*-b.xz; do mv $f ${f%-b.xz}.xz; done
elif [ "$1" = ab ]; then
  cp ${M_DIR:?}/*.xz ${BR_DIR:?}/*.xz .gpu/
elif [ "$1" = bt ]; then
  cp ${BR_DIR:?}s/*.xz .gpu/
else
  cp ${F_DIR:?}/*.xz ${F_DIR}s/*.xz .gpu/
fi
# Session 40's checkout was new: its Vulkan benches are built against crates.io's cubecl-wgpu
# (with the suite: `-p sieve-examples -p sieve-bench --features
# sieve-examples/vulkan,sieve-bench/vulkan`), not bench/vulkan_robustness's patched copy,
# whose only change applies where SIEVE_VK_ROBUSTNESS=off (never set here): the same device.
[ -f .gpu/sieve-bench-vulkan.xz ] && export VK_BENCH=.gpu/sieve-bench-vulkan
source "$here/gpu_prelude.sh"
begin
case "$1" in
tv)
  export SIEVE_PROP_CASES=200
  L=${TV_LIMIT:-300}
  LIMIT=$L split_suite cuda 3 "dims:: sets::"
  LIMIT=$L split_suite vulkan 2 "dims:: sets::"
  timeout $L .gpu/suite-cuda --exact dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings \
    > "$OUT/tests-cuda-dtypes.txt" 2>&1 &
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --exact dims::outputs_along_a_dim_feed_fused_ops_as_read > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tv
  topk_cube_sweep_vulkan ${VC_LIMIT:-230}
  pack tv
  ;;
bt)
  # Issue 16: the tests of branch `append-blocks` (the device-wide digit pass's candidate
  # appends in blocks; its suites in BR_DIR's `s` twin): `topk::`, `topk_ops::` through CUDA
  # (3 processes) and Vulkan (2), `dtypes_scan`'s default-tunings test through CUDA a dtype
  # share a process (4; cut at 300 s in `tv`), memcheck and racecheck over the candidate test,
  # within TEST_LIMIT (240) s.
  export SIEVE_PROP_CASES=200
  L=${TEST_LIMIT:-240}
  LIMIT=$L split_suite cuda 3 "topk:: topk_ops::"
  LIMIT=$L split_suite vulkan 2 "topk:: topk_ops::"
  LIMIT=$L split_dtypes cuda 4 dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings
  T=topk::candidates_shrink_over_many_tiles
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda --exact $T \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  timeout $L compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda --exact $T \
    > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack bt
  ;;
ab)
  # Issue 16: branch `append-blocks`'s benches (BR_DIR, names ending -b) against main's
  # (M_DIR): main / branch / main / branch, each through CUDA then Vulkan: the raw radix
  # select at [2^24] k = 100000 at 4096 / 2048 / 1024 cubes a pass, [2^26] k = 100000 at the
  # default.
  R="--case topk_with_indices:16777216:f32:k=100000,raw=radix_select,cubes=4096/2048/1024
     --case topk_with_indices:67108864:f32:k=100000,raw=radix_select"
  for round in 1 2; do
    for v in main b; do
      c=.gpu/sieve-bench-cuda; w=.gpu/sieve-bench-vulkan
      [ $v = b ] && c=.gpu/sieve-bench-cuda-b w=.gpu/sieve-bench-vulkan-b
      timeout 60 $c --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-$v-$round.json" $R \
        > "$OUT/rows-cuda-$v-$round.txt" 2>&1
      echo "== cuda $v $round rc=$? at ${SECONDS}s"
      timeout 90 $w --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 \
        --json "$OUT/vulkan-$v-$round.json" $R > "$OUT/rows-vulkan-$v-$round.txt" 2>&1
      echo "== vulkan $v $round rc=$? at ${SECONDS}s"
      pack ab
    done
  done
  for f in "$OUT"/rows-*.txt; do echo "== ${f##*/}"; grep -E "^topk" "$f" | awk '{print $2, $4, $6, $7}'; done
  ;;
cs)
  # Issue 16: fewer cubes a device-wide pass (`ab`: [2^24] k = 100000 0.605 -> 0.435 ms
  # through Vulkan at 1024 cubes, 8 tiles a cube), timed where a rule of at least 8 tiles a
  # cube would change the default: the branch's benches (BR_DIR), raw radix select, each
  # case's two cube counts in one process (default first), CUDA then Vulkan.
  A=raw=radix_select T=topk_with_indices
  bench_rows cuda 150 --case $T:33554432:f32:k=1000,$A,cubes=8448/2048 \
    --case $T:33554432:f32:k=100000,$A,cubes=8448/2048 --case $T:67108864:f32:k=1000,$A,cubes=8448/4096 \
    --case $T:67108864:f32:k=100000,$A,cubes=8448/4096 --case $T:16777216:f32:k=1000,$A,cubes=8448/1024 \
    --case $T:16777216:f32:k=100000,dist=tied,$A,cubes=8448/1024
  pack cs
  bench_rows vulkan 200 --case $T:33554432:f32:k=1000,$A,cubes=4096/2048 \
    --case $T:33554432:f32:k=100000,$A,cubes=4096/2048 --case $T:16777216:f32:k=1000,$A,cubes=4096/1024 \
    --case $T:16777216:f32:k=100000,dist=tied,$A,cubes=4096/1024 \
    --case $T:16777216:f32:k=100000,$A,cubes=4096/1024
  pack cs
  ;;
fin)
  # The session's final top-k (`append-blocks` with eight tiles a cube; F_DIR, suites in its
  # `s` twin): `topk:: topk_ops::` and `props::topk_property` through CUDA (3 processes) and
  # Vulkan (2), memcheck over the candidate and long-row tests, within TEST_LIMIT (200) s;
  # then the Burn ops (`raw=none`) through CUDA and Vulkan, and torch.topk's standard rows
  # (CUDA) in the same call.
  export SIEVE_PROP_CASES=200
  L=${TEST_LIMIT:-200}
  LIMIT=$L split_suite cuda 3 "topk:: topk_ops:: props::topk_property"
  LIMIT=$L split_suite vulkan 2 "topk:: topk_ops:: props::topk_property"
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda --exact \
    topk::candidates_shrink_over_many_tiles topk::long_rows_cut_within_the_long_row_budget \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack fin
  T=topk_with_indices
  C="--case $T:16777216:f32:k=10 --case $T:16777216:f32:k=1000 --case $T:16777216:f32:k=100000
     --case $T:33554432:f32:k=1000 --case $T:67108864:f32:k=100000 --case $T:64x128256:f32:k=1000
     --case $T:4096x32768:f32:k=64 --case $T:268435456:f32:k=100000"
  bench_rows cuda 120 --with raw=none $C
  pack fin
  bench_rows vulkan 180 --with raw=none $C
  pack fin
  torch_rows topk topk 100
  pack fin
  ;;
c2)
  # After `fin`: would more tiles a cube (16) gain further? The final benches (F_DIR), raw
  # radix select, eight tiles a cube (the default now, first) against 16 and 32, CUDA then
  # Vulkan.
  A=raw=radix_select T=topk_with_indices
  C="--case $T:16777216:f32:k=100000,$A,cubes=1024/512/256 --case $T:33554432:f32:k=1000,$A,cubes=2048/1024
     --case $T:33554432:f32:k=100000,$A,cubes=2048/1024 --case $T:67108864:f32:k=100000,$A,cubes=4096/2048"
  bench_rows cuda 100 $C
  pack c2
  bench_rows vulkan 150 $C
  pack c2
  ;;
fy)
  # The final code (`min_tiles_per_cube` from `DeviceCaps::ordered_atomics`; F_DIR, suites in
  # its `s` twin): `topk:: topk_ops:: props::topk_property` through Vulkan (2 processes: its
  # default changed) and CUDA (2), within TEST_LIMIT (150) s; then the Burn ops through
  # Vulkan where the sixteen-tile minimum changes the grid, and torch.topk's standard rows.
  export SIEVE_PROP_CASES=200
  L=${TEST_LIMIT:-150}
  LIMIT=$L split_suite vulkan 2 "topk:: topk_ops:: props::topk_property"
  LIMIT=$L split_suite cuda 2 "topk:: topk_ops:: props::topk_property"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack fy
  T=topk_with_indices
  bench_rows vulkan 120 --with raw=none --case $T:16777216:f32:k=100000 --case $T:16777216:f32:k=1000 \
    --case $T:33554432:f32:k=1000 --case $T:67108864:f32:k=100000 --case $T:64x128256:f32:k=1000
  pack fy
  torch_rows topk topk 100
  pack fy
  ;;
mk)
  # Issue 15's and 17's sort marks on whatever card comes (F_DIR's CUDA bench): torch's sort
  # and set rows first, then the Burn ops and raw onesweep at 2^28, 2^24 and [16384, 128].
  torch_rows sort,sets "sort|argsort|unique" 120
  pack mk
  OS=raw=onesweep
  bench_rows cuda 220 --case sort:268435456:i32:$OS --case sort_with_indices:268435456:f32:$OS \
    --case argsort:268435456:f32:$OS --case sort_with_indices:16777216:f32:raw=none \
    --case sort_with_indices:16384x128:f32:raw=none --case unique:268435456:f32:distinct=1048576,raw=none
  pack mk
  ;;
tt)
  # The candidate test's stronger row (`d145bd7`, test-only; suites in TS_DIR): `topk::`
  # through CUDA and Vulkan, memcheck and racecheck over that test, within 120 s.
  T=topk::candidates_shrink_over_many_tiles
  timeout 120 .gpu/suite-cuda --test-threads 2 topk:: > "$OUT/tests-cuda-0.txt" 2>&1 &
  timeout 120 .gpu/suite-vulkan --test-threads 2 topk:: > "$OUT/tests-vulkan-0.txt" 2>&1 &
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda --exact $T \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda --exact $T \
    > "$OUT/racecheck-cuda-0.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tt
  ;;
*) echo "usage: $0 tv|bt|ab|cs|fin|c2|fy|mk|tt"; exit 2 ;;
esac
