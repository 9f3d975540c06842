# Sourced by the bench/gpu_session*.sh scripts on the GPU machine: unpacks the Vulkan loader
# (.gl/) and the xz-compressed binaries (.gpu/, F_DIR's copied in where F_DIR is set), points the loader at NVIDIA's driver, and
# defines `summary FILE` (a test or sanitizer log's result lines), `limit` (LIMIT, 450 s), `sanitize`,
# `tests_and_sanitizers`, `compaction_tests`, `split_suite`, `deal`, `ab_summary`, `each_test`, `sanitize_exact`, `stage_out`/`pack`, `sort_rows`, `begin` (a script's start) and
# `topk_cube_sweep_vulkan` (below).
# With F_DIR set, its binaries (*.xz) are copied into .gpu/ first.
if [ -n "${F_DIR:-}" ]; then mkdir -p .gpu && cp "$F_DIR"/*.xz .gpu/; fi
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
# tests_and_sanitizers MODULES: MODULES through each suite of SUITES (`cuda vulkan` unless set;
# 4 test threads each, LIMIT), memcheck and racecheck over `sort::` beside them; prints each
# log's result lines.
tests_and_sanitizers() {
  local s
  for s in ${SUITES:-cuda vulkan}; do
    timeout ${LIMIT:-330} .gpu/suite-$s --test-threads 4 $1 --skip dtypes_sort > "$OUT/tests-$s.txt" 2>&1 &
  done
  sanitize "sort:: --skip dtypes_sort" "sort:: --skip dtypes_sort"
  wait
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-0.txt; do
    echo "== $f $(grep -c ' ok$' "$f") ok"; summary "$f"
  done
}
# split_suite SUITE GROUPS MODULES: MODULES' tests through .gpu/suite-SUITE as GROUPS processes
# in the background (`wait` for them), the tests dealt round-robin in name order, 2 test threads
# each, within LIMIT; logs in $OUT/tests-SUITE-<g>.txt. Tests matching SKIP (an extended regex,
# `dtypes_sort` unless set) are left out. CubeCL compiles a client's kernels one at
# a time, so test threads of one process queue behind each other's JIT (`25-a`: 20 of 50 tests
# in 540 s); processes compile side by side.
split_suite() {
  local names
  mapfile -t names < <(.gpu/suite-$1 --list $3 2>/dev/null | grep ': test$' | sed 's/: test$//' \
    | grep -v -E "${SKIP:-dtypes_sort}")
  deal $1 $2 "" "${names[@]}"
}
# deal SUITE GROUPS TAG NAMES...: the tests NAMES (whole names) dealt round-robin into GROUPS
# processes through .gpu/suite-SUITE in the background (`wait` for them), 2 test threads
# each, within LIMIT; logs in $OUT/tests-SUITE-TAG<g>.txt.
deal() {
  local suite=$1 n=$2 tag=$3 g i
  shift 3
  local names=("$@")
  for ((g = 0; g < n; g++)); do
    local mine=()
    for ((i = g; i < ${#names[@]}; i += n)); do mine+=("${names[$i]}"); done
    timeout ${LIMIT:-450} .gpu/suite-$suite --exact --test-threads 2 "${mine[@]}" \
      > "$OUT/tests-$suite-$tag$g.txt" 2>&1 &
  done
}
# bench_rows RUNTIME LIMIT ARGS...: one sieve-bench process through RUNTIME (`cuda`, or
# `vulkan`: the vknr binary, or VK_BENCH where set, with a 2 s warm-up a row), --no-burn, 10
# runs of 30 ms samples,
# within LIMIT seconds; JSON and log in $OUT/RUNTIME.json and $OUT/rows-RUNTIME.txt; prints
# its exit status and rows.
bench_rows() {
  local rt=$1 lim=$2 bin=.gpu/sieve-bench-cuda warm=()
  shift 2
  [ "$rt" = vulkan ] && bin=${VK_BENCH:-.gpu/sieve-bench-vknr} warm=(--warm-ms 2000)
  timeout "$lim" $bin --no-burn --runs 10 --sample-ms 30 "${warm[@]}" --json "$OUT/$rt.json" "$@" \
    > "$OUT/rows-$rt.txt" 2>&1
  echo "== $rt rc=$? at ${SECONDS}s"
  grep -E "^[a-z_]+ +[0-9x]+ " "$OUT/rows-$rt.txt" | grep -v skipped | cut -c1-150
}
# split_dtypes SUITE GROUPS TEST: one TEST that loops over every dtype (e.g.
# `dtypes_ops::every_dtype_through_every_op`, ~325 s through CUDA in one process: CubeCL
# compiles a client's kernels one at a time) as GROUPS processes in the background, each
# given a share of the dtypes by `SIEVE_DTYPES` (`wait` for them); logs in
# $OUT/tests-SUITE-dtypes-<g>.txt.
split_dtypes() {
  local all=(f64 f32 f16 bf16 i64 i32 i16 i8 u64 u32 u16 u8) g i
  for ((g = 0; g < $2; g++)); do
    local mine=()
    for ((i = g; i < ${#all[@]}; i += $2)); do mine+=("${all[$i]}"); done
    SIEVE_DTYPES=$(IFS=,; echo "${mine[*]}") timeout ${LIMIT:-450} .gpu/suite-$1 --exact $3 \
      > "$OUT/tests-$1-dtypes-$g.txt" 2>&1 &
  done
}
# ab_benches TAG MAIN BRANCH ROWS NAME [PREFIX]: a branch's benches against main's, alternating
# processes main/branch/main/branch, each through CUDA then Vulkan (2 s warm-up a row), 30 ms
# samples (each process within AB_LIMIT seconds, 45 unless set; Vulkan's twice that; CUDA
# only with AB_RUNTIMES=cuda): MAIN
# holds sieve-bench-cuda and sieve-bench-vknr, BRANCH the same names ending in -TAG; JSON and
# logs in $OUT as PREFIX{cuda,vulkan}-{main,TAG}-{1,2}.json / PREFIXrows-*.txt; packs NAME.tgz
# after each pair (then `python3 bench/compare.py` per runtime and round).
ab_benches() {
  local tag=$1 main=$2 branch=$3 rows=$4 name=$5 p=${6:-} round v b lim=${AB_LIMIT:-45}
  for round in 1 2; do
    for v in main $tag; do
      b=$main/sieve-bench-cuda; [ $v = $tag ] && b=$branch/sieve-bench-cuda-$tag
      timeout $lim $b --no-burn --runs 10 --sample-ms 30 --json "$OUT/${p}cuda-$v-$round.json" $rows > "$OUT/${p}rows-cuda-$v-$round.txt" 2>&1
      echo "== cuda $v $round rc=$? at ${SECONDS}s"
      [ "${AB_RUNTIMES:-cuda vulkan}" = cuda ] && { pack $name; continue; }
      b=$main/sieve-bench-vknr; [ $v = $tag ] && b=$branch/sieve-bench-vknr-$tag
      timeout $((2 * lim)) $b --no-burn --runs 10 --sample-ms 30 --warm-ms 2000 --json "$OUT/${p}vulkan-$v-$round.json" $rows > "$OUT/${p}rows-vulkan-$v-$round.txt" 2>&1
      echo "== vulkan $v $round rc=$? at ${SECONDS}s"
      pack $name
    done
  done
}
# ab_summary PREFIX OPS: each A/B log's rows ($OUT/PREFIXrows-*.txt, as `ab_benches` writes
# them) whose op matches OPS (an extended regex), skipped rows left out.
ab_summary() {
  local f
  for f in "$OUT"/$1rows-*.txt; do
    echo "== ${f##*/}"
    grep -E "^($2) " "$f" | grep -v skipped | cut -c1-150
  done
}
# each_test LIMIT TESTS...: each of TESTS in its own process through .gpu/suite-cuda and
# .gpu/suite-vulkan, all side by side, within LIMIT seconds (`wait` for them); a test's whole
# name runs with `--exact`, a module (a name ending in `::`) as a filter; logs in
# $OUT/tests-RUNTIME-<i>.txt.
each_test() {
  local lim=$1 rt i t
  shift
  for rt in cuda vulkan; do
    i=0
    for t in "$@"; do
      if [[ $t == *:: ]]; then
        timeout $lim .gpu/suite-$rt $t > "$OUT/tests-$rt-$i.txt" 2>&1 &
      else
        timeout $lim .gpu/suite-$rt --exact $t > "$OUT/tests-$rt-$i.txt" 2>&1 &
      fi
      i=$((i + 1))
    done
  done
}
# sanitize_exact LIMIT TOOLS TESTS...: compute-sanitizer's TOOLS ("memcheck", "racecheck" or
# both, space-separated) over TESTS (whole names, `--exact`) on the CUDA suite, one process a
# tool in the background (`wait` for them), within LIMIT seconds; logs in
# $OUT/memcheck-cuda.txt and $OUT/racecheck-cuda-0.txt.
sanitize_exact() {
  local lim=$1 tools=$2 tool log
  shift 2
  for tool in $tools; do
    log="$OUT/memcheck-cuda.txt"
    [ "$tool" = racecheck ] && log="$OUT/racecheck-cuda-0.txt"
    timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 .gpu/suite-cuda --exact "$@" \
      > "$log" 2>&1 &
  done
}
# suite_summary: every test log's passed count and failures.
suite_summary() {
  local f
  for f in "$OUT"/tests-*.txt "$OUT"/memcheck-cuda.txt "$OUT"/racecheck-cuda-*.txt; do
    [ -f "$f" ] && echo "== ${f##*/} $(grep -c ' ok$' "$f") ok" && summary "$f"
  done
}
# stage_out: the script's files go to /tmp/o; `pack NAME` tars them into the call's own
# $OUT/NAME.tgz (call it after each step: a call cut by its limit keeps what was packed, and
# only a few files come back from $OUT).
stage_out() { O=$OUT; export OUT=/tmp/o; mkdir -p $OUT; }
pack() { tar -C /tmp/o -czf $O/$1.tgz .; }
# sort_rows LOG: the sort and copy rows of a bench log (op, shape, params, median ms).
sort_rows() { grep -E '^(sort|argsort|copy)' "$1" | grep -v skipped | awk '{print $1, $2, $4, $6}'; }
# topk_cube_sweep_vulkan LIMIT: issue 16's device-wide top-k cube sweep (`cubes=` 4096 down to
# 512, the radix select alone) through Vulkan, as `bench_rows` (sessions 36, 39, 40).
topk_cube_sweep_vulkan() {
  local R=raw=radix_select C=cubes=4096/2048/1024/512 T=topk_with_indices
  bench_rows vulkan "$1" --case $T:16777216:f32:k=100000,$R,$C --case $T:268435456:f32:k=10,$R,$C \
    --case $T:268435456:f32:k=100000,$R,$C --case $T:268435456:f32:k=1000,dist=all_equal,$R,$C
}
# torch_rows FAMILIES REGEX LIMIT: torch 2.11's rows (`torch_reference.py --only=FAMILIES`)
# within LIMIT seconds into $OUT/torch.json and torch.txt; prints its exit status and the
# rows whose op matches REGEX (sessions 40 on).
torch_rows() {
  timeout "$3" python3 bench/torch_reference.py "$OUT/torch.json" --only="$1" > "$OUT/torch.txt" 2>&1
  echo "== torch rc=$? at ${SECONDS}s"; grep -E "^($2)" "$OUT/torch.txt" | cut -c1-120
}
# begin: a session script's start once its binaries are unpacked: a fresh /tmp/o staged as
# $OUT (`stage_out`) and the card named in card.txt.
begin() {
  rm -rf /tmp/o
  stage_out
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$OUT/card.txt" 2>&1
}
# compaction_tests: the compaction's modules, CT_GROUPS (3) processes a runtime of SUITES
# (`cuda vulkan` unless set), beside memcheck and racecheck over four compaction tests, within
# TEST_LIMIT (220) s (with anything started before it, which it waits for); prints every log's
# result lines.
compaction_tests() {
  C="compact:: filter_ops:: sets:: split_ops:: props::filter_property props::split_property props::sets_property"
  for rt in ${SUITES:-cuda vulkan}; do LIMIT=${TEST_LIMIT:-220} split_suite $rt ${CT_GROUPS:-3} "$C"; done
  [ -f .gpu/suite-cuda ] && for tool in memcheck racecheck; do
    timeout ${TEST_LIMIT:-220} compute-sanitizer --tool $tool --error-exitcode 9 .gpu/suite-cuda --exact \
      compact::mask_compaction_matches_reference compact::run_start_flags_match_reference \
      compact::every_length_across_tile_boundaries compact::counted_compaction_matches_reference \
      > "$OUT/$tool-cuda-compact.txt" 2>&1 &
  done
  wait
  echo "== tests done at ${SECONDS}s"; suite_summary
  for f in "$OUT"/*-compact.txt; do echo "== ${f##*/}"; summary "$f"; done
}
