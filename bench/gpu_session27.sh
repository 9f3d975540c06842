#!/usr/bin/env bash
# Written at the end of the twenty-sixth session for the next one (issue 16, item 1).
#   a  Why buffers a Vulkan process allocates later copy 2.3x slower (`26-c`, `26-d`: a fresh
#      process copies 2^27 at 3.1 TB/s on its first buffers, 1.33 on the next): the Vulkan
#      bench built with bench/vulkan_robustness's patch, which now prints every allocation of
#      1 MiB or more in order, and can round allocations up (`SIEVE_VK_ROUND_MIB`) or make them
#      dedicated (`SIEVE_VK_DEDICATED=1`). Three 2^27 copy rows in one process, each way; 2^28
#      then 2^24 each way; the same with CubeCL's pool as one page per allocation
#      (`SIEVE_BENCH_MEMORY=exclusive`); the sort 2^24 and copy 2^24 with wgpu's task batching
#      at 1 / 8 / 128 tasks a submission (`CUBECL_WGPU_MAX_TASKS`; 32 by default); Lsd 2^24
#      with the plane ranker or the one-bit splits, 1 or 8 count copies, keys read again or
#      held, through Vulkan and CUDA; the CUDA copy rows beside them. Files: a.tgz.
#   b  `unique`'s inverse and counts from the run starts' positions (`c64891b`, after `26-d`):
#      `compact::`, `sets::`, `filter_ops::` through CUDA (3 processes) and Vulkan (2),
#      memcheck and racecheck over `sets::unique`; then unique 2^28 / 2^24 (with and without
#      the inverse), searchsorted 2^24 into 2^20 at the raw tunings (lock-step probes, queries a
#      unit, splitters) and torch's set rows. Files: b.tgz.
#   c  (written after a and b: a showed the *same two buffers* copy 2^27 at 3.2 TB/s in a
#      process's first row and 1.2-1.35 in the next, so not the allocation order) the card's
#      clocks and P-state every 100 ms (nvidia-smi) through Vulkan and CUDA copy rows, each
#      phase's start time logged; `sets::` (the search's new default, the lock-step variant
#      gone) through CUDA and Vulkan with memcheck and racecheck over `sets::searchsorted`;
#      unique 2^24 / 2^28 with `stages=1` (the sort and the run starts alone), searchsorted
#      at the default and per_unit=16/32 x splitters=2048/4096, through CUDA and Vulkan, and
#      torch's set rows in the same call. Files: c.tgz.
#   d  (after c: the SM clock, not the memory, is what Vulkan loses: NVIDIA's driver lets it
#      fall to 345 MHz, reason "GPU idle", about 4 s into a Vulkan process, while a CUDA
#      process holds 1980) whether a sustained load brings the clock back (`--warm-ms 2000`
#      before each 2^27 copy row), then issue 16's rows through Vulkan and CUDA, each row
#      after 500 ms of untimed samples, the clocks logged every 50 ms; torch's top-k rows.
#      Files: d.tgz.
#   e  (after d) `sets::` at the search's new default (32 queries a unit, up to 4096
#      splitters) through CUDA and Vulkan with memcheck and racecheck over
#      `sets::searchsorted`; searchsorted and unique beside torch's set rows; the short
#      Vulkan rows that stayed over 2x CUDA in `27-d` after 2000 ms of warm-up instead of 500
#      (was the clock still climbing?), the CUDA rows in the same call; each kernel of the
#      short top-k rows timed through both runtimes (CubeCL's profiling logger,
#      bench/profile_summary.py). Files: e.tgz.
#   f  (after e: [64, 128256] k = 1000 stayed 2.9x CUDA through Vulkan, k = 50 1.2x) each
#      kernel of that row and of sort_with_indices [64, 128256] descending through both
#      runtimes (CubeCL's profiling logger). Files: f.tgz.
#   g  (after f: through Vulkan the row select of [64, 128256] k = 1000 took 186 us in one
#      chunk a row, against 62 us through CUDA cut in two: wgpu does not say how many
#      multiprocessors there are, so `row_split_cubes` fell back to 32 cubes, under the 64 rows)
#      the Vulkan raw radix select at split = 32 / 128 / 256, k = 50 and 1000, uniform and
#      tied, and the device-wide passes' cubes (the same fallback, 4096) at 4096 / 8448.
#      Files: g.tgz.
#   h  (after g, the fallback at 128) `topk_ops::` and `sampling::` through Vulkan; the Burn
#      ops at [64, 128256] (top-k k = 50 / 1000, uniform and tied; top_k_top_p_sample) through
#      Vulkan at the new default, checked and timed. Files: h.tgz.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]): sieve-bench-vknr (bench/vulkan_robustness/
# build.sh), sieve-bench-cuda, suite-cuda, suite-vulkan.
# usage: bash bench/gpu_session27.sh <a|b|c|d|e|f|g|h>
set -uo pipefail
here="$(dirname "$0")"
source "$here/gpu_prelude.sh"
stage_out
case "$1" in
a)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  c24=copy:16777216:f32 c27=copy:134217728:f32 c28=copy:268435456:f32
  run() {
    local name=$1; shift
    echo "== $name ${SIEVE_VK_ROUND_MIB:+round $SIEVE_VK_ROUND_MIB MiB }${SIEVE_VK_DEDICATED:+dedicated }${SIEVE_BENCH_MEMORY:+pool $SIEVE_BENCH_MEMORY }${CUBECL_WGPU_MAX_TASKS:+tasks $CUBECL_WGPU_MAX_TASKS }at ${SECONDS}s"
    timeout 60 "$@" --no-burn --runs 10 > "$OUT/$name.txt" 2>&1
    grep -E "^\[sieve experiment\] allocation|^(copy|sort_with)" "$OUT/$name.txt" | grep -v skipped | cut -c1-110
  }
  run cuda $C --case $c27 --case $c27 --case $c24
  run vk-27x3 $V --case $c27 --case $c27 --case $c27
  SIEVE_VK_DEDICATED=1 run vk-27x3-dedicated $V --case $c27 --case $c27 --case $c27
  SIEVE_VK_ROUND_MIB=2 run vk-27x3-round2 $V --case $c27 --case $c27 --case $c27
  SIEVE_VK_ROUND_MIB=64 run vk-27x3-round64 $V --case $c27 --case $c27 --case $c27
  run vk-28-24 $V --case $c28 --case $c24
  SIEVE_VK_DEDICATED=1 run vk-28-24-dedicated $V --case $c28 --case $c24
  SIEVE_VK_ROUND_MIB=2 run vk-28-24-round2 $V --case $c28 --case $c24
  SIEVE_BENCH_MEMORY=exclusive run vk-27x3-exclusive $V --case $c27 --case $c27 --case $c27
  SIEVE_BENCH_MEMORY=exclusive run vk-28-24-exclusive $V --case $c28 --case $c24
  pack a
  for t in 1 8 128; do
    CUBECL_WGPU_MAX_TASKS=$t run vk-sort24-tasks$t $V --case $c24 --case sort_with_indices:16777216:f32
  done
  run vk-sort24-tasks32 $V --case $c24 --case sort_with_indices:16777216:f32
  # Which of Lsd's parts Vulkan loses on: the plane ranker against the one-bit splits
  # (`planes=0`), the per-tile counts' copies (`lsd_parts`), the keys read again (`reread`);
  # the same rows through CUDA.
  S=sort_with_indices:16777216:f32:raw=lsd,planes=0/1,lsd_parts=1/8,reread=0/1
  run vk-lsd-parts $V --case $c24 --case $S
  run cuda-lsd-parts $C --case $c24 --case $S
  ;;
b)
  export LIMIT=${LIMIT:-300}
  M="compact:: sets:: filter_ops::"
  split_suite cuda 3 "$M"; split_suite vulkan 2 "$M"
  sanitize "sets::unique" "sets::unique"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack b
  timeout 200 .gpu/sieve-bench-cuda --no-burn --runs 15 --sample-ms 30 --json "$OUT/rows.json" \
    --case unique:16777216:f32:distinct=1048576 --case unique:268435456:f32:distinct=1048576 \
    --case unique:16777216:f32:distinct=1048576,inverse=1 \
    --case unique:268435456:f32:distinct=1048576,inverse=1 \
    --case searchsorted:16777216:f32:keys=1048576,lockstep=0/1,per_unit=4/8/16,splitters=1024/2048 \
    > "$OUT/bench-rows.txt" 2>&1
  echo "== bench rc=$? at ${SECONDS}s"; grep -E "^(copy|unique|searchsorted)" "$OUT/bench-rows.txt" | cut -c1-200
  pack b
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "unique|searchsorted" "$OUT/torch.txt"
  ;;
c)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  c27=copy:134217728:f32 c28=copy:268435456:f32
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu,utilization.memory,temperature.gpu \
    --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
  smi=$!
  # Why the clocks are where they are (a separate query: an unknown field fails the whole one).
  nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv -lms 100 > "$OUT/smi-reasons.csv" 2>&1 &
  smi2=$!
  phase() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%N | cut -c1-23) $*" | tee -a "$OUT/phases.txt"; }
  phase idle; sleep 2
  phase vk-27x6; timeout 90 $V --no-burn --runs 10 --case $c27 --case $c27 --case $c27 --case $c27 --case $c27 > "$OUT/vk-27x6.txt" 2>&1
  phase cuda-27x6; timeout 90 $C --no-burn --runs 10 --case $c27 --case $c27 --case $c27 --case $c27 --case $c27 > "$OUT/cuda-27x6.txt" 2>&1
  phase vk-28x3; timeout 90 $V --no-burn --runs 10 --case $c28 --case $c28 > "$OUT/vk-28x3.txt" 2>&1
  phase vk-sort24; timeout 90 $V --no-burn --runs 10 --case sort_with_indices:16777216:f32 > "$OUT/vk-sort24.txt" 2>&1
  phase end; sleep 1; kill $smi $smi2
  for f in vk-27x6 cuda-27x6 vk-28x3 vk-sort24; do
    echo "== $f"; grep -E "^(copy|sort_with)" "$OUT/$f.txt" | cut -c1-100
  done
  # Each phase's clocks: the samples' P-states and memory / SM clocks, in order, run-length.
  awk -F', ' 'NR > 1 {print $1, $2, $3, $4}' "$OUT/smi.csv" | cut -c12- | uniq -f1 -c | head -60
  awk -F', ' 'NR > 1 {print $1, $2}' "$OUT/smi-reasons.csv" | cut -c12- | uniq -f1 -c | head -20
  pack c
  export LIMIT=240
  split_suite cuda 2 "sets::"; split_suite vulkan 1 "sets::"
  sanitize "sets::searchsorted" "sets::searchsorted"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack c
  U="--case unique:16777216:f32:distinct=1048576,stages=1 --case unique:268435456:f32:distinct=1048576,stages=1"
  S="--case searchsorted:16777216:f32:keys=1048576 --case searchsorted:16777216:f32:keys=1048576,per_unit=16/32,splitters=2048/4096"
  timeout 150 $C --no-burn --runs 15 --sample-ms 30 --json "$OUT/rows-cuda.json" $U $S > "$OUT/bench-cuda.txt" 2>&1
  echo "== cuda bench rc=$? at ${SECONDS}s"; grep -E "^(copy|unique|searchsorted)" "$OUT/bench-cuda.txt" | cut -c1-200
  pack c
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "unique|searchsorted" "$OUT/torch.txt"
  pack c
  timeout 120 $V --no-burn --runs 10 --json "$OUT/rows-vulkan.json" $U --case searchsorted:16777216:f32:keys=1048576 > "$OUT/bench-vulkan.txt" 2>&1
  echo "== vulkan bench rc=$? at ${SECONDS}s"; grep -E "^(copy|unique|searchsorted)" "$OUT/bench-vulkan.txt" | cut -c1-200
  ;;
d)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  c27=copy:134217728:f32
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu \
    --format=csv -lms 50 > "$OUT/smi.csv" 2>&1 &
  smi=$!
  nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv -lms 100 > "$OUT/smi-reasons.csv" 2>&1 &
  smi2=$!
  phase() { echo "$(date +%Y/%m/%d\ %H:%M:%S.%N | cut -c1-23) $*" | tee -a "$OUT/phases.txt"; }
  clocks() { awk -F', ' 'NR > 1 {print $1, $3}' "$OUT/smi.csv" | cut -c12- | uniq -f1 -c | tail -${1:-30}; }
  phase vk-warm; timeout 90 $V --no-burn --runs 10 --warm-ms 2000 --case $c27 --case $c27 --case $c27 > "$OUT/vk-warm.txt" 2>&1
  phase vk-warm-end; grep -E "^copy" "$OUT/vk-warm.txt" | cut -c1-100; clocks 40
  pack d
  R="--case cumsum:268435456:f32 --case mask_select:268435456:f32:density=0.5 --case argwhere:268435456:bool
     --case topk_with_indices:268435456:f32:k=10 --case topk_with_indices:268435456:f32:k=1000
     --case topk_with_indices:64x128256:f32:k=50 --case topk_with_indices:64x128256:f32:k=1000
     --case topk_with_indices:16384x128:f32:k=8 --case sort_with_indices:16384x128:f32
     --case sort_with_indices:64x128256:f32:descending=true --case searchsorted:16777216:f32:keys=1048576,per_unit=16/32,splitters=2048/4096
     --case unique:268435456:f32:distinct=1048576 --case sort_with_indices:268435456:f32"
  for rt in vulkan cuda; do
    B=$V; [ $rt = cuda ] && B=$C
    phase rows-$rt
    timeout 220 $B --no-burn --runs 10 --warm-ms 500 --with raw=none --json "$OUT/rows-$rt.json" $R > "$OUT/rows-$rt.txt" 2>&1
    echo "== $rt rc=$? at ${SECONDS}s"
    grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt.txt" | grep -v skipped | cut -c1-150
    pack d
  done
  phase end; sleep 1; kill $smi $smi2
  clocks 60
  awk -F', ' 'NR > 1 {print $1, $2}' "$OUT/smi-reasons.csv" | cut -c12- | uniq -f1 -c | tail -20
  pack d
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=topk > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "topk" "$OUT/torch.txt" | head -20
  ;;
e)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  export LIMIT=240
  split_suite cuda 2 "sets::"; split_suite vulkan 1 "sets::"
  sanitize "sets::searchsorted" "sets::searchsorted"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack e
  timeout 150 $C --no-burn --runs 15 --sample-ms 30 --json "$OUT/sets-cuda.json" \
    --case searchsorted:16777216:f32:keys=1048576 --case unique:268435456:f32:distinct=1048576 \
    --case unique:16777216:f32:distinct=1048576 > "$OUT/sets-cuda.txt" 2>&1
  echo "== cuda sets rc=$? at ${SECONDS}s"; grep -E "^(copy|unique|searchsorted)" "$OUT/sets-cuda.txt" | cut -c1-160
  timeout 100 python3 bench/torch_reference.py "$OUT/torch.json" --only=sets > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "unique|searchsorted" "$OUT/torch.txt"
  pack e
  nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu --format=csv -lms 50 > "$OUT/smi.csv" 2>&1 &
  smi=$!
  R="--case topk_with_indices:64x128256:f32:k=50 --case topk_with_indices:64x128256:f32:k=1000
     --case topk_with_indices:16384x128:f32:k=8 --case topk_with_indices:268435456:f32:k=1000
     --case argwhere:268435456:bool --case mask_select:268435456:f32:density=0.5
     --case sort_with_indices:64x128256:f32:descending=true"
  timeout 200 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --with raw=none --json "$OUT/vulkan.json" $R > "$OUT/rows-vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-vulkan.txt" | grep -v skipped | cut -c1-150
  kill $smi
  pack e
  timeout 150 $C --no-burn --runs 10 --sample-ms 30 --with raw=none --json "$OUT/cuda.json" $R > "$OUT/rows-cuda.txt" 2>&1
  echo "== cuda rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-cuda.txt" | grep -v skipped | cut -c1-150
  pack e
  # Per-kernel durations of the short top-k rows through each runtime (CubeCL's profiling
  # logger: every launch synchronised and timed by the runtime; the clock log beside it).
  here=$PWD
  for rt in vulkan cuda; do
    B=$here/$V; [ $rt = cuda ] && B=$here/$C
    mkdir -p /tmp/prof-$rt && cd /tmp/prof-$rt
    printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-$rt.log" > cubecl.toml
    nvidia-smi --query-gpu=timestamp,clocks.sm --format=csv -lms 100 > "$OUT/prof-smi-$rt.csv" 2>&1 &
    smi=$!
    timeout 120 $B --no-burn --runs 10 --warm-ms 1000 --with raw=none \
      --case topk_with_indices:64x128256:f32:k=50 --case topk_with_indices:16384x128:f32:k=8 > "$OUT/prof-$rt.txt" 2>&1
    echo "== profile $rt rc=$? at ${SECONDS}s"; kill $smi; cd $here
    python3 bench/profile_summary.py "$OUT/prof-$rt.log" | head -16
    awk -F', ' 'NR > 1 {print $2}' "$OUT/prof-smi-$rt.csv" | sort | uniq -c | sort -rn | head -3
    gzip -f "$OUT/prof-$rt.log"
  done
  pack e
  timeout 100 python3 bench/torch_reference.py "$OUT/torch-topk.json" --only=topk > "$OUT/torch-topk.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "topk" "$OUT/torch-topk.txt" | grep -E "128256|16384" 
  ;;
f)
  V=.gpu/sieve-bench-vknr C=.gpu/sieve-bench-cuda
  here=$PWD
  for rt in vulkan cuda; do
    B=$here/$V; [ $rt = cuda ] && B=$here/$C
    mkdir -p /tmp/prof-$rt && cd /tmp/prof-$rt
    for c in topk_with_indices:64x128256:f32:k=1000 sort_with_indices:64x128256:f32:descending=true; do
      n=${c%%:*}
      printf '[profiling.logger]\nlevel = "basic"\nfile = "%s"\nappend = false\n' "$OUT/prof-$rt-$n.log" > cubecl.toml
      timeout 120 $B --no-burn --runs 10 --warm-ms 1000 --with raw=none --case $c > "$OUT/prof-$rt-$n.txt" 2>&1
      echo "== profile $rt $c rc=$? at ${SECONDS}s"
      (cd $here && python3 bench/profile_summary.py "$OUT/prof-$rt-$n.log" | head -14)
      gzip -f "$OUT/prof-$rt-$n.log"
    done
    cd $here
  done
  ;;
g)
  V=.gpu/sieve-bench-vknr
  T=topk_with_indices
  timeout 200 $V --no-burn --runs 10 --sample-ms 30 --warm-ms 1000 --json "$OUT/vulkan.json" \
    --case $T:64x128256:f32:k=1000,raw=radix_select,split=32/128/256 \
    --case $T:64x128256:f32:k=50,raw=radix_select,split=32/128/256 \
    --case $T:64x128256:f32:k=1000,dist=tied,raw=radix_select,split=32/128 \
    --case $T:64x128256:f32:k=50,dist=tied,raw=radix_select,split=32/128 \
    --case $T:268435456:f32:k=1000,raw=radix_select,cubes=4096/8448 > "$OUT/vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/vulkan.txt" | grep -v skipped | cut -c1-160
  ;;
h)
  export LIMIT=100
  split_suite vulkan 3 "topk_ops:: sampling::"
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  pack h
  T=topk_with_indices
  timeout 80 .gpu/sieve-bench-vknr --no-burn --runs 10 --sample-ms 30 --warm-ms 1000 --with raw=none --json "$OUT/vulkan.json" \
    --case $T:64x128256:f32:k=50 --case $T:64x128256:f32:k=1000 --case $T:64x128256:f32:k=50,dist=tied \
    --case $T:64x128256:f32:k=1000,dist=tied --case top_k_top_p_sample:64x128256:f32:k=50,p=0.9,t=0.8 > "$OUT/vulkan.txt" 2>&1
  echo "== vulkan rc=$? at ${SECONDS}s"; grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/vulkan.txt" | grep -v skipped | cut -c1-150
  ;;
*) echo "usage: $0 <a|b|c|d|e|f|g|h>"; exit 2 ;;
esac
pack $1
