#!/usr/bin/env bash
# Nineteenth session (issue 15).
#   a  the branches kept off main for want of device time, merged (`s19`: the blocked top-k
#      gather, the sort's write shape), and on them the chunked rows' merge (`topk-merge`):
#      the top-k and sort tests through CUDA and Vulkan,
#      the rest of the top-k tests through CUDA (props::topk, sets::, small_devices::,
#      soundness::topk, dtypes_ops::every_dtype_through_every_op), memcheck and racecheck
#      over the gather's and the sort's writes; the top-k rows and the sort rows through this
#      bench and `.gpu/sieve-bench-cuda-base` (meant as main's; it was older: 19-a); the in-cube sort at the shapes
#      of the chunked row path's candidates ([64, 2000] against [128, 1000], keys per unit
#      8, 4, 2); Nsight Compute's kernel times of [64, 128256] k = 1000 through both benches,
#      and of the in-cube sort kernel at [16384, 128] (the Burn op's calls, then the raw ones).
#      Files: tests-*.txt, memcheck-cuda.txt, racecheck-cuda-*.txt, bench.txt, bench.json,
#      ncu.txt.
#   c  main with both (`af71ff0`'s kernels): the top-k, sampling and sort rows through CUDA with
#      torch's in the same call, the batched rows cut in 1, 2 (the default) and 4 chunks a row
#      and with 512-unit row cubes; the batched top-k, 2^28 top-k and sampling rows through
#      Vulkan. Files: bench-cuda.txt, cuda.json, torch.json, bench-vulkan.txt, vulkan.json.
#   d  19-c's Vulkan rows of the batched top-k were 1.6-3.5x 18-d's: Vulkan benches of main
#      before the session (`c457eac`, vk-base), main now (`af71ff0`: blocked gather and the
#      merge, vk-merge) and main without the blocked gather (`02ec8fb`, vk-mo); CUDA benches of
#      the last two (cuda-merge, cuda-mo). Each runs twice, interleaved. Files: bench-*.txt.
#   e  whether the chunked rows' merge pays where rows are few and cut into many chunks: CUDA
#      benches of main without the merge (`d6f2cc7`, cuda-gather) and with it (`af71ff0`,
#      cuda-merge), interleaved twice, at [1|8|16|32, 128256]. Files: bench-*.txt.
#   f  the guard (`row_select_kernel` compiles the sampled bound out where the minima bound is
#      asked too): `topk::`, `topk_ops::` through CUDA; and whether the Burn op's time over the
#      raw call comes from its input being uploaded: the batched top-k rows and the [16384, 128]
#      sort with the input made by a Burn op (`input=op`) and uploaded, interleaved twice.
#      Files: tests-cuda.txt, bench.txt.
#   g  the Burn op with `flush=1` (each call followed by `Device::flush`: Fusion dispatches what
#      it holds instead of holding it to the sync) and without, twice. File: bench.txt.
#   h  (written for the next session, not run here) the standard rows through CUDA without and
#      with `--with flush=1`, torch's in the same call: which Burn ops a flush after the call
#      speeds. Files: bench-cuda.txt, cuda.json, bench-cuda-flush.txt, cuda-flush.json,
#      torch.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=300 bash bench/gpu_session19.sh <a|c|d|e|f|g|h>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-300}
source "$here/gpu_prelude.sh"
T=topk_with_indices
S=sort_with_indices
case "$1" in
a)
  M="topk:: topk_ops:: sampling:: sort:: sort_ops::"
  R="props::topk props::empty_shapes_topk sets:: small_devices:: soundness::topk"
  timeout $limit .gpu/suite-vulkan --test-threads 3 $M $R > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 3 $M > "$OUT/tests-cuda.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $R > "$OUT/tests-cuda-rest.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 1 dtypes_ops::every_dtype_through_every_op \
    > "$OUT/tests-cuda-dtypes.txt" 2>&1 &
  sanitize "topk::row_sampled topk::every_length topk::candidates topk_ops::default_tuning_on_few sort::many_tiles" \
    "topk::row_sampled topk::every_length topk::sampled_bound;sort::many_tiles sort::every_length"
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/*.txt | head -20
  B=$T:64x128256:f32
  args=(--case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied
    --case $T:16384x128:f32:k=8 --case $T:16777216:f32:k=1000 --case $T:268435456:f32:k=1000
    --case sort:268435456:i32 --case $S:16777216:f32 --case $S:16384x128:f32)
  for e in 8 4 2; do args+=(--case $S:64x2000:i32,in_cube_epu=$e --case $S:128x1000:i32,in_cube_epu=$e); done
  : > "$OUT/bench.txt"
  for b in base new; do
    bin=.gpu/sieve-bench-cuda; [ $b = base ] && bin=.gpu/sieve-bench-cuda-base
    timeout ${BENCH_LIMIT:-120} $bin --no-burn --runs 10 --json "/tmp/$b.json" "${args[@]}" \
      > "/tmp/$b.txt" 2>&1
    echo "bench $b rc=$?"; { echo "=== $b"; cat "/tmp/$b.txt"; } >> "$OUT/bench.txt"
    grep -E "^(topk|copy|sort)" "/tmp/$b.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  done
  for b in base new; do
    bin=.gpu/sieve-bench-cuda; [ $b = base ] && bin=.gpu/sieve-bench-cuda-base
    echo "=== $b" >> "$OUT/ncu.txt"
    timeout 60 ncu --metrics gpu__time_duration.sum --csv --launch-count 40 $bin --no-burn \
      --runs 10 --case $T:64x128256:f32:k=1000 2>&1 | grep -v -E "^==PROF==" >> "$OUT/ncu.txt"
    echo "ncu $b rc=${PIPESTATUS[0]}"
  done
  # The Burn op's sort kernel against the raw call's: same GPU time, or not?
  echo "=== sort_in_cube [16384, 128], Burn op then raw" >> "$OUT/ncu.txt"
  timeout 60 ncu --metrics gpu__time_duration.sum --csv --kernel-name regex:sort_in_cube \
    --launch-count 40 .gpu/sieve-bench-cuda --no-burn --runs 10 --case $S:16384x128:f32 2>&1 \
    | grep -v -E "^==PROF==" >> "$OUT/ncu.txt"
  echo "ncu sort rc=${PIPESTATUS[0]}"
  python3 -c "import json,sys; json.dump({n: json.load(open(f'/tmp/{n}.json')) for n in ['base','new']}, open(sys.argv[1],'w'))" "$OUT/bench.json"
  ;;
c)
  B=$T:64x128256:f32
  args=()
  for c in k=50 k=1000 k=50,dist=tied k=1000,dist=tied; do
    args+=(--case $B:$c --case $B:$c,split=64 --case $B:$c,split=264)
  done
  args+=(--case $B:k=1000,row_units=512 --case $T:16384x128:f32:k=8 --case $T:4096x32768:f32:k=64
    --case $T:16777216:f32:k=1000)
  for c in k=10 k=1000 k=100000 k=1000,dist=all_equal; do args+=(--case $T:268435456:f32:$c); done
  args+=(--case top_k_top_p_sample:64x128256:f32 --case top_k_top_p_sample:256x128256:f32
    --case sort:268435456:i32 --case $S:268435456:f32 --case argsort:268435456:f32
    --case $S:16777216:f32 --case $S:16384x128:f32)
  timeout ${BENCH_LIMIT:-220} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"
  grep -E "^(topk|copy|top_k|sort|argsort)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by|lsd"
  timeout ${TORCH_LIMIT:-150} python3 bench/torch_reference.py "$OUT/torch.json" \
    --only=topk,sample,sort > /tmp/torch.txt 2>&1
  echo "torch rc=$?"; grep -E "^(topk|top_k|sample|sort|argsort|copy)" /tmp/torch.txt | head -40
  timeout ${VK_LIMIT:-150} .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied \
    --case $T:268435456:f32:k=1000 --case top_k_top_p_sample:64x128256:f32 \
    > "$OUT/bench-vulkan.txt" 2>&1
  echo "bench vulkan rc=$?"
  grep -E "^(topk|copy|top_k)" "$OUT/bench-vulkan.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  ;;
d)
  B=$T:64x128256:f32
  args=(--case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied
    --case $T:16384x128:f32:k=8 --case top_k_top_p_sample:64x128256:f32)
  for round in 1 2; do
    for b in vk-base vk-mo vk-merge cuda-mo cuda-merge; do
      more=(); case $b in cuda-*) more=(--case $T:16777216:f32:k=1000 --case $T:268435456:f32:k=1000);; esac
      timeout 80 .gpu/$b --no-burn --runs 10 "${args[@]}" "${more[@]}" > /tmp/b.txt 2>&1
      echo "== $b round $round rc=$?"; { echo "=== round $round"; cat /tmp/b.txt; } >> "$OUT/bench-$b.txt"
      grep -E "^(topk|top_k)" /tmp/b.txt | grep -v -E "skipped|sort_and_slice|rank_by|row_max" \
        | awk '{print $1, $2, $4, $5, $6}'
    done
  done
  ;;
e)
  args=()
  for r in 1 8 16 32; do args+=(--case $T:${r}x128256:f32:k=1000); done
  args+=(--case $T:8x128256:f32:k=50 --case $T:8x128256:f32:k=1000,dist=tied)
  for round in 1 2; do
    for b in cuda-gather cuda-merge; do
      timeout 80 .gpu/$b --no-burn --runs 10 "${args[@]}" > /tmp/b.txt 2>&1
      echo "== $b round $round rc=$?"; { echo "=== round $round"; cat /tmp/b.txt; } >> "$OUT/bench-$b.txt"
      grep -E "^topk" /tmp/b.txt | grep -v -E "skipped|sort_and_slice|rank_by" | awk '{print $1, $2, $4, $5, $6}'
    done
  done
  ;;
f)
  timeout ${TEST_LIMIT:-100} .gpu/suite-cuda --test-threads 4 topk:: topk_ops:: \
    > "$OUT/tests-cuda.txt" 2>&1 &
  B=$T:64x128256:f32
  args=()
  for c in k=1000 k=50,dist=tied k=50; do args+=(--case $B:$c --case $B:$c,input=op); done
  args+=(--case $S:16384x128:f32 --case $S:16384x128:f32:input=op)
  for round in 1 2; do
    timeout 60 .gpu/sieve-bench-cuda --no-burn --runs 10 "${args[@]}" > /tmp/b.txt 2>&1
    echo "== round $round rc=$?"; { echo "=== round $round"; cat /tmp/b.txt; } >> "$OUT/bench.txt"
    grep -E "^(topk|sort)" /tmp/b.txt | grep -E "auto|radix_select|in_cube" | awk '{print $1, $2, $4, $5, $6, $12}'
  done
  wait
  summary "$OUT/tests-cuda.txt"
  ;;
g)
  B=$T:64x128256:f32
  args=()
  for c in $B:k=1000 $B:k=50,dist=tied $T:16384x128:f32:k=8; do
    args+=(--case $c --case $c,flush=1)
  done
  args+=(--case $S:16384x128:f32 --case $S:16384x128:f32:flush=1)
  for round in 1 2; do
    timeout 40 .gpu/sieve-bench-cuda --no-burn --runs 10 "${args[@]}" > /tmp/b.txt 2>&1
    echo "== round $round rc=$?"; { echo "=== round $round"; cat /tmp/b.txt; } >> "$OUT/bench.txt"
    grep -E "^(topk|sort)" /tmp/b.txt | grep -E "auto|radix_select|rank_by|in_cube" \
      | awk '{print $1, $2, $4, $5, $6, $12}'
  done
  ;;
h)
  for v in "" flush; do
    with=(); [ -n "$v" ] && with=(--with flush=1)
    timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --runs 10 "${with[@]}" \
      --json "$OUT/cuda${v:+-$v}.json" > "$OUT/bench-cuda${v:+-$v}.txt" 2>&1
    echo "bench ${v:-plain} rc=$?"
    grep -E "\"auto\"|strategy\":\"auto" "$OUT/bench-cuda${v:+-$v}.txt" | awk '{print $1, $2, $4, $5, $6}'
  done
  timeout ${TORCH_LIMIT:-150} python3 bench/torch_reference.py "$OUT/torch.json" > /tmp/torch.txt 2>&1
  echo "torch rc=$?"
  ;;
esac
