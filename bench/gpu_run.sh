#!/usr/bin/env bash
# One call on the GPU machine (see ../shared/gpu.md): unpack the Vulkan loader, run the test
# binaries through CUDA and Vulkan, the CUDA scan tests under compute-sanitizer (memcheck and
# racecheck), then the benchmarks (CUDA, Vulkan) and the torch reference, all on one card.
# Binaries come prebuilt in .gpu/ (xz-compressed); logs and JSON go to $OUT.
#
# usage: bash bench/gpu_run.sh [tests] [sanitize] [bench] [cases] [sweep]
#        (default: the first three). BENCH_BACKENDS picks the bench runs (default
#        "cuda torch vulkan"), BENCH_ARGS passes extra arguments to sieve-bench, CASES the
#        --case list of the `cases` step (run on CASE_BACKENDS, default cuda).
set -uo pipefail
BENCH_ARGS="${BENCH_ARGS:-}"
steps="${*:-tests sanitize bench}"
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"

log="$OUT/log.txt"   # one log: the device tool brings back at most 8 files
run() { # name, command...: append to the log under a header, say how it ended
  local name=$1; shift
  local start=$SECONDS
  echo "===== $name: $*" >> "$log"
  timeout "${LIMIT:-150}" "$@" > "$OUT/current.log" 2>&1
  local rc=$?
  cat "$OUT/current.log" >> "$log"
  echo "== $name: rc=$rc ($((SECONDS - start)) s): $(grep -E 'test result|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/current.log" | tr '\n' ' ')"
  rm -f "$OUT/current.log"
}

if [[ $steps == *tests* ]]; then
  for b in cuda vulkan; do
    for t in scan compact burn_ops filter_ops sort sort_ops split_ops topk topk_ops; do
      [ -x ".gpu/$t-$b" ] && run "test-$t-$b" ".gpu/$t-$b" --test-threads 1
    done
  done
fi
if [[ $steps == *sanitize* ]]; then
  # The sanitizers slow kernels ~100x: the tests that cross tile boundaries, odd sizes and
  # the split grid, not the 2^24-element ones.
  filter="odd_and_tiny every_length many_rows same_bits planes_off"
  for tool in memcheck racecheck; do
    [ -x .gpu/scan-cuda ] && run "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      .gpu/scan-cuda --test-threads 1 $filter
    [ -x .gpu/compact-cuda ] && run "sanitize-compact-$tool" compute-sanitizer --tool "$tool" \
      --error-exitcode 9 .gpu/compact-cuda --test-threads 1 \
      every_length comparison indices_only other_dtypes bad_calls bit_split
    [ -x .gpu/sort-cuda ] && run "sanitize-sort-$tool" compute-sanitizer --tool "$tool" \
      --error-exitcode 9 .gpu/sort-cuda --test-threads 1 \
      every_length integers_with_duplicates many_short_rows all_equal bad_calls
    # Racecheck is far slower than memcheck: it skips the every-strategy specials test and
    # the every-length sweep (over 400 small calls; more than 200 s under racecheck).
    topk_filter="candidates_shrink minima_bound integers_with_duplicates all_equal bad_calls"
    [ "$tool" = memcheck ] && topk_filter="floats_with_specials every_length $topk_filter"
    [ -x .gpu/topk-cuda ] && run "sanitize-topk-$tool" compute-sanitizer --tool "$tool" \
      --error-exitcode 9 .gpu/topk-cuda --test-threads 1 $topk_filter
  done
fi
if [[ $steps == *bench* ]]; then
  export LIMIT=400
  for b in ${BENCH_BACKENDS:-cuda torch vulkan}; do
    if [ "$b" = torch ]; then
      run bench-torch python3 bench/torch_reference.py "$OUT/torch.json"
    elif [ -x ".gpu/sieve-bench-$b" ]; then
      run "bench-$b" ".gpu/sieve-bench-$b" --json "$OUT/$b.json" $BENCH_ARGS
    fi
  done
  grep -E "^(cumsum|copy|mask_select|argwhere|compact_rows|sort[a-z_]*|argsort[a-z_]*|stable_partition|split_by_bit|topk_with_indices) " "$log"
fi
if [[ $steps == *cases* ]]; then
  # Extra cases of one's own (tuning sweeps, diagnostics): CASES="--case ... --case ..."
  export LIMIT=400
  for b in ${CASE_BACKENDS:-cuda}; do
    [ -x ".gpu/sieve-bench-$b" ] && run "cases-$b" ".gpu/sieve-bench-$b" --no-burn \
      --json "$OUT/cases-$b.json" $CASES
  done
  grep -E "^(cumsum|copy|mask_select|argwhere|compact_rows|sort[a-z_]*|argsort[a-z_]*|stable_partition|split_by_bit|topk_with_indices) " "$log"
fi
if [[ $steps == *sweep* ]] && [ -x .gpu/sieve-bench-cuda ]; then
  cases=()
  for e in 16 32 64; do for u in 256 512; do
    cases+=(--case "cumsum:268435456:f32:strategy=decoupled_lookback,epu=$e,units=$u")
    cases+=(--case "cumsum:268435456:f32:strategy=reduce_then_scan,epu=$e,units=$u")
  done; done
  run sweep-cuda .gpu/sieve-bench-cuda --no-burn --json "$OUT/sweep-cuda.json" "${cases[@]}"
  grep -E "^cumsum .*sieve" "$log" | grep -v auto
fi
