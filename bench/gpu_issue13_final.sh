#!/usr/bin/env bash
# The session's last call (about 4 minutes of device time left): the CI-sized huge:: tests
# and the short-row regression through wgpu (Vulkan) on a freshly built binary, the
# 2^31 + 8-key sort_with_indices (i64 indices) through CUDA with a longer limit, and a few
# standard rows through CUDA (raw op and Burn op, no stock Burn) for the regression check.
set -uo pipefail
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 60 .gpu/suite-wgpu huge:: topk_ops::default_tuning --test-threads 2 > "$OUT/wgpu-small.txt" 2>&1 &
SIEVE_HUGE=1 timeout 100 .gpu/suite-cuda --ignored --exact huge::huge_sort_with_i64_indices --nocapture > "$OUT/huge-sort-i64.txt" 2>&1
echo "huge sort_with_indices rc=$?"
wait
grep -E "test result|panicked" "$OUT/wgpu-small.txt" "$OUT/huge-sort-i64.txt"
cases=(--case cumsum:16777216:f32:dim=0 --case mask_select:16777216:f32:density=0.5
  --case sort_with_indices:16777216:f32 --case sort_with_indices:16384x128:f32
  --case topk_with_indices:16777216:f32:k=10 --case topk_with_indices:16384x128:f32:k=8
  --case topk_with_indices:64x128256:f32:k=50 --case topk_with_indices:4096x32768:f32:k=64)
timeout 110 .gpu/sieve-bench-cuda --no-burn --json "$OUT/cuda-rows.json" "${cases[@]}" > "$OUT/bench-cuda.txt" 2>&1
echo "bench rc=$?"
grep -E "sieve|copy" "$OUT/bench-cuda.txt" | cut -c1-160
