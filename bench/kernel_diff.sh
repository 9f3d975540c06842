#!/usr/bin/env bash
# Do two builds compile the same kernels for the same tests? Runs each suite binary on the
# tests named (lavapipe or any wgpu device; one thread, so the kernels come in one order) with
# CubeCL's compilation logger on, then compares the logs (bench/kernel_sources.py).
#
#   bench/kernel_diff.sh BASE_SUITE NEW_SUITE [--renumber] -- TEST_FILTER...
#
# BASE_SUITE / NEW_SUITE: test binaries of the `suite` target built at the two revisions
# (`cargo test --release --no-run` prints the path). Exit status: kernel_sources.py's (0: the
# same kernels, source for source). A change that must leave the default kernels alone (a
# switch off by default, a refactor) is checked this way without a GPU.
set -euo pipefail
base=$(realpath "$1"); new=$(realpath "$2"); shift 2
flags=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
for side in base new; do
  mkdir -p "$work/$side"
  printf '[compilation.logger]\nlevel = "full"\nfile = "%s"\nappend = false\n' \
    "$work/$side/kernels.log" > "$work/$side/cubecl.toml"
  bin=$base; [ $side = new ] && bin=$new
  (cd "$work/$side" && timeout 3000 "$bin" --test-threads 1 "$@" > run.txt 2>&1) || {
    echo "$side: the tests failed (see $work/$side/run.txt)"; tail -5 "$work/$side/run.txt"; exit 2; }
  grep -E '^test result' "$work/$side/run.txt" | sed "s/^/$side: /"
done
python3 "$here/kernel_sources.py" "${flags[@]}" "$work/base/kernels.log" "$work/new/kernels.log"
