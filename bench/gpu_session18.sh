#!/usr/bin/env bash
# Eighteenth session (issue 15): batched top-k rows at k = 1000 and tied rows.
#   probe  where [64, 128256] top-k spends its time at the binaries of `aa64218` (kernels of
#          main): the bench's batched rows with tuning variants (rows cut into 1, 2, 4, 8
#          chunks; 512-unit row cubes; the device-wide passes; the minima bound tried at
#          k = 1000), Nsight Compute kernel durations of the default path (uniform and tied
#          k = 1000), torch's top-k rows. Files: bench-cuda.txt, cuda.json, ncu-*.csv,
#          torch.txt, torch.json.
#   after  the row cube's sampled bound (`90d746d`): top-k tests through CUDA and Vulkan
#          (`topk::`, `topk_ops::`, `sampling::`, `dtypes_sort::topk`), memcheck and racecheck
#          over the row-cube tests; the batched rows with the sampled bound and without
#          (`row_sample=0`), k = 50 by the sampled bound instead of the minima bound
#          (`bound=0`), [16384, 128] k = 8 (the rank cube's minima bound, whose select
#          changed), 2^24 and 2^28 k = 1000; Nsight kernel durations of [64, 128256] k = 1000;
#          torch's top-k rows; an nsys timeline of [64, 128256] k = 50 (Burn op and raw) where
#          nsys is. Files: tests-*.txt, memcheck-cuda.txt, racecheck-cuda-*.txt, bench-cuda.txt,
#          cuda.json, ncu-*.csv, torch.txt, torch.json, nsys-*.csv.gz.
#   probe2 where the row cube's time goes now (binaries of `after`): Nsight Compute's SASS page
#          of `row_select_kernel` at [64, 128256] k = 1000 (`ncu-sass.csv.gz`), kernel
#          durations with rows cut in two (`split=132`, `ncu-split.csv`), and the batched rows
#          cut in 1, 2 and 4 (the default) chunks at k = 50 and 1000, uniform and tied.
#   final  rows cut into one cube per multiprocessor (`2f45ca8`): the same tests through CUDA
#          and Vulkan (the Burn ops' and sampling's tests run the default tuning); then the
#          top-k and sampling rows at the defaults through CUDA, torch's in the same call, and
#          the batched rows through Vulkan. Files: tests-*.txt, bench-cuda.txt, cuda.json,
#          bench-vulkan.txt, vulkan.json, torch.json.
#   rest   the other tests that run the top-k (binaries of `final`): the property suite's top-k
#          properties, `sets::` (kthvalue, median), `small_devices::`, `soundness::topk*`,
#          `dtypes_ops::every_dtype_through_every_op`, through CUDA and Vulkan. Files:
#          tests-*.txt.
#   gather (for the next session) the blocked-layout gather of branch `topk-blocked-gather`:
#          its top-k tests through CUDA and Vulkan, memcheck and racecheck over the gather's
#          tests, then the top-k rows through main's bench (`.gpu/sieve-bench-cuda-base`) and
#          the branch's, one after the other. Files: tests-*.txt, memcheck-cuda.txt,
#          racecheck-cuda-0.txt, bench.txt, bench.json.
# Binaries in .gpu/ (xz; carry [".gpu", ".gl"]).
# usage: LIMIT=200 bash bench/gpu_session18.sh <probe|after|probe2|final|rest|gather>
set -uo pipefail
here="$(dirname "$0")"
export LIMIT=${LIMIT:-150}
source "$here/gpu_prelude.sh"
T=topk_with_indices
case "$1" in
probe)
  B=$T:64x128256:f32:k=1000
  args=(--case $B --case $B,split=64 --case $B,split=128 --case $B,split=512
    --case $B,row_units=512 --case $B,row_max=0 --case $B,bound=1
    --case $B,dist=tied --case $T:64x128256:f32:k=50,dist=tied --case $T:64x128256:f32:k=50)
  timeout ${BENCH_LIMIT:-200} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  for c in $B $B,dist=tied; do
    n=$(echo "$c" | tr -c 'a-z0-9\n' '_' | tail -c 20)
    timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv --launch-count 40 \
      .gpu/sieve-bench-cuda --no-burn --runs 10 --case $c > "$OUT/ncu-$n.csv" 2>&1
    echo "ncu $c rc=$?"
  done
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  ;;
after)
  M="topk:: topk_ops:: sampling:: dtypes_sort::topk"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  sanitize "topk::row_sampled topk::minima_bound topk::all_equal" \
    "topk::row_sampled topk::minima_bound"
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  B=$T:64x128256:f32
  args=(--case $B:k=1000 --case $B:k=1000,row_sample=0 --case $B:k=1000,dist=tied
    --case $B:k=1000,dist=tied,row_sample=0 --case $B:k=50 --case $B:k=50,dist=tied
    --case $B:k=50,bound=0 --case $B:k=50,dist=tied,bound=0
    --case $B:k=1000,split=128 --case $B:k=2000 --case $B:k=2000,row_sample=0
    --case $T:16384x128:f32:k=8 --case $T:16777216:f32:k=1000 --case $T:268435456:f32:k=1000)
  timeout ${BENCH_LIMIT:-150} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout ${NCU_LIMIT:-60} ncu --metrics gpu__time_duration.sum --csv --launch-count 40 \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case $B:k=1000 > "$OUT/ncu-k1000.csv" 2>&1
  echo "ncu rc=$?"
  timeout ${TORCH_LIMIT:-60} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk \
    > "$OUT/torch.txt" 2>&1
  echo "torch rc=$?"; grep -E "^topk" "$OUT/torch.txt" | head -16
  # Where the Burn op's time over the raw call goes: a timeline of both rows, where nsys is.
  if command -v nsys > /dev/null; then
    timeout 90 nsys profile -o /tmp/burn --force-overwrite true .gpu/sieve-bench-cuda --no-burn \
      --runs 10 --case $B:k=50 > /dev/null 2>&1
    nsys stats --report cuda_gpu_trace --format csv /tmp/burn.nsys-rep 2>/dev/null \
      | gzip > "$OUT/nsys-gpu-trace.csv.gz"
    nsys stats --report cuda_api_trace --format csv /tmp/burn.nsys-rep 2>/dev/null \
      | gzip > "$OUT/nsys-api-trace.csv.gz"
    echo "nsys: $(zcat "$OUT/nsys-gpu-trace.csv.gz" | wc -l) kernels"
  else
    echo "no nsys here"
  fi
  ;;
probe2)
  B=$T:64x128256:f32
  timeout 120 ncu --clock-control none --kernel-name regex:row_select --launch-skip 3 \
    --launch-count 1 --section SourceCounters --section WarpStateStats --page source \
    --print-source sass --csv .gpu/sieve-bench-cuda --no-burn --runs 10 --case $B:k=1000 \
    2>&1 | gzip > "$OUT/ncu-sass.csv.gz"
  echo "ncu sass rc=${PIPESTATUS[0]}"
  timeout 60 ncu --metrics gpu__time_duration.sum --csv --launch-count 30 \
    .gpu/sieve-bench-cuda --no-burn --runs 10 --case $B:k=1000,split=132 > "$OUT/ncu-split.csv" 2>&1
  echo "ncu split rc=$?"
  args=()
  for c in k=1000 k=1000,dist=tied k=50 k=50,dist=tied; do
    args+=(--case $B:$c,split=132 --case $B:$c,split=64)
  done
  timeout ${BENCH_LIMIT:-150} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by|auto"
  ;;
final)
  M="topk:: topk_ops:: sampling:: dtypes_sort::topk"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  B=$T:64x128256:f32
  args=(--case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied
    --case $T:16384x128:f32:k=8 --case $T:4096x32768:f32:k=64
    --case top_k_top_p_sample:64x128256:f32 --case top_k_top_p_sample:256x128256:f32)
  timeout ${BENCH_LIMIT:-120} .gpu/sieve-bench-cuda --no-burn --runs 10 --json "$OUT/cuda.json" \
    "${args[@]}" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench cuda rc=$?"; grep -E "^(topk|copy|top_k)" "$OUT/bench-cuda.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  timeout ${TORCH_LIMIT:-90} python3 bench/torch_reference.py "$OUT/torch.json" --only=topk,sample \
    > /tmp/torch.txt 2>&1
  echo "torch rc=$?"; grep -E "^(topk|top_k|sample)" /tmp/torch.txt | head -24
  timeout ${VK_LIMIT:-80} .gpu/sieve-bench-vulkan --no-burn --runs 10 --json "$OUT/vulkan.json" \
    --case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied \
    > "$OUT/bench-vulkan.txt" 2>&1
  echo "bench vulkan rc=$?"; grep -E "^(topk|copy)" "$OUT/bench-vulkan.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  ;;
gather)
  M="topk:: topk_ops:: sampling:: dtypes_sort::topk"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  sanitize "topk::row_sampled topk::every_length topk::candidates" \
    "topk::row_sampled topk::every_length topk::sampled_bound"
  wait
  for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  B=$T:64x128256:f32
  args=(--case $B:k=50 --case $B:k=1000 --case $B:k=50,dist=tied --case $B:k=1000,dist=tied
    --case $T:16777216:f32:k=1000 --case $T:268435456:f32:k=1000)
  : > "$OUT/bench.txt"
  for b in base new; do
    bin=.gpu/sieve-bench-cuda; [ $b = base ] && bin=.gpu/sieve-bench-cuda-base
    timeout ${BENCH_LIMIT:-100} $bin --no-burn --runs 10 --json "/tmp/$b.json" "${args[@]}" \
      > "/tmp/$b.txt" 2>&1
    echo "bench $b rc=$?"; { echo "=== $b"; cat "/tmp/$b.txt"; } >> "$OUT/bench.txt"
    grep -E "^(topk|copy)" "/tmp/$b.txt" | grep -v -E "skipped|sort_and_slice|rank_by"
  done
  python3 -c "import json,sys; json.dump({n: json.load(open(f'/tmp/{n}.json')) for n in ['base','new']}, open(sys.argv[1],'w'))" "$OUT/bench.json"
  ;;
rest)
  M="props::topk props::empty_shapes_topk sets:: small_devices:: soundness::topk
    dtypes_ops::every_dtype_through_every_op"
  timeout $limit .gpu/suite-vulkan --test-threads 2 $M > "$OUT/tests-vulkan.txt" 2>&1 &
  timeout $limit .gpu/suite-cuda --test-threads 2 $M > "$OUT/tests-cuda.txt" 2>&1 &
  wait
  for f in "$OUT"/tests-*.txt; do echo "== $f: $(grep -c 'ok$' "$f") ok"; summary "$f"; done
  grep -h -E "panicked" -A3 "$OUT"/tests-*.txt | head -20
  grep -h -E "^test .*(ok|FAILED|ignored)$" "$OUT"/tests-cuda.txt | head -40
  ;;
esac
