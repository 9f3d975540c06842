# Sourced by the bench/gpu_session*.sh scripts on the GPU machine: unpacks the Vulkan loader
# (.gl/) and the xz-compressed binaries (.gpu/), points the loader at NVIDIA's driver, and
# defines `summary FILE` (a test or sanitizer log's result lines) and `limit` (LIMIT, 450 s).
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
summary() { grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|panicked|failures:" "$1" | head -12; }
limit=${LIMIT:-450}
