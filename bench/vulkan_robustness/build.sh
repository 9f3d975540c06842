#!/usr/bin/env bash
# Builds sieve-bench for Vulkan against cubecl-wgpu 0.11.3 with no-robustness.patch applied:
# the same bench, whose Vulkan device is created without robustBufferAccess and without
# VK_EXT_robustness2 when SIEVE_VK_ROBUSTNESS=off (and as cubecl-wgpu creates it otherwise).
# An experiment for issue 16, never a dependency (bench/with_patched_crate.sh).
#
# usage (from the project root): bash bench/vulkan_robustness/build.sh [TARGET_DIR]
#   output: TARGET_DIR/release/sieve-bench (default TARGET_DIR: target/vulkan-norobust)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/../with_patched_crate.sh" cubecl-wgpu 0.11.3 "$here/no-robustness.patch" \
  "${1:-target/vulkan-norobust}" build --release -p sieve-bench --no-default-features \
  --features vulkan
