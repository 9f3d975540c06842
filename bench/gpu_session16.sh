#!/usr/bin/env bash
# Sixteenth session (issue 15).
#   ab     the shared-match sort ranker (`SortTuning::shared_match`, off by default), the
#          look-back workspace (one fill, 718486b again) and the comptime minima bound:
#          tests first (`sort::`, `scan::`, `compact::`, `topk::`, `sort_ops::` through CUDA and
#          Vulkan; memcheck over `sort::` and `scan::`; racecheck over two sort tests), then the
#          sort rows with `match=0` and `match=1` (2^28 keys, 2^28 and 2^24 pairs, [16384, 128]),
#          the shared match at other tiles (`epu=`), the onesweep look-back's window (`window=`),
#          cumsum 2^20 / 2^24 and the batched top-k rows through the new bench and through
#          `.gpu/sieve-bench-cuda-old` (built at 29bb83a: the cumsum's two fills, the runtime
#          minima bound), and torch's cumsum, sort and top-k rows in the same call. Files:
#          tests-*.txt, memcheck-cuda.txt, racecheck-cuda-*.txt, bench-cuda*.txt, cuda*.json,
#          torch.txt, torch.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
#
#   ab2    what `ab` lost: `sort::` and `scan::` through CUDA and Vulkan, memcheck over three sort
#          tests; the small rows (cumsum, batched top-k, [16384, 128] with and without the
#          shared match), 2^28 keys (default, `match=1`, `match=1,window=4`), 2^28 pairs (default,
#          `match=1,window=4`), each group its own bench run; torch's sort rows.
#   final  the ballots-only ranker (`5aa065f`): `sort::` and `scan::` through Vulkan, `sort::`
#          through CUDA (Onesweep with windows 1 and 3); sort i32 2^28 at windows 1, 4, 8;
#          torch's sort rows.
# usage: LIMIT=240 bash bench/gpu_session16.sh <ab|ab2|final>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-240}
source "$here/gpu_prelude.sh"
summaries() {
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
}
bench() { # bench NAME BINARY ARGS...: one bench run, its rows printed
  local name=$1 bin=$2; shift 2
  timeout ${BENCH_LIMIT:-150} $bin --no-burn --runs 10 --json "$OUT/$name.json" "$@" \
    > "$OUT/bench-$name.txt" 2>&1
  echo "bench $name rc=$?"
  grep -E "^(sort|cumsum|topk|copy|argsort)" "$OUT/bench-$name.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
}
case "$1" in
ab)
  M="sort:: scan:: compact:: topk:: sort_ops::"
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  sanitize "sort:: scan::" "sort::every_length sort::many_tiles"
  wait
  summaries
  T=topk_with_indices; S=sort_with_indices
  common=(--case cumsum:1048576:f32 --case cumsum:16777216:f32
    --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied)
  args=("${common[@]}")
  for c in sort:268435456:i32 $S:268435456:f32 $S:16777216:f32 $S:16384x128:f32; do
    args+=(--case $c --case $c:match=1)
  done
  args+=(--case sort:268435456:i32:match=1,epu=12 --case sort:268435456:i32:match=1,epu=20
    --case $S:268435456:f32:match=1,epu=16 --case $S:268435456:f32:match=1,epu=8
    --case sort:268435456:i32:window=4 --case sort:268435456:i32:window=8
    --case sort:268435456:i32:match=1,window=4)
  bench cuda .gpu/sieve-bench-cuda "${args[@]}"
  [ -x .gpu/sieve-bench-cuda-old ] && BENCH_LIMIT=60 bench cuda-old .gpu/sieve-bench-cuda-old "${common[@]}"
  timeout ${TORCH_LIMIT:-120} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort,topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cumsum|sort|argsort|topk)" "$OUT/torch.txt" | head -30
  ;;
ab2)
  # `ab` lost its sort rows (the bench prints at its end and ran past its limit; its test
  # filters also matched the dtypes_* modules): sort tests alone, then small bench runs.
  timeout $limit .gpu/suite-cuda --test-threads 2 sort:: scan:: --skip dtypes_ > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-vulkan --test-threads 2 sort:: scan:: --skip dtypes_ > "$OUT/tests-vulkan.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort::floats sort::all_equal sort::many_tiles --skip dtypes_ \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  summaries
  T=topk_with_indices; S=sort_with_indices
  BENCH_LIMIT=60 bench small .gpu/sieve-bench-cuda --case cumsum:1048576:f32 --case cumsum:16777216:f32 \
    --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000 \
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied \
    --case $S:16384x128:f32 --case $S:16384x128:f32:match=1
  BENCH_LIMIT=130 bench keys .gpu/sieve-bench-cuda --case sort:268435456:i32 \
    --case sort:268435456:i32:match=1 --case sort:268435456:i32:match=1,window=4
  BENCH_LIMIT=100 bench pairs .gpu/sieve-bench-cuda --case $S:268435456:f32 \
    --case $S:268435456:f32:match=1,window=4
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cumsum|sort|argsort|topk)" "$OUT/torch.txt" | head -30
  ;;
final)
  timeout $limit .gpu/suite-vulkan --test-threads 2 sort:: scan:: --skip dtypes_ > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 sort:: --skip dtypes_ > "$OUT/tests-cuda.txt" 2>&1 &
  wait
  summaries
  grep -E "panicked|assert" -A3 "$OUT"/tests-*.txt | head -30
  BENCH_LIMIT=140 bench keys .gpu/sieve-bench-cuda --case sort:268435456:i32 \
    --case sort:268435456:i32:window=4 --case sort:268435456:i32:window=8
  timeout ${TORCH_LIMIT:-70} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(cumsum|sort|argsort)" "$OUT/torch.txt" | head -30
  ;;
*)
  echo "usage: $0 <ab|ab2|final>"; exit 2
  ;;
esac
