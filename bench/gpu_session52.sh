#!/usr/bin/env bash
# The fifty-second session's calls (issues 15, 17): the flag words for every counted
# compaction (masks too), the word rank's density, and `unique`'s run starts at 32 elements a
# unit. F_DIR: the branch's binaries (suite-cuda, suite-vulkan, sieve-bench-cuda,
# sieve-bench-vulkan); M_DIR: main's (sieve-bench-cuda, sieve-bench-vulkan).
#   sw  Sweeps through the branch's CUDA bench: the raw counted mask_select and argwhere 2^28
#       at densities 0.002 to 0.5 with the words off (`words=0`: the full rank from the mask)
#       and with the word rank at every density (`words=1,wsparse=1`), so the density where
#       the word rank stops winning.
#   rs  `unique`'s run starts at 16 and 32 elements a unit (`epu=`) at 1 in 256, 1 in 16 and
#       about 1 in 2 (2^28 and 2^24); on an H200 the marks follow.
#   ab  The Burn ops, main against the branch (alternating processes, CUDA two rounds, then
#       Vulkan one): mask_select 2^24 / 2^28 at densities 0.01 and 0.5, argwhere at 0.5 and
#       0.01, `unique` 2^28 and 2^24.
#   t   The branch's compaction tests through both runtimes with memcheck and racecheck.
#   fx  The words' cost where they are not read, then a gradient test through main's and the
#       branch's CUDA suites (F_DIR: the branch's bench and suite, suite-cuda-main).
# The marks (meant for an H200): `F_DIR=<dir> bash bench/gpu_session51.sh mk`.
# usage: F_DIR=<dir> [M_DIR=<dir>] bash bench/gpu_session52.sh rs|sw|ab|fx|t   (carry the dirs and ".gl")
set -uo pipefail
: "${F_DIR:?}"
here=$PWD
source "$(dirname "$0")/gpu_prelude.sh"
begin
case "$1" in
rs)
  # `unique`'s run starts at 16 and 32 elements a unit (main's bench will do: F_DIR), then
  # on an H200 the marks (`gpu_session51.sh mk`, whose files come back as rs.tgz).
  R="--case unique:268435456:f32:distinct=1048576,epu=16/32"
  R="$R --case unique:268435456:f32:distinct=16777216,epu=16/32"
  R="$R --case unique:16777216:f32:distinct=1048576,epu=16/32"
  R="$R --case unique:16777216:f32:distinct=8388608,epu=16/32"
  bench_rows cuda ${BENCH_LIMIT:-200} $R
  pack rs52
  grep -q H200 "$OUT/card.txt" && cd "$here" && bash bench/gpu_session51.sh mk
  ;;
sw)
  R=""
  for d in 0.002 0.01 0.02 0.05 0.1 0.5; do
    for w in "words=0" "words=1,wsparse=1"; do
      R="$R --case mask_select:268435456:f32:density=$d,raw=counted,$w"
      R="$R --case argwhere:268435456:bool:density=$d,raw=counted,$w"
    done
  done
  bench_rows cuda ${BENCH_LIMIT:-300} $R
  pack sw
  ;;
ab)
  : "${M_DIR:?}"
  mkdir -p /tmp/m /tmp/b
  xz -dc "$here/$M_DIR/sieve-bench-cuda.xz" > /tmp/m/sieve-bench-cuda
  cp .gpu/sieve-bench-cuda /tmp/b/sieve-bench-cuda-w
  # Vulkan only where both benches came (main's is left out where the carry is short).
  if [ -f "$here/$M_DIR/sieve-bench-vulkan.xz" ] && [ -f .gpu/sieve-bench-vulkan ]; then
    xz -dc "$here/$M_DIR/sieve-bench-vulkan.xz" > /tmp/m/sieve-bench-vknr
    cp .gpu/sieve-bench-vulkan /tmp/b/sieve-bench-vknr-w
  fi
  chmod +x /tmp/m/* /tmp/b/*
  F=mask_select A=argwhere
  ROWS="--case $F:16777216:f32:density=0.01,raw=none --case $F:16777216:f32:density=0.5,raw=none \
    --case $F:268435456:f32:density=0.01,raw=none --case $F:268435456:f32:density=0.5,raw=none \
    --case $A:16777216:bool:density=0.5,raw=none --case $A:268435456:bool:density=0.5,raw=none \
    --case $A:268435456:bool:density=0.01,raw=none \
    --case unique:268435456:f32:distinct=1048576 --case unique:16777216:f32:distinct=1048576"
  AB_RUNTIMES=cuda AB_LIMIT=${AB_LIMIT:-60} ab_benches w /tmp/m /tmp/b "$ROWS" ab
  VROWS="--case $F:268435456:f32:density=0.01,raw=none --case $F:268435456:f32:density=0.5,raw=none \
    --case $A:268435456:bool:density=0.5,raw=none --case $A:268435456:bool:density=0.01,raw=none"
  for v in main w; do
    [ -f /tmp/m/sieve-bench-vknr ] || break
    b=/tmp/m/sieve-bench-vknr; [ $v = w ] && b=/tmp/b/sieve-bench-vknr-w
    timeout ${VK_LIMIT:-90} $b --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 \
      --json "$OUT/vulkan-$v-1.json" $VROWS > "$OUT/rows-vulkan-$v-1.txt" 2>&1
    echo "== vulkan $v rc=$? at ${SECONDS}s"
    pack ab
  done
  ab_summary "" "mask_select|argwhere|unique"
  ;;
fx)
  # The words' cost where they are not read (the same binary: `words=0` writes none, `Auto`
  # writes them in the count pass and the dense scatter leaves them), then the gradient test
  # that failed once through CUDA in `t`, six processes at a time, main's suite
  # (suite-cuda-main) beside the branch's, two waves.
  R=""
  for c in ${FX_CASES:-mask_select:268435456:f32 argwhere:268435456:bool mask_select:16777216:f32 argwhere:16777216:bool}; do
    for d in ${FX_DENSITIES:-0.01 0.5}; do
      R="$R --case $c:density=$d,raw=counted,words=0 --case $c:density=$d,raw=counted"
    done
  done
  # `unique`'s run starts at about 1 in 80 and 1 in 16: the word rank (`wsparse=1`) against
  # the full rank from the words (`wsparse=1000`).
  for dist in ${FX_DISTINCT-3355443 16777216}; do
    for w in 1 1000; do R="$R --case unique:268435456:f32:distinct=$dist,epu=16,wsparse=$w"; done
  done
  bench_rows cuda ${BENCH_LIMIT:-200} $R
  pack fx
  for wave in 1 2; do
    for s in suite-cuda suite-cuda-main; do
      for i in 1 2 3; do
        timeout ${FLAKY_LIMIT:-100} .gpu/$s --exact filter_ops::gradient_of_nothing_selected_beside_other_threads \
          > "$OUT/flaky-$s-$wave-$i.txt" 2>&1 &
      done
    done
    wait
  done
  for f in "$OUT"/flaky-*.txt; do echo "== ${f##*/} $(grep -c ' ok$' "$f") ok $(grep -m1 -o 'elements differ.*' "$f")"; done
  pack fx
  ;;
t)
  export SIEVE_PROP_CASES=100
  CT_GROUPS=5 TEST_LIMIT=${TEST_LIMIT:-240} compaction_tests
  pack t
  ;;
esac
