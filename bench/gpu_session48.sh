#!/usr/bin/env bash
# The forty-eighth session's calls (issues 15, 17): `bench/flag_words/flag-words.patch` on the
# GPU (the patch landed, reworked as `CompactOptions::flag_words`, in `b13ca9d`, and left `bench/`). `bench/results/<card>/48-*` hold what came back.
#   wt  The patch's suites (F_DIR: suite-cuda.xz, suite-vulkan.xz built with it): the
#       compaction's modules, five processes a runtime, memcheck and racecheck over four
#       compaction tests, within TEST_LIMIT (300) s. The five give the CUDA processes time
#       to finish (`47-one`'s three a runtime cut six tests at 220 s).
#   ab  Its bench against main's, alternating processes (CUDA; F_DIR: sieve-bench-cuda.xz at
#       main, sieve-bench-cuda-words.xz with the patch, 55 s a process): `unique` 2^28 and its
#       run starts alone, mask_select 2^28 d = 0.5 and 0.01 and argwhere 2^28 d = 0.01
#       through the raw scatter and the raw counted form (`gpu_session47.sh fw`'s rows); then
#       Nsight Compute over the patched `unique` 2^27's count and scatter kernels (as `47-one`).
#   nm  Why the words lose on masks (`48-ab`: mask_select 2^28 raw scatter d = 0.5 0.758 ->
#       1.005 ms, d = 0.01 0.600 -> 0.755, argwhere 0.425 -> 0.472): Nsight Compute over the
#       count and scatter kernels of mask_select 2^27 (d = 0.5, 0.01) and argwhere 2^27
#       (d = 0.01), main's bench and the patched one (F_DIR: both benches, as `ab`). Then
#       the run starts' A/B (as `ab`, 45 s a process) at 2^27 over densities of run starts
#       1/64, 1/32, 1/16 and 1/8 (`distinct=` 2^21 to 2^24; the bench refuses more, whose
#       integers are not exact in f32): where the words stop winning (`ab` measured 1/256).
#   fin The FlagWords version (`CompactOptions::flag_words`: `Auto` takes the words only
#       for counted run starts at most 1 in RUN_START_WORDS_SPARSITY; the bench's `words=0/1`
#       forces them off / on) through its suites and bench (F_DIR: suite-cuda.xz,
#       suite-vulkan.xz, sieve-bench-cuda.xz built with it): `wt`'s tests (270 s), then the run
#       starts at 2^27 with the words off and on in alternating processes (one binary, 40 s
#       each) over four densities (`distinct=` 2^21 to 2^24: 1/64 to 1/8). What ran (`48-fin`):
#       the tests, then the densities 2^21, 2^23, 2^25, 2^27, whose bench panicked at 2^25 (the
#       f32 keys' rounding, now refused by name); the densities as here ran inline after it.
#   pk  (written after the calls, for the next session) `bench/packed_digits/packed-digits.patch`
#       (`SortTuning::packed_digits`: the device-wide passes hold a unit's digits four to a
#       word) through suites and a bench built with it (F_DIR: suite-cuda.xz, suite-vulkan.xz,
#       sieve-bench-cuda.xz): `sort::` and `sort_ops::` three processes a runtime within
#       TEST_LIMIT (300) s, memcheck and racecheck over the onesweep test; then Nsight's
#       registers and occupancy of one onesweep sort at 2^26 with `pack=0` and `pack=1`; then
#       `pack=0/1` in alternating processes (one binary, 50 s each): sort i32 and f32 keys
#       2^28 (raw onesweep), sort_with_indices f32 2^28 (raw onesweep) and 2^24 (raw Lsd).
#   ks  Why f32 keys sort slower than i32 keys (`unique`'s keys-only sort 6.276 against i32's
#       5.908, `47-rr`): Nsight Compute over one sort's counting pass and four onesweep passes
#       at 2^26, for i32 keys, random f32 keys and `unique`'s keys (integers 0..2^20 as f32):
#       registers, occupancy, instructions issued, DRAM (F_DIR: sieve-bench-cuda.xz).
# usage: F_DIR=<dir> bash bench/gpu_session48.sh wt|ab|nm|fin|pk|ks   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
wt)
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-300} compaction_tests
  pack wt
  ;;
ab)
  R="--case unique:268435456:f32:distinct=1048576,units=512"
  for d in 0.5 0.01; do R="$R --case mask_select:268435456:f32:density=$d,raw=scatter"; done
  R="$R --case argwhere:268435456:bool:density=0.01,raw=scatter"
  AB_RUNTIMES=cuda AB_LIMIT=55 ab_benches words .gpu .gpu "$R" ab ab-
  ab_summary ab- "unique|mask_select|argwhere|copy"
  pack ab
  timeout 90 ncu --kernel-name regex:'count_tiles|scatter_tiles' --launch-skip 2 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats \
    .gpu/sieve-bench-cuda-words --no-burn --runs 10 --sample-ms 30 \
    --case unique:134217728:f32:distinct=1048576 > "$OUT/ncu-unique-words.txt" 2>&1
  echo "== ncu rc=$? at ${SECONDS}s"
  grep -E "^  [a-z_]+kernel|^\s+(Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Theoretical Occupancy|Issued Warp)" "$OUT/ncu-unique-words.txt" | cut -c1-160
  pack ab
  ;;
nm)
  for b in cuda cuda-words; do
    for c in mask_select:134217728:f32:density=0.5 mask_select:134217728:f32:density=0.01 \
        argwhere:134217728:bool:density=0.01; do
      f="$OUT/ncu-$b-${c//[:=,]/-}.txt"
      timeout 60 ncu --kernel-name regex:'count_tiles|scatter_tiles' --launch-count 2 \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats --section MemoryWorkloadAnalysis \
        .gpu/sieve-bench-$b --no-burn --runs 10 --sample-ms 3 --case $c,raw=scatter,strategy=scatter > "$f" 2>&1
      echo "== ncu $b $c rc=$? at ${SECONDS}s"
      grep -E "^  [a-z_]+kernel|^\s+(Duration|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Issued Warp)" "$f" | cut -c1-110
      pack nm
    done
  done
  R=""
  for d in 2097152 4194304 8388608 16777216; do R="$R --case unique:134217728:f32:distinct=$d,units=512"; done
  AB_RUNTIMES=cuda AB_LIMIT=45 ab_benches words .gpu .gpu "$R" nm nm-
  ab_summary nm- "unique|copy"
  pack nm
  ;;
fin)
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-270} compaction_tests
  pack fin
  for round in 1 2; do
    for w in 0 1; do
      R=""
      for d in 2097152 4194304 8388608 16777216; do
        R="$R --case unique:134217728:f32:distinct=$d,units=512,words=$w"
      done
      timeout 40 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
        --json "$OUT/fin-cuda-w$w-$round.json" $R > "$OUT/fin-rows-cuda-w$w-$round.txt" 2>&1
      echo "== words=$w round $round rc=$? at ${SECONDS}s"
      pack fin
    done
  done
  ab_summary fin- "unique|copy"
  pack fin
  ;;
pk)
  export SIEVE_PROP_CASES=100
  for rt in cuda vulkan; do LIMIT=${TEST_LIMIT:-300} split_suite $rt 3 "sort:: sort_ops::"; done
  sanitize_exact ${TEST_LIMIT:-300} "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal
  wait; echo "== tests done at ${SECONDS}s"; suite_summary
  pack pk
  for p in 0 1; do
    f="$OUT/ncu-pack$p.txt"
    timeout 60 ncu --kernel-name regex:onesweep --launch-count 4 --section Occupancy \
      --section LaunchStats --section SpeedOfLight .gpu/sieve-bench-cuda --no-burn --runs 10 \
      --sample-ms 3 --case sort:67108864:i32:raw=onesweep,pack=$p > "$f" 2>&1
    echo "== ncu pack=$p rc=$? at ${SECONDS}s"
    grep -E "^\s+(Duration|Registers Per Thread|Achieved Occupancy|DRAM Throughput)" "$f" | cut -c1-100
    pack pk
  done
  for round in 1 2; do
    for p in 0 1; do
      timeout 50 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
        --json "$OUT/pk-cuda-p$p-$round.json" --case sort:268435456:i32:raw=onesweep,pack=$p \
        --case sort:268435456:f32:raw=onesweep,pack=$p \
        --case sort_with_indices:268435456:f32:raw=onesweep,pack=$p \
        --case sort_with_indices:16777216:f32:raw=lsd,pack=$p > "$OUT/pk-rows-cuda-p$p-$round.txt" 2>&1
      echo "== pack=$p round $round rc=$? at ${SECONDS}s"
      pack pk
    done
  done
  ab_summary pk- "sort|sort_with_indices|copy"
  pack pk
  ;;
ks)
  for k in i32:raw=onesweep f32:raw=onesweep f32:distinct=1048576,raw=onesweep; do
    f="$OUT/ncu-sort-${k//[:=,]/-}.txt"
    timeout 100 ncu --kernel-name regex:'digit_counts|onesweep' --launch-count 5 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section InstructionStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 3 --case sort:67108864:$k > "$f" 2>&1
    echo "== ncu $k rc=$? at ${SECONDS}s"
    grep -E "^  [a-z_]+kernel|^\s+(Duration|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Executed Instructions  |Issued Warp|Block Size)" "$f" | cut -c1-120
    pack ks
  done
  ;;
*) echo "usage: $0 wt|ab|nm|fin|pk|ks"; exit 2 ;;
esac
