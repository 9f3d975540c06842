#!/usr/bin/env bash
# Twentieth session (issue 15).
#   a  `s20-cand` (main + `topk-one-loader` + `sort-flush`): `topk::`, `topk_ops::`,
#      `sampling::`, `sort_ops::` through CUDA and Vulkan; then, GPU quiet, the Burn op rows the
#      session works on (sorts of 2^20 keys or more now flush inside the op; the batched and
#      short-row top-k; cumsum, mask_select, argwhere at 2^20-2^24) through the candidate's
#      bench (cand), main's (base: no flush in the sorts) and the candidate's with every Burn
#      call followed by a flush (`--with flush=1`), twice, with each thread's CPU time a call
#      (the bench prints it under each row); torch's rows of the same families last.
#      Files: tests-cuda.txt, tests-vulkan.txt, bench-*.txt, torch.json.
#   b  main after the merge (the candidate's kernels): memcheck over the top-k tests whose loads
#      the one loader serves, racecheck over the gather and the merge; then, GPU quiet, the
#      Burn op rows with the `cube` rows (sieve-burn's CubeBackend op with no Dispatch and no
#      Fusion) at 3 ms samples (the default) and at 30 ms, twice, interleaved; torch's rows of
#      the same families last. Files: memcheck-cuda.txt, racecheck-cuda-0.txt, bench-*.txt,
#      torch.json.
#   c  main at the session's end: the standard rows through CUDA (3 ms samples), the batched
#      top-k, short-row and cumsum Burn-op rows again at 30 ms samples, the top-k and sort rows
#      through Vulkan, torch's standard rows last. Files: bench-cuda.txt, cuda.json,
#      bench-cuda-30.txt, bench-vulkan.txt, vulkan.json, torch.json.
#   d  the standard rows 20-c's limit cut (the sort and top-k rows the one loader reaches, and
#      sampling and unique on them), through CUDA, torch's sort, top-k, sampling and set rows
#      last. Files: bench-cuda.txt, cuda.json, torch.json.
#   e  20-d's [4096, 32768] k = 64 row (0.784 ms) against 19-c's (0.545): the session's start
#      (`b3ac190`, `sieve-bench-cuda-start`) against main (`0c92e15`: the one loader), twice,
#      interleaved, with [64, 128256] k = 1000 as a control. Files: bench-*.txt.
#   f  `column-scan` (`scan_columns`; the cumulative Burn ops scan columns in place where they
#      are many): `scans::columns`, `cumulative::`, `dims::` through CUDA and Vulkan, memcheck
#      over `scans::columns`; then cumsum and cummin [4096, 32768] dim 0 (the column path) and
#      cumsum dim 1 (unchanged) through main's bench (`sieve-bench-cuda-base`: the transpose)
#      and the branch's, interleaved twice (20-f lost these rows to 20 s limits: now 60 s and
#      `--json`, written case by case; `SKIP_TESTS=1` skips the tests, which passed in 20-f).
#      Files: tests-*.txt, memcheck-cuda.txt, bench-*.txt, *.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=200 bash bench/gpu_session20.sh <a>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-200}
source "$here/gpu_prelude.sh"
T=topk_with_indices
S=sort_with_indices
case "$1" in
a)
  M="topk:: topk_ops:: sampling:: sort_ops::"
  timeout $limit .gpu/suite-vulkan --test-threads 3 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 3 $M > "$OUT/tests-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  args=(--case $S:16384x128:f32 --case $S:16777216:f32 --case $S:64x128256:f32:descending=true
        --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
        --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
        --case $T:16384x128:f32:k=8
        --case cumsum:1048576:f32:dim=0 --case cumsum:16777216:f32:dim=0
        --case mask_select:16777216:f32:density=0.5 --case argwhere:16777216:bool:density=0.5)
  for round in 1 2; do
    for v in cand base cand-flush; do
      [ $round = 2 ] && [ $v = cand-flush ] && continue
      with=(); [ $v = cand-flush ] && with=(--with flush=1)
      b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
      timeout ${BENCH_LIMIT:-120} $b --no-burn --runs 10 "${with[@]}" "${args[@]}" \
        > "$OUT/bench-$v-$round.txt" 2>&1
      echo "bench $v $round rc=$?"
    done
  done
  timeout ${TORCH_LIMIT:-120} python3 bench/torch_reference.py "$OUT/torch.json" \
    --only=sort,topk,filter > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"
  for f in "$OUT"/bench-*.txt; do
    echo "== $f"
    grep -E "\"auto\"|strategy\":\"auto|cpu ms" "$f" | grep -B1 "cpu ms" | grep -v "^--" \
      | awk '{print $1, $2, $4, $6, $11}' | paste - - | cut -c1-220
  done
  ;;
b)
  sanitize "topk::row_sampled topk::every_length topk::candidates topk::sampled_bound" \
    "topk::row_sampled topk::every_length topk::candidates"
  wait
  for f in "$OUT"/*check*.txt; do echo "== $f"; summary "$f"; done
  args=(--case cumsum:1048576:f32:dim=0 --case cumsum:16777216:f32:dim=0
        --case $S:16384x128:f32
        --case $T:64x128256:f32:k=1000 --case $T:64x128256:f32:k=50,dist=tied
        --case $T:16384x128:f32:k=8
        --case mask_select:16777216:f32:density=0.5 --case argwhere:16777216:bool:density=0.5)
  for round in 1 2; do
    for ms in 3 30; do
      timeout ${BENCH_LIMIT:-100} .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms $ms \
        "${args[@]}" > "$OUT/bench-$ms-$round.txt" 2>&1
      echo "bench $ms ms $round rc=$?"
    done
  done
  timeout ${TORCH_LIMIT:-120} python3 bench/torch_reference.py "$OUT/torch.json" \
    --only=sort,topk,filter > /dev/null 2>&1
  echo "torch rc=$?"
  for f in "$OUT"/bench-*.txt; do
    echo "== $f"
    grep -E '"auto"|  cube  ' "$f" | awk '{print $1, $2, $4, $5, $6, $11}' | sed 's/"strategy"://'
  done
  ;;
c)
  timeout ${BENCH_LIMIT:-240} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"
  timeout 90 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 \
    --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000 \
    --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied \
    --case $S:16384x128:f32 --case cumsum:1048576:f32:dim=0 --case cumsum:16777216:f32:dim=0 \
    > "$OUT/bench-cuda-30.txt" 2>&1
  echo "bench cuda 30 ms rc=$?"
  timeout ${VK_LIMIT:-100} .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $T:268435456:f32:k=1000 --case $T:64x128256:f32:k=1000 --case $T:16384x256:f32:k=8 \
    --case $S:16777216:f32 --case $S:16384x128:f32 > "$OUT/bench-vulkan.txt" 2>&1
  echo "bench vulkan rc=$?"
  timeout ${TORCH_LIMIT:-150} python3 bench/torch_reference.py "$OUT/torch.json" > /dev/null 2>&1
  echo "torch rc=$?"
  for f in "$OUT"/bench-*.txt; do
    echo "== $f"
    grep -E '"auto"|  cube  ' "$f" | awk '{print $1, $2, $4, $6}' | sed 's/"strategy":"auto"//'
  done
  ;;
d)
  timeout ${BENCH_LIMIT:-300} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    --case $T:268435456:f32:k=10 --case $T:268435456:f32:k=1000 --case $T:268435456:f32:k=100000 \
    --case $T:268435456:f32:k=1000,dist=all_equal --case $T:4096x32768:f32:k=64 \
    --case $T:16777216:f32:k=1000 --case $S:4096x32768:f32 --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8 \
    --case unique:16777216:f32:distinct=1048576 --case sort:268435456:i32 --case argsort:268435456:f32 \
    > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"
  timeout ${TORCH_LIMIT:-150} python3 bench/torch_reference.py "$OUT/torch.json" \
    --only=sort,topk,sample,sets > /dev/null 2>&1
  echo "torch rc=$?"
  grep -E '"auto"' "$OUT/bench-cuda.txt" | awk '{print $1, $2, $4, $6}'
  ;;
e)
  for round in 1 2; do
    for v in start main; do
      b=.gpu/sieve-bench-cuda; [ $v = start ] && b=.gpu/sieve-bench-cuda-start
      timeout 100 $b --no-burn --runs 10 --case $T:4096x32768:f32:k=64 \
        --case $T:64x128256:f32:k=1000 --case $T:4096x32768:f32:k=64 > "$OUT/bench-$v-$round.txt" 2>&1
      echo "== $v $round rc=$?"
      grep -E "radix_select|\"auto\"" "$OUT/bench-$v-$round.txt" | awk '{print $2, $4, $6}'
    done
  done
  ;;
f)
  M="scans::columns cumulative:: dims::"
  [ -n "${SKIP_TESTS:-}" ] && M="scans::none"
  timeout ${TEST_LIMIT:-55} .gpu/suite-cuda --test-threads 3 $M > "$OUT/tests-cuda.txt" 2>&1 &
  timeout ${TEST_LIMIT:-55} .gpu/suite-vulkan --test-threads 3 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  [ -z "${SKIP_TESTS:-}" ] && timeout 55 compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda scans::columns > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt; do echo "== $f"; summary "$f"; done
  args=(--case cumsum:4096x32768:f32:dim=0 --case cummin:4096x32768:f32:dim=0
        --case cumsum:4096x32768:f32:dim=1)
  for round in 1 2; do
    for v in base cols; do
      b=.gpu/sieve-bench-cuda; [ $v = base ] && b=.gpu/sieve-bench-cuda-base
      timeout ${BENCH_LIMIT:-60} $b --no-burn --runs 10 --json "$OUT/$v-$round.json" "${args[@]}" \
        > "$OUT/bench-$v-$round.txt" 2>&1
      echo "== $v $round rc=$?"
      grep -E '"auto"' "$OUT/bench-$v-$round.txt" | awk '{print $1, $2, $4, $6, $7}'
    done
  done
  timeout ${TORCH_LIMIT:-90} python3 bench/torch_reference.py "$OUT/torch.json" --scans \
    > /dev/null 2>&1
  echo "torch rc=$?"
  ;;
*) echo "usage: $0 <a|b|c|d|e|f>"; exit 2 ;;
esac
