#!/usr/bin/env bash
# Eleventh session's second kind of call: where the one-cube-per-row select (the sampling
# draw's first kernel, and top-k's at [64, 128256]) loses time. Sweeps the select's row
# cutting (`split=`: cubes for cut rows, `chunk_min=`: shortest chunk) and units
# (`row_units=`) at [64, 128256] k=50 and k=1 through CUDA (raw radix_select rows), and runs
# the raw top-k tests (`topk::`, every strategy after this session's launch refactor)
# through CUDA and Vulkan. Binaries in .gpu/ as for gpu_session11.sh.
#
# usage: LIMIT=280 bash bench/gpu_session11_sweep.sh
#   Files: sweep.txt, sweep.json, topk-cuda.txt, topk-vulkan.txt.
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-280}
source "$here/gpu_prelude.sh"
for b in cuda vulkan; do
  timeout $limit .gpu/suite-$b --test-threads 2 topk:: > "$OUT/topk-$b.txt" 2>&1 &
done
args=()
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
timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --json "$OUT/sweep.json" "${args[@]}" \
  > "$OUT/sweep.txt" 2>&1
echo "sweep rc=$?" | tee -a "$OUT/sweep.txt"
grep radix_select "$OUT/sweep.txt"
wait
for f in "$OUT"/topk-*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
