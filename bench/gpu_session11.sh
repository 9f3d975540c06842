#!/usr/bin/env bash
# Eleventh session's GPU call: `top_k_top_p_sample` as one Burn op (`SieveOps::sieve_sample`:
# a top-k that ranks NaN as -inf, then the fused draw kernel; no sanitising pass), with its raw
# call (`stage=raw`) beside it. Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda,
# suite-vulkan, sieve-bench-cuda, sieve-bench-vulkan.
# Lessons kept: a call that starts the machine costs ~90 s; at most 8 files come back; every
# process under its own `timeout`; libtest filters are substrings.
#
# usage: LIMIT=280 bash bench/gpu_session11.sh
#   (~420 s) sampling rows (and the top-k they run) through CUDA, Vulkan and torch; then
#   sampling:: and topk_ops:: on both runtimes, memcheck and racecheck over sampling::.
#   Files: rows.txt, cuda.json, vulkan.json, torch.json, tests-cuda.txt, tests-vulkan.txt,
#   sanitize.txt.
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-280}
source "$here/gpu_prelude.sh"
args=(--case copy:268435456:f32)
for c in 64x128256:f32 64x128256:bf16 256x128256:f32 256x128256:bf16; do
  args+=(--case "top_k_top_p_sample:$c:k=50,p=0.9,t=0.8")
done
args+=(--case topk_with_indices:64x128256:f32:k=50 --case topk_with_indices:16384x128:f32:k=8)
for b in cuda vulkan; do
  timeout ${BENCH_LIMIT:-90} .gpu/sieve-bench-$b --json "$OUT/$b.json" "${args[@]}" \
    >> "$OUT/rows.txt" 2>&1
  echo "$b rc=$?" | tee -a "$OUT/rows.txt"
done
timeout ${TORCH_LIMIT:-90} python3 bench/torch_reference.py "$OUT/torch.json" \
  --only=topk,sample >> "$OUT/rows.txt" 2>&1
echo "torch rc=$?" | tee -a "$OUT/rows.txt"
grep -E "^(copy|top)" "$OUT/rows.txt"
for b in cuda vulkan; do
  timeout $limit .gpu/suite-$b --test-threads 2 sampling:: topk_ops:: \
    > "$OUT/tests-$b.txt" 2>&1 &
done
timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
  --test-threads 2 sampling:: > "$OUT/memcheck.log" 2>&1 &
timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda \
  --test-threads 2 sampling:: > "$OUT/racecheck.log" 2>&1 &
wait
cat "$OUT/memcheck.log" "$OUT/racecheck.log" > "$OUT/sanitize.txt"
rm "$OUT/memcheck.log" "$OUT/racecheck.log"
for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
