#!/usr/bin/env bash
# Builds sieve-bench for Vulkan against cubecl-spirv 0.11.3 with relaxed.patch applied: the
# same bench, whose SPIR-V atomics are relaxed on shared memory with
# SIEVE_SPIRV_RELAXED=shared, on global memory too with =all, and as cubecl-spirv emits them
# (acquire / release) otherwise. An experiment for issue 16, never a dependency
# (bench/with_patched_crate.sh).
#
# usage (from the project root): bash bench/spirv_relaxed_atomics/build.sh [TARGET_DIR]
#   output: TARGET_DIR/release/sieve-bench (default TARGET_DIR: target/vulkan-relaxed)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../with_patched_crate.sh" cubecl-spirv 0.11.3 "$here/relaxed.patch" \
  "${1:-target/vulkan-relaxed}" build --release -p sieve-bench --no-default-features \
  --features vulkan
