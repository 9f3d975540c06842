#!/usr/bin/env bash
# Eighteenth session (issue 15): batched top-k rows at k = 1000 and tied rows.
#   probe  where [64, 128256] top-k spends its time at the binaries of `aa64218` (kernels of
#          main): the bench's batched rows with tuning variants (rows cut into 1, 2, 4, 8
#          chunks; 512-unit row cubes; the device-wide passes; the minima bound tried at
#          k = 1000), Nsight Compute kernel durations of the default path (uniform and tied
#          k = 1000), torch's top-k rows. Files: bench-cuda.txt, cuda.json, ncu-*.csv,
#          torch.txt, torch.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=200 bash bench/gpu_session18.sh <probe>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-150}
source "$here/gpu_prelude.sh"
T=topk_with_indices
case "$1" in
probe)
  B=$T:64x128256:f32:k=1000
  args=(--case $B --case $B,split=64 --case $B,split=128 --case $B,split=512
    --case $B,row_units=512 --case $B,row_max=0 --case $B,bound=1
    --case $B,dist=tied --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=50)
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  for c in $B $B,dist=tied; do
    n=$(echo "$c" | tr -c 'a-z0-9\n' '_' | tail -c 20)
    timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv --launch-count 40 \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c > "$OUT/ncu-$n.csv" 2>&1
    echo "ncu $c rc=$?"
  done
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  ;;
esac
