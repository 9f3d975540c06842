#!/usr/bin/env bash
# Written in the twenty-eighth session (no GPU was lent) and extended in the twenty-ninth (no
# GPU either) for the next one. Everything those sessions landed ran on lavapipe only; these
# calls put it on the H200 first, then `bench/gpu_session28.sh` (a, b, c) takes the
# measurements planned before them.
#   v  What the two sessions changed, through CUDA (6 processes) and Vulkan (4), within LIMIT
#      (500 s): every Burn op module (28: the adapter's `Values` operands and family traits;
#      29: `mask_select`, `argwhere` and `unique` as counted compactions in two ops, results
#      of exactly their size), the raw top-k tests (28: `ChunkGrid`, the shared `gather_rows`,
#      which also decodes the sorts' 64-bit keys: `dtypes_ops::`) and the raw compaction tests
#      (29: `count_survivors`/`write_survivors`, the scatters' bound on a survivor's slot);
#      memcheck over `topk::`, `compact::` and `filter_ops::`, racecheck over `topk::` and over
#      `compact::` with `filter_ops::`. Not the raw sort/scan kernels (unchanged) nor `props::`
#      (28's `b`). The whole suite in one call would outrun it (`25-b`: 50 sort and top-k
#      tests, 9 processes, 301 s; a process compiles its kernels one at a time). Files: v.tgz.
#   ab The Burn ops' host cost before and after: the CUDA bench at c7b0b90 (before sieve-burn's
#      `Values` operands, family traits and the counted compaction) and at the new HEAD,
#      alternating processes (old, new, old, new), 30 ms samples, the host-bound rows (cumsum
#      2^20 and 2^24, top-k [16384, 128] k = 8 and [64, 128256] k = 50, sort_with_indices
#      [16384, 128]) and the compaction rows the counted compaction changes (mask_select 2^24
#      at density 0.5 and 0.01, argwhere 2^24 and 2^28, mask_select 2^28 at 0.5), the new
#      binary's compaction rows also with `flush=1` (its scatter is queued after the count
#      read: a flush dispatches it while the host returns). Carry [".gpu-ab", ".gl"] (both
#      binaries; the tree and .gpu together exceed the call's 64 MiB). Files: ab.tgz; then
#      `python3 bench/compare.py new-1.json old-1.json` (and round 2) for the new/old ratio
#      per row.
#   c  (added after `29-a`/`29-b` ran) The counted compaction without its totals kernel (the
#      scan's last pass writes the count): old/new/old/new CUDA bench processes on the
#      compaction rows and `unique` 2^24 (30 ms samples), then `compact::`, `filter_ops::`,
#      `sets::`, `scan::`, `scans::` and `cumulative::` through CUDA (3 processes) and Vulkan
#      (2), memcheck and racecheck over `compact::` and `filter_ops::`. Carry [".gpu",
#      ".gpu-ab", ".gl"] with only the two suites in .gpu and the old and new CUDA benches in
#      .gpu-ab (all four benches with the suites exceed the call's 64 MiB). Files: c.tgz.
#   r  (for the session after the twenty-ninth) racecheck over `topk::` at this code, which `29-a`
#      cut after 12 tests: the module's tests dealt over 4 compute-sanitizer processes (each
#      its own client and JIT), LIMIT 540 s. Carry [".gpu", ".gl"]. Files: r.tgz.
# usage: bash bench/gpu_session30.sh <v|ab|c|r>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
stage_out
case "$1" in
v)
  export LIMIT=${LIMIT:-500}
  M="topk:: topk_ops:: sort_ops:: dtypes_ops:: burn_ops:: cumulative:: dims:: filter_ops::
     split_ops:: sets:: sampling:: backends:: compact::"
  names() { for m in $M; do .gpu/suite-$1 --list $m 2>/dev/null | grep ': test$'; done | sort -u; }
  # split_suite takes one filter; list the modules' tests here and deal them the same way.
  for s in cuda:6 vulkan:4; do
    suite=${s%:*} groups=${s#*:}
    mapfile -t all < <(names $suite | sed 's/: test$//' | grep -v -E "dtypes_sort|props::")
    for ((g = 0; g < groups; g++)); do
      mine=(); for ((i = g; i < ${#all[@]}; i += groups)); do mine+=("${all[$i]}"); done
      timeout $LIMIT .gpu/suite-$suite --exact --test-threads 2 "${mine[@]}" \
        > "$OUT/tests-$suite-$g.txt" 2>&1 &
    done
  done
  sanitize "topk:: compact:: filter_ops::" "topk::;compact:: filter_ops::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack v
  ;;
ab)
  for f in .gpu-ab/*.xz; do xz -d -f "$f"; done; chmod +x .gpu-ab/*
  T=topk_with_indices
  R="--case cumsum:1048576:f32 --case cumsum:16777216:f32 --case $T:16384x128:f32:k=8
     --case $T:64x128256:f32:k=50 --case sort_with_indices:16384x128:f32
     --case mask_select:16777216:f32:density=0.5 --case mask_select:16777216:f32:density=0.01
     --case argwhere:16777216:bool --case argwhere:268435456:bool
     --case mask_select:268435456:f32:density=0.5"
  F="--case mask_select:16777216:f32:density=0.5,flush=1
     --case mask_select:16777216:f32:density=0.01,flush=1 --case argwhere:16777216:bool:flush=1
     --case argwhere:268435456:bool:flush=1"
  for round in 1 2; do
    for v in old new; do
      extra=; [ $v = new ] && extra=$F
      timeout 150 .gpu-ab/sieve-bench-cuda-$v --runs 10 --sample-ms 30 --with raw=none --no-burn \
        --json "$OUT/$v-$round.json" $R $extra > "$OUT/$v-$round.txt" 2>&1
      echo "== $v round $round rc=$? at ${SECONDS}s"
      grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/$v-$round.txt" | grep -v skipped | cut -c1-150
      pack ab
    done
  done
  ;;
r)
  mapfile -t names < <(.gpu/suite-cuda --list topk:: 2>/dev/null | grep ': test$' | sed 's/: test$//' \
    | grep -v -E "dtypes_sort|topk_ops")
  for ((g = 0; g < 4; g++)); do
    mine=(); for ((i = g; i < ${#names[@]}; i += 4)); do mine+=("${names[$i]}"); done
    SIEVE_PROP_CASES=20 timeout ${LIMIT:-540} compute-sanitizer --tool racecheck --error-exitcode 9 \
      .gpu/suite-cuda --exact --test-threads 2 "${mine[@]}" > "$OUT/racecheck-cuda-$g.txt" 2>&1 &
  done
  wait
  echo "== racecheck done at ${SECONDS}s"; suite_summary
  pack r
  ;;
c)
  for f in .gpu-ab/*.xz; do xz -d -f "$f"; done; chmod +x .gpu-ab/*
  R="--case mask_select:16777216:f32:density=0.5 --case mask_select:16777216:f32:density=0.01
     --case argwhere:16777216:bool --case argwhere:268435456:bool
     --case mask_select:268435456:f32:density=0.5 --case unique:16777216:f32:distinct=65536
     --case cumsum:1048576:f32"
  for round in 1 2; do
    for v in old new; do
      timeout 60 .gpu-ab/sieve-bench-cuda-$v --runs 10 --sample-ms 30 --with raw=none --no-burn \
        --json "$OUT/$v-$round.json" $R > "$OUT/$v-$round.txt" 2>&1
      echo "== $v round $round rc=$? at ${SECONDS}s"
      grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/$v-$round.txt" | grep -v skipped | grep auto | cut -c1-130
      pack c
    done
  done
  export LIMIT=${LIMIT:-300}
  M="compact:: filter_ops:: sets:: scan:: scans:: cumulative::"
  export SKIP="dtypes_sort|dtypes_scan"
  split_suite cuda 3 "$M"; split_suite vulkan 2 "$M"
  sanitize "compact:: filter_ops::" "compact:: filter_ops::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack c
  ;;
esac
