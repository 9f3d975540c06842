#!/usr/bin/env bash
# Thirtieth session: the two verification calls planned in the twenty-ninth, in one call to
# save device time (the session has 30 minutes of it).
#   rb  racecheck over `topk::` (its tests dealt over 4 compute-sanitizer processes; `29-a`'s
#       single process was cut after 12 tests) beside `props::` through Vulkan (3 processes)
#       and CUDA (3), at the suite's default cases (issue 16: the property suite through
#       Vulkan on the H200). LIMIT 540 s each. Carry [".gpu", ".gl"]. Files: rb.tgz.
# usage: bash bench/gpu_session31.sh rb
set -uo pipefail
here="$(dirname "$0")"
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
*) echo "usage: $0 rb"; exit 2 ;;
esac
pack $1
