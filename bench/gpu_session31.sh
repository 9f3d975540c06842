#!/usr/bin/env bash
# Thirtieth session: the two verification calls planned in the twenty-ninth, in one call to
# save device time (the session has 30 minutes of it).
#   rb  racecheck over `topk::` (its tests dealt over 4 compute-sanitizer processes; `29-a`'s
#       single process was cut after 12 tests) beside `props::` through Vulkan (3 processes)
#       and CUDA (3), at the suite's default cases (issue 16: the property suite through
#       Vulkan on the H200). LIMIT 540 s each. Carry [".gpu", ".gl"]. Files: rb.tgz.
#   ca  Where the counted compaction's time goes through each runtime (issue 16: mask_select /
#       argwhere 2^28 through Vulkan at 1.73x / 1.74x CUDA in `30-a`, where the raw scatter is
#       1.53x / 1.41x): the Burn op, the raw counted compaction (count, read, exact outputs,
#       scatter: `raw=counted`), the raw scatter with its count read after it and the plain raw
#       scatter, at 2^28 (and 2^24 for issue 15's marks), with the copy rows with and without a
#       16-byte read, and the Burn ops followed by a flush (`flush=1`: the queued scatter
#       dispatched while the host returns); torch's filter rows; then the rows `30-a` lost
#       (sampling, sorts, the short top-k rows) through CUDA with WITH_L=1 (the session had
#       about 300 s of device time left: not run then). Benches built at `95f127d`
#       in .gpu30 (carry [".gpu30", ".gl"]). Files: ca.tgz.
#   cb  `ca`'s core in under 100 s (the device time left kept shrinking while no machine was
#       lent): argwhere 2^28 only, raw counted / scatter with its read after / the Burn op with
#       `flush=1`, and the copy rows with and without a read, Vulkan then CUDA. Files: cb.tgz.
#   cd  (for the next session) the `dispatch-compact` branch (`f29010b`: the counted
#       compactions flush Fusion after queuing their scatter, from 2^26 elements) against main
#       (`95f127d`), alternating processes main/branch/main/branch through Vulkan (2 s warm-up
#       a row) and CUDA, 30 ms samples, the Burn op rows only: argwhere and mask_select at 2^28
#       and 2^24, unique 2^24 (2^28's host check alone would outrun a process's limit); then `cb`'s rows (where the counted form's time goes).
#       Carry [".gpu30", ".gpu30d", ".gl"]: main's two benches (built at `95f127d`) in .gpu30,
#       the branch's (`*-dispatch`, Vulkan built at `ebeedbd`, CUDA at `f29010b`: the same code) in
#       .gpu30d. Files: cd.tgz; then `python3 bench/compare.py
#       <branch>.json <main>.json` per runtime and round.
#   ce  (for the next session) the `sparse-values` branch (`cc477e4`: a counted mask
#       compaction with at most one survivor in 16 loads values only for vectors with a
#       survivor) against main, alternating processes main/branch/main/branch through CUDA and
#       Vulkan (2 s warm-up a row), 30 ms samples: mask_select at 2^28 densities 0.01, 0.05 and
#       0.5 (the last unchanged: the dense path) and 2^24 at 0.01, each with the raw counted
#       row (`raw=counted`, the kernels without Burn). Carry [".gpu30", ".gpu30s", ".gl"]
#       (the branch's benches, `*-sparse`, in .gpu30s). Files: ce.tgz; then
#       `python3 bench/compare.py` per runtime and round. Issue 15's mark: mask_select 2^28 at
#       density 0.01 <= torch (0.720-0.740; sieve 0.738 in `25-c`).
#   cf  (if `sparse-values` is merged) its tests on the H200: `compact::`, `filter_ops::`,
#       `sets::`, `dtypes_ops::every_dtype_through_every_op` and `props::filter_property`
#       through CUDA (3 processes) and Vulkan (2), memcheck and racecheck over `compact::` and
#       `filter_ops::`. Suites built from `feafd05` (the branch's head) in .gpu30ss (carry [".gpu30ss", ".gl"]); they stand in for
#       .gpu's. Files: cf.tgz.
# usage: bash bench/gpu_session31.sh <rb|ca|cb|cd|ce|cf>
set -uo pipefail
here="$(dirname "$0")"
# `cf` runs the branch's suites where the prelude looks for them.
[ "${1:-}" = cf ] && mkdir -p .gpu && cp .gpu30ss/*.xz .gpu/
source "$here/gpu_prelude.sh"
stage_out
case "$1" in
rb)
  export LIMIT=${LIMIT:-540}
  mapfile -t names < <(.gpu/suite-cuda --list topk:: 2>/dev/null | grep ': test$' | sed 's/: test$//' \
    | grep -v -E "dtypes_sort|topk_ops")
  echo "topk:: tests under racecheck: ${#names[@]}"
  for ((g = 0; g < 4; g++)); do
    mine=(); for ((i = g; i < ${#names[@]}; i += 4)); do mine+=("${names[$i]}"); done
    SIEVE_PROP_CASES=20 timeout $LIMIT compute-sanitizer --tool racecheck --error-exitcode 9 \
      .gpu/suite-cuda --exact --test-threads 2 "${mine[@]}" > "$OUT/racecheck-cuda-$g.txt" 2>&1 &
  done
  split_suite vulkan 3 "props::"; split_suite cuda 3 "props::"
  wait
  echo "== done at ${SECONDS}s"; suite_summary
  ;;
ca)
  for f in .gpu30/*.xz; do xz -d -f "$f"; done; chmod +x .gpu30/*
  V=.gpu30/sieve-bench-vknr C=.gpu30/sieve-bench-cuda T=topk_with_indices
  # Vulkan: the 2^28 rows (issue 16); CUDA: those and the 2^24 ones (issue 15's marks).
  FV="--case copy:16777216:f32 --case copy:16777216:f32:read=1
     --case argwhere:268435456:bool:raw=counted --case argwhere:268435456:bool:raw=scatter
     --case mask_select:268435456:f32:density=0.5,raw=counted --case mask_select:268435456:f32:density=0.5,raw=scatter
     --case argwhere:268435456:bool:raw=none,flush=1 --case mask_select:268435456:f32:density=0.5,raw=none,flush=1"
  FC="$FV --case argwhere:16777216:bool:raw=counted --case mask_select:16777216:f32:density=0.01,raw=counted
     --case argwhere:16777216:bool:raw=none,flush=1 --case mask_select:16777216:f32:density=0.5,raw=none,flush=1"
  nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
  smi=$!
  timeout 110 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $FV > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack ca
  timeout 55 $C --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $FC > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; kill $smi; gzip -f "$OUT/smi.csv"; pack ca
  timeout 30 python3 bench/torch_reference.py "$OUT/torch.json" --only=filter > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; pack ca
  [ -n "${WITH_L:-}" ] && timeout 50 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda-big.json" $L > "$OUT/rows-cuda-big.txt" 2>&1
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
cb)
  for f in .gpu30/sieve-bench-*.xz; do xz -d -f "$f"; done; chmod +x .gpu30/*
  R="--case copy:16777216:f32 --case copy:16777216:f32:read=1 --case argwhere:268435456:bool:raw=counted
     --case argwhere:268435456:bool:raw=scatter --case argwhere:268435456:bool:raw=none,flush=1"
  timeout 60 .gpu30/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; pack cb
  timeout 30 .gpu30/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-150; done
  ;;
cd)
  for f in .gpu30/*.xz .gpu30d/*.xz; do xz -d -f "$f"; done; chmod +x .gpu30/* .gpu30d/*
  R="--case argwhere:268435456:bool --case mask_select:268435456:f32:density=0.5
     --case argwhere:16777216:bool --case mask_select:16777216:f32:density=0.01
     --case unique:16777216:f32:distinct=65536"
  for round in 1 2; do
    for v in main dispatch; do
      b=.gpu30/sieve-bench-vknr; [ $v = dispatch ] && b=.gpu30d/sieve-bench-vknr-dispatch
      timeout 60 $b --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none \
        --json "$OUT/vulkan-$v-$round.json" $R > "$OUT/rows-vulkan-$v-$round.txt" 2>&1
      echo "== vulkan $v $round rc=$? at ${SECONDS}s"
      b=.gpu30/sieve-bench-cuda; [ $v = dispatch ] && b=.gpu30d/sieve-bench-cuda-dispatch
      timeout 35 $b --no-burn --runs 10 --sample-ms 30 --with raw=none \
        --json "$OUT/cuda-$v-$round.json" $R > "$OUT/rows-cuda-$v-$round.txt" 2>&1
      echo "== cuda $v $round rc=$? at ${SECONDS}s"
      pack cd
    done
  done
  C="--case copy:16777216:f32 --case copy:16777216:f32:read=1 --case argwhere:268435456:bool:raw=counted
     --case argwhere:268435456:bool:raw=scatter --case argwhere:16777216:bool:raw=counted"
  timeout 60 .gpu30/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan-counted.json" $C > "$OUT/rows-vulkan-counted.txt" 2>&1
  echo "== vulkan counted rc=$? at ${SECONDS}s"
  timeout 30 .gpu30/sieve-bench-cuda --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-counted.json" $C > "$OUT/rows-cuda-counted.txt" 2>&1
  echo "== cuda counted rc=$? at ${SECONDS}s"
  for f in "$OUT"/rows-*-1.txt "$OUT"/rows-*-counted.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-140; done
  ;;
ce)
  for f in .gpu30/*.xz .gpu30s/*.xz; do xz -d -f "$f"; done; chmod +x .gpu30/* .gpu30s/*
  R="--case mask_select:268435456:f32:density=0.01,raw=counted --case mask_select:268435456:f32:density=0.05,raw=counted
     --case mask_select:268435456:f32:density=0.5,raw=counted --case mask_select:16777216:f32:density=0.01,raw=counted"
  for round in 1 2; do
    for v in main sparse; do
      b=.gpu30/sieve-bench-cuda; [ $v = sparse ] && b=.gpu30s/sieve-bench-cuda-sparse
      timeout 45 $b --no-burn --runs 10 --sample-ms 30 --json "$OUT/cuda-$v-$round.json" $R > "$OUT/rows-cuda-$v-$round.txt" 2>&1
      echo "== cuda $v $round rc=$? at ${SECONDS}s"
      b=.gpu30/sieve-bench-vknr; [ $v = sparse ] && b=.gpu30s/sieve-bench-vknr-sparse
      timeout 90 $b --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/vulkan-$v-$round.json" $R > "$OUT/rows-vulkan-$v-$round.txt" 2>&1
      echo "== vulkan $v $round rc=$? at ${SECONDS}s"
      pack ce
    done
  done
  for f in "$OUT"/rows-*-1.txt; do echo "== $f"; grep -E "^[a-z_]+ +[0-9x]+ " "$f" | grep -v skipped | cut -c1-140; done
  ;;
cf)
  export LIMIT=${LIMIT:-480}
  M="compact:: filter_ops:: sets:: dtypes_ops::every_dtype_through_every_op props::filter_property"
  for s in cuda:3 vulkan:2; do
    suite=${s%:*} groups=${s#*:}
    mapfile -t all < <(for m in $M; do .gpu/suite-$suite --list $m 2>/dev/null | grep ': test$'; done \
      | sort -u | sed 's/: test$//')
    for ((g = 0; g < groups; g++)); do
      mine=(); for ((i = g; i < ${#all[@]}; i += groups)); do mine+=("${all[$i]}"); done
      timeout $LIMIT .gpu/suite-$suite --exact --test-threads 2 "${mine[@]}" > "$OUT/tests-$suite-$g.txt" 2>&1 &
    done
  done
  sanitize "compact:: filter_ops::" "compact::;filter_ops::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
*) echo "usage: $0 <rb|ca|cb|cd|ce|cf>"; exit 2 ;;
esac
pack $1
