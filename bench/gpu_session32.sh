#!/usr/bin/env bash
# Written in the thirty-first session (no device machine was lent) for the next ones.
#   sa  The suites at the thirty-first session's main (.gpu, see .gpu/BUILT_AT): the modules
#       that session's changes and new tests touch (the draw's -ln u near 1 of the thirtieth,
#       never run on a GPU; the tests written from the coverage audit), through CUDA (3
#       processes) and Vulkan (3), with memcheck over `sampling::` and `index_dtypes::` beside
#       them. Carry [".gpu", ".gl"]. Files: sa.tgz.
#   tt  The `tied-ties` branch (the row cube's minima bound stages the keys below its bound
#       apart from the ties, so a tied row takes its first ties from the row's start instead
#       of a third sweep) against main's benches (`95f127d`, .gpu30), alternating processes
#       main/branch/main/branch through CUDA and Vulkan (2 s warm-up a row), 30 ms samples:
#       [64, 128256] k = 50 uniform and tied (issue 15: tied <= 0.5x torch, 0.52x in `25-c`),
#       k = 1000 uniform and tied (the row's sampled bound: its staging's code changed),
#       [4096, 32768] k = 64 (the minima bound on uniform rows), [16384, 128] k = 8 (rank by
#       counting: its minima bound's staging changed too), the raw row select beside the
#       k = 50 rows, the sampling row; torch's top-k and
#       sampling rows in the same call. Carry [".gpu30", ".gpu31t", ".gl"]. Files: tt.tgz; then
#       `python3 bench/compare.py <branch>.json <main>.json` per runtime and round.
#   tf  (if `tt` shows the branch no slower anywhere) the branch's tests on the H200:
#       `topk::`, `topk_ops::`, `sampling::`, `small_devices::`, `sets::` through CUDA (3) and
#       Vulkan (2), memcheck over `topk::` and racecheck over the row-cube tests. Suites in
#       .gpu31ts (carry [".gpu31ts", ".gl"]). Files: tf.tgz.
# usage: bash bench/gpu_session32.sh <sa|tt|tf>
set -uo pipefail
here="$(dirname "$0")"
# `tf` runs the branch's suites where the prelude looks for them.
[ "${1:-}" = tf ] && mkdir -p .gpu && cp .gpu31ts/*.xz .gpu/
source "$here/gpu_prelude.sh"
stage_out
case "$1" in
sa)
  export LIMIT=${LIMIT:-500}
  M="sampling:: sets:: topk_ops:: filter_ops:: index_dtypes:: dims:: dtypes_ops::every_dtype_through_every_op dtypes_ops::a_dtype"
  export SKIP="dtypes_sort|_on_flex|_on_ndarray"
  split_suite cuda 3 "$M"; split_suite vulkan 3 "$M"
  SIEVE_PROP_CASES=20 timeout $LIMIT compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 sampling:: index_dtypes:: > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
tt)
  for f in .gpu30/*.xz .gpu31t/*.xz; do xz -d -f "$f"; done; chmod +x .gpu30/* .gpu31t/*
  T=topk_with_indices
  R="--case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=50,dist=tied
     --case $T:64x128256:f32:k=1000,dist=tied --case $T:16384x128:f32:k=8
     --case $T:64x128256:f32:k=1000 --case $T:4096x32768:f32:k=64
     --case $T:64x128256:f32:k=50,raw=radix_select --case $T:64x128256:f32:k=50,dist=tied,raw=radix_select
     --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8"
  ab_benches tied .gpu30 .gpu31t "$R" tt
  timeout 60 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk,sample > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; pack tt
  for f in "$OUT"/rows-*-1.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-140; done
  ;;
tf)
  export LIMIT=${LIMIT:-480}
  M="topk:: topk_ops:: sampling:: small_devices:: sets::"
  split_suite cuda 3 "$M"; split_suite vulkan 2 "$M"
  sanitize "topk::" "topk::minima_bound_and_its_fallback topk::every_length_across_a_tile_boundary"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
*) echo "usage: $0 <sa|tt|tf>"; exit 2 ;;
esac
pack $1
