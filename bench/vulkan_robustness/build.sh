#!/usr/bin/env bash
# Builds sieve-bench for Vulkan against cubecl-wgpu 0.11.3 with no-robustness.patch applied:
# the same bench, whose Vulkan device is created without robustBufferAccess and without
# VK_EXT_robustness2 when SIEVE_VK_ROBUSTNESS=off (and as cubecl-wgpu creates it otherwise).
# An experiment for issue 16, never a dependency: the patch goes on the command line, and
# Cargo.lock is restored afterwards.
#
# usage (from the project root): bash bench/vulkan_robustness/build.sh [TARGET_DIR]
#   output: TARGET_DIR/release/sieve-bench (default TARGET_DIR: target/vulkan-norobust)
set -euo pipefail
[ -f Cargo.toml ] || { echo "run this from the project root" >&2; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-target/vulkan-norobust}"
crate="$target/patched/cubecl-wgpu-0.11.3"
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cubecl-wgpu-0.11.3 | head -1)
rm -rf "$crate"
mkdir -p "$(dirname "$crate")"
cp -r "$registry" "$crate"
patch -d "$crate" -p1 < "$here/no-robustness.patch"
backup="$(mktemp)"
cp Cargo.lock "$backup"
trap 'cp "$backup" Cargo.lock; rm -f "$backup"' EXIT
cargo build --release -p sieve-bench --no-default-features --features vulkan \
  --target-dir "$target" --config "patch.crates-io.cubecl-wgpu.path=\"$PWD/$crate\""
