#!/usr/bin/env bash
# The fifty-first session's calls (issues 15, 17).
#   rs  `unique`'s run starts through the word rank at the compaction's tiles (`units=` x
#       `epu=`: with the flag words a unit's word holds its `epu` flags, so 32 is the widest),
#       then CubeCL's profiling logger over one `unique` 2^28 (count / scan / scatter of its
#       run starts, kernel by kernel). F_DIR: sieve-bench-cuda.xz.
#   fin The session's final build (see the mode).
# usage: F_DIR=<dir> bash bench/gpu_session51.sh rs|fin   (carry F_DIR and ".gl")
set -uo pipefail
: "${F_DIR:?}"
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
rs)
  bench_rows cuda 150 --case unique:268435456:f32:distinct=1048576,units=256/512/1024,epu=16/32
  pack rs
  here=$PWD
  mkdir -p /tmp/prof && cd /tmp/prof
  printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-unique.log" > cubecl.toml
  timeout 80 $here/.gpu/sieve-bench-cuda --no-burn --runs 10 \
    --case unique:268435456:f32:distinct=1048576,raw=none > "$OUT/prof-unique.txt" 2>&1
  echo "== profile rc=$? at ${SECONDS}s"
  cd $here && python3 bench/profile_summary.py "$OUT/prof-unique.log" | head -20
  gzip -f "$OUT/prof-unique.log"
  pack rs
  ;;
esac
