#!/usr/bin/env bash
# Packs prebuilt test binaries and the bench for one call on the GPU machine
# (`bench/gpu_run.sh` reads them from .gpu/, which .git/info/exclude keeps out of git).
#
# usage: bash bench/pack_gpu.sh <cuda|vulkan> <target dir> <test names...>
#   e.g. bash bench/pack_gpu.sh cuda target/<your CUDA build dir> topk topk_ops sort
#        bash bench/pack_gpu.sh vulkan target/vulkan topk topk_ops sort
# Adds to .gpu/ (it does not clear it: run `rm -f .gpu/*` first for a fresh set): the newest
# `<target>/release/deps/<test>-<hash>` binary of each test as `<test>-<backend>`, and the
# largest `sieve_bench-*` as `sieve-bench-<backend>`, stripped and xz-compressed. Pass the
# carry list [".gpu", ".gl"]; what travels must stay under 64 MiB (one backend's three test
# binaries and the bench are about 32-37 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
backend=$1
dir=$2
shift 2
mkdir -p .gpu
for t in "$@"; do
  f=$(ls -t "$dir"/release/deps/"$t"-* | grep -v -E '\.(d|rlib|rmeta)$' | head -1)
  cp "$f" ".gpu/$t-$backend"
done
f=$(ls -S "$dir"/release/deps/sieve_bench-* | grep -v -E '\.d$' | head -1)
cp "$f" ".gpu/sieve-bench-$backend"
strip .gpu/*-"$backend"
xz -T2 -3 -f .gpu/*-"$backend"
du -sh .gpu
