#!/usr/bin/env bash
# Twenty-fourth session (issue 15).
#   a  the branch `lsd-32` (Lsd tiles with positions at 32 keys a unit): `sort::`, `sort_ops::`,
#      `topk::`, `huge::`, `small_devices::` through CUDA and Vulkan within LIMIT (330 s),
#      memcheck and racecheck over `sort::`. Files: a.tgz (~350 s).
#   b  GPU quiet, lsd-32's bench: the standard sort rows (Burn op and raw) with the copy row;
#      2^28 sweeps of the onesweep tiles (keys alone: keys a unit x look-back window, and 512
#      units; with positions: keys a unit, and 512 units), each sweep one input; Nsight
#      Compute's duration of every kernel of one 2^28 sort (keys alone, then with positions);
#      torch's sort rows; Vulkan's 2^24, [64, 128256] and [16384, 128] rows in a fresh process.
#      First, the JIT's cost of Lsd's tiles with positions: fresh processes sorting 2^20 keys
#      (one raw Lsd row) at 24 and 32 keys a unit, alternating, each process's wall time
#      (`jit.txt`; `a` ran `lsd-32`'s CUDA tests at a third of `23-d`'s pace). Files: b.tgz
#      (~480 s).
#   c  lsd-32 with keys-only tiles at 28 keys a unit (`24-b`'s sweep): mode a's tests and
#      sanitizers within LIMIT (400 s); then, GPU quiet, sort i32 2^28 (Burn op, raw onesweep),
#      sort i32 2^24 (Burn op; raw Lsd at 24 and 28 keys a unit: keys-only Lsd tiles changed
#      too), sort_with_indices 2^28's onesweep tiles at 12, 16 and 20 keys a unit (`24-b`'s
#      sweep ran out of time there), and Nsight Compute's duration of the sort's own kernels
#      at 2^28 keys (`24-b`'s caught the copy row's). Files: c.tgz (~580 s).
#   d  the branch `counts-parts` (keys-only tiles split: Lsd 24, onesweep 28; the counting
#      pass's bins spread over `count_parts` copies), the session's last ~360 s: GPU quiet,
#      sort i32 2^28 (Burn op; raw onesweep with 1 and 8 copies, one input) and
#      sort_with_indices f32 2^28 (raw onesweep, 1 and 8 copies); Nsight's counting-pass
#      duration at 8 copies; then through CUDA the tests `24-c` did not reach (`sort::`, which
#      also runs the counting pass at 3 copies, `sort_ops::`, `topk::`,
#      `small_devices::raw_topk_every_strategy_at_default_tunings`), 8 test threads, until
#      LIMIT. Files: d.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: bash bench/gpu_session24.sh <a|b|c|d>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
S=sort_with_indices
stage_out
case "$1" in
a)
  tests_and_sanitizers "sort:: sort_ops:: topk:: huge:: small_devices::"
  ;;
b)
  J=$S:1048576:f32:raw=lsd,burn_op=0
  for br in cuda:1 cuda:2 vulkan:1; do for e in 24 32; do
    b=${br%:*}; t0=$(date +%s.%N)
    timeout 60 .gpu/sieve-bench-$b --no-burn --runs 10 --case $J,epu=$e > "$OUT/jit-$b-$e-${br#*:}.txt" 2>&1
    echo "$br epu=$e rc=$? wall $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" | tee -a "$OUT/jit.txt"
  done; done
  pack b
  K=sort:268435456:i32; P=$S:268435456:f32; Q=$S:16777216:f32
  timeout 260 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/rows.json" \
    --case copy:268435456:f32 --case $K:raw=onesweep --case $P:raw=onesweep \
    --case argsort:268435456:f32:raw=none --case $Q:raw=lsd --case $Q:raw=lsd \
    --case $S:33554432:f32:raw=lsd --case argsort:16777216:f32:raw=lsd \
    --case $S:64x128256:f32:descending=true,raw=lsd --case $S:4096x32768:f32:raw=onesweep \
    --case $S:16384x128:f32:raw=none > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-rows.txt"; pack b
  W=raw=onesweep,burn_op=0
  timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/sweep.json" \
    --case $K:$W,epu=20/24/28/32,window=4/8 --case $K:$W,units=512,epu=12/16 \
    --case $P:$W,epu=12/16/20/24 --case $P:$W,units=512,epu=8/12 \
    > "$OUT/bench-sweep.txt" 2>&1
  echo "== sweep rc=$? at ${SECONDS}s"
  grep -E '^(sort)' "$OUT/bench-sweep.txt" | grep sieve | awk '{print $1, $2, $3, $4, $6}'; pack b
  for c in $K:$W $P:$W; do
    timeout 60 ncu --metrics gpu__time_duration.sum --launch-count 12 --csv \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c > "$OUT/ncu-${c%%:*}.csv" 2>&1
    echo "== ncu $c rc=$? at ${SECONDS}s"
    grep gpu__time_duration "$OUT/ncu-${c%%:*}.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120
  done
  timeout 80 python3 bench/torch_reference.py "$OUT/torch.json" --only=sort > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; pack b
  timeout 90 .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case copy:16777216:f32 --case $Q:raw=lsd --case $S:64x128256:f32:descending=true,raw=lsd \
    --case $S:16384x128:f32:raw=none > "$OUT/bench-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-vulkan.txt"
  ;;
c)
  tests_and_sanitizers "sort:: sort_ops:: topk:: huge:: small_devices::"
  echo "== tests done at ${SECONDS}s"; pack c
  K=sort:268435456:i32; W=raw=onesweep,burn_op=0
  timeout 150 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/rows.json" \
    --case copy:268435456:f32 --case $K:raw=onesweep --case sort:16777216:i32:raw=none \
    --case sort:16777216:i32:raw=lsd,burn_op=0,epu=24/28 \
    --case $S:268435456:f32:$W,epu=12/16/20 > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-rows.txt"; pack c
  timeout 60 ncu --kernel-name regex:"onesweep|digit_counts|fill" --launch-count 10 \
    --metrics gpu__time_duration.sum --csv .gpu/sieve-bench-cuda --no-burn --runs 10 \
    --case $K:$W > "$OUT/ncu-sort.csv" 2>&1
  echo "== ncu rc=$? at ${SECONDS}s"
  grep gpu__time_duration "$OUT/ncu-sort.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120
  ;;
d)
  K=sort:268435456:i32; W=raw=onesweep,burn_op=0
  timeout 100 .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/rows.json" \
    --case copy:268435456:f32 --case $K:raw=onesweep,parts=1/8 \
    --case $S:268435456:f32:$W,parts=1/8 > "$OUT/bench-rows.txt" 2>&1
  echo "== rows rc=$? at ${SECONDS}s"; sort_rows "$OUT/bench-rows.txt"; pack d
  timeout 40 ncu --kernel-name regex:digit_counts --launch-count 1 \
    --metrics gpu__time_duration.sum --csv .gpu/sieve-bench-cuda --no-burn --runs 10 \
    --case $K:$W > "$OUT/ncu-sort.csv" 2>&1
  echo "== ncu rc=$? at ${SECONDS}s"
  grep gpu__time_duration "$OUT/ncu-sort.csv" | awk -F'","' '{print $5, $NF}' | cut -c1-120
  pack d
  timeout ${LIMIT:-170} .gpu/suite-cuda --test-threads 8 sort:: sort_ops:: topk:: \
    small_devices::raw_topk_every_strategy_at_default_tunings --skip dtypes_sort \
    > "$OUT/tests-cuda.txt" 2>&1
  echo "== tests rc=$? at ${SECONDS}s $(grep -c ' ok$' "$OUT/tests-cuda.txt") ok"
  summary "$OUT/tests-cuda.txt"
  ;;
*) echo "usage: $0 <a|b|c|d>"; exit 2 ;;
esac
pack $1
