#!/usr/bin/env bash
# Written at the end of the thirty-ninth session for the next one. One call (~540 s):
#   tv  The tests session 39 left unrun through a GPU, from main's HEAD: the new
#       `dims::outputs_along_a_dim_feed_fused_ops_as_read` with `dims::` and `sets::` through
#       CUDA (3 processes) and Vulkan (2), `dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings`
#       through CUDA in a process of its own (never reached at `856ec46`: ~300 s of JIT), memcheck
#       over the new test, within TV_LIMIT (300) s; then issue 16's device-wide top-k cube sweep
#       through Vulkan (`gpu_session39.sh vc`'s rows, VC_LIMIT 230 s), after the tests, not
#       beside them.
# usage: F_DIR=<benches> bash bench/gpu_session40.sh tv   (suites in F_DIR's `s` twin; carry
#        F_DIR, its twin and ".gl")
set -uo pipefail
here="$(dirname "$0")"
mkdir -p .gpu
cp ${F_DIR:?}/*.xz ${F_DIR}s/*.xz .gpu/
# Session 40's checkout was new: its Vulkan bench is built against crates.io's cubecl-wgpu
# (`--no-default-features --features vulkan`), not bench/vulkan_robustness's patched copy,
# whose only change applies where SIEVE_VK_ROBUSTNESS=off (never set here): the same device.
[ -f .gpu/sieve-bench-vulkan.xz ] && export VK_BENCH=.gpu/sieve-bench-vulkan
source "$here/gpu_prelude.sh"
begin
case "$1" in
tv)
  export SIEVE_PROP_CASES=200
  L=${TV_LIMIT:-300}
  LIMIT=$L split_suite cuda 3 "dims:: sets::"
  LIMIT=$L split_suite vulkan 2 "dims:: sets::"
  timeout $L .gpu/suite-cuda --exact dtypes_scan::scan_every_dtype_op_and_kind_at_default_tunings \
    > "$OUT/tests-cuda-dtypes.txt" 2>&1 &
  timeout $L compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/suite-cuda \
    --exact dims::outputs_along_a_dim_feed_fused_ops_as_read > "$OUT/memcheck-cuda.txt" 2>&1 &
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack tv
  topk_cube_sweep_vulkan ${VC_LIMIT:-230}
  pack tv
  ;;
*) echo "usage: $0 tv"; exit 2 ;;
esac
