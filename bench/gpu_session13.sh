#!/usr/bin/env bash
# Thirteenth session (issue 15: the onesweep sort).
#   sort   the sort rows (sort i32, sort_with_indices and argsort f32 at 2^28, sort_with_indices
#          2^24, [4096, 32768], [16384, 128], [64, 128256] descending, all-equal 2^24) through
#          CUDA: the Burn op and each raw strategy (lsd, onesweep; in_cube where a row fits),
#          then torch's sort rows in the same call; then `sort::` through CUDA and Vulkan,
#          memcheck over `sort::` and racecheck over the onesweep tests, every process under
#          `timeout`. Files: bench-cuda.txt, cuda.json, torch.txt, torch.json, tests-*.txt,
#          memcheck.txt, racecheck.txt.
#   sweep  onesweep's tile at 2^28 (sort i32 keys and sort_with_indices f32): units 256/512 x
#          keys per unit 8/12/16, raw strategies only (`--no-burn`), then lsd at its default for
#          reference, at 2^26 (the CPU check of 2^28 takes ~40 s a case); then Nsight Compute
#          over one onesweep pass and one LSD scatter (sort_with_indices 2^26), and the
#          onesweep pass's SASS with stall samples. Files: sweep.txt, sweep.json, ncu-*.
#   check  after the onesweep tile publishes early and walks late: the sweep's rows, then
#          `sort::` through CUDA and Vulkan with memcheck and racecheck (as in `sort`), and
#          Nsight Compute's summary of one onesweep pass. Files: sweep.*, tests-*, memcheck,
#          racecheck, ncu-onesweep.txt.
#   rest   the device-wide sort rows `sort` did not reach (2^24, [4096, 32768], [64, 128256])
#          at the new tiles and at the old (`epu=8`) in the same call, sieve only, then
#          `sort::` as in `sort`.
#   next   (for the next session, not run in this one) the device-wide sort rows at the new
#          tiles and at the old (`epu=8`) side by side: sort_with_indices 2^24, sort i32 2^24,
#          [4096, 32768], [64, 128256] descending, and [16384, 128] (in-cube, as a control);
#          then the sort-using modules (sort_ops, dtypes_sort, sets, topk, props) through CUDA
#          and Vulkan, memcheck over sort_ops and dtypes_sort.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
#
# usage: LIMIT=200 bash bench/gpu_session13.sh <sort|sweep|check|rest|next>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-200}
source "$here/gpu_prelude.sh"
tests() {
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 sort:: --skip dtypes_sort \
      > "$OUT/tests-$b.txt" 2>&1 &
  done
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 sort:: --skip dtypes_sort > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 sort::many_tiles sort::every_length > "$OUT/racecheck.txt" 2>&1 &
  wait
}
sweep_args() {
  args=(--case copy:268435456:f32)
  for t in units=256,epu=8 units=256,epu=12 units=256,epu=16 units=512,epu=8 units=512,epu=12 \
    units=128,epu=16; do
    args+=(--case "sort:67108864:i32:$t" --case "sort_with_indices:67108864:f32:$t")
  done
}
case "$1" in
next)
  args=(--case copy:268435456:f32)
  for c in sort_with_indices:16777216:f32 sort:16777216:i32 sort_with_indices:4096x32768:f32 \
    sort_with_indices:16384x128:f32; do
    args+=(--case "$c" --case "$c:epu=8")
  done
  args+=(--case sort_with_indices:64x128256:f32:descending=true
    --case sort_with_indices:64x128256:f32:descending=true,epu=8)
  timeout ${BENCH_LIMIT:-240} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(sort|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|stock"
  timeout ${TORCH_LIMIT:-80} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 sort_ops:: dtypes_sort:: sets:: topk:: \
      props:: > "$OUT/tests-$b.txt" 2>&1 &
  done
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 sort_ops:: dtypes_sort:: > "$OUT/memcheck.txt" 2>&1 &
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
rest)
  args=(--case copy:268435456:f32)
  for c in sort_with_indices:16777216:f32 sort:16777216:i32 sort_with_indices:4096x32768:f32 \
    sort_with_indices:64x128256:f32:descending=true; do
    args+=(--case "$c")
    case $c in *descending*) args+=(--case "$c,epu=8");; *) args+=(--case "$c:epu=8");; esac
  done
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(sort|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|stock"
  tests
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
check)
  sweep_args
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --json "$OUT/sweep.json" "${args[@]}" \
    > "$OUT/sweep.txt" 2>&1
  echo "sweep rc=$?"; grep -E "^(sort|copy)" "$OUT/sweep.txt" | grep -v -E "skipped|stock|auto"
  tests
  timeout ${NCU_LIMIT:-100} ncu --kernel-name regex:onesweep --launch-skip 6 --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case sort_with_indices:67108864:f32 \
    > "$OUT/ncu-onesweep.txt" 2>&1
  echo "ncu rc=$?"; grep -E "^\s+(Duration|Issued Ipc|Achieved Occ)" "$OUT/ncu-onesweep.txt"
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
sort)
  args=(--case copy:268435456:f32)
  for c in sort:268435456:i32 sort_with_indices:268435456:f32 argsort:268435456:f32 \
    sort_with_indices:16777216:f32 sort_with_indices:4096x32768:f32 \
    sort_with_indices:16384x128:f32 sort_with_indices:64x128256:f32:descending=true; do
    args+=(--case "$c")
  done
  timeout ${BENCH_LIMIT:-240} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(sort|argsort|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|stock"
  timeout ${TORCH_LIMIT:-100} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(sort|argsort|copy)" "$OUT/torch.txt"
  tests
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
sweep)
  sweep_args
  timeout ${BENCH_LIMIT:-500} .gpu/sieve-bench-cuda --no-burn --json "$OUT/sweep.json" "${args[@]}" \
    > "$OUT/sweep.txt" 2>&1
  echo "sweep rc=$?"; grep -E "^(sort|copy)" "$OUT/sweep.txt" | grep -v -E "skipped|stock"
  # Where a pass's time goes: Nsight Compute on one onesweep pass and one LSD scatter.
  for k in onesweep scatter; do
    timeout ${NCU_LIMIT:-100} ncu --kernel-name regex:$k --launch-skip 6 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section SchedulerStats \
      --section MemoryWorkloadAnalysis \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case sort_with_indices:67108864:f32 \
      > "$OUT/ncu-$k.txt" 2>&1
    echo "ncu $k rc=$? $(wc -l < "$OUT/ncu-$k.txt") lines"
  done
  timeout ${NCU_LIMIT:-100} ncu --kernel-name regex:onesweep --launch-skip 6 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case sort_with_indices:67108864:f32 \
    > "$OUT/ncu-sass-onesweep.csv" 2>&1
  echo "ncu sass rc=$? $(wc -l < "$OUT/ncu-sass-onesweep.csv") lines"
  ;;
esac
