#!/usr/bin/env bash
# Written at the end of the twenty-fifth session for the next one (issue 15).
#   a  the twenty-fifth session's last code on the GPU (one gather kernel for the sort's decode,
#      top-k's finish and its composition of positions; Lsd's per-tile counts in 8 copies):
#      the CUDA suite as 7 processes and the Vulkan suite as 3 (`split_suite`) over the
#      modules that gather or sort (`dtypes_sort` too: its narrow and wide keys decode),
#      memcheck over `topk::` and racecheck over `sort::` beside them, within LIMIT (480 s).
#      Files: a.tgz.
#   b  GPU quiet: Nsight Compute's kernel durations of the first `unique` 2^28 call (its first
#      60 launches; 15.8 ms against torch's 6.5 in `25-c`/`25-d`: which kernels?), then torch's
#      set rows. (A batched top-k
#      `split` sweep is not worth a call: the default already cuts 64 rows in two, one cube a
#      multiprocessor, and two chunks beat four on every row in `18-c`; the tied k = 50 row is
#      0.44x torch raw, 0.52x through the Burn op at 3 ms samples: the pipeline's fill.) Files:
#      b.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): suite-cuda, suite-vulkan, sieve-bench-cuda.
# usage: [LIMIT=270] bash bench/gpu_session26.sh <a|b>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
M="sort:: sort_ops:: topk:: topk_ops:: dtypes_sort sampling:: sets:: small_devices::"
stage_out
case "$1" in
a)
  export LIMIT=${LIMIT:-480} SKIP=none_skipped
  split_suite cuda 7 "$M"; split_suite vulkan 3 "$M"
  sanitize "topk::" "sort::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  ;;
b)
  # `a`'s racecheck over `sort::` also matched `dtypes_sort` and ran out its time: again, without
  # it, and over `topk::` beside it (its finish now the shared gather), before the profile.
  sanitize "--exact none" "sort:: --skip dtypes_sort;topk:: --skip dtypes_sort"
  wait
  for f in "$OUT"/racecheck-cuda-*.txt; do echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"; done
  timeout 150 ncu --metrics gpu__time_duration.sum --launch-count 60 --csv .gpu/sieve-bench-cuda --no-burn \
    --runs 10 --case unique:268435456:f32:distinct=1048576 > "$OUT/ncu-unique.csv" 2>&1
  echo "== ncu unique rc=$? at ${SECONDS}s"
  grep gpu__time_duration "$OUT/ncu-unique.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120 | head -40
  pack b
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"
  ;;
*) echo "usage: $0 <a|b>"; exit 2 ;;
esac
pack $1
