#!/usr/bin/env bash
# The forty-fifth session's calls (issues 15, 17). `bench/results/<card>/45-*` hold what came
# back.
#   fv  The suites and benches at main's head (F_DIR): onesweep's tile with positions at 20
#       keys a unit (`4cbc4ed`, `29de4ee`) and top-k's host refactor (`3e187db`), never run
#       on a GPU. Every `sort::` test, `sort_ops::` and `props::sort_property` through CUDA,
#       one process each (Vulkan runs no onesweep); the top-k tests (`topk::`, `topk_ops::`,
#       `props::topk_property`) through both runtimes in four processes each; memcheck and
#       racecheck over the onesweep test; all within TEST_LIMIT (240) s. Then the pair
#       sorts' Burn ops at 2^28 and [4096, 32768] (raw onesweep there at `epu=16/20`),
#       sort i32 and `unique` 2^28, and torch's sort and set rows.
#   ks  Onesweep's keys-only tile after the counting pass's loads: raw onesweep of i32 and
#       f32 keys at 2^28 over `units=256/512` x `epu=24/28/32`, CUDA; `unique` 2^28's stages
#       (`stages=1`) and its run starts alone through the raw counted compaction over
#       `units=256/512` x `epu=8/16/32` (`stage=run_starts_raw`); then Nsight Compute over
#       `unique` 2^28's run-start compaction (count and scatter kernels: the scatter took
#       1.8x the count over the same 1 GiB in `44-pf`). Then the compaction's scatter without
#       its copy of the flags (`3328585`, on main since; its bench as F_DIR's
#       sieve-bench-cuda-lean.xz) against the bench before it (`d9199a0`, as
#       sieve-bench-cuda.xz), alternating processes before/lean/before/lean (`ab_benches`,
#       CUDA): `unique`'s run starts, mask_select and argwhere 2^28 through the raw scatter and
#       the Burn ops.
#   one (What ran, the device having come only once: `fv` and part of `ks` in one call.) The
#       suites and bench at `978f0ce` (then branch `lean-flags`: main's head and the lean
#       scatter; on main since), with the bench before the lean scatter (`d9199a0`) as F_DIR's
#       sieve-bench-cuda-main.xz: every `sort::` test, `sort_ops::` and `props::sort_property`
#       through CUDA one process each; the top-k tests (`topk`) and the compaction's
#       (`compact::`, `filter_ops::`, `sets::`, `split_ops::`, their properties) through both
#       runtimes, three processes each; memcheck and racecheck over the onesweep test and three
#       compaction tests (mask, run starts, split); all within TEST_LIMIT (190) s. Then the pair
#       sorts' Burn ops at 2^28, `unique` 2^28 with its run starts alone
#       (`stage=run_starts_raw`) and mask_select 2^28 (d = 0.01, the raw scatter), through both
#       benches, and torch's sort and set rows.
# usage: F_DIR=<suites and benches> bash bench/gpu_session45.sh fv|ks|one   (carry F_DIR and ".gl")
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${F_DIR:?}/*.xz .gpu/
source "$here/gpu_prelude.sh"
begin
# sort_tests_cuda LIMIT: every `sort::` test and `props::sort_property` in its own process,
# and `sort_ops::` in one, through CUDA, in the background, within LIMIT seconds.
sort_tests_cuda() {
  local t
  for t in $(.gpu/suite-cuda --list sort:: 2>/dev/null | grep ': test$' | sed 's/: test$//' \
      | grep -v dtypes_sort) props::sort_property; do
    timeout $1 .gpu/suite-cuda --exact $t > "$OUT/tests-cuda-${t//::/-}.txt" 2>&1 &
  done
  timeout $1 .gpu/suite-cuda sort_ops:: > "$OUT/tests-cuda-sort_ops.txt" 2>&1 &
}
case "$1" in
fv)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-240}
  sort_tests_cuda $L
  LIMIT=$L split_suite cuda 4 topk
  LIMIT=$L split_suite vulkan 4 topk
  sanitize_exact $L "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack fv
  bench_rows cuda 150 --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none \
    --case sort_with_indices:4096x32768:f32:raw=onesweep,epu=16/20 \
    --case sort:268435456:i32:raw=none \
    --case unique:268435456:f32:distinct=1048576,raw=none
  pack fv
  torch_rows sort,sets "sort|argsort|unique" 60
  pack fv
  ;;
ks)
  OS=raw=onesweep,units=256/512,epu=24/28/32
  bench_rows cuda 170 --case sort:268435456:i32:$OS --case sort:268435456:f32:$OS \
    --case unique:268435456:f32:distinct=1048576,stages=1,units=256/512,epu=8/16/32
  pack ks
  AB_RUNTIMES=cuda AB_LIMIT=50 ab_benches lean .gpu .gpu \
    "--case unique:268435456:f32:distinct=1048576,units=512 --case mask_select:268435456:f32:density=0.5,raw=scatter --case mask_select:268435456:f32:density=0.01,raw=scatter --case argwhere:268435456:bool:density=0.5,raw=scatter" ks ab-
  for f in "$OUT"/ab-rows-cuda-*.txt; do echo "== $f"; grep -E "^(unique|mask_select|argwhere) " "$f" | grep -v skipped | cut -c1-150; done
  pack ks
  for v in "" -lean; do
    timeout 80 ncu --kernel-name regex:'count_tiles|scatter_tiles' --launch-skip 2 --launch-count 2 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section SchedulerStats \
      .gpu/sieve-bench-cuda$v --no-burn --runs 10 --sample-ms 30 \
      --case unique:134217728:f32:distinct=1048576 > "$OUT/ncu-unique$v.txt" 2>&1
    echo "== ncu$v rc=$? at ${SECONDS}s"
    grep -E "^  [a-z_]+kernel|^\s+(Duration|Memory Throughput|DRAM Throughput|Achieved Occupancy|Registers Per Thread|Block Size|Grid Size|Theoretical Occupancy|Issued Warp|No Eligible|Warp Cycles Per Issued)" "$OUT/ncu-unique$v.txt" | cut -c1-160
  done
  pack ks
  ;;
one)
  export SIEVE_PROP_CASES=100
  L=${TEST_LIMIT:-190}
  sort_tests_cuda $L
  for rt in cuda vulkan; do
    LIMIT=$L split_suite $rt 3 topk
    mkdir -p "$OUT/c"; OUT="$OUT/c"
    LIMIT=$L split_suite $rt 3 "compact:: filter_ops:: sets:: split_ops:: props::filter_property props::split_property props::sets_property"
    OUT="${OUT%/c}"
  done
  sanitize_exact $L "memcheck racecheck" sort::many_tiles_per_row_and_onesweep_refusal
  for tool in memcheck racecheck; do
    timeout $L compute-sanitizer --tool $tool --error-exitcode 9 .gpu/suite-cuda --exact \
      compact::mask_compaction_matches_reference compact::run_start_flags_match_reference \
      compact::bit_split_matches_reference > "$OUT/$tool-cuda-compact.txt" 2>&1 &
  done
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  for f in "$OUT"/c/*.txt "$OUT"/*compact.txt; do echo "== ${f##*/} $(grep -c ' ok$' "$f") ok"; summary "$f"; done
  pack one
  U="--case unique:268435456:f32:distinct=1048576,units=512 --case mask_select:268435456:f32:density=0.01,raw=scatter"
  bench_rows cuda 110 --case sort_with_indices:268435456:f32:raw=none \
    --case argsort:268435456:f32:raw=none $U
  pack one
  timeout 45 .gpu/sieve-bench-cuda-main --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-main.json" \
    $U > "$OUT/rows-cuda-main.txt" 2>&1
  echo "== cuda main rc=$? at ${SECONDS}s"
  grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda-main.txt" | grep -v skipped | cut -c1-150
  pack one
  torch_rows sort,sets "sort|argsort|unique" 60
  pack one
  ;;
*) echo "usage: $0 fv|ks|one"; exit 2 ;;
esac
