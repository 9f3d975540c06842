#!/usr/bin/env bash
# Fifteenth session (issue 15).
#   check  the code with one MSB select (`radix::select::cube_select`) and whatever 14-e left
#          untested: `topk::`, `topk_ops::`, `sort_ops::`, `dtypes_sort::`, `sets::`,
#          `sampling::`, `props::` through CUDA and Vulkan, memcheck over `topk::` and
#          `sort_ops::`, racecheck over the device-wide top-k tests; then item 4 (the Burn ops'
#          own cost): `sieve-bench --host-costs`, the Burn op beside the raw strategies at model
#          sizes (cumsum 1024, 2^20, 2^24; mask_select 2^24 at 0.5 and 0.01; argwhere 2^24;
#          top-k [16384, 128] k = 8; sort_with_indices [16384, 128]) and the row-cube top-k rows
#          ([64, 128256] k = 50 and 1000, uniform and tied) through CUDA, torch's cumsum, filter
#          and top-k rows in the same call, then Nsight Compute's list of the kernels (name,
#          duration) of the first launches of each Burn op row (how many launches a call makes,
#          and which). Files: tests-*.txt, memcheck.txt, racecheck.txt, host-costs.txt,
#          bench-cuda.txt, cuda.json, torch.txt, torch.json, ncu-burn.csv.
#   after  the refactored top-k: the same test modules through CUDA and Vulkan, memcheck over
#          `topk::`, racecheck over the top-k tests; then the top-k rows (2^28 k = 10, 1000,
#          100000, all-equal; [64, 128256] k = 50 and 1000, uniform and tied; [16384, 128] k = 8)
#          through CUDA and Vulkan, Burn op and raw, and torch's top-k rows. Files: as `check`.
#   rows   the sampled bound and the per-tile gather (da035ba): the top-k rows at 2^28 (k = 10,
#          1000, 100000, all-equal k = 1000) and 2^24 k = 10, each with the default tuning and
#          with `sample=0` (digit passes only), the batched rows ([64, 128256] k = 50 and 1000,
#          uniform and tied) and [16384, 128] k = 8, through CUDA (Burn op and raw), and 2^28
#          k = 1000 and the batched k = 50 and 1000 through Vulkan;
#          item 4: `--host-costs` and the model-size rows of `check` through CUDA; torch's
#          cumsum, filter and top-k rows; Nsight Compute's kernel durations of the first top-k
#          calls at 2^28 k = 1000 and of each item-4 Burn op. Files: bench-*.txt, *.json,
#          host-costs.txt, torch.txt, torch.json, ncu-topk.csv, ncu-burn.csv.
#   topk   the sampled bound's state of the day: `topk::` and `topk_ops::` through CUDA, the
#          top-k rows at 2^28 (k = 10, 1000, 100000, all-equal), 2^24 and 2^26 (k = 10, 1000,
#          with and without the sample) through CUDA, Nsight Compute's kernel durations at 2^28
#          k = 1000; where `.gpu/sieve-bench-cuda-new` is there (an A/B), its 2^28 and 2^26
#          rows and kernel durations too. Files: tests-cuda.txt, bench-cuda*.txt, cuda*.json,
#          ncu-topk*.csv.
#   final  the landed top-k (sampled bound from 2^26 keys): the test modules of `check` through
#          CUDA and Vulkan, memcheck over `topk::` and `sort_ops::`, racecheck over the
#          device-wide top-k tests (the sampled ones too); then the top-k rows at 2^28 (k = 10,
#          1000, 100000, all-equal), 2^26 k = 1000, 2^24 k = 10 and the batched rows through
#          CUDA (Burn op and raw), 2^28 k = 1000 and [64, 128256] k = 50 through Vulkan, and
#          torch's top-k rows. Files: tests-*.txt, memcheck.txt, racecheck.txt, bench-*.txt,
#          cuda.json, vulkan.json, torch.txt, torch.json.
#   tied   after the row cube gathers by the minima bound where it is the k-th key (tied rows):
#          `topk::` and `topk_ops::` through CUDA, memcheck over the minima-bound and all-equal
#          tests, racecheck over the minima-bound test; the batched rows and 2^28 k = 1000
#          through CUDA and torch's top-k rows. Files: tests-cuda.txt, memcheck.txt,
#          racecheck.txt, bench-cuda.txt, cuda.json, torch.txt, torch.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
#
# usage: LIMIT=300 bash bench/gpu_session15.sh <check|after|rows|topk|final|tied>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-300}
source "$here/gpu_prelude.sh"
MODULES="topk:: topk_ops:: sort_ops:: dtypes_sort:: sets:: sampling:: props::"
# tests_and_sanitizers: MODULES through CUDA and Vulkan, memcheck and racecheck (background).
tests_and_sanitizers() {
  for b in cuda vulkan; do
    timeout $limit .gpu/suite-$b --test-threads 2 $MODULES > "$OUT/tests-$b.txt" 2>&1 &
  done
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 topk:: sort_ops:: > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 topk::radix topk::candidates topk::every_length topk::sampled \
    > "$OUT/racecheck.txt" 2>&1 &
}
summaries() {
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
}
case "$1" in
check)
  tests_and_sanitizers
  wait
  timeout 60 .gpu/sieve-bench-cuda --host-costs > "$OUT/host-costs.txt" 2>&1
  echo "host-costs rc=$?"; cat "$OUT/host-costs.txt"
  T=topk_with_indices
  args=(--case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
    --case cumsum:1024:f32 --case cumsum:1048576:f32 --case cumsum:16777216:f32
    --case mask_select:16777216:f32:density=0.5 --case mask_select:16777216:f32:density=0.01
    --case argwhere:16777216:bool:density=0.5 --case topk_with_indices:16384x128:f32:k=8
    --case sort_with_indices:16384x128:f32)
  timeout ${BENCH_LIMIT:-120} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"; grep -v -E "^running|skipped" "$OUT/bench-cuda.txt"
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cumsum|mask|argwhere|topk)" "$OUT/torch.txt" | head -40
  : > "$OUT/ncu-burn.csv"
  for c in cumsum:1048576:f32 mask_select:16777216:f32:density=0.5 \
    argwhere:16777216:bool:density=0.5 topk_with_indices:16384x128:f32:k=8 \
    sort_with_indices:16384x128:f32; do
    echo "# case $c" >> "$OUT/ncu-burn.csv"
    timeout ${NCU_LIMIT:-40} ncu --metrics gpu__time_duration.sum --csv --launch-count 16 \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c >> "$OUT/ncu-burn.csv" 2>&1
    echo "ncu $c rc=$?"
  done
  summaries
  ;;
after)
  tests_and_sanitizers
  wait
  T=topk_with_indices; L=268435456
  args=(--case $T:$L:f32:k=10 --case $T:$L:f32:k=1000 --case $T:$L:f32:k=100000
    --case $T:$L:f32:k=1000,dist=all_equal --case $T:64x128256:f32:k=50
    --case $T:64x128256:f32:k=1000 --case $T:64x128256:f32:k=50,dist=tied
    --case $T:64x128256:f32:k=1000,dist=tied --case $T:16384x128:f32:k=8)
  for b in cuda vulkan; do
    [ -x .gpu/sieve-bench-$b ] || continue
    timeout ${BENCH_LIMIT:-120} .gpu/sieve-bench-$b --no-burn --runs 10 --json "$OUT/$b.json" \
      "${args[@]}" > "$OUT/bench-$b.txt" 2>&1
    echo "bench $b rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-$b.txt" | grep -v -E "skipped|sort_and_slice"
  done
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  summaries
  ;;
rows)
  T=topk_with_indices; L=268435456
  args=()
  for c in $L:f32:k=10 $L:f32:k=1000 $L:f32:k=100000 $L:f32:k=1000,dist=all_equal \
    16777216:f32:k=10; do
    args+=(--case $T:$c --case $T:$c,sample=0)
  done
  args+=(--case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
    --case $T:16384x128:f32:k=8)
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  # Vulkan: the default tuning only, 2^28 k = 1000 and the batched rows.
  timeout ${VK_LIMIT:-100} .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $T:$L:f32:k=1000 --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000 \
    > "$OUT/bench-vulkan.txt" 2>&1
  echo "bench vulkan rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-vulkan.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout 60 .gpu/sieve-bench-cuda --host-costs > "$OUT/host-costs.txt" 2>&1
  echo "host-costs rc=$?"; cat "$OUT/host-costs.txt"
  args=(--case cumsum:1024:f32 --case cumsum:1048576:f32 --case cumsum:16777216:f32
    --case mask_select:16777216:f32:density=0.5 --case mask_select:16777216:f32:density=0.01
    --case argwhere:16777216:bool:density=0.5 --case sort_with_indices:16384x128:f32)
  timeout ${BENCH_LIMIT:-100} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda-item4.json" \
    "${args[@]}" > "$OUT/bench-cuda-item4.txt" 2>&1
  echo "bench item4 rc=$?"; grep -v -E "^running|skipped" "$OUT/bench-cuda-item4.txt"
  timeout ${TORCH_LIMIT:-90} python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cumsum|mask|argwhere|topk)" "$OUT/torch.txt" | head -40
  timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv --launch-count 60 \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case $T:$L:f32:k=1000 > "$OUT/ncu-topk.csv" 2>&1
  echo "ncu topk rc=$?"
  : > "$OUT/ncu-burn.csv"
  for c in cumsum:1048576:f32 mask_select:16777216:f32:density=0.5 \
    argwhere:16777216:bool:density=0.5 topk_with_indices:16384x128:f32:k=8; do
    echo "# case $c" >> "$OUT/ncu-burn.csv"
    timeout ${NCU_LIMIT:-30} ncu --metrics gpu__time_duration.sum --csv --launch-count 16 \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c >> "$OUT/ncu-burn.csv" 2>&1
    echo "ncu $c rc=$?"
  done
  ;;
topk)
  timeout $limit .gpu/suite-cuda --test-threads 2 topk:: topk_ops:: > "$OUT/tests-cuda.txt" 2>&1
  echo "tests rc=$?"; summary "$OUT/tests-cuda.txt"
  T=topk_with_indices; L=268435456
  args=()
  for c in $L:f32:k=10 $L:f32:k=1000 $L:f32:k=100000 $L:f32:k=1000,dist=all_equal; do
    args+=(--case $T:$c)
  done
  for c in 16777216:f32:k=10 16777216:f32:k=1000 67108864:f32:k=10 67108864:f32:k=1000; do
    args+=(--case $T:$c --case $T:$c,sample=0)
  done
  timeout ${BENCH_LIMIT:-150} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  if [ -x .gpu/sieve-bench-cuda-new ]; then
    timeout ${BENCH_LIMIT:-100} .gpu/sieve-bench-cuda-new --no-burn --runs 10 \
      --json "$OUT/cuda-new.json" --case $T:$L:f32:k=10 --case $T:$L:f32:k=1000 \
      --case $T:$L:f32:k=100000 --case $T:67108864:f32:k=1000 > "$OUT/bench-cuda-new.txt" 2>&1
    echo "bench cuda-new rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda-new.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  fi
  for v in "" -new; do
    [ -x .gpu/sieve-bench-cuda$v ] || continue
    timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv --launch-count 60 \
      .gpu/sieve-bench-cuda$v --no-burn --runs 10 --case $T:$L:f32:k=1000 > "$OUT/ncu-topk$v.csv" 2>&1
    echo "ncu topk$v rc=$?"
  done
  ;;
final)
  MODULES="$MODULES" tests_and_sanitizers
  wait
  T=topk_with_indices; L=268435456
  args=(--case $T:$L:f32:k=10 --case $T:$L:f32:k=1000 --case $T:$L:f32:k=100000
    --case $T:$L:f32:k=1000,dist=all_equal --case $T:67108864:f32:k=1000
    --case $T:16777216:f32:k=10 --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied)
  timeout ${BENCH_LIMIT:-110} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout ${VK_LIMIT:-50} .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $T:$L:f32:k=1000 --case $T:64x128256:f32:k=50 > "$OUT/bench-vulkan.txt" 2>&1
  echo "bench vulkan rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-vulkan.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout ${TORCH_LIMIT:-50} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  summaries
  ;;
tied)
  timeout $limit .gpu/suite-cuda --test-threads 2 topk:: topk_ops:: > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 topk::minima topk::all_equal > "$OUT/memcheck.txt" 2>&1 &
  timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
    --test-threads 2 topk::minima > "$OUT/racecheck.txt" 2>&1 &
  wait
  T=topk_with_indices
  timeout ${BENCH_LIMIT:-60} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000 \
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied \
    --case $T:268435456:f32:k=1000 > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout ${TORCH_LIMIT:-45} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  summaries
  ;;
*)
  echo "usage: $0 <check|after|rows|topk|final|tied>"; exit 2
  ;;
esac
