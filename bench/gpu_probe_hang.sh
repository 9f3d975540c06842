#!/usr/bin/env bash
# Issue 13's top-k "hang" on the H200 through CUDA: is it a kernel that never ends (a barrier
# or plane operation some units skip) or a compile that takes minutes? Runs one call of the
# reported shape with CubeCL's compilation log on, and samples every 5 s the process's CPU
# time and thread states and the GPU's utilisation: a kernel spinning shows the GPU busy and
# the host waiting; a compile shows one host thread busy and the GPU idle.
# usage (on the GPU machine, binaries in .gpu/): bash bench/gpu_probe_hang.sh <bench binary> <case>...
set -uo pipefail
bin=$1; shift
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export CUBECL_DEBUG_LOG="$OUT/cubecl.log"
for case in "$@"; do
  echo "===== $case"
  start=$SECONDS
  timeout 300 "$bin" --no-burn --case "$case" > "$OUT/probe.txt" 2>&1 &
  pid=$!
  sleep 1
  while kill -0 $pid 2>/dev/null; do
    p=$(pgrep -P $pid | head -1)
    if [ -n "$p" ]; then
      cpu=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null)
      states=$(for t in /proc/$p/task/*; do echo -n "$(awk '{print $3}' $t/stat 2>/dev/null):$(cat $t/wchan 2>/dev/null) "; done)
      gpu=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader)
      echo "t=$((SECONDS - start))s cpu_ticks=$cpu gpu=$gpu threads: $states" | cut -c1-400
    fi
    sleep 5
  done
  wait $pid; echo "rc=$? after $((SECONDS - start)) s"
  tail -5 "$OUT/probe.txt"
  grep -c "extern \"C\" __global__" "$OUT/cubecl.log" 2>/dev/null
  grep -o "__global__ void [a-z_0-9A-Z]*" "$OUT/cubecl.log" | sort | uniq -c | tail -20
done
