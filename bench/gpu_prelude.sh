# Sourced by the bench/gpu_session*.sh scripts on the GPU machine: unpacks the Vulkan loader
# (.gl/) and the xz-compressed binaries (.gpu/), points the loader at NVIDIA's driver, and
# defines `summary FILE` (a test or sanitizer log's result lines), `limit` (LIMIT, 450 s), `sanitize`
# and `tests_and_sanitizers` (below).
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
summary() { grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|panicked|failures:" "$1" | head -12; }
limit=${LIMIT:-450}
# sanitize MODULES GROUPS: compute-sanitizer memcheck over MODULES and racecheck over each
# `;`-separated group of GROUPS, on the CUDA suite, in the background (`wait` for them); logs
# in $OUT/memcheck-cuda.txt and $OUT/racecheck-cuda-<i>.txt.
sanitize() {
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 $1 > "$OUT/memcheck-cuda.txt" 2>&1 &
  local i=0 g groups
  IFS=';' read -ra groups <<< "$2"
  for g in "${groups[@]}"; do
    SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 \
      .gpu/suite-cuda --test-threads 2 $g > "$OUT/racecheck-cuda-$i.txt" 2>&1 &
    i=$((i + 1))
  done
}
# tests_and_sanitizers MODULES: MODULES through CUDA and Vulkan (4 test threads each, LIMIT),
# memcheck and racecheck over `sort::` beside them; prints each log's result lines.
tests_and_sanitizers() {
  timeout ${LIMIT:-330} .gpu/suite-cuda --test-threads 4 $1 --skip dtypes_sort > "$OUT/tests-cuda.txt" 2>&1 &
  timeout ${LIMIT:-330} .gpu/suite-vulkan --test-threads 4 $1 --skip dtypes_sort > "$OUT/tests-vulkan.txt" 2>&1 &
  sanitize "sort:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-0.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
}
