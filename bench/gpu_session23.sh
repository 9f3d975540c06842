#!/usr/bin/env bash
# Twenty-third session (issue 15).
#   a  GPU quiet: the sort rows of main (base) and `wide-reads` (wr: the held keys' places as
#      one base plus constant steps, one present-check read for load and re-read; the bench's
#      `wide=1`, `burn_op=0`): 2^28 keys and pairs (Burn op, raw onesweep; wr also with 64-bit
#      addresses), 2^24 pairs, [4096, 32768], [16384, 128]; a 2^24 Lsd sweep with positions
#      (keys a unit x read again x units a cube); torch's sort rows. Files: bench-*.txt,
#      *.json, torch.json (~400 s).
#   b  GPU quiet, main's bench (base): Lsd with positions at 2^24 in three rounds, each round
#      the default (12 keys a unit, holding) and 16 holding, 16/20/24 reading again; 2^25 and
#      [64, 128256] descending at 12 holding and 16 reading again; torch's sort rows. Files:
#      bench-lsd-*.txt, lsd-*.json, torch.json (~250 s).
#   c  main with Lsd's new tiles (24 keys a unit with positions, read again): `sort::`,
#      `sort_ops::`, `topk::`, `huge::`, `small_devices::` through CUDA and Vulkan, memcheck and
#      racecheck over `sort::`; then, GPU quiet, sort_with_indices 2^24 (Burn op, every raw
#      strategy, Lsd at 32 a unit), 2^25 Lsd, 2^26 and 2^27 (Lsd against onesweep: `Auto`'s
#      line), argsort 2^24, [64, 128256] descending; the Vulkan bench's 2^24 rows at the new
#      and the old Lsd tiles where carried; torch's sort rows. Files: c.tgz (~450 s).
#   d  GPU quiet: raw Lsd with positions at 24, 28 and 32 keys a unit (reading again) at 2^24
#      (two rounds), 2^25, argsort 2^24 and [64, 128256] descending; then Vulkan's slowdown
#      within a process: one process running the copy, then 2^24 sorts four times, then the
#      copy again; a fresh process with the sort twice. Files: d.tgz (~200 s).
#   e  the branch `lsd-32` (Lsd tiles with positions at 32 keys a unit): `sort::`, `sort_ops::`,
#      `topk::` through CUDA and Vulkan within LIMIT, memcheck and racecheck over `sort::`.
#      Files: tests-*.txt, memcheck-cuda.txt, racecheck-cuda-0.txt. In `23-f` (16 CUDA test
#      threads, LIMIT=150, no sanitizers) CUDA finished 6 of 32: NVRTC's compiles do not
#      scale with test threads. Run with LIMIT=330 (~350 s).
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: bash bench/gpu_session23.sh <a|b|c|d|e>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
S=sort_with_indices
rows() { grep -E '^(sort|argsort)' "$1" | grep -v skipped | awk '{print $1, $2, $4, $6}' | sed 's/"strategy"://'; }
case "$1" in
a)
  K=sort:268435456:i32; P=$S:268435456:f32
  args=(--case $K:raw=onesweep --case $P:raw=onesweep --case $S:16777216:f32
        --case $S:4096x32768:f32:raw=onesweep --case $S:16384x128:f32:raw=none)
  for v in base wr; do
    b=.gpu/sieve-bench-cuda-wr; a=("${args[@]}" --case $K:raw=onesweep,wide=1,burn_op=0 \
      --case $P:raw=onesweep,wide=1,burn_op=0)
    [ $v = base ] && b=.gpu/sieve-bench-cuda-base && a=("${args[@]}")
    timeout ${BENCH_LIMIT:-200} $b --no-burn --runs 10 --json "$OUT/$v.json" "${a[@]}" \
      > "$OUT/bench-$v.txt" 2>&1
    echo "== $v rc=$? at ${SECONDS}s"; rows "$OUT/bench-$v.txt"
  done
  # Lsd with positions at 2^24 (the 2^24 mark is 2-5% away): keys a unit x read again x units.
  P=$S:16777216:f32:raw=lsd,burn_op=0
  timeout 70 .gpu/sieve-bench-cuda-wr --no-burn --runs 10 --json "$OUT/sweep-2p24.json" \
    --case $P,epu=8 --case $P,epu=12 --case $P,epu=16 --case $P,epu=8,reread=1 \
    --case $P,epu=12,reread=1 --case $P,epu=16,reread=1 --case $P,epu=8,units=512 \
    --case $P,epu=12,units=512 > "$OUT/bench-sweep-2p24.txt" 2>&1
  echo "== sweep 2^24 rc=$?"; rows "$OUT/bench-sweep-2p24.txt"
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > /dev/null 2>&1
  echo "torch rc=$? at ${SECONDS}s"
  ;;
b)
  P=$S:16777216:f32:raw=lsd
  for round in 1 2 3; do
    timeout 80 .gpu/sieve-bench-cuda-base --no-burn --runs 10 --json "$OUT/lsd-$round.json" \
      --case $P,epu=12 --case $P,epu=16 --case $P,epu=16,reread=1 --case $P,epu=20,reread=1 \
      --case $P,epu=24,reread=1 > "$OUT/bench-lsd-$round.txt" 2>&1
    echo "== round $round rc=$? at ${SECONDS}s"; rows "$OUT/bench-lsd-$round.txt"
  done
  Q=$S:33554432:f32:raw=lsd; R=$S:64x128256:f32:descending=true,raw=lsd
  timeout 80 .gpu/sieve-bench-cuda-base --no-burn --runs 10 --json "$OUT/lsd-other.json" \
    --case $Q,epu=12 --case $Q,epu=16,reread=1 --case $R,epu=12 --case $R,epu=16,reread=1 \
    --case $Q,epu=12 --case $Q,epu=16,reread=1 --case $R,epu=12 --case $R,epu=16,reread=1 \
    > "$OUT/bench-lsd-other.txt" 2>&1
  echo "== other rc=$? at ${SECONDS}s"; rows "$OUT/bench-lsd-other.txt"
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > /dev/null 2>&1
  echo "torch rc=$? at ${SECONDS}s"
  ;;
c)
  O=$OUT; export OUT=/tmp/o; mkdir -p $OUT
  tests_and_sanitizers "sort:: sort_ops:: topk:: huge:: small_devices::"
  echo "== tests done at ${SECONDS}s"
  Q=$S:16777216:f32
  timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/rows.json" \
    --case $Q --case $Q:raw=lsd,epu=32,burn_op=0 --case $S:33554432:f32:raw=lsd \
    --case $S:67108864:f32:raw=lsd --case $S:67108864:f32:raw=onesweep,burn_op=0 \
    --case $S:134217728:f32:raw=lsd,burn_op=0 --case $S:134217728:f32:raw=onesweep \
    --case argsort:16777216:f32 --case $S:64x128256:f32:descending=true \
    --case $Q:raw=lsd --case $Q:raw=lsd,epu=12,reread=0,burn_op=0 > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; rows "$OUT/bench-rows.txt"
  if [ -x .gpu/sieve-bench-vulkan ]; then
    timeout 90 .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/rows-vulkan.json" \
      --case $Q:raw=lsd --case $Q:raw=lsd,epu=12,reread=0,burn_op=0 --case $Q:raw=lsd \
      --case $Q:raw=lsd,epu=12,reread=0,burn_op=0 > "$OUT/bench-vulkan.txt" 2>&1
    echo "== vulkan rc=$? at ${SECONDS}s"; rows "$OUT/bench-vulkan.txt"
  fi
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > /dev/null 2>&1
  echo "torch rc=$? at ${SECONDS}s"
  tar -C /tmp/o -czf $O/c.tgz .
  ;;
d)
  O=$OUT; export OUT=/tmp/o; mkdir -p $OUT
  L=raw=lsd,burn_op=0; Q=$S:16777216:f32:$L
  a=()
  for round in 1 2; do for e in 24 28 32; do a+=(--case $Q,epu=$e); done; done
  for e in 24 32; do
    a+=(--case $S:33554432:f32:$L,epu=$e --case argsort:16777216:f32:$L,epu=$e
        --case $S:64x128256:f32:descending=true,$L,epu=$e)
  done
  timeout 120 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/sweep.json" "${a[@]}" \
    > "$OUT/bench-sweep.txt" 2>&1
  echo "== sweep rc=$? at ${SECONDS}s"; rows "$OUT/bench-sweep.txt"
  timeout 150 .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan-a.json" \
    --case copy:268435456:f32 --case $Q --case $Q --case $Q --case $Q --case copy:268435456:f32 \
    > "$OUT/bench-vulkan-a.txt" 2>&1
  echo "== vulkan a rc=$? at ${SECONDS}s"
  grep -E '^(copy|sort)' "$OUT/bench-vulkan-a.txt" | grep sieve | awk '{print $1, $2, $6, $7, $8}'
  timeout 60 .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan-b.json" \
    --case $Q --case $Q > "$OUT/bench-vulkan-b.txt" 2>&1
  echo "== vulkan b rc=$? at ${SECONDS}s"; rows "$OUT/bench-vulkan-b.txt"
  tar -C /tmp/o -czf $O/d.tgz .
  ;;
e)
  tests_and_sanitizers "sort:: sort_ops:: topk::"
  ;;
*) echo "usage: $0 <a|b|c|d|e>"; exit 2 ;;
esac
