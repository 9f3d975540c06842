#!/usr/bin/env bash
# Twelfth session (issue 14: cummin/cummax within 10% of cumsum at 2^28).
#   sweep  the scan family at 2^28 through CUDA, look-back and reduce-then-scan forced, with
#          `vec=` 4, 8 and 16 (widest vector a unit loads: 16 elements a vector is a quarter of
#          the in-plane scans of 4), f32 and i32, two rounds in opposite orders; mask_select
#          2^28 (the compaction scans its flags with the same tile) likewise; then
#          `scans::every_vector_width` through CUDA. Needs binaries of `8f49f42`'s code with widths 8/16 let through (the code since
#          refuses widths past 4: they were slower, `bench/results/h200/12-a`).
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
#
#   rows   after the minimum's NaN test went through `isnan` on CUDA: the scan family's rows
#          (cumsum, cumprod, cummin, cummax at 2^20, 2^24, 2^28 and [4096, 32768] dim=1; the
#          Burn op, both raw strategies, stock Burn where it finishes) and i32 cumsum/cummin
#          at 2^28, then torch's scan rows in the same call. Files: bench-cuda.txt, cuda.json,
#          torch.txt, torch.json.
#   tests  scan::, scans::, cumulative::, sampling:: through CUDA and Vulkan, and
#          dtypes_scan::scan_every_dtype* and dtypes_ops::every_dtype_through_every_op*
#          through CUDA, one process per dtype;
#          memcheck over scans:: and sampling::, racecheck over scans::every_op and
#          sampling::draw (every process under `timeout`).
#
#   search searchsorted after a unit's queries descend in lockstep: the rows (2^24 queries into
#          2^20 and 1024 keys) through CUDA, torch's sets rows, then `sets::` through CUDA and
#          Vulkan, memcheck and racecheck over `sets::searchsorted`.
#
#   workspace  the look-back's status words and tile counter in one allocation with one zero
#          fill (one launch and one allocation fewer a look-back scan or compaction): the
#          bench before (.gpu/sieve-bench-cuda-old) and after, alternating twice, cumsum 2^20
#          and 2^24 and mask_select 2^24 (raw strategies, sieve only); then `scans::`,
#          `compact::` through CUDA and memcheck over `scans::every_op` and `compact::mask`.
#
# usage: LIMIT=280 bash bench/gpu_session12.sh <sweep|rows|tests|search|workspace>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-280}
source "$here/gpu_prelude.sh"
case "$1" in
sweep)
  for round in 1 2; do
    if [ $round = 1 ]; then widths="4 8 16"; else widths="16 8 4"; fi
    args=(--case copy:268435456:f32)
    for v in $widths; do
      for c in cumsum:268435456:f32 cummin:268435456:f32 cummax:268435456:f32 \
        cumprod:268435456:f32 cumsum:268435456:i32 cummin:268435456:i32; do
        args+=(--case "$c:dim=0,strategy=decoupled_lookback,vec=$v")
      done
      for c in cumsum:268435456:f32 cummin:268435456:f32; do
        args+=(--case "$c:dim=0,strategy=reduce_then_scan,vec=$v")
      done
      args+=(--case "mask_select:268435456:f32:density=0.5,strategy=scatter_lookback,vec=$v")
    done
    timeout ${BENCH_LIMIT:-150} .gpu/sieve-bench-cuda --no-burn --json "$OUT/sweep-$round.json" \
      "${args[@]}" > "$OUT/sweep-$round.txt" 2>&1
    echo "round $round rc=$?"
    grep -E "^(cum|copy|mask)" "$OUT/sweep-$round.txt" | grep -v -E "skipped|stock"
  done
  timeout $limit .gpu/suite-cuda --test-threads 4 scans::every_vector_width scan:: \
    > "$OUT/tests-cuda.txt" 2>&1
  echo "tests rc=$?"; summary "$OUT/tests-cuda.txt"
  ;;
rows)
  args=(--case copy:268435456:f32)
  for op in cumsum cumprod cummin cummax; do
    for c in 1048576:f32:dim=0 16777216:f32:dim=0 268435456:f32:dim=0 4096x32768:f32:dim=1; do
      args+=(--case "$op:$c")
    done
  done
  args+=(--case cumsum:268435456:i32:dim=0 --case cummin:268435456:i32:dim=0)
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(cum|copy)" "$OUT/bench-cuda.txt" | grep -v skipped
  timeout ${TORCH_LIMIT:-150} python3 bench/torch_reference.py "$OUT/torch.json" --only=scan \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cum|copy)" "$OUT/torch.txt"
  ;;
tests)
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 scan:: scans:: cumulative:: sampling:: \
      --skip dtypes_scan > "$OUT/tests-$b.txt" 2>&1 &
  done
  # Every dtype (f16, bf16, f64 minima included) x op: NVRTC compiles a kernel per dtype x op
  # x tuning, one after another in a process, so one process per dtype (`SIEVE_DTYPES`).
  for d in u32 i32 f32 i64 f16 bf16 i8 i16 u8 u16 u64 f64; do
    SIEVE_DTYPES=$d timeout $limit .gpu/suite-cuda --test-threads 2 \
      dtypes_scan::scan_every_dtype > "$OUT/dtypes-scan-cuda-$d.log" 2>&1 &
    SIEVE_DTYPES=$d timeout $limit .gpu/suite-cuda dtypes_ops::every_dtype_through_every_op \
      > "$OUT/dtypes-ops-cuda-$d.log" 2>&1 &
  done
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 scans:: sampling:: > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 scans::every_op sampling::draw > "$OUT/racecheck.txt" 2>&1 &
  wait
  for kind in scan ops; do
    for f in "$OUT"/dtypes-$kind-cuda-*.log; do echo "== $f"; cat "$f"; done \
      > "$OUT/dtypes-$kind-cuda.txt"
    rm "$OUT"/dtypes-$kind-cuda-*.log
  done
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
search)
  timeout ${BENCH_LIMIT:-60} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" \
    --case copy:268435456:f32 --case searchsorted:16777216:f32:keys=1048576 \
    --case searchsorted:16777216:f32:keys=1024 > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(copy|searchsorted)" "$OUT/bench-cuda.txt"
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=sets \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(copy|searchsorted|unique)" "$OUT/torch.txt"
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 sets:: > "$OUT/tests-$b.txt" 2>&1 &
  done
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    sets::searchsorted > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    sets::searchsorted > "$OUT/racecheck.txt" 2>&1 &
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
workspace)
  args=(--case cumsum:1048576:f32:dim=0 --case cumsum:16777216:f32:dim=0
    --case mask_select:16777216:f32:density=0.5)
  for round in 1 2; do
    for b in old new; do
      bin=.gpu/sieve-bench-cuda; [ $b = old ] && bin=.gpu/sieve-bench-cuda-old
      timeout ${BENCH_LIMIT:-40} $bin --no-burn --json "$OUT/ab-$b-$round.json" "${args[@]}" \
        > "$OUT/ab-$b-$round.log" 2>&1
      echo "== $b round $round rc=$?"; grep -E "^(cum|mask)" "$OUT/ab-$b-$round.log" | cut -c1-125
    done
  done
  cat "$OUT"/ab-*.log > "$OUT/ab.txt"; rm "$OUT"/ab-*.log
  timeout $limit .gpu/suite-cuda --test-threads 4 scans:: compact:: > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 scans::every_op compact::mask > "$OUT/memcheck.txt" 2>&1 &
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
esac
