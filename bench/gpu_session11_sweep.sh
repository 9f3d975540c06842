#!/usr/bin/env bash
# Eleventh session's third call: (1) where the one-cube-per-row select (the sampling draw's
# first kernel, and top-k's at [64, 128256]) loses time: its row cutting (`split=`: cubes for
# cut rows, `chunk_min=`: shortest chunk) and units (`row_units=`) at [64, 128256] k=50 and
# k=1, raw radix_select rows through CUDA; (2) searchsorted with shared-memory splitters, 2^24
# queries into 2^20 keys, and the sampling rows after the draw kernel's blocked runs, through
# CUDA, Vulkan and torch; (3) tests: `topk::`, `sets::` and `sampling::` through CUDA and
# Vulkan, memcheck and racecheck over `sets::searchsorted` and `sampling::`. Binaries in
# .gpu/ (xz; carry [".gpu", ".gl"]).
#
# usage: LIMIT=280 bash bench/gpu_session11_sweep.sh
#   Files: rows.txt, cuda.json, vulkan.json, torch.json, tests-cuda.txt, tests-vulkan.txt,
#   sanitize.txt.
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-280}
source "$here/gpu_prelude.sh"
search=(--case copy:268435456:f32 --case searchsorted:16777216:f32:keys=1048576
  --case searchsorted:16777216:f32:keys=1024
  --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8
  --case top_k_top_p_sample:256x128256:f32:k=50,p=0.9,t=0.8)
args=("${search[@]}")
for k in 50 1; do
  for split in 264 528 1056; do
    for chunk in 16384 8192 4096; do
      args+=(--case "topk_with_indices:64x128256:f32:k=$k,split=$split,chunk_min=$chunk")
    done
  done
  for units in 256 512; do
    args+=(--case "topk_with_indices:64x128256:f32:k=$k,split=528,chunk_min=8192,row_units=$units")
  done
done
timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" "${args[@]}" \
  >> "$OUT/rows.txt" 2>&1
echo "cuda rc=$?" | tee -a "$OUT/rows.txt"
timeout ${BENCH_LIMIT:-90} .gpu/sieve-bench-vulkan --json "$OUT/vulkan.json" "${search[@]}" \
  >> "$OUT/rows.txt" 2>&1
echo "vulkan rc=$?" | tee -a "$OUT/rows.txt"
timeout ${TORCH_LIMIT:-120} python3 bench/torch_reference.py "$OUT/torch.json" --only=sets,sample \
  >> "$OUT/rows.txt" 2>&1
echo "torch rc=$?" | tee -a "$OUT/rows.txt"
grep -E "^(copy|searchsorted|top_k_top_p)|radix_select" "$OUT/rows.txt"
# The tests after the rows (11-c ran them beside the rows, which spoiled the timings).
for b in cuda vulkan; do
  timeout $limit .gpu/suite-$b --test-threads 2 topk:: sets:: sampling:: \
    > "$OUT/tests-$b.txt" 2>&1 &
done
timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
  --test-threads 2 sets::searchsorted sampling:: > "$OUT/memcheck.log" 2>&1 &
timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
  --test-threads 2 sets::searchsorted sampling:: > "$OUT/racecheck.log" 2>&1 &
wait
cat "$OUT/memcheck.log" "$OUT/racecheck.log" > "$OUT/sanitize.txt"
rm "$OUT/memcheck.log" "$OUT/racecheck.log"
for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
