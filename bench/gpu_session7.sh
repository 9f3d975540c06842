#!/usr/bin/env bash
# Seventh GPU session (issues 14-16). Modes of gpu_session6.sh (check, rows, vulkan) plus:
#   profile  the look-back forced at 2^28 for cumsum/cummin/cummax, f32 and i32 (i32 folds are
#            exact like minima: the rows split the look-back path's cost from the float fold's),
#            then Nsight Compute over one look-back launch each of cumsum f32, cummin f32 and
#            cummin i32, with the source-level stall counters (where the minimum's time goes)
#   ab       the minimum's NaN test (8653dfa: CUDA tests only the later operand) against the
#            binary before it (.gpu/sieve-bench-cuda-0995618), alternating, twice each: cumsum,
#            cummin and cummax f32 at 2^28, the Burn op and the look-back forced; then `check`
set -uo pipefail
here="$(dirname "$0")"
case "$1" in
profile)
  source "$here/gpu_prelude.sh"
  args=()
  for c in cumsum:268435456:f32 cumsum:268435456:i32 cummin:268435456:f32 \
    cummin:268435456:i32 cummax:268435456:f32 cummax:268435456:i32; do
    args+=(--case "$c:dim=0,strategy=decoupled_lookback")
  done
  timeout ${BENCH_LIMIT:-150} .gpu/sieve-bench-cuda --no-burn --json "$OUT/split-cuda.json" \
    "${args[@]}" > "$OUT/split-cuda.txt" 2>&1
  echo "split rc=$?"; grep -E "^(cum|copy)" "$OUT/split-cuda.txt" | grep -v skipped
  for c in cumsum:268435456:f32 cummin:268435456:f32 cummin:268435456:i32; do
    timeout ${NCU_LIMIT:-120} ncu --kernel-name regex:lookback --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section ComputeWorkloadAnalysis --section SchedulerStats \
      --section MemoryWorkloadAnalysis --section SourceCounters \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case "$c:dim=0,strategy=decoupled_lookback" \
      > "$OUT/ncu-${c//:/-}.txt" 2>&1
    echo "ncu $c rc=$? $(wc -l < "$OUT/ncu-${c//:/-}.txt") lines"
  done
  # Per-instruction stall samples (SASS) of the minimum's look-back kernel.
  for c in cummin:268435456:f32 cumsum:268435456:f32; do
    timeout ${NCU_LIMIT:-120} ncu --kernel-name regex:lookback --launch-skip 3 --launch-count 1 \
      --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case "$c:dim=0,strategy=decoupled_lookback" \
      > "$OUT/ncu-sass-${c//:/-}.csv" 2>&1
    echo "ncu sass $c rc=$? $(wc -l < "$OUT/ncu-sass-${c//:/-}.csv") lines"
  done
  ;;
ab)
  source "$here/gpu_prelude.sh"
  args=()
  for c in cumsum cummin cummax; do
    args+=(--case "$c:268435456:f32:dim=0" --case "$c:268435456:f32:dim=0,strategy=decoupled_lookback")
  done
  for round in 1 2; do
    for b in sieve-bench-cuda-0995618 sieve-bench-cuda; do
      timeout 100 .gpu/$b --no-burn --json "$OUT/ab-$b-$round.json" "${args[@]}" \
        > "$OUT/ab-$b-$round.txt" 2>&1
      echo "== $b round $round rc=$?"; grep -E "^(cum|copy)" "$OUT/ab-$b-$round.txt"
    done
  done
  bash "$here/gpu_session6.sh" check
  ;;
*)
  bash "$here/gpu_session6.sh" "$@"
  ;;
esac
