#!/usr/bin/env bash
# Runs one cargo command against a patched copy of a registry crate, for experiments only
# (bench/vulkan_robustness, bench/spirv_shared_memory): copies CRATE-VERSION from cargo's
# registry into TARGET/patched/ and applies PATCH there (once per patch), runs `cargo SUBCOMMAND --target-dir TARGET
# ARGS...` with the copy patched in on the command line (before ARGS, which may hold `--`), and restores Cargo.lock afterwards, so no
# project file ever points at the copy.
#
# usage (from the project root):
#   bash bench/with_patched_crate.sh CRATE VERSION PATCH TARGET SUBCOMMAND ARGS...
set -euo pipefail
[ -f Cargo.toml ] || { echo "run this from the project root" >&2; exit 2; }
name=$1 version=$2 patch_file=$3 target=$4
shift 4
crate="$target/patched/$name-$version"
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$name-$version" | head -1)
# A fresh copy has fresh mtimes, which rebuilds every crate above it (15 minutes here): copy
# and patch only when there is no copy made with this patch yet.
if [ ! -d "$crate" ] || ! cmp -s "$patch_file" "$crate.patch"; then
  rm -rf "$crate"
  mkdir -p "$(dirname "$crate")"
  cp -r "$registry" "$crate"
  patch -d "$crate" -p1 < "$patch_file"
  cp "$patch_file" "$crate.patch"
fi
crate=$(cd "$crate" && pwd)
backup="$(mktemp)"
cp Cargo.lock "$backup"
trap 'cp "$backup" Cargo.lock; rm -f "$backup"' EXIT
subcommand=$1
shift
cargo "$subcommand" --target-dir "$target" --config "patch.crates-io.$name.path=\"$crate\"" "$@"
