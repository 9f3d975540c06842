#!/usr/bin/env bash
# Builds the test suite for Vulkan's SPIR-V path against cubecl-spirv 0.11.3 with
# shared-implicit.patch applied, and runs TESTS through it (default: the scans, sorts, top-k
# and compaction). On a driver without VK_KHR_workgroup_memory_explicit_layout (Debian 12's
# lavapipe, Mesa 22.3) the unpatched SPIR-V crashes vkCreateComputePipelines on every kernel
# with shared memory; see README.md. An experiment, never a dependency
# (bench/with_patched_crate.sh).
#
# usage (from the project root): bash bench/spirv_shared_memory/test.sh [TARGET_DIR] [TESTS...]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-target/vulkan-spirvfix}"
shift || true
tests=("${@:-scan:: scans:: sort:: topk:: compact::}")
bash "$here/../with_patched_crate.sh" cubecl-spirv 0.11.3 "$here/shared-implicit.patch" \
  "$target" test --release --test suite --no-default-features --features vulkan -- ${tests[@]}
