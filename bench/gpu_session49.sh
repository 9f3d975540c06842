#!/usr/bin/env bash
# The forty-ninth session's calls (issues 15, 16, 17): the packed ranks (`scan_flag_registers`,
# branch `packed-ranks`: the compaction's scatter ranks several vectors a plane scan, the
# default; bench key `prank=0` for the old rank) and `bench/packed_digits/packed-digits.patch`
# (`SortTuning::packed_digits`, bench key `pack=1`), one build holding both (F_DIR:
# suite-cuda.xz, suite-vulkan.xz, sieve-bench-cuda.xz; `fin` and `w` also sieve-bench-vulkan.xz).
#   t   The compaction's modules through both suites (five processes a runtime), memcheck and
#       racecheck over four compaction tests (`compaction_tests`), within TEST_LIMIT (280) s.
#   s   `sort::` and `sort_ops::` three processes a runtime, memcheck and racecheck over the
#       onesweep test, within TEST_LIMIT (280) s; then Nsight's registers and occupancy of a
#       onesweep sort at 2^26 with `pack=0` and `pack=1` (`gpu_session48.sh pk`'s first half).
#   ab  One binary, alternating processes (CUDA): `pack=0/1` (sort i32 and f32 keys 2^28 raw
#       onesweep, sort_with_indices f32 2^28 onesweep and 2^24 Lsd; 45 s each), then
#       `prank=0/1` (mask_select 2^28 d = 0.5 and 0.01 and argwhere 2^28 d = 0.01 through the
#       raw scatter, mask_select 2^28 d = 0.5 with the flag words forced on, `unique` 2^28's run
#       starts, mask_select 2^24 d = 0.5 raw scatter; 50 s each).
#   fin (one call, after `ab` showed the CUDA rows) issue 16's rows with `prank=0/1` through
#       CUDA and Vulkan (mask_select d = 0.5, argwhere
#       d = 0.5), then `unique` 2^28 and mask_select 2^28 d = 0.5 with the flag words forced
#       on, `prank=0/1` a process each (60 s), then sort i32 2^28 raw onesweep `pack=0/1` a
#       process each (45 s; `s`'s Nsight showed the same kernels and registers both ways).
#   m   The marks with torch in one call (CUDA, the packed ranks): torch 2.11's filter rows
#       (and its copy and cumsum rows), then sieve's Burn ops mask_select 2^24 (d = 0.5, 0.01,
#       with the raw scatter), argwhere 2^24 d = 0.5, mask_select 2^28 (d = 0.5, 0.01),
#       argwhere 2^28 d = 0.5, cumsum 2^20 and 2^24.
#   w   (after `t` on the same machine, F_DIR with sieve-bench-cuda.xz and
#       sieve-bench-vulkan.xz) The flag words on argwhere now that the rank is packed (no
#       values to load after the word, unlike mask_select): argwhere 2^28 d = 0.5 and 0.01 raw
#       scatter with `words=0` and `=1` (each case also times the Burn op), mask_select 2^28
#       d = 0.5 (the Burn op), through CUDA and Vulkan in one call.
#   zu  `bench/zero_upload/zero-upload.patch` (F_DIR: sieve-bench-cuda-zu.xz built with it): the
#       look-back's workspace zeroed by an upload instead of a fill kernel's launch
#       (`SIEVE_ZERO_UPLOAD=1`), cumsum 2^20 and 2^24 (the Burn op and the raw rows), the two
#       ways in alternating processes, two rounds (30 s each; CUDA).
# usage: F_DIR=<dir> bash bench/gpu_session49.sh t|s|ab|fin|m|w|zu   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
t)
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-280} compaction_tests
  pack t
  ;;
s)
  export SIEVE_PROP_CASES=100
  for rt in cuda vulkan; do LIMIT=${TEST_LIMIT:-280} split_suite $rt 3 "sort:: sort_ops::"; done
  sanitize_exact ${TEST_LIMIT:-280} "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal
  wait; echo "== tests done at ${SECONDS}s"; suite_summary
  pack s
  for p in 0 1; do
    f="$OUT/ncu-pack$p.txt"
    timeout 60 ncu --kernel-name regex:onesweep --launch-count 4 --section Occupancy \
      --section LaunchStats --section SpeedOfLight .gpu/sieve-bench-cuda --no-burn --runs 10 \
      --sample-ms 3 --case sort:67108864:i32:raw=onesweep,pack=$p > "$f" 2>&1
    echo "== ncu pack=$p rc=$? at ${SECONDS}s"
    grep -E "^  [a-z_]+kernel|^\s+(Duration|Registers Per Thread|Achieved Occupancy|DRAM Throughput)" "$f" | cut -c1-100
    pack s
  done
  ;;
ab)
  for round in ${PK_ROUNDS-1 2}; do
    for p in 0 1; do
      timeout 45 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
        --json "$OUT/pk-cuda-p$p-$round.json" --case sort:268435456:i32:raw=onesweep,pack=$p \
        --case sort:268435456:f32:raw=onesweep,pack=$p \
        --case sort_with_indices:268435456:f32:raw=onesweep,pack=$p \
        --case sort_with_indices:16777216:f32:raw=lsd,pack=$p > "$OUT/pk-rows-cuda-p$p-$round.txt" 2>&1
      echo "== pack=$p round $round rc=$? at ${SECONDS}s"
      pack ab
    done
  done
  ab_summary pk- "sort|sort_with_indices|copy"
  for round in 1 2; do
    for p in 0 1; do
      P="prank=$p"
      timeout 50 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
        --json "$OUT/pr-cuda-p$p-$round.json" \
        --case mask_select:268435456:f32:density=0.5,raw=scatter,$P \
        --case mask_select:268435456:f32:density=0.01,raw=scatter,$P \
        --case argwhere:268435456:bool:density=0.01,raw=scatter,$P \
        --case mask_select:268435456:f32:density=0.5,raw=scatter,words=1,$P \
        --case unique:268435456:f32:distinct=1048576,units=512,$P \
        --case mask_select:16777216:f32:density=0.5,raw=scatter,$P > "$OUT/pr-rows-cuda-p$p-$round.txt" 2>&1
      echo "== prank=$p round $round rc=$? at ${SECONDS}s"
      pack ab
    done
  done
  ab_summary pr- "mask_select|argwhere|unique|copy"
  pack ab
  ;;
fin)
  R=""
  for p in 0 1; do
    R="$R --case mask_select:268435456:f32:density=0.5,raw=scatter,prank=$p --case argwhere:268435456:bool:density=0.5,raw=scatter,prank=$p"
  done
  bench_rows cuda 100 $R
  pack fin
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan 200 $R
  pack fin
  for p in 0 1; do
    timeout 60 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/u-cuda-p$p.json" \
      --case unique:268435456:f32:distinct=1048576,units=512,prank=$p \
      --case mask_select:268435456:f32:density=0.5,raw=scatter,words=1,prank=$p > "$OUT/u-rows-cuda-p$p.txt" 2>&1
    echo "== unique prank=$p rc=$? at ${SECONDS}s"
    pack fin
  done
  for p in 0 1; do
    timeout 45 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/pk-cuda-p$p.json" \
      --case sort:268435456:i32:raw=onesweep,pack=$p > "$OUT/pk-rows-cuda-p$p.txt" 2>&1
    echo "== sort pack=$p rc=$? at ${SECONDS}s"
    pack fin
  done
  ;;
m)
  torch_rows filter "mask_select|argwhere|copy|cumsum" 150
  pack m
  R="--case mask_select:16777216:f32:density=0.5,raw=scatter --case mask_select:16777216:f32:density=0.01,raw=scatter"
  R="$R --case argwhere:16777216:bool:density=0.5,raw=scatter --case mask_select:268435456:f32:density=0.5,raw=none"
  R="$R --case mask_select:268435456:f32:density=0.01,raw=none --case argwhere:268435456:bool:density=0.5,raw=none"
  R="$R --case cumsum:1048576:f32 --case cumsum:16777216:f32"
  bench_rows cuda 240 $R
  pack m
  ;;
w)
  R=""
  for d in 0.5 0.01; do
    for w in 0 1; do R="$R --case argwhere:268435456:bool:density=$d,raw=scatter,words=$w"; done
  done
  R="$R --case mask_select:268435456:f32:density=0.5,raw=none"
  bench_rows cuda 120 $R
  pack w
  VK_BENCH=.gpu/sieve-bench-vulkan bench_rows vulkan 240 $R
  pack w
  ;;
zu)
  for round in 1 2; do
    for z in 0 1; do
      if [ $z = 1 ]; then export SIEVE_ZERO_UPLOAD=1; else unset SIEVE_ZERO_UPLOAD; fi
      timeout 30 .gpu/sieve-bench-cuda-zu --no-burn --runs 10 --sample-ms 30 --json "$OUT/zu-cuda-z$z-$round.json" \
        --case cumsum:1048576:f32 --case cumsum:16777216:f32 > "$OUT/zu-rows-cuda-z$z-$round.txt" 2>&1
      echo "== zero upload=$z round $round rc=$? at ${SECONDS}s"
      pack zu
    done
  done
  unset SIEVE_ZERO_UPLOAD
  ab_summary zu- "cumsum|copy"
  pack zu
  ;;
esac
