#!/usr/bin/env bash
# The thirty-fifth session's calls (benches in B_DIR; carry [B_DIR, ".gl"]). The suites at
# main's final code ran through `gpu_session34.sh tv`.
#   pp  Where two marks lose, each launch timed by CubeCL's profiling logger (every launch
#       synchronised and timed by the runtime; `bench/profile_summary.py`; logs gzipped in
#       pp.tgz): `unique`'s keys-only sort of 2^28 f32 keys through CUDA (integers 0..2^20 as
#       f32: a skewed top digit; issue 17: unique 8.27 ms against torch's 6.47) beside random
#       f32 keys; the top-k Burn op at [2^24] k = 100000 through Vulkan and CUDA (issue 16:
#       0.571 ms through Vulkan against torch.topk's 0.412 on CUDA). Then the same rows timed
#       (30 ms samples, no logger) with `unique` by stages.
#   lc  Longer rows through the row cube, raw radix select, both runtimes (the thirty-fourth
#       session's `lc`, trimmed): [2^26] / [2^28] k = 10 / 64 at the default (device-wide)
#       against `split=` cutting them into 2^17-key chunks selected again; the merge /
#       select-again threshold at [4, 2^22] (33 chunks a row) k = 10 / 64 (`merge_chunks=0`
#       selects again, `=1000` merges); the Burn op [2^24] k = 1000 / 100000; torch's top-k rows.
#   fin The session's final code (benches in B_DIR, suites in TS_DIR; carry both and ".gl"):
#       through CUDA the tests `tv` left unstarted (and the new long-row test), through Vulkan
#       `topk::` and `topk_ops::`, beside the benches (the tests compile kernels on the host
#       meanwhile): `TopkTuning::row_long_split_cubes` (`long_split=`) at [2^25] / [2^26] /
#       [2^27] against 0 (the old route, device-wide), the Burn op at the new default; then the
#       i32 keys-only sort of 2^28 under the profiling logger (its counting pass against
#       `pp`'s f32 ones).
#   fin2 The session's final code (the half-cube limit on the long-row cut's candidates):
#       the long-row tests through both runtimes, and the Burn op at [2^26] k = 64 / 128 / 256
#       (cut, cut, device-wide now) through both.
#   ra  Relaxed SPIR-V atomics (issue 16; B_DIR holds sieve-bench-vkrelaxed, built by
#       bench/spirv_relaxed_atomics/build.sh): cubecl-spirv gives every atomic acquire /
#       release semantics where CUDA's atomicAdd has none; the device-wide top-k's histogram
#       passes (shared-memory atomics) ran 1.9-3.3x their CUDA time through Vulkan (`35-pp`).
#       The same binary with SIEVE_SPIRV_RELAXED unset / shared / all / unset, one process
#       each: top-k [2^24] k = 100000 and [2^28] k = 10 (raw radix select), sort_with_indices
#       2^24 (Lsd: per-tile histograms in shared memory), every output checked.
# usage: B_DIR=<benches> [TS_DIR=<suites>] bash bench/gpu_session35.sh pp|lc|fin|fin2|ra
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${B_DIR:?}/*.xz .gpu/
case "$1" in fin*) cp ${TS_DIR:?}/*.xz .gpu/ ;; esac
source "$here/gpu_prelude.sh"
rm -rf /tmp/o
stage_out
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
# profile RUNTIME CASE [EXTRA...]: one bench process under the profiling logger; the log's
# summary printed, the log gzipped into the call's pp.tgz.
profile() {
  local rt=$1 c=$2 n root=$PWD; shift 2
  n=$rt-$(echo "$c" | tr ':=,' '___')
  mkdir -p /tmp/prof && cd /tmp/prof
  printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-$n.log" > cubecl.toml
  timeout 60 $root/.gpu/sieve-bench-$rt --no-burn --runs 10 "$@" --case $c > "$OUT/prof-$n.txt" 2>&1
  echo "== profile $rt $c rc=$? at ${SECONDS}s"; cd $root
  python3 bench/profile_summary.py "$OUT/prof-$n.log" | head -14
  gzip -f "$OUT/prof-$n.log"; pack $PACK
}
PACK=$1
case "$1" in
pp)
  profile cuda sort:268435456:f32:distinct=1048576 --with raw=none
  profile cuda sort:268435456:f32 --with raw=none
  profile vknr topk_with_indices:16777216:f32:k=100000 --warm-ms 2000
  profile cuda topk_with_indices:16777216:f32:k=100000
  timeout 100 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" \
    --case sort:268435456:f32:distinct=1048576 --case sort:268435456:f32 --case sort:268435456:i32 \
    --case unique:268435456:f32:distinct=1048576,stages=1 > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"
  grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda.txt" | grep -v skipped | cut -c1-150
  ;;
lc)
  R=raw=radix_select A=topk_with_indices:67108864:f32 B=topk_with_indices:268435456:f32
  L=""
  for k in 10 64; do
    L="$L --case $A:k=$k,$R --case $A:k=$k,$R,split=512 --case $B:k=$k,$R --case $B:k=$k,$R,split=2048"
    L="$L --case topk_with_indices:4x4194304:f32:k=$k,$R,merge_chunks=0/1000"
  done
  L="$L --case topk_with_indices:16777216:f32:k=1000,$R --case topk_with_indices:16777216:f32:k=100000,$R"
  timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $L > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack lc
  timeout 240 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $L > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack lc
  timeout 90 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
fin)
  S=sampling:: T=topk:: P=topk_ops::
  timeout 400 .gpu/suite-cuda --exact --test-threads 2 ${T}long_rows_cut_within_the_long_row_budget \
    ${P}default_tuning_on_rows_past_the_row_cube ${P}k_past_the_row_is_named > "$OUT/tests-cuda-0.txt" 2>&1 &
  timeout 400 .gpu/suite-cuda --exact --test-threads 2 ${T}bad_calls_get_clear_errors ${T}index_dtypes \
    ${T}random_floats_no_ties small_devices::burn_sorts_at_default_tunings > "$OUT/tests-cuda-1.txt" 2>&1 &
  timeout 400 .gpu/suite-cuda --exact --test-threads 2 ${S}uniforms_at_columns_are_the_rows_gathered \
    ${S}filters_never_let_a_forbidden_token_through > "$OUT/tests-cuda-2.txt" 2>&1 &
  SKIP="dtypes_sort|_on_flex|_on_ndarray" LIMIT=400 split_suite vulkan 3 "topk:: topk_ops::"
  R=raw=radix_select L=""
  for k in 10 64 256; do L="$L --case topk_with_indices:33554432:f32:k=$k,$R,long_split=0/1024"; done
  for k in 10 256; do L="$L --case topk_with_indices:67108864:f32:k=$k,$R,long_split=0/1024"; done
  for k in 10 64; do L="$L --case topk_with_indices:134217728:f32:k=$k,$R,long_split=0/1024"; done
  timeout 120 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $L > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack fin
  timeout 180 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $L > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack fin
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  profile cuda sort:268435456:i32 --with raw=none
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
fin2)
  N="topk::long_rows_cut_within_the_long_row_budget topk_ops::default_tuning_on_few_long_rows
    topk_ops::default_tuning_on_rows_past_the_row_cube sampling::whole_rows_rank_nan_low_at_every_strategy"
  for s in cuda vulkan; do
    timeout 240 .gpu/suite-$s --exact --test-threads 4 $N > "$OUT/tests-$s.txt" 2>&1 &
  done
  L=""
  for k in 64 128 256; do L="$L --case topk_with_indices:67108864:f32:k=$k"; done
  timeout 60 .gpu/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $L > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; pack fin2
  timeout 90 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $L > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack fin2
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
ra)
  L="--case topk_with_indices:16777216:f32:k=100000,raw=radix_select --case topk_with_indices:268435456:f32:k=10,raw=radix_select --case sort_with_indices:16777216:f32"
  i=0
  for mode in off shared all off; do
    i=$((i + 1))
    SIEVE_SPIRV_RELAXED=$mode timeout 60 .gpu/sieve-bench-vkrelaxed --no-burn --runs 10 --sample-ms 30 \
      --warm-ms 2000 --json "$OUT/vulkan-$i-$mode.json" $L > "$OUT/rows-$i-$mode.txt" 2>&1
    echo "== $i $mode rc=$? at ${SECONDS}s"; pack ra
    grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$i-$mode.txt" | grep -v skipped | cut -c1-150
  done
  ;;
*) echo "usage: $0 <pp|lc|fin|fin2|ra>"; exit 2 ;;
esac
pack $1
