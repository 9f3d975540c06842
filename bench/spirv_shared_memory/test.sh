#!/usr/bin/env bash
# Builds the test suite for Vulkan's SPIR-V path against cubecl-spirv 0.11.3 with
# shared-implicit.patch applied, and runs TESTS through it (default: the scans, sorts, top-k
# and compaction). On a driver without VK_KHR_workgroup_memory_explicit_layout (Debian 12's
# lavapipe, Mesa 22.3) the unpatched SPIR-V crashes vkCreateComputePipelines on every kernel
# with shared memory; see README.md. An experiment, never a dependency: the patch goes on the
# command line and Cargo.lock is restored afterwards.
#
# usage (from the project root): bash bench/spirv_shared_memory/test.sh [TARGET_DIR] [TESTS...]
set -euo pipefail
[ -f Cargo.toml ] || { echo "run this from the project root" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-target/vulkan-spirvfix}"
shift || true
tests=("${@:-scan:: scans:: sort:: topk:: compact::}")
crate="$target/patched/cubecl-spirv-0.11.3"
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cubecl-spirv-0.11.3 | head -1)
rm -rf "$crate"
mkdir -p "$(dirname "$crate")"
cp -r "$registry" "$crate"
patch -d "$crate" -p1 < "$here/shared-implicit.patch"
backup="$(mktemp)"
cp Cargo.lock "$backup"
trap 'cp "$backup" Cargo.lock; rm -f "$backup"' EXIT
cargo test --release --test suite --no-default-features --features vulkan --target-dir "$target" \
  --config "patch.crates-io.cubecl-spirv.path=\"$PWD/$crate\"" -- ${tests[@]}
