# The inline command of the eighth session's fourth device call (carry [".gpu", ".gl"]);
# suite-vulkan built from the commit that added this file, suite-cuda from 57069a3.
export LIMIT=330; source bench/gpu_prelude.sh
for d in bf16 f16; do
  SIEVE_DTYPES=$d timeout 150 .gpu/suite-vulkan --test-threads 1 sixteen_bit --nocapture > "$OUT/steps-vulkan-$d.txt" 2>&1 &
done
SIEVE_PROP_CASES=20 timeout 330 compute-sanitizer --tool racecheck --error-exitcode 9 .gpu/suite-cuda --test-threads 2 sort:: split_ops:: --skip dtypes_ > "$OUT/racecheck-sort-split.txt" 2>&1 &
SIEVE_PROP_CASES=100 timeout 330 .gpu/suite-cuda --test-threads 3 props:: small_devices:: dtypes_sort:: > "$OUT/tests-cuda-rest.txt" 2>&1 &
wait
for f in "$OUT"/*.txt; do echo "== $f: $(grep -c 'ok$' $f) ok"; summary $f; grep -E "DIFFERS|steps that differ" $f | head; done
