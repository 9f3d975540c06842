#!/usr/bin/env bash
# Seventeenth session (issue 15): the sort ranker's leaner vote and write (`f4bec8c`).
#   ab     tests first: `sort::` (with `dtypes_sort::`), `topk::`, `sort_ops::`, `topk_ops::` through CUDA, the same and
#          `scan::` through Vulkan (the first Vulkan run since the shared match was taken out);
#          then sort rows through the bench before the change (`.gpu/sieve-bench-cuda-base`,
#          `94008b1`) and after it, a group at a time: [16384, 128] pairs, sort i32 2^28 (after:
#          window 1 and 4, 20 keys a unit). Files: tests-cuda.txt, tests-vulkan.txt, bench.txt (every bench
#          run's table, in order), bench.json ({"runs": [...]}, one entry per run).
#   sweep  what `ab` lost (its tests ran past the limit): the tests without the dtype modules,
#          memcheck and racecheck over sort tests; keys-only 2^28 at 20 and 24 keys a unit with
#          window 4 and 24 with window 1; sort_with_indices 2^28 after (12 and 16 keys a unit)
#          and before.
#   final  the new defaults (`aa64218`): sort tests through CUDA and Vulkan, racecheck; sort i32
#          2^28, sort_with_indices [16384, 128], 2^24 and 2^28 at the defaults; torch's sort rows.
# The session's other calls (17-d Nsight, 17-e pairs at 16 keys, 17-f sampling, sets and
# memcheck) were single commands; their READMEs give them.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=200 bash bench/gpu_session17.sh <ab|sweep|final>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-150}
source "$here/gpu_prelude.sh"
mkdir -p /tmp/runs
runs=()
bench() { # bench NAME BINARY ARGS...: one bench run; its table appended to bench.txt
  local name=$1 bin=$2; shift 2
  timeout ${BENCH_LIMIT:-120} $bin --no-burn --runs 10 --json "/tmp/runs/$name.json" "$@" \
    > "/tmp/runs/$name.txt" 2>&1
  local rc=$?
  { echo "=== $name ($bin) rc=$rc"; cat "/tmp/runs/$name.txt"; } >> "$OUT/bench.txt"
  echo "bench $name rc=$rc"
  grep -E "^(sort|copy|argsort)" "/tmp/runs/$name.txt" | grep -v -E "skipped|in_cube.*-"
  runs+=("$name")
}
merge() {
  python3 - "$OUT/bench.json" "${runs[@]}" <<'PY'
import json, os, sys
out, names = sys.argv[1], sys.argv[2:]
runs = []
for n in names:
    p = f"/tmp/runs/{n}.json"
    if os.path.exists(p):
        d = json.load(open(p)); d["name"] = n; runs.append(d)
json.dump({"runs": runs}, open(out, "w"), indent=1)
PY
}
case "$1" in
ab)
  M="sort:: topk:: sort_ops:: topk_ops::"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M scan:: > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  S=sort_with_indices
  BENCH_LIMIT=40 bench small-base .gpu/sieve-bench-cuda-base --case $S:16384x128:f32
  BENCH_LIMIT=40 bench small-new .gpu/sieve-bench-cuda --case $S:16384x128:f32
  BENCH_LIMIT=60 bench keys-base .gpu/sieve-bench-cuda-base --case sort:268435456:i32
  BENCH_LIMIT=130 bench keys-new .gpu/sieve-bench-cuda --case sort:268435456:i32 \
    --case sort:268435456:i32:window=4 --case sort:268435456:i32:epu=20
  merge
  ;;
sweep)
  # `ab`'s tests ran past its limit (the dtype modules match `sort::` and `scan::`): the sort,
  # top-k and scan tests without them, beside memcheck and racecheck; then the tiles and
  # window that decide the defaults, and the pairs rows before and after.
  M="sort:: topk:: sort_ops:: topk_ops::"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M scan:: --skip dtypes_ > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M --skip dtypes_ > "$OUT/tests-cuda.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort::floats sort::all_equal sort::many_tiles --skip dtypes_ \
    > "$OUT/memcheck-cuda.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort::every_length sort::many_tiles --skip dtypes_ \
    > "$OUT/racecheck-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  K=sort:268435456:i32; S=sort_with_indices:268435456:f32
  BENCH_LIMIT=130 bench keys-tiles .gpu/sieve-bench-cuda --case $K:epu=20,window=4 \
    --case $K:epu=24,window=4 --case $K:epu=24
  BENCH_LIMIT=90 bench pairs-new .gpu/sieve-bench-cuda --case $S --case $S:epu=16
  BENCH_LIMIT=50 bench pairs-base .gpu/sieve-bench-cuda-base --case $S
  merge
  ;;
final)
  # The new defaults (`aa64218`: 24 keys a unit alone, window 4): the sort tests through CUDA
  # and Vulkan at them, racecheck; the sort rows at the defaults (the Burn op is the `auto`
  # row); torch's sort rows.
  M="sort:: sort_ops::"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M --skip dtypes_ > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M --skip dtypes_ > "$OUT/tests-cuda.txt" 2>&1 &
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sort::every_length sort::many_tiles --skip dtypes_ \
    > "$OUT/racecheck-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  S=sort_with_indices
  BENCH_LIMIT=60 bench keys .gpu/sieve-bench-cuda --case sort:268435456:i32
  BENCH_LIMIT=70 bench small .gpu/sieve-bench-cuda --case $S:16384x128:f32 --case $S:16777216:f32
  BENCH_LIMIT=120 bench pairs .gpu/sieve-bench-cuda --case $S:268435456:f32
  merge
  timeout ${TORCH_LIMIT:-70} python3 bench/torch_reference.py "$OUT/torch.json" --only=sort \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^(sort|argsort)" "$OUT/torch.txt" | head -30
  ;;
*)
  echo "usage: $0 <ab|sweep|final>"; exit 2
  ;;
esac
