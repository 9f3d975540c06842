#!/usr/bin/env bash
# Written in the thirty-seventh session (benches in B_DIR, suites in TS_DIR; carry
# [B_DIR, TS_DIR, ".gl"]).
#   tv  The thirty-sixth and thirty-seventh sessions' code on a GPU: session 36's Burn-level
#       fixes and properties (it ran on lavapipe only; see `gpu_session36.sh tv`) and session
#       37's uniforms (`u = (2m + 1) / 2^24` of 23 bits: `sieve::random`'s kernels and the
#       draw kernel's `-ln u` changed), through CUDA (4 processes) and Vulkan (3), 500 cases a
#       property; memcheck over `sampling::` and the sets' order statistics, racecheck over
#       `sampling::`.
#   ts  `tv` cut to what this session's kernels touch: `sampling::` through CUDA and Vulkan
#       (two processes each), memcheck and racecheck over it (for a short device budget).
#   vc  As `gpu_session36.sh vc` (the device-wide top-k's cube sweep, issue 16).
# usage: B_DIR=<benches> TS_DIR=<suites> bash bench/gpu_session37.sh tv|ts|vc
set -uo pipefail
here="$(dirname "$0")"
case "$1" in
tv | ts)
  mkdir -p .gpu
  cp ${TS_DIR:?}/*.xz .gpu/
  source "$here/gpu_prelude.sh"
  rm -rf /tmp/o
  stage_out
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
  export SIEVE_PROP_CASES=500
  if [ "$1" = ts ]; then
    LIMIT=${TV_LIMIT:-480} split_suite cuda 2 sampling::
    LIMIT=${TV_LIMIT:-480} split_suite vulkan 2 sampling::
    LIMIT=${TV_LIMIT:-480} sanitize sampling:: sampling::
    wait
    echo "== tests done at ${SECONDS}s"; suite_summary
    pack ts
    exit 0
  fi
  M="props:: sets:: sampling:: dims:: sort_ops:: topk_ops:: split_ops:: filter_ops:: cumulative::"
  LIMIT=${TV_LIMIT:-480} split_suite cuda 4 "$M"
  LIMIT=${TV_LIMIT:-480} split_suite vulkan 3 "$M"
  LIMIT=${TV_LIMIT:-480} sanitize "sampling:: sets::kthvalue_and_median_match_the_reference" "sampling::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tv
  ;;
vc) exec bash "$here/gpu_session36.sh" vc ;;
*) echo "usage: $0 <tv|ts|vc>"; exit 2 ;;
esac
