#!/usr/bin/env bash
# Nineteenth session (issue 15).
#   a  the branches kept off main for want of device time, merged (`s19`: the blocked top-k
#      gather, the sort's write shape), and on them the chunked rows' merge (`topk-merge`):
#      the top-k and sort tests through CUDA and Vulkan,
#      the rest of the top-k tests through CUDA (props::topk, sets::, small_devices::,
#      soundness::topk, dtypes_ops::every_dtype_through_every_op), memcheck and racecheck
#      over the gather's and the sort's writes; an A/B of the top-k rows and the sort rows
#      against main's bench (`.gpu/sieve-bench-cuda-base`); the in-cube sort at the shapes
#      of the chunked row path's candidates ([64, 2000] against [128, 1000], keys per unit
#      8, 4, 2); Nsight Compute's kernel times of [64, 128256] k = 1000 through both benches,
#      and of the in-cube sort kernel at [16384, 128] (the Burn op's calls, then the raw ones).
#      Files: tests-*.txt, memcheck-cuda.txt, racecheck-cuda-*.txt, bench.txt, bench.json,
#      ncu.txt.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=300 bash bench/gpu_session19.sh <a>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-300}
source "$here/gpu_prelude.sh"
T=topk_with_indices
S=sort_with_indices
case "$1" in
a)
  M="topk:: topk_ops:: sampling:: sort:: sort_ops::"
  R="props::topk props::empty_shapes_topk sets:: small_devices:: soundness::topk"
  timeout $limit .gpu/suite-vulkan --test-threads 3 $M $R > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 3 $M > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $R > "$OUT/tests-cuda-rest.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 1 dtypes_ops::every_dtype_through_every_op \
    > "$OUT/tests-cuda-dtypes.txt" 2>&1 &
  sanitize "topk::row_sampled topk::every_length topk::candidates topk_ops::default_tuning_on_few sort::many_tiles" \
    "topk::row_sampled topk::every_length topk::sampled_bound;sort::many_tiles sort::every_length"
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/*.txt | head -20
  B=$T:64x128256:f32
  args=(--case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied
    --case $T:16384x128:f32:k=8 --case $T:16777216:f32:k=1000 --case $T:268435456:f32:k=1000
    --case sort:268435456:i32 --case $S:16777216:f32 --case $S:16384x128:f32)
  for e in 8 4 2; do args+=(--case $S:64x2000:i32,in_cube_epu=$e --case $S:128x1000:i32,in_cube_epu=$e); done
  : > "$OUT/bench.txt"
  for b in base new; do
    bin=.gpu/sieve-bench-cuda; [ $b = base ] && bin=.gpu/sieve-bench-cuda-base
    timeout ${BENCH_LIMIT:-120} $bin --no-burn --runs 10 --json "/tmp/$b.json" "${args[@]}" \
      > "/tmp/$b.txt" 2>&1
    echo "bench $b rc=$?"; { echo "=== $b"; cat "/tmp/$b.txt"; } >> "$OUT/bench.txt"
    grep -E "^(topk|copy|sort)" "/tmp/$b.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  done
  for b in base new; do
    bin=.gpu/sieve-bench-cuda; [ $b = base ] && bin=.gpu/sieve-bench-cuda-base
    echo "=== $b" >> "$OUT/ncu.txt"
    timeout 60 ncu --metrics gpu__time_duration.sum --csv --launch-count 40 $bin --no-burn \
      --runs 10 --case $T:64x128256:f32:k=1000 2>&1 | grep -v -E "^==PROF==" >> "$OUT/ncu.txt"
    echo "ncu $b rc=${PIPESTATUS[0]}"
  done
  # The Burn op's sort kernel against the raw call's: same GPU time, or not?
  echo "=== sort_in_cube [16384, 128], Burn op then raw" >> "$OUT/ncu.txt"
  timeout 60 ncu --metrics gpu__time_duration.sum --csv --kernel-name regex:sort_in_cube \
    --launch-count 40 .gpu/sieve-bench-cuda --no-burn --runs 10 --case $S:16384x128:f32 2>&1 \
    | grep -v -E "^==PROF==" >> "$OUT/ncu.txt"
  echo "ncu sort rc=${PIPESTATUS[0]}"
  python3 -c "import json,sys; json.dump({n: json.load(open(f'/tmp/{n}.json')) for n in ['base','new']}, open(sys.argv[1],'w'))" "$OUT/bench.json"
  ;;
esac
