#!/usr/bin/env bash
# Fourteenth session (issue 15: the device-wide top-k select in 11-, 11- and 10-bit digits).
#   topk   the modules that use the sort and the select (topk, topk_ops, sort_ops,
#          dtypes_sort, sets, sampling, props) through CUDA and Vulkan, memcheck over topk and
#          sort_ops, racecheck over topk's device-wide tests, and `topk::` of the `-new` CUDA
#          suite; then the top-k rows at 2^28 (k = 10, 1000, 100000, all-equal k = 1000) and
#          2^24 k = 10 through CUDA (the Burn op and each raw strategy; sieve only), by the
#          bench and by the `-new` bench, torch's top-k rows in the same call, then Nsight
#          Compute's duration of every kernel of the first top-k calls at 2^28 k = 1000 of both
#          benches; every process under `timeout`. Files: bench-cuda*.txt, cuda*.json,
#          torch.txt, torch.json, ncu-topk*.csv, tests-*.txt, memcheck.txt, racecheck.txt.
#   sweep  the device-wide top-k's tile and cube count at 2^28 k = 1000 and 100000 (raw, sieve
#          only: `cubes=` 1056, 2112, 8448 against the default 4224, `epu=16`, `units=512`),
#          the sort rows session 13 did not reach at the new tiles and the old (`epu=8`):
#          sort_with_indices 2^24, sort i32 2^24, [4096, 32768], [64, 128256] descending;
#          then the modules 14-a's CUDA run did not finish (topk_ops, dtypes_sort, sets,
#          sampling, props) through CUDA alone. Files: sweep.txt, sweep.json, tests-cuda.txt.
#   final  after the cube count (64 per multiprocessor) and the sort's Auto rule: `sort::`,
#          `topk::`, `sort_ops::`, `topk_ops::` through CUDA and Vulkan, memcheck over
#          `topk::`; then the top-k rows (2^28 k = 10, 1000, 100000, all-equal k = 1000; 2^24
#          k = 10 at the new and the old cube count) and the sorts whose Auto changed
#          (sort_with_indices [4096, 32768]: onesweep; sort i32 2^24: Lsd) through CUDA, the Burn
#          op beside each raw strategy, then torch's top-k rows. Files: bench-cuda.txt,
#          cuda.json, torch.txt, torch.json, tests-*.txt, memcheck.txt.
#   check  after a device-wide top-k cube takes at least two tiles: `topk::` and `topk_ops::`
#          through CUDA and Vulkan, then the top-k rows at 2^24 (k = 10, 1000) and 2^28 (k = 10,
#          1000) through CUDA (Burn op and raw), then torch's top-k rows. Files:
#          bench-cuda.txt, cuda.json, torch.txt, torch.json, tests-*.txt.
#   last   after 8-bit digits for rows shorter than 2^16 (the per-row histogram sized by the
#          widest digit): `topk::` and `topk_ops::` through CUDA and Vulkan, then issue 15's
#          batched rows ([64, 128256] k = 50 and 1000, uniform and 16 distinct values) and
#          2^28 k = 10 through CUDA, then torch's top-k rows. Files: as `check`.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
#
# usage: LIMIT=300 bash bench/gpu_session14.sh <topk|sweep|final|check|last>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-300}
source "$here/gpu_prelude.sh"
# rows_then_torch: the CUDA bench over "${args[@]}", torch's top-k rows, the logs' summaries.
rows_then_torch() {
  timeout ${BENCH_LIMIT:-120} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(topk|sort|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice"
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
}
# topk_tests: topk:: and topk_ops:: through CUDA and Vulkan.
topk_tests() {
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 topk:: topk_ops:: > "$OUT/tests-$b.txt" 2>&1 &
  done
  wait
}
case "$1" in
topk)
  T=topk_with_indices; L=268435456
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 topk:: topk_ops:: sort_ops:: dtypes_sort:: \
      sets:: sampling:: props:: > "$OUT/tests-$b.txt" 2>&1 &
  done
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 topk:: sort_ops:: > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 topk::radix topk::candidates topk::every_length > "$OUT/racecheck.txt" 2>&1 &
  if [ -x .gpu/suite-cuda-new ]; then
    timeout $limit .gpu/suite-cuda-new --test-threads 2 topk:: > "$OUT/tests-cuda-new.txt" 2>&1 &
  fi
  wait
  args=(--case $T:$L:f32:k=10 --case $T:$L:f32:k=1000 --case $T:$L:f32:k=100000
    --case $T:$L:f32:k=1000,dist=all_equal --case $T:16777216:f32:k=10)
  for v in "" -new; do
    [ -x .gpu/sieve-bench-cuda$v ] || continue
    timeout ${BENCH_LIMIT:-100} .gpu/sieve-bench-cuda$v --no-burn --runs 10 \
      --json "$OUT/cuda$v.json" "${args[@]}" > "$OUT/bench-cuda$v.txt" 2>&1
    echo "bench$v rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda$v.txt" | grep -v -E "skipped"
  done
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -12
  for v in "" -new; do
    [ -x .gpu/sieve-bench-cuda$v ] || continue
    timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv \
      --kernel-name "regex:radix|gather|init_state|finish|fill_zero|scan|sort|histogram|scatter" \
      --launch-count 40 .gpu/sieve-bench-cuda$v --no-burn --runs 10 --case $T:$L:f32:k=1000 \
      > "$OUT/ncu-topk$v.csv" 2>&1
    echo "ncu$v rc=$?"
  done
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
sweep)
  timeout $limit .gpu/suite-cuda --test-threads 2 topk_ops:: dtypes_sort:: sets:: sampling:: \
    props:: > "$OUT/tests-cuda.txt" 2>&1 &
  T=topk_with_indices; L=268435456
  args=()
  for k in 1000 100000; do
    for t in "" ",cubes=1056" ",cubes=2112" ",cubes=8448" ",epu=16" ",units=512"; do
      args+=(--case "$T:$L:f32:k=$k$t")
    done
  done
  for c in sort_with_indices:16777216:f32 sort:16777216:i32 sort_with_indices:4096x32768:f32; do
    args+=(--case "$c" --case "$c:epu=8")
  done
  args+=(--case sort_with_indices:64x128256:f32:descending=true
    --case sort_with_indices:64x128256:f32:descending=true,epu=8)
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/sweep.json" \
    "${args[@]}" > "$OUT/sweep.txt" 2>&1
  echo "bench rc=$?"; grep -E "^(topk|sort|copy)" "$OUT/sweep.txt" | grep -v -E "skipped|sort_and_slice|in_cube"
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  ;;
final)
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 sort:: topk:: sort_ops:: topk_ops:: \
      > "$OUT/tests-$b.txt" 2>&1 &
  done
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 topk:: > "$OUT/memcheck.txt" 2>&1 &
  wait
  T=topk_with_indices; L=268435456
  args=(--case $T:$L:f32:k=10 --case $T:$L:f32:k=1000 --case $T:$L:f32:k=100000
    --case $T:$L:f32:k=1000,dist=all_equal --case $T:16777216:f32:k=10
    --case $T:16777216:f32:k=10,cubes=4224 --case sort_with_indices:4096x32768:f32
    --case sort:16777216:i32)
  rows_then_torch
  ;;
check)
  topk_tests
  T=topk_with_indices; L=268435456
  args=(--case $T:16777216:f32:k=10 --case $T:16777216:f32:k=1000 --case $T:$L:f32:k=10
    --case $T:$L:f32:k=1000)
  rows_then_torch
  ;;
last)
  topk_tests
  T=topk_with_indices
  args=(--case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
    --case $T:268435456:f32:k=10)
  rows_then_torch
  ;;
*)
  echo "usage: $0 <topk|sweep|final|check|last>"; exit 2
  ;;
esac
