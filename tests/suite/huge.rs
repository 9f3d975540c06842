//! Tensors past 2^32 elements (issue 13, item 3): 64-bit addressing where a launch needs it.
//!
//! - CI-sized: every family's kernels run with 64-bit addresses forced on small inputs
//!   (`sieve::common::address::with_wide_addressing`) and must give the 32-bit kernels' bits;
//!   on a device without 64-bit addressing (lavapipe's WGSL) every such call must refuse
//!   before it launches, leaving its outputs untouched. Index dtypes too small for a row are
//!   refused with a message naming i64.
//! - GPU-sized (`#[ignore]`d: `SIEVE_HUGE=1 cargo test --release --test suite -- --ignored
//!   huge::`, one H200): the Burn ops on tensors past 2^32 elements (rows whose start passes
//!   2^32 included), built on the device from closed forms (`iota`, `expand`) and checked
//!   by samples and counts, never a host copy of the whole tensor. Each prints how long
//!   its calls took (with `--nocapture`), so a slow call is told from a stuck one.

use burn::tensor::{Bool, Device, Int, IntDType, Tensor, s};
use sieve::common::address::{AddressType, with_wide_addressing};
use sieve::compact::{
    CompactIo, CompactOptions, CompactProblem, CompactStrategy, Flags, MaskStorage, Rejected,
};
use sieve::scan::{ScanKind, ScanOptions, ScanProblem, ScanStrategy};
use sieve::sort::{SortIo, SortOptions, SortOrder, SortProblem, SortStrategy};
use sieve::topk::{TopkIo, TopkOptions, TopkProblem, TopkStrategy};
use sieve::{Dtype, SieveError};

use crate::common::{client, download, poisoned, random_u32, rng, upload};

const POISON: u32 = 0xDEAD_BEEF;

/// Runs `call` with 32-bit addresses, then forced 64-bit ones, each on fresh poisoned
/// outputs (`outputs` lengths, in u32 words), and returns both runs' outputs. With 64-bit
/// addressing on a device without it, the call must refuse naming it, and the outputs must
/// still hold the poison (nothing launched); the second result is then `None`.
fn narrow_and_wide(
    case: &str,
    outputs: &[usize],
    call: impl Fn(&[cubecl::server::Handle]) -> Result<(), SieveError>,
) -> (Vec<Vec<u32>>, Option<Vec<Vec<u32>>>) {
    let client = client();
    let run = |wide: bool| {
        let handles: Vec<_> = outputs
            .iter()
            .map(|&len| poisoned(&client, len, POISON))
            .collect();
        let result = if wide {
            with_wide_addressing(|| call(&handles))
        } else {
            call(&handles)
        };
        let read = |handles: Vec<cubecl::server::Handle>| -> Vec<Vec<u32>> {
            handles
                .into_iter()
                .zip(outputs)
                .map(|(h, &len)| download::<u32>(&client, h, len))
                .collect()
        };
        (result, read(handles))
    };
    let (narrow, narrow_out) = run(false);
    narrow.unwrap_or_else(|e| panic!("{case}: 32-bit call failed: {e}"));
    let (wide, wide_out) = run(true);
    if client.properties().supports_address(AddressType::U64) {
        wide.unwrap_or_else(|e| panic!("{case}: 64-bit call failed: {e}"));
        (narrow_out, Some(wide_out))
    } else {
        let err = wide.expect_err(&format!(
            "{case}: the device has no 64-bit addressing, the forced call must refuse"
        ));
        let text = err.to_string();
        assert!(
            text.contains("64-bit addressing") && text.contains("problem.rows * problem.len"),
            "{case}: refusal should name the size and the missing 64-bit addressing: {text}"
        );
        for (i, out) in wide_out.iter().enumerate() {
            assert!(
                out.iter().all(|&w| w == POISON),
                "{case}: output {i} was written by a refused call"
            );
        }
        eprintln!("{case}: no 64-bit addressing on this device; refused as expected: {text}");
        (narrow_out, None)
    }
}

/// Asserts the 64-bit run (when the device ran one) gave the 32-bit run's bits.
fn assert_wide_matches(case: &str, (narrow, wide): (Vec<Vec<u32>>, Option<Vec<Vec<u32>>>)) {
    if let Some(wide) = wide {
        for (i, (n, w)) in narrow.iter().zip(&wide).enumerate() {
            crate::common::assert_same(w, n, &format!("{case}: output {i}, 64-bit vs 32-bit"));
        }
    }
}

#[test]
fn wide_scan_matches_or_refuses() {
    let client = client();
    let (mut rng, _) = rng("wide_scan_matches_or_refuses");
    let (rows, len) = (3, 5000);
    let data = random_u32(&mut rng, rows * len, 1000);
    let input = upload(&client, &data);
    for strategy in [ScanStrategy::ReduceThenScan, ScanStrategy::Auto] {
        let case = format!("scan {strategy:?}");
        let result = narrow_and_wide(&case, &[rows * len], |out| {
            sieve::scan::scan(
                &client,
                &input,
                &out[0],
                ScanProblem { rows, len },
                Dtype::U32,
                ScanKind::Inclusive,
                ScanOptions {
                    strategy,
                    tuning: None,
                },
            )
            .map(|_| ())
        });
        let expected = sieve::scan::reference::scan_rows(&data, rows, len, false);
        crate::common::assert_same(&result.0[0], &expected, &case);
        assert_wide_matches(&case, result);
    }
}

#[test]
fn wide_compact_matches_or_refuses() {
    let client = client();
    let (mut rng, _) = rng("wide_compact_matches_or_refuses");
    let (rows, len) = (3, 3001);
    let values = random_u32(&mut rng, rows * len, u32::MAX);
    let mask = random_u32(&mut rng, rows * len, 1);
    let (values_h, mask_h) = (upload(&client, &values), upload(&client, &mask));
    for (strategy, rejected) in [
        (CompactStrategy::Scatter, Rejected::Keep),
        (CompactStrategy::Scatter, Rejected::Zero),
        (CompactStrategy::Gather, Rejected::Drop),
    ] {
        let case = format!("compact {strategy:?} {rejected:?}");
        let result = narrow_and_wide(&case, &[rows * len, rows * len, rows], |out| {
            sieve::compact::compact(
                &client,
                Flags::Mask {
                    mask: &mask_h,
                    storage: MaskStorage::U32,
                },
                CompactIo {
                    values: Some(&values_h),
                    value_dtype: Dtype::U32,
                    values_out: Some(&out[0]),
                    indices_out: Some(&out[1]),
                    counts: &out[2],
                    index_dtype: Dtype::U32,
                },
                CompactProblem { rows, len },
                rejected,
                CompactOptions {
                    strategy,
                    tuning: None,
                    ..Default::default()
                },
            )
            .map(|_| ())
        });
        // The counts are known without a reference: the flags of each row.
        let counts: Vec<u32> = mask.chunks(len).map(|row| row.iter().sum()).collect();
        crate::common::assert_same(&result.0[2], &counts, &format!("{case}: counts"));
        assert_wide_matches(&case, result);
    }
}

#[test]
fn wide_sort_matches_or_refuses() {
    let client = client();
    let (mut rng, _) = rng("wide_sort_matches_or_refuses");
    let (rows, len) = (2, 9000);
    let keys = random_u32(&mut rng, rows * len, 5000);
    let keys_h = upload(&client, &keys);
    // Onesweep where the device gives cubes forward progress (it refuses elsewhere); keys
    // alone and with indices (their passes hold and re-read differently).
    let mut strategies = vec![SortStrategy::Lsd, SortStrategy::Auto];
    if sieve::DeviceCaps::of(&client).forward_progress {
        strategies.push(SortStrategy::Onesweep);
    }
    for (strategy, with_indices) in strategies.into_iter().flat_map(|s| [(s, true), (s, false)]) {
        let case = format!("sort {strategy:?}, indices {with_indices}");
        let result = narrow_and_wide(&case, &[rows * len, rows * len], |out| {
            sieve::sort::sort(
                &client,
                SortIo {
                    keys: &keys_h,
                    key_dtype: Dtype::U32,
                    keys_out: Some(&out[0]),
                    indices_out: with_indices.then_some(&out[1]),
                    index_dtype: Dtype::U32,
                },
                SortProblem { rows, len },
                SortOrder::Ascending,
                SortOptions {
                    strategy,
                    tuning: None,
                },
            )
            .map(|_| ())
        });
        let mut expected = keys.clone();
        for row in expected.chunks_mut(len) {
            row.sort_unstable();
        }
        crate::common::assert_same(&result.0[0], &expected, &case);
        assert_wide_matches(&case, result);
    }
}

#[test]
fn wide_topk_matches_or_refuses() {
    let client = client();
    let (mut rng, _) = rng("wide_topk_matches_or_refuses");
    let (rows, len, k) = (3, 3000, 17);
    let values = random_u32(&mut rng, rows * len, 2000);
    let values_h = upload(&client, &values);
    for strategy in TopkStrategy::ALL {
        let case = format!("topk {strategy:?}");
        let result = narrow_and_wide(&case, &[rows * k, rows * k], |out| {
            sieve::topk::topk(
                &client,
                TopkIo {
                    values: &values_h,
                    value_dtype: Dtype::U32,
                    values_out: Some(&out[0]),
                    indices_out: Some(&out[1]),
                    index_dtype: Dtype::U32,
                },
                TopkProblem { rows, len, k },
                TopkOptions {
                    strategy,
                    ..TopkOptions::default()
                },
            )
            .map(|_| ())
        });
        let mut expected = Vec::new();
        for row in values.chunks(len) {
            let mut sorted = row.to_vec();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            expected.extend_from_slice(&sorted[..k]);
        }
        crate::common::assert_same(&result.0[0], &expected, &case);
        assert_wide_matches(&case, result);
    }
}

/// Index dtypes that cannot hold a row's positions are refused before anything launches, with
/// a message naming i64 (checked without allocating: the sizes are refused first).
#[test]
fn small_index_dtypes_are_refused_naming_i64() {
    let client = client();
    let placeholder = upload(&client, &[0u32; 16]);
    let len = i32::MAX as usize + 1;
    let expect_i64 = |what: &str, result: Result<(), SieveError>| {
        let text = result
            .expect_err(&format!(
                "{what}: i32 indices for {len} positions must be refused"
            ))
            .to_string();
        assert!(
            text.contains("i64") && text.contains("i32") && text.contains("index_dtype"),
            "{what}: the refusal should name the index dtype to use: {text}"
        );
    };
    expect_i64(
        "compact",
        compact_on_placeholder(&placeholder, len, Dtype::I32, CompactStrategy::Auto),
    );
    expect_i64(
        "sort",
        sieve::sort::sort(
            &client,
            SortIo {
                keys: &placeholder,
                key_dtype: Dtype::U32,
                keys_out: None,
                indices_out: Some(&placeholder),
                index_dtype: Dtype::I32,
            },
            SortProblem { rows: 1, len },
            SortOrder::Ascending,
            SortOptions::default(),
        )
        .map(|_| ()),
    );
    expect_i64(
        "topk",
        sieve::topk::topk(
            &client,
            TopkIo {
                values: &placeholder,
                value_dtype: Dtype::U32,
                values_out: None,
                indices_out: Some(&placeholder),
                index_dtype: Dtype::I32,
            },
            TopkProblem { rows: 1, len, k: 1 },
            TopkOptions::default(),
        )
        .map(|_| ()),
    );
}

/// A mask compaction of one row of `len` positions whose every buffer is `placeholder`: for
/// calls that must be refused before anything launches.
fn compact_on_placeholder(
    placeholder: &cubecl::server::Handle,
    len: usize,
    index_dtype: Dtype,
    strategy: CompactStrategy,
) -> Result<(), SieveError> {
    sieve::compact::compact(
        &client(),
        Flags::Mask {
            mask: placeholder,
            storage: MaskStorage::U32,
        },
        CompactIo {
            values: None,
            value_dtype: Dtype::U32,
            values_out: None,
            indices_out: Some(placeholder),
            counts: placeholder,
            index_dtype,
        },
        CompactProblem { rows: 1, len },
        Rejected::Drop,
        CompactOptions {
            strategy,
            tuning: None,
            ..Default::default()
        },
    )
    .map(|_| ())
}

/// A compaction row past u32::MAX elements (a flattened tensor past 4 G elements) runs only
/// through `Scatter`: the strategies with 32-bit running counts refuse it by name, before
/// anything launches (the placeholder buffers are never touched).
#[test]
fn long_compaction_rows_refuse_32_bit_strategies() {
    let client = client();
    let placeholder = upload(&client, &[0u32; 16]);
    let len = u32::MAX as usize + 1;
    for strategy in [CompactStrategy::Gather, CompactStrategy::ScatterLookback] {
        let err = compact_on_placeholder(&placeholder, len, Dtype::I64, strategy)
            .expect_err("a row past u32::MAX elements must be refused");
        let text = err.to_string();
        assert!(
            text.contains(strategy.name()) && text.contains("u32::MAX")
                || text.contains("64-bit") && strategy == CompactStrategy::ScatterLookback,
            "{}: the refusal should name the strategy and the row limit: {text}",
            strategy.name()
        );
    }
}

// ---- GPU-sized: past 2^32 elements -------------------------------------------------------

const HUGE: &str = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB";
/// Rows of the `[ROWS, COLS]` cases: row 4096 starts at 2^32.
const ROWS: usize = 4097;
const COLS: usize = 1 << 20;

/// The device with i64 as its int dtype (positions past i32), for the huge tests. They must
/// run in a process of their own (`-- --ignored huge::`): the int dtype is set before the
/// first tensor.
fn huge_device() -> Device {
    assert_eq!(
        std::env::var("SIEVE_HUGE").as_deref(),
        Ok("1"),
        "{HUGE}: set SIEVE_HUGE=1 to run the tests past 2^32 elements"
    );
    let mut device = Device::default();
    let _ = device.configure(burn::tensor::DeviceConfig::default().int_dtype(IntDType::I64));
    assert_eq!(
        device.settings().int_dtype,
        IntDType::I64,
        "run the huge tests alone (-- --ignored huge::): the device's int dtype was set before"
    );
    device
}

/// `0, 1, ..., n - 1` made on the device (Burn's `arange` builds its values on the host: 16
/// bytes per element there for the sizes here).
fn iota(n: usize, device: &Device) -> Tensor<1, Int> {
    sieve_burn::cumsum(Tensor::<1, Int>::ones([n], device), 0).sub_scalar(1)
}

/// Runs `f`, waits for the device, and prints how long it took.
fn timed<T>(what: &str, device: &Device, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    let _ = device.sync();
    eprintln!("{what}: {:.2} s", start.elapsed().as_secs_f64());
    out
}

/// `[ROWS, COLS]` f32 with every element of row `r` equal to `r`, made on the device.
fn rows_equal_to_index(device: &Device) -> Tensor<2> {
    Tensor::<1, Int>::arange(0..ROWS as i64, device)
        .float()
        .reshape([ROWS, 1])
        .expand([ROWS, COLS])
}

/// `[COLS]` bool: true at odd columns.
fn odd_columns(device: &Device) -> Tensor<1, Bool> {
    Tensor::<1, Int>::arange(0..COLS as i64, device)
        .remainder_scalar(2)
        .equal_elem(1)
}

fn f32_row(t: Tensor<2>, row: usize, cols: std::ops::Range<usize>) -> Vec<f32> {
    t.slice(s![row..row + 1, cols])
        .into_data()
        .iter::<f32>()
        .collect()
}

fn i64_row(t: Tensor<2, Int>, row: usize, cols: std::ops::Range<usize>) -> Vec<i64> {
    t.slice(s![row..row + 1, cols])
        .into_data()
        .iter::<i64>()
        .collect()
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_cumsum() {
    let device = huge_device();
    // One row of 2^32 + 7 ones (i64: exact): out[i] = i + 1.
    let n = (1usize << 32) + 7;
    let out = sieve_burn::cumsum(Tensor::<1, Int>::ones([n], &device), 0);
    for at in [0, 1, (1 << 32) - 2, (1 << 32) - 1, 1 << 32, n - 1] {
        let got: Vec<i64> = out
            .clone()
            .slice(s![at..at + 1])
            .into_data()
            .iter::<i64>()
            .collect();
        assert_eq!(got, vec![at as i64 + 1], "cumsum of ones at {at}");
    }
    drop(out);
    // Rows past 2^32: [ROWS, COLS] of r, along dim 1: out[r, c] = r * (c + 1).
    let out = sieve_burn::cumsum(rows_equal_to_index(&device), 1);
    for row in [0, 1, ROWS - 2, ROWS - 1] {
        let got = f32_row(out.clone(), row, COLS - 3..COLS);
        let want: Vec<f32> = (COLS - 3..COLS).map(|c| (row * (c + 1)) as f32).collect();
        assert_eq!(got, want, "cumsum row {row}");
    }
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_mask_select_and_argwhere() {
    let device = huge_device();
    // 2^32 + 7 positions; every third one is selected: the j-th survivor is 3j.
    let n = (1usize << 32) + 7;
    let mask = timed("mask", &device, || {
        iota(n, &device).remainder_scalar(3).equal_elem(0)
    });
    let survivors = n.div_ceil(3);
    let positions = timed("argwhere", &device, || sieve_burn::argwhere(mask.clone()));
    assert_eq!(positions.dims(), [survivors, 1], "argwhere count");
    for j in [0, 1, survivors / 2, (1 << 32) / 3, survivors - 1] {
        let got: Vec<i64> = positions
            .clone()
            .slice(s![j..j + 1, 0..1])
            .into_data()
            .iter::<i64>()
            .collect();
        assert_eq!(got, vec![3 * j as i64], "argwhere survivor {j}");
    }
    drop(positions);
    let values = iota(n, &device);
    let picked = timed("mask_select", &device, || {
        sieve_burn::mask_select(values, mask)
    });
    assert_eq!(picked.dims(), [survivors], "mask_select count");
    for j in [0, survivors / 2, (1 << 32) / 3, survivors - 1] {
        let got: Vec<i64> = picked
            .clone()
            .slice(s![j..j + 1])
            .into_data()
            .iter::<i64>()
            .collect();
        assert_eq!(got, vec![3 * j as i64], "mask_select survivor {j}");
    }
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_compact_rows_and_stable_partition() {
    let device = huge_device();
    let x = rows_equal_to_index(&device);
    let mask = odd_columns(&device).reshape([1, COLS]).expand([ROWS, COLS]);
    let half = COLS / 2;
    let (rows, counts) = sieve_burn::compact_rows(x.clone(), mask.clone());
    let counts: Vec<i64> = counts.into_data().iter::<i64>().collect();
    assert!(
        counts.iter().all(|&c| c == half as i64),
        "compact_rows counts"
    );
    for row in [0, ROWS - 1] {
        let got = f32_row(rows.clone(), row, half - 2..half + 2);
        assert_eq!(
            got,
            vec![row as f32, row as f32, 0.0, 0.0],
            "compact_rows row {row}"
        );
    }
    drop(rows);
    let (values, indices, counts) = sieve_burn::stable_partition(x, mask, 1);
    let counts: Vec<i64> = counts.into_data().iter::<i64>().collect();
    assert!(
        counts.iter().all(|&c| c == half as i64),
        "stable_partition counts"
    );
    for row in [0, ROWS - 1] {
        // Odd columns first, in order, then the even ones.
        let got = i64_row(indices.clone(), row, half - 2..half + 2);
        assert_eq!(
            got,
            vec![COLS as i64 - 3, COLS as i64 - 1, 0, 2],
            "partition row {row}"
        );
        let got = f32_row(values.clone(), row, COLS - 1..COLS);
        assert_eq!(got, vec![row as f32], "partition values row {row}");
    }
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_sort() {
    let device = huge_device();
    // Row r holds (r % 7) * COLS + (COLS - 1 - c) (exact in f32): ascending, slot j holds
    // (r % 7) * COLS + j. Row 4096 (r % 7 = 1) differs from row 0, so a wrap shows.
    let descending_cols = Tensor::<1, Int>::arange(0..COLS as i64, &device)
        .neg()
        .add_scalar(COLS as i64 - 1)
        .float()
        .reshape([1, COLS]);
    let offsets = Tensor::<1, Int>::arange(0..ROWS as i64, &device)
        .remainder_scalar(7)
        .mul_scalar(COLS as i64)
        .float()
        .reshape([ROWS, 1]);
    let x = descending_cols.expand([ROWS, COLS]) + offsets.expand([ROWS, COLS]);
    let sorted = sieve_burn::sort(x, 1);
    for row in [0, 1, ROWS - 1] {
        let base = (row % 7 * COLS) as f32;
        let got = f32_row(sorted.clone(), row, 0..3);
        assert_eq!(got, vec![base, base + 1.0, base + 2.0], "sort row {row}");
        let got = f32_row(sorted.clone(), row, COLS - 1..COLS);
        assert_eq!(got, vec![base + (COLS - 1) as f32], "sort row {row} end");
    }
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_sort_with_i64_indices() {
    // One row of 2^31 + 8 keys: positions past i32, so i64 indices. (A sort with indices
    // past 2^32 elements needs about 32 bytes per key: more than one H200 holds.)
    let device = huge_device();
    sort_descending_keys_with_indices(&device, (1usize << 31) + 8, 1 << 31);
}

/// The huge sort's check at CI size (the device's own int dtype), so its logic runs in CI.
#[test]
fn sort_descending_keys_with_indices_at_ci_size() {
    sort_descending_keys_with_indices(&Device::default(), 100_003, 50_000);
}

/// Sorts one row of `len` distinct i32 keys made on the device, descending: position `p`
/// holds `len - 1 - p - shift` (`shift` keeps them in i32). Ascending, slot `j` must hold
/// `j - shift`, from position `len - 1 - j`: checked at the row's ends, around `shift` and
/// at 4,096 slots spread over the row, gathered on the device (a whole-row check through
/// stock Burn's comparisons and reductions took minutes at 2^31 keys on the H200).
fn sort_descending_keys_with_indices(device: &Device, len: usize, shift: i64) {
    let x = timed("keys", device, || {
        iota(len, device)
            .neg()
            .add_scalar(len as i64 - 1 - shift)
            .cast(IntDType::I32)
    });
    let (values, indices) = timed("sort_with_indices", device, || {
        sieve_burn::sort_with_indices(x, 0)
    });
    let spread = 4096;
    let mut slots: Vec<i64> = (0..spread)
        .map(|i| (i * (len - 1) / (spread - 1)) as i64)
        .collect();
    let s0 = shift as usize;
    slots.extend([1, 7, 8, s0 - 1, s0, s0 + 1, len - 2].map(|j| j as i64));
    let at = Tensor::<1, Int>::from_data(
        burn::tensor::TensorData::new(slots.clone(), [slots.len()]),
        device,
    );
    let read = |t: Tensor<1, Int>| -> Vec<i64> {
        t.select(0, at.clone())
            .cast(IntDType::I64)
            .into_data()
            .iter::<i64>()
            .collect()
    };
    let (got_values, got_indices) = timed("gather the samples", device, || {
        (read(values), read(indices))
    });
    for ((&j, value), index) in slots.iter().zip(got_values).zip(got_indices) {
        assert_eq!(index, len as i64 - 1 - j, "sort_with_indices index at {j}");
        assert_eq!(value, j - shift, "sort_with_indices value at {j}");
    }
}

#[test]
#[ignore = "needs SIEVE_HUGE=1 and a GPU with >= 80 GB"]
fn huge_topk() {
    let device = huge_device();
    // The case: [4097, 2^20], row r all r; row 4096 starts at 2^32.
    let k = 4;
    let (values, indices) = sieve_burn::topk_with_indices(rows_equal_to_index(&device), k, 1);
    for row in [0, 1, ROWS - 2, ROWS - 1] {
        assert_eq!(
            f32_row(values.clone(), row, 0..k),
            vec![row as f32; k],
            "topk row {row}"
        );
        assert_eq!(
            i64_row(indices.clone(), row, 0..k),
            vec![0, 1, 2, 3],
            "topk row {row}"
        );
    }
}
