#!/usr/bin/env bash
# The fiftieth session's calls (issues 15, 16, 17): `vector_inclusive` (each vector's own scan,
# written once for `scan_registers` and `scan_flag_registers`) and the gradient fix of session
# 49 (`6d7463a`) on the GPU; then the top-k ablation (issue 15 item 5: which of top-k's
# algorithms carries which marked row).
#   t   The compaction's modules (five processes a runtime) and the scan's (`scan:: scans::
#       cumulative::`, two a runtime) through both suites, memcheck and racecheck over four
#       compaction tests and two scan tests, within TEST_LIMIT (280) s. F_DIR: suite-*.xz.
#   ab  (F_DIR: sieve-bench-cuda.xz, sieve-bench-vulkan.xz) The ablation: issue 15's marked
#       top-k rows through the raw radix select, each with one of its optional algorithms
#       turned off by its tuning key (`sample=0` the device-wide sampled bound, `bound=0` the
#       minima bound, `row_sample=0` the row cube's sampled bound, `long_split=0` long rows
#       uncut (at 2^24 with `split=0` too), `split=0` rows of the row cube uncut,
#       `merge_chunks=0` / `=100000` cut long rows never / always merged), one process a group (CUDA).
#   m   (F_DIR as `ab`) Issue 15 item 4, the count read at 2^24: torch 2.11's filter rows,
#       then sieve's mask_select (d = 0.01, 0.5) and argwhere, each as the Burn op, its padded
#       form (no read), stock Burn's sum of the mask read back (`form=sum_read`: the floor of
#       any Burn op that reads a count), the raw counted form (count, read, scatter; no Burn)
#       and the raw scatter with its count read after it; cumsum 2^20.
#   w   The word-rank scatter against the full rank (see the mode).
#   w2  Its second form's rows, then the compaction's tests (see the mode).
#   fin `unique` 2^28 and the compaction's tests at the session's end (see the mode).
# usage: F_DIR=<dir> bash bench/gpu_session50.sh t|ab|m|w|w2|fin   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
t)
  export SIEVE_PROP_CASES=100
  # (In `50-t` these two wrote the same logs as the compaction's processes, `tests-*-0/1.txt`;
  # their own tag now.)
  for rt in cuda vulkan; do
    mapfile -t names < <(.gpu/suite-$rt --list scan:: scans:: cumulative:: 2>/dev/null | grep ': test$' | sed 's/: test$//')
    LIMIT=${TEST_LIMIT:-280} deal $rt 2 scan "${names[@]}"
  done
  for tool in memcheck racecheck; do
    timeout ${TEST_LIMIT:-280} compute-sanitizer --tool $tool --error-exitcode 9 .gpu/suite-cuda --exact \
      scan::every_length_across_a_tile_boundary scan::adversarial_floats \
      > "$OUT/$tool-cuda-scan.txt" 2>&1 &
  done
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-280} compaction_tests
  for f in "$OUT"/*-scan.txt; do echo "== ${f##*/}"; summary "$f"; done
  pack t
  ;;
ab)
  T=topk_with_indices R=raw=radix_select
  # Each group: the base row and its knob off, as one sweep (`key=default/off`).
  group() {
    local tag=$1 lim=$2
    shift 2
    timeout $lim .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
      --json "$OUT/ab-$tag.json" "$@" > "$OUT/ab-$tag.txt" 2>&1
    echo "== $tag rc=$? at ${SECONDS}s"
    grep -E "^topk" "$OUT/ab-$tag.txt" | grep -v skipped | cut -c1-150
    pack ab
  }
  L=268435456
  group sample 130 --case $T:$L:f32:k=10,$R,sample=512/0 --case $T:$L:f32:k=1000,$R,sample=512/0 \
    --case $T:$L:f32:k=100000,$R,sample=512/0 --case $T:$L:f32:k=1000,dist=all_equal,$R,sample=512/0
  # Long rows: the row cube over chunks (2^24: `split` alone cuts it; 2^26: `long_split`).
  group long 100 --case $T:67108864:f32:k=10,$R,long_split=528/0 --case $T:67108864:f32:k=64,$R,long_split=528/0 \
    --case $T:16777216:f32:k=10,$R,split=132/0,long_split=528/0 --case $T:16777216:f32:k=1000,$R,split=132/0,long_split=528/0
  B=64x128256
  group row 100 --case $T:$B:f32:k=50,$R,bound=4/0,row_sample=1/0 --case $T:$B:f32:k=1000,$R,row_sample=1/0 \
    --case $T:$B:f32:k=50,dist=tied,$R,bound=4/0,row_sample=1/0 --case $T:$B:f32:k=1000,dist=tied,$R,row_sample=1/0 \
    --case $T:4096x32768:f32:k=64,$R,bound=4/0,row_sample=1/0 --case $T:16384x256:f32:k=8,$R,bound=4/0
  group split 80 --case $T:$B:f32:k=50,$R,split=132/0 --case $T:$B:f32:k=1000,$R,split=132/0 \
    --case $T:$B:f32:k=1000,dist=tied,$R,split=132/0 \
    --case $T:16777216:f32:k=10,$R,merge_chunks=16/0/100000 --case $T:16777216:f32:k=64,$R,merge_chunks=16/0/100000 \
    --case $T:8x2097152:f32:k=64,$R,merge_chunks=16/0/100000
  ;;
m)
  torch_rows filter "mask_select|argwhere|copy|cumsum" 150
  pack m
  R="--case mask_select:16777216:f32:density=0.01,raw=counted --case mask_select:16777216:f32:density=0.5,raw=counted"
  R="$R --case argwhere:16777216:bool:density=0.5,raw=counted --case cumsum:1048576:f32"
  bench_rows cuda 150 $R
  pack m
  ;;
w)
  # The word-rank scatter (branch `word-rank`; F_DIR: its sieve-bench-cuda.xz, main's as
  # sieve-bench-cuda-main.xz): `words=0/1` in one process (1: the flags and ranks from the
  # count pass's words), then `unique` 2^28 through both binaries (its run starts take the
  # words by default).
  R=""
  for d in 0.01 0.5; do
    R="$R --case mask_select:268435456:f32:density=$d,raw=scatter,words=0/1 --case argwhere:268435456:bool:density=$d,raw=scatter,words=0/1"
  done
  R="$R --case mask_select:16777216:f32:density=0.01,raw=scatter,words=0/1"
  bench_rows cuda 200 $R
  pack w
  for b in main word; do
    bin=.gpu/sieve-bench-cuda; [ $b = main ] && bin=.gpu/sieve-bench-cuda-main
    timeout 60 $bin --no-burn --runs 10 --sample-ms 30 --json "$OUT/u-$b.json" \
      --case unique:268435456:f32:distinct=1048576,units=512 > "$OUT/u-rows-$b.txt" 2>&1
    echo "== unique $b rc=$? at ${SECONDS}s"
    grep -E "^unique" "$OUT/u-rows-$b.txt" | grep -v skipped | cut -c1-150
    pack w
  done
  ;;
w2)
  # The word rank's second form (branch `word-rank-2`; F_DIR: both suites and its CUDA
  # bench): its rows first (`words=0` and `=1` in one process), then the compaction's tests.
  R=""
  for d in 0.01 0.5; do
    for w in 0 1; do R="$R --case mask_select:268435456:f32:density=$d,raw=scatter,words=$w --case argwhere:268435456:bool:density=$d,raw=scatter,words=$w"; done
  done
  R="$R --case unique:268435456:f32:distinct=1048576,units=512"
  bench_rows cuda ${BENCH_LIMIT:-130} $R
  pack w2
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-200} compaction_tests
  pack w2
  ;;
fin)
  # Main at the session's end (the word rank where the counted scatter's survivors are
  # sparse; F_DIR: both suites and the CUDA bench): `unique` 2^28, then the compaction's tests.
  # (Session 51: torch's set rows first, for issue 17's marks in the same call.)
  torch_rows sets "unique|searchsorted|copy" 150
  pack fin
  timeout 90 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/u.json" \
    --case unique:268435456:f32:distinct=1048576,units=512 --case unique:16777216:f32:distinct=1048576 \
    --case searchsorted:16777216:f32:keys=1048576 > "$OUT/u-rows.txt" 2>&1
  echo "== unique rc=$? at ${SECONDS}s"
  grep -E "^(unique|searchsorted)" "$OUT/u-rows.txt" | grep -v skipped | cut -c1-150
  pack fin
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-150} compaction_tests
  pack fin
  ;;
esac
