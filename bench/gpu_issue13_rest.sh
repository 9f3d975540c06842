#!/usr/bin/env bash
# Issue 13, second session, last call: what the call before (`gpu_issue13.sh tests`, nine
# processes at once) left unfinished at its limit: the property suite at 2,000 cases per op
# through CUDA and Vulkan, and the sanitizers over the tests they had not reached (racecheck:
# R1-R3 below; memcheck: the top-k tests). Binaries and logs as in gpu_issue13.sh.
set -uo pipefail
for f in .gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
for f in .gpu/*.xz; do xz -d -f "$f"; done; chmod +x .gpu/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
limit=${LIMIT:-470}
R1="topk::every_length_across_a_tile_boundary topk::floats_with_specials_every_strategy topk::index_dtypes topk::integers_with_duplicates topk::many_short_rows topk::minima_bound_and_its_fallback topk::random_floats_no_ties "
R2="props::topk_rows_of_255_and_256_keys scan::odd_and_tiny_lengths scan::same_bits_on_every_run topk_ops::default_tuning_at_every_short_row_length topk_ops::empty_tensors_work topk_ops::every_strategy_on_int_views topk_ops::flex_falls_back_to_the_stable_sort topk_ops::float_topk_every_dim_k_and_direction topk_ops::k_past_the_row_is_named topk_ops::topk_gradient_lands_on_the_selected_positions "
R3="small_devices::burn_cumsum_at_default_tunings small_devices::burn_filters_at_default_tunings small_devices::burn_sorts_at_default_tunings small_devices::burn_splits_at_default_tunings small_devices::burn_topk_at_default_tunings small_devices::caps_report_the_lowered_limits small_devices::forced_strategies_and_tunings_that_cannot_fit_are_refused small_devices::raw_compact_at_default_tunings small_devices::raw_scan_at_default_tunings small_devices::raw_sort_at_default_tunings small_devices::raw_topk_every_strategy_at_default_tunings soundness::compact_refuses_short_buffers soundness::compaction_of_empty_rows_writes_zero_counts soundness::empty_shapes_on_flex soundness::empty_shapes_on_the_cube_backend soundness::empty_shapes_under_autodiff soundness::flex_orders_floats_in_pytorch_order soundness::flex_orders_i64_keys_past_2_pow_53_exactly soundness::flex_orders_u64_keys_past_2_pow_53_exactly soundness::scan_counts_a_view_from_its_offset soundness::scan_refuses_short_buffers soundness::sort_refuses_short_buffers soundness::topk_refuses_short_buffers "
MEM="$R1 $(echo $R2 | tr ' ' '\n' | grep '^topk_ops::' | tr '\n' ' ')"
for b in cuda vulkan; do
  SIEVE_PROP_CASES=2000 timeout $limit .gpu/suite-$b --test-threads 8 props:: > "$OUT/props-$b.txt" 2>&1 &
done
i=1
for g in "$R1" "$R2" "$R3"; do
  SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool racecheck --error-exitcode 9 \
    .gpu/suite-cuda --test-threads 2 --exact $g > "$OUT/racecheck-rest-$i.txt" 2>&1 &
  i=$((i + 1))
done
SIEVE_PROP_CASES=20 timeout $limit compute-sanitizer --tool memcheck --error-exitcode 9 \
  .gpu/suite-cuda --test-threads 1 --exact $MEM > "$OUT/memcheck-rest.txt" 2>&1 &
wait
for f in props-cuda props-vulkan racecheck-rest-1 racecheck-rest-2 racecheck-rest-3 memcheck-rest; do
  echo "== $f"
  grep -E "test result|ERROR SUMMARY|RACECHECK SUMMARY|FAILED|panicked" "$OUT/$f.txt" | head -8
done
