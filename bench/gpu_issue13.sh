#!/usr/bin/env bash
# Issue 13's GPU checks on the H200, from prebuilt binaries in .gpu/ (xz-compressed; carry
# [".gpu", ".gl"]): the one integration-test binary per runtime (`suite-cuda`, NVRTC;
# `suite-vulkan`, wgpu's SPIR-V compiler) and `sieve-bench-cuda`. Every test process runs
# under `timeout`, so a hang is a failure. Logs go to $OUT (one file per step).
#
# usage: bash bench/gpu_issue13.sh tests | huge | bench
#   tests     the whole suite through CUDA and through Vulkan (VK=wgpu: the default-feature
#             binary, wgpu's WGSL path, which picks Vulkan on the H200), the property suite at
#             SIEVE_PROP_CASES (default 2000) cases per op, and compute-sanitizer memcheck
#             and racecheck over the whole CUDA suite (at SANITIZE_PROP_CASES, default 20;
#             racecheck in four processes, one per group of modules, which cover the suite),
#             all concurrently
#   huge      the past-2^32 tests (`--ignored huge::`), one process per test (each needs
#             up to ~90 GB of the card), each call timed, with the GPU's utilisation and the
#             process's CPU time sampled every 5 s (a stuck kernel shows the GPU busy and the
#             host idle; host work the reverse)
#   bench     the standard rows through CUDA, then torch (same card, same call)
set -uo pipefail
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
summary() { # file: the libtest / sanitizer verdict lines and any failure
  grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|Target application returned|FAILED|panicked" "$1" | head -20
}
limit=${LIMIT:-540}
case "$1" in
tests)
  # The regression test of the compile-time "hang", alone and timed first.
  for b in cuda ${VK:-vulkan}; do
    s=$SECONDS; timeout 120 .gpu/suite-$b --exact topk_ops::default_tuning_at_every_short_row_length \
      > "$OUT/regression-$b.txt" 2>&1; echo "regression-$b rc=$? $((SECONDS - s)) s"
  done
  # Everything but the properties, and the properties at SIEVE_PROP_CASES, both runtimes and
  # memcheck at once (one card, 16 cores: the kernels' first-use compiles are host work).
  cases=${SIEVE_PROP_CASES:-2000}
  for b in cuda ${VK:-vulkan}; do
    timeout $limit .gpu/suite-$b --test-threads 4 --skip props:: > "$OUT/tests-$b.txt" 2>&1 &
    SIEVE_PROP_CASES=$cases timeout $limit .gpu/suite-$b --test-threads 8 props:: \
      > "$OUT/props-$b.txt" 2>&1 &
  done
  SIEVE_PROP_CASES=${SANITIZE_PROP_CASES:-20} timeout $limit compute-sanitizer --tool memcheck \
    --error-exitcode 9 .gpu/suite-cuda --test-threads 1 > "$OUT/memcheck-cuda.txt" 2>&1 &
  # Racecheck: the groups together are every module of the suite (checked below).
  groups=("scan:: compact:: filter_ops:: soundness::" "sort:: sort_ops:: split_ops::" "topk::"
    "topk_ops:: burn_ops:: small_devices:: huge:: props::")
  for g in 0 1 2 3; do
    SIEVE_PROP_CASES=${SANITIZE_PROP_CASES:-20} timeout $limit compute-sanitizer --tool racecheck \
      --error-exitcode 9 .gpu/suite-cuda --test-threads 2 ${groups[$g]} \
      > "$OUT/racecheck-cuda-$g.txt" 2>&1 &
  done
  wait
  modules=$(.gpu/suite-cuda --list 2>/dev/null | grep ': test$' | cut -d: -f1 | sort -u)
  for m in $modules; do
    echo " ${groups[*]} " | grep -q " $m:: " || echo "racecheck groups miss module $m"
  done
  for f in tests-cuda props-cuda tests-${VK:-vulkan} props-${VK:-vulkan} memcheck-cuda \
    racecheck-cuda-0 racecheck-cuda-1 racecheck-cuda-2 racecheck-cuda-3; do
    echo "== $f"; summary "$OUT/$f.txt"
  done
  ;;
huge)
  for t in $(.gpu/suite-cuda --list --ignored 2>/dev/null | grep '^huge::huge_' | sed 's/: test$//'); do
    echo "== $t" | tee -a "$OUT/huge-samples.txt" >> "$OUT/huge-cuda.txt"
    start=$SECONDS
    SIEVE_HUGE=1 timeout ${HUGE_LIMIT:-240} .gpu/suite-cuda --ignored --exact "$t" --nocapture \
      >> "$OUT/huge-cuda.txt" 2>&1 &
    pid=$!
    sleep 2
    while kill -0 $pid 2>/dev/null; do
      p=$(pgrep -P $pid | head -1); p=${p:-$pid}
      cpu=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null)
      gpu=$(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)
      echo "  t=$((SECONDS - start))s cpu_ticks=$cpu gpu=$gpu" >> "$OUT/huge-samples.txt"
      sleep 5
    done
    wait $pid; echo "$t rc=$? $((SECONDS - start)) s"
  done
  summary "$OUT/huge-cuda.txt"
  grep -E "^[a-z_ ]+: [0-9.]+ s$" "$OUT/huge-cuda.txt"
  ;;
bench)
  timeout ${BENCH_LIMIT:-400} .gpu/sieve-bench-cuda --json "$OUT/cuda.json" > "$OUT/bench-cuda.txt" 2>&1
  echo "bench rc=$?"
  timeout ${TORCH_LIMIT:-300} python3 bench/torch_reference.py "$OUT/torch.json" > "$OUT/bench-torch.txt" 2>&1
  echo "torch rc=$?"
  grep -E "^(cumsum|copy|mask_select|argwhere|compact_rows|sort[a-z_]*|argsort[a-z_]*|stable_partition|split_by_bit|topk_with_indices) " "$OUT/bench-cuda.txt" | grep -v burn | head -60
  ;;
esac
