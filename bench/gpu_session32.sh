#!/usr/bin/env bash
# The thirty-second session's calls (its checkout was new: the branches of the thirtieth and
# thirty-first sessions were gone, and `tied-ties` was written again).
#   tt  The `tied-ties` branch (a tied row's keys below the minima bound staged apart from its
#       ties and ranked in the bound's sweep; the gather takes only the first ties, from the
#       row's start, and stops once it has them) against main's benches, alternating processes
#       main/branch/main/branch through CUDA and Vulkan (2 s warm-up a row), 30 ms samples:
#       [64, 128256] k = 50 uniform and tied (issue 15: tied <= 0.5x torch, 0.52x in `25-c`),
#       k = 1000 uniform and tied, [4096, 32768] k = 64 (the minima bound on uniform rows),
#       [16384, 128] k = 8 (rank by counting), the raw row select beside the k = 50 rows, the
#       sampling row, the raw k = 50 row cut into 4 and 8 chunks a row (`split=264/528`; the
#       default cuts it in 2 on a card of 132 multiprocessors: sampling's top-k); then (the same branch's sparse values load) mask_select 2^28 and 2^24
#       at density 0.01 (issue 15: <= torch) and 2^28 at 0.5; torch's filter, top-k and
#       sampling rows in the same call. Main's benches in
#       .gpu32m, the branch's in .gpu32t (carry [".gpu32m", ".gpu32t", ".gl"]). Files: tt.tgz;
#       then `python3 bench/compare.py <branch>.json <main>.json` per runtime and round.
#   tf  Suites (in .gpu32ts; carry [".gpu32ts", ".gl"]): the modules the thirty-first
#       session's tests and fixes touch, the top-k modules and `compact::` (M overrides), through CUDA (4 processes) and
#       Vulkan (4), memcheck over `sampling::`, `index_dtypes::` and the minima-bound test,
#       racecheck over the minima-bound and tile-boundary top-k tests. Files: tf.tgz.
#   a   The standard rows through Vulkan and CUDA with torch's (as `gpu_session28.sh a`), from
#       the benches in A_DIR (carry [A_DIR, ".gl"]), and where the counted compaction's time
#       goes (`gpu_session31.sh ca`'s rows: the raw counted compaction, the raw scatter, the
#       Burn op with a flush after it, the copy with and without a 16-byte read; issue 16's
#       mask_select / argwhere 2^28 through Vulkan at 1.73x / 1.74x CUDA). Files: a.tgz.
# Ran in the thirty-second session: `AB_RUNTIMES=cuda ... tt` on an H100 (bench/results/h100/
# 32-tt). Not run: `tf`, `a`, the Vulkan side of `tt`. The suites in .gpu32ts were built at
# `4ae6c8c`; main's top-k staging was reshaped after that (`223c265`, the same logic): rebuild
# them from main before `tf` (TS_DIR names the folder; the thirty-third session's: .gpu33ts).
# usage: bash bench/gpu_session32.sh <tt|tf|a>
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
[ "${1:-}" = tf ] && cp ${TS_DIR:-.gpu32ts}/*.xz .gpu/
# `a` times the benches of A_DIR (.gpu32m unless set: main's; .gpu32t for the branch's, whose
# names end in -tied).
if [ "${1:-}" = a ]; then
  for f in ${A_DIR:-.gpu32m}/*.xz; do b=${f##*/}; cp "$f" ".gpu/${b/-tied/}"; done
fi
source "$here/gpu_prelude.sh"
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
case "$1" in
tt)
  for f in .gpu32m/*.xz .gpu32t/*.xz; do xz -d -f "$f"; done; chmod +x .gpu32m/* .gpu32t/*
  T=topk_with_indices
  R="--case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=50,dist=tied
     --case $T:64x128256:f32:k=1000,dist=tied --case $T:16384x128:f32:k=8
     --case $T:64x128256:f32:k=1000 --case $T:4096x32768:f32:k=64
     --case $T:64x128256:f32:k=50,raw=radix_select --case $T:64x128256:f32:k=50,dist=tied,raw=radix_select
     --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8
     --case $T:64x128256:f32:k=50,raw=radix_select,split=264/528"
  ab_benches tied .gpu32m .gpu32t "$R" tt
  # (AB_RUNTIMES=cuda: CUDA only, when device time is short.)
  # The sparse values load (the same branch): mask_select at density 0.01 (issue 15: <= torch
  # at 2^24 and 2^28), and at 0.5 (not sparse: the same code as main's) beside them.
  C="--case mask_select:268435456:f32:density=0.01 --case mask_select:16777216:f32:density=0.01
     --case mask_select:268435456:f32:density=0.5"
  AB_LIMIT=60 ab_benches tied .gpu32m .gpu32t "$C" tt sparse-
  timeout 90 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,topk,sample > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; pack tt
  for f in "$OUT"/*rows-*-1.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-140; done
  ;;
tf)
  export LIMIT=${LIMIT:-480}
  M=${M:-"topk:: topk_ops:: sampling:: sets:: compact:: filter_ops:: index_dtypes:: dims:: small_devices:: dtypes_ops::every_dtype_through_every_op dtypes_ops::a_dtype"}
  export SKIP="dtypes_sort|_on_flex|_on_ndarray"
  split_suite cuda 4 "$M"; split_suite vulkan 4 "$M"
  sanitize "sampling:: index_dtypes:: topk::minima_bound_and_its_fallback" \
    "topk::minima_bound_and_its_fallback topk::every_length_across_a_tile_boundary"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
a)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda T=topk_with_indices
  R="--case copy:16777216:f32 --case cumsum:268435456:f32 --case cumsum:1048576:f32 --case cumsum:16777216:f32
     --case mask_select:268435456:f32:density=0.5 --case mask_select:268435456:f32:density=0.01
     --case mask_select:16777216:f32:density=0.01 --case argwhere:268435456:bool --case argwhere:16777216:bool
     --case $T:268435456:f32:k=10 --case $T:268435456:f32:k=1000 --case $T:268435456:f32:k=100000
     --case $T:268435456:f32:k=1000,dist=all_equal
     --case $T:4096x32768:f32:k=64 --case $T:16384x128:f32:k=8
     --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000
     --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=1000,dist=tied
     --case sort_with_indices:16384x128:f32 --case sort_with_indices:16777216:f32
     --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8 --case top_k_top_p_sample:256x128256:f32:k=50,p=0.9,t=0.8
     --case searchsorted:16777216:f32:keys=1048576"
  BIG="--case unique:268435456:f32:distinct=1048576 --case sort_with_indices:268435456:f32 --case argsort:268435456:f32 --case sort:268435456:i32"
  timeout 200 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack a
  timeout 120 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack a
  timeout 90 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda-big.json" $BIG > "$OUT/rows-cuda-big.txt" 2>&1
  echo "== cuda big rc=$? at ${SECONDS}s"; pack a
  W="--case copy:16777216:f32:read=1
     --case argwhere:268435456:bool:raw=counted --case argwhere:268435456:bool:raw=scatter
     --case mask_select:268435456:f32:density=0.5,raw=counted --case mask_select:268435456:f32:density=0.5,raw=scatter
     --case argwhere:268435456:bool:raw=none,flush=1 --case mask_select:268435456:f32:density=0.5,raw=none,flush=1"
  timeout 100 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan-where.json" $W > "$OUT/rows-vulkan-where.txt" 2>&1
  echo "== vulkan where rc=$? at ${SECONDS}s"; pack a
  timeout 50 $C --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-where.json" $W > "$OUT/rows-cuda-where.txt" 2>&1
  echo "== cuda where rc=$? at ${SECONDS}s"; pack a
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter,sort,topk,sample,sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
*) echo "usage: $0 <tt|tf|a>"; exit 2 ;;
esac
pack $1
