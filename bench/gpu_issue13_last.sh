#!/usr/bin/env bash
# The last call of issue 13's session (what the device time left allowed): why the CI-sized
# huge:: tests failed through wgpu on the H200, the past-2^32 tests through CUDA (one process
# per test), then the standard rows through CUDA without stock Burn, and torch.
set -uo pipefail
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout 60 .gpu/suite-wgpu huge:: --test-threads 1 > "$OUT/huge-small-wgpu.txt" 2>&1
echo "huge-small-wgpu rc=$?"; grep -E "test result|panicked" -A3 "$OUT/huge-small-wgpu.txt" | head -30
for t in $(.gpu/suite-cuda --list --ignored 2>/dev/null | grep '^huge::' | sed 's/: test$//'); do
  s=$SECONDS
  SIEVE_HUGE=1 timeout 45 .gpu/suite-cuda --ignored --exact "$t" --nocapture >> "$OUT/huge-cuda.txt" 2>&1
  echo "$t rc=$? $((SECONDS - s)) s"
done
timeout 230 .gpu/sieve-bench-cuda --no-burn --json "$OUT/cuda.json" > "$OUT/bench-cuda.txt" 2>&1
echo "bench rc=$?"
timeout 120 python3 bench/torch_reference.py "$OUT/torch.json" > "$OUT/bench-torch.txt" 2>&1
echo "torch rc=$?"
