//! Issue 13, items 5, 7 and 8: a sound raw API, empty shapes, an exact Flex fallback.
//!
//! - Every raw entry point (`sieve::{scan, compact, sort, topk}`) refuses a caller buffer one
//!   element too small, naming the argument and the bytes needed and given, before anything
//!   launches (every output still holds its poison); exact sizes, and views whose offset
//!   leaves exactly enough, run and are right.
//! - A `[rows, 0]` compaction writes zero counts, every strategy and placement.
//! - Every public Burn op on `[0]`, `[3, 0]` and `[0, 4]` along every dim, Float and Int,
//!   through the cube backend, Autodiff and Flex: the exact output shapes, and counts that are
//!   zeros (written, not read from a recycled buffer).
//! - The Flex fallback orders i64 and u64 keys that differ only past 2^53 exactly, sort and
//!   top-k, both directions.

use crate::common::{client, download, poisoned, random_u32, rng, upload};

use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use cubecl::prelude::*;
use cubecl::server::Handle;
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, Flags, MaskStorage, Rejected,
};
use sieve::radix::digits::{SELECT_DIGITS, clear_bins};
use sieve::scan::{self, ScanKind, ScanOptions, ScanProblem};
use sieve::sort::{self, SortIo, SortOptions, SortOrder, SortProblem};
use sieve::topk::{self, TopkIo, TopkOptions, TopkProblem};
use sieve::{Dtype, SieveError};
use sieve_burn::{SieveKind, TopKOptions};

const POISON: u32 = 0xDEAD_BEEF;

// ---------------------------------------------------------------------------------------------
// The raw API checks every buffer's size

/// One buffer argument of a raw call, all of u32 words: its name in the call, the words the
/// problem needs, and its contents when it is an input (`None`: an output, poisoned).
struct Arg {
    name: &'static str,
    len: usize,
    data: Option<Vec<u32>>,
}

impl Arg {
    fn input(name: &'static str, data: Vec<u32>) -> Arg {
        Arg {
            name,
            len: data.len(),
            data: Some(data),
        }
    }

    fn output(name: &'static str, len: usize) -> Arg {
        Arg {
            name,
            len,
            data: None,
        }
    }

    /// A buffer of `len` words: the input's first `len`, or poison.
    fn buffer(&self, len: usize) -> Handle {
        let client = client();
        match &self.data {
            Some(data) => upload(&client, &data[..len]),
            None => poisoned(&client, len, POISON),
        }
    }
}

/// For each argument in turn, `call` with that buffer one word short: refused as a
/// `BufferTooSmall` naming the argument, with the bytes needed and given, and every output
/// still poisoned (nothing launched). Then `call` with every buffer at its exact size: it
/// must succeed; returns the outputs it wrote (in argument order).
fn short_buffers_are_refused(
    case: &str,
    args: &[Arg],
    call: impl Fn(&[Handle]) -> Result<(), SieveError>,
) -> Vec<Vec<u32>> {
    let client = client();
    // The outputs' words, from buffers of `lens` words.
    let outputs = |handles: Vec<Handle>, lens: &[usize]| -> Vec<Vec<u32>> {
        handles
            .into_iter()
            .zip(args.iter().zip(lens))
            .filter(|(_, (arg, _))| arg.data.is_none())
            .map(|(h, (_, &len))| download::<u32>(&client, h, len))
            .collect()
    };
    for (short, arg) in args.iter().enumerate() {
        assert!(
            arg.len >= 2,
            "{case}: {} needs 2+ words to shorten",
            arg.name
        );
        let lens: Vec<usize> = (0..args.len())
            .map(|i| args[i].len - usize::from(i == short))
            .collect();
        let handles: Vec<Handle> = args.iter().zip(&lens).map(|(a, &n)| a.buffer(n)).collect();
        let err = call(&handles).expect_err(&format!(
            "{case}: `{}` one word short must be refused",
            arg.name
        ));
        match &err {
            SieveError::BufferTooSmall {
                name,
                needed,
                given,
                ..
            } => {
                assert_eq!(*name, arg.name, "{case}: the refusal names the argument");
                assert_eq!(*needed, 4 * arg.len as u128, "{case}: {name}: bytes needed");
                assert_eq!(
                    *given,
                    4 * (arg.len as u64 - 1),
                    "{case}: {name}: bytes given"
                );
            }
            other => panic!(
                "{case}: `{}` short: expected BufferTooSmall, got {other}",
                arg.name
            ),
        }
        let text = err.to_string();
        assert!(
            text.contains(&format!("`{}`", arg.name)) && text.contains(&(4 * arg.len).to_string()),
            "{case}: the message names the argument and the bytes: {text}"
        );
        for (i, out) in outputs(handles, &lens).iter().enumerate() {
            assert!(
                out.iter().all(|&w| w == POISON),
                "{case}: `{}` short: output {i} was written by a refused call",
                arg.name
            );
        }
    }
    let lens: Vec<usize> = args.iter().map(|a| a.len).collect();
    let handles: Vec<Handle> = args.iter().map(|a| a.buffer(a.len)).collect();
    call(&handles).unwrap_or_else(|e| panic!("{case}: exact sizes must run: {e}"));
    outputs(handles, &lens)
}

const ROWS: usize = 3;
const LEN: usize = 10;

#[test]
fn scan_refuses_short_buffers() {
    let (mut rng, seed) = rng("scan_refuses_short_buffers");
    let data = random_u32(&mut rng, ROWS * LEN, 100);
    let client = client();
    let args = [
        Arg::input("input", data.clone()),
        Arg::output("output", ROWS * LEN),
    ];
    let got = short_buffers_are_refused(&format!("scan, seed {seed}"), &args, |h| {
        scan::scan(
            &client,
            &h[0],
            &h[1],
            ScanProblem {
                rows: ROWS,
                len: LEN,
            },
            Dtype::U32,
            ScanKind::Inclusive,
            ScanOptions::default(),
        )
        .map(|_| ())
    });
    let want = sieve::scan::reference::scan_rows(&data, ROWS, LEN, false);
    crate::common::assert_same(&got[0], &want, &format!("scan, seed {seed}"));
}

/// A handle's start offset counts: a view that starts one binding alignment into a buffer
/// holds what follows it (30 words: enough, and read from its start; 29: refused), and a view
/// that starts off the alignment is refused naming it (wgpu would refuse the binding and
/// poison the device).
#[test]
fn scan_counts_a_view_from_its_offset() {
    let client = client();
    let align = client.properties().memory.alignment as usize;
    assert!(
        align.is_multiple_of(4),
        "binding alignment {align} is whole words"
    );
    let skip = align / 4;
    let data: Vec<u32> = (0..(skip + ROWS * LEN) as u32).collect();
    let output = poisoned(&client, ROWS * LEN, POISON);
    let run = |input: Handle| {
        scan::scan(
            &client,
            &input,
            &output,
            ScanProblem {
                rows: ROWS,
                len: LEN,
            },
            Dtype::U32,
            ScanKind::Inclusive,
            ScanOptions::default(),
        )
    };
    let short = upload(&client, &data[..data.len() - 1]).offset_start(align as u64);
    let err = run(short).expect_err("29 words for 30 are refused");
    assert!(
        matches!(
            err,
            SieveError::BufferTooSmall {
                name: "input",
                given: 116,
                ..
            }
        ),
        "{err}"
    );
    let buffer = upload(&client, &data);
    let err = run(buffer.clone().offset_start(4)).expect_err("a view off the alignment");
    let text = err.to_string();
    assert!(
        text.contains("`input`") && text.contains("alignment"),
        "{text}"
    );
    run(buffer.offset_start(align as u64)).unwrap_or_else(|e| panic!("30 words suffice: {e}"));
    let want = sieve::scan::reference::scan_rows(&data[skip..], ROWS, LEN, false);
    crate::common::assert_same(
        &download::<u32>(&client, output, ROWS * LEN),
        &want,
        "scan of a view",
    );
}

#[test]
fn compact_refuses_short_buffers() {
    let (mut rng, seed) = rng("compact_refuses_short_buffers");
    let n = ROWS * LEN;
    let values = random_u32(&mut rng, n, 1000);
    let mask = random_u32(&mut rng, n, 1);
    let client = client();
    let args = [
        Arg::input("flags.mask", mask.clone()),
        Arg::input("io.values", values.clone()),
        Arg::output("io.values_out", n),
        Arg::output("io.indices_out", n),
        Arg::output("io.counts", ROWS),
    ];
    for strategy in [CompactStrategy::Scatter, CompactStrategy::Gather] {
        let case = format!("compact {strategy:?}, seed {seed}");
        let got = short_buffers_are_refused(&case, &args, |h| {
            compact::compact(
                &client,
                Flags::Mask {
                    mask: &h[0],
                    storage: MaskStorage::U32,
                },
                CompactIo {
                    values: Some(&h[1]),
                    value_dtype: Dtype::U32,
                    values_out: Some(&h[2]),
                    indices_out: Some(&h[3]),
                    counts: &h[4],
                    index_dtype: Dtype::U32,
                },
                CompactProblem {
                    rows: ROWS,
                    len: LEN,
                },
                Rejected::Keep,
                CompactOptions {
                    strategy,
                    tuning: None,
                    ..Default::default()
                },
            )
            .map(|_| ())
        });
        let flags: Vec<bool> = mask.iter().map(|&m| m != 0).collect();
        let want =
            sieve::compact::reference::compact_rows(&values, &flags, ROWS, LEN, Rejected::Keep);
        let want_values: Vec<u32> = want.values.iter().map(|v| v.unwrap()).collect();
        let want_indices: Vec<u32> = want.indices.iter().map(|i| i.unwrap() as u32).collect();
        let want_counts: Vec<u32> = want.counts.iter().map(|&c| c as u32).collect();
        crate::common::assert_same(&got[0], &want_values, &format!("{case}: values"));
        crate::common::assert_same(&got[1], &want_indices, &format!("{case}: indices"));
        crate::common::assert_same(&got[2], &want_counts, &format!("{case}: counts"));
    }
}

#[test]
fn sort_refuses_short_buffers() {
    let (mut rng, seed) = rng("sort_refuses_short_buffers");
    let n = ROWS * LEN;
    let keys = random_u32(&mut rng, n, 20);
    let client = client();
    let args = [
        Arg::input("io.keys", keys.clone()),
        Arg::output("io.keys_out", n),
        Arg::output("io.indices_out", n),
    ];
    let case = format!("sort, seed {seed}");
    let got = short_buffers_are_refused(&case, &args, |h| {
        sort::sort(
            &client,
            SortIo {
                keys: &h[0],
                key_dtype: Dtype::U32,
                keys_out: Some(&h[1]),
                indices_out: Some(&h[2]),
                index_dtype: Dtype::U32,
            },
            SortProblem {
                rows: ROWS,
                len: LEN,
            },
            SortOrder::Descending,
            SortOptions::default(),
        )
        .map(|_| ())
    });
    let order = sieve::sort::reference::sort_rows(&keys, ROWS, LEN, true);
    let want_indices: Vec<u32> = order.iter().map(|&i| i as u32).collect();
    let want_keys: Vec<u32> = (0..n).map(|at| keys[at / LEN * LEN + order[at]]).collect();
    crate::common::assert_same(&got[0], &want_keys, &format!("{case}: keys"));
    crate::common::assert_same(&got[1], &want_indices, &format!("{case}: indices"));
}

#[test]
fn topk_refuses_short_buffers() {
    let _serial = crate::common::serial();
    let (mut rng, seed) = rng("topk_refuses_short_buffers");
    let k = 4;
    let values = random_u32(&mut rng, ROWS * LEN, 20);
    let client = client();
    let args = [
        Arg::input("io.values", values.clone()),
        Arg::output("io.values_out", ROWS * k),
        Arg::output("io.indices_out", ROWS * k),
    ];
    let case = format!("topk, seed {seed}");
    let got = short_buffers_are_refused(&case, &args, |h| {
        topk::topk(
            &client,
            TopkIo {
                values: &h[0],
                value_dtype: Dtype::U32,
                values_out: Some(&h[1]),
                indices_out: Some(&h[2]),
                index_dtype: Dtype::U32,
            },
            TopkProblem {
                rows: ROWS,
                len: LEN,
                k,
            },
            TopkOptions::default(),
        )
        .map(|_| ())
    });
    let chosen = sieve::topk::reference::topk_rows(&values, ROWS, LEN, k, true);
    let want_indices: Vec<u32> = chosen.iter().map(|&i| i as u32).collect();
    let want_values: Vec<u32> = (0..ROWS * k)
        .map(|at| values[at / k * LEN + chosen[at]])
        .collect();
    crate::common::assert_same(&got[0], &want_values, &format!("{case}: values"));
    crate::common::assert_same(&got[1], &want_indices, &format!("{case}: indices"));
}

/// `[rows, 0]`: nothing survives, and every row's count is written as 0 (the counts start
/// poisoned), every strategy that runs everywhere and every placement.
#[test]
fn compaction_of_empty_rows_writes_zero_counts() {
    let client = client();
    let placeholder = upload(&client, &[1u32; 4]);
    for strategy in [
        CompactStrategy::Auto,
        CompactStrategy::Scatter,
        CompactStrategy::Gather,
    ] {
        for rejected in [Rejected::Drop, Rejected::Zero, Rejected::Keep] {
            for index_dtype in [Dtype::I32, Dtype::U32] {
                let counts = poisoned(&client, ROWS, POISON);
                compact::compact(
                    &client,
                    Flags::Mask {
                        mask: &placeholder,
                        storage: MaskStorage::U32,
                    },
                    CompactIo {
                        values: Some(&placeholder),
                        value_dtype: Dtype::F32,
                        values_out: Some(&placeholder),
                        indices_out: Some(&placeholder),
                        counts: &counts,
                        index_dtype,
                    },
                    CompactProblem { rows: ROWS, len: 0 },
                    rejected,
                    CompactOptions {
                        strategy,
                        tuning: None,
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{strategy:?} {rejected:?}: {e}"));
                assert_eq!(
                    download::<u32>(&client, counts, ROWS),
                    vec![0; ROWS],
                    "{strategy:?} {rejected:?} {index_dtype}: counts of empty rows"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Empty shapes through every public Burn op

fn ints<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

/// Leaves `elements` freed Int elements of `7` in the device's memory pool, so an output
/// that is allocated next and never written reads 7, not a lucky 0.
fn dirty_the_pool(device: &Device, elements: usize) {
    let dirt = Tensor::<1, Int>::full([elements.max(1)], 7, device);
    assert!(ints(dirt.clone()).iter().all(|&v| v == 7));
    drop(dirt);
}

/// `dims` with `dim` set to `len`.
fn with<const D: usize>(mut dims: [usize; D], dim: usize, len: usize) -> [usize; D] {
    dims[dim] = len;
    dims
}

/// Every op of every family on an empty `x` of `dims` (Float or Int, by `K`): the exact
/// shapes, counts that are zeros, nothing true anywhere.
fn empty_ops<const D: usize, K: SieveKind + 'static>(
    dims: [usize; D],
    device: &Device,
    case: &str,
) {
    let x = || Tensor::<D, K>::zeros(dims, device);
    let mask = || Tensor::<D, Bool>::empty(dims, device);
    let case = format!("{case} {dims:?} {}", std::any::type_name::<K>());
    for dim in 0..D {
        let case = format!("{case} dim {dim}");
        assert_eq!(sieve_burn::cumsum(x(), dim).dims(), dims, "{case}: cumsum");

        let counts_dims = with(dims, dim, 1);
        dirty_the_pool(device, counts_dims.iter().product());
        let (values, indices, counts) = sieve_burn::stable_partition(x(), mask(), dim);
        assert_eq!(values.dims(), dims, "{case}: stable_partition values");
        assert_eq!(indices.dims(), dims, "{case}: stable_partition indices");
        assert_eq!(
            counts.dims(),
            counts_dims,
            "{case}: stable_partition counts"
        );
        assert_eq!(
            ints(counts),
            vec![0; counts_dims.iter().product()],
            "{case}: stable_partition counts are zeros"
        );

        assert_eq!(sieve_burn::sort(x(), dim).dims(), dims, "{case}: sort");
        assert_eq!(sieve_burn::sort_descending(x(), dim).dims(), dims, "{case}");
        let (values, indices) = sieve_burn::sort_with_indices(x(), dim);
        assert_eq!((values.dims(), indices.dims()), (dims, dims), "{case}");
        let (values, indices) = sieve_burn::sort_descending_with_indices(x(), dim);
        assert_eq!((values.dims(), indices.dims()), (dims, dims), "{case}");
        assert_eq!(
            sieve_burn::argsort(x(), dim).dims(),
            dims,
            "{case}: argsort"
        );
        assert_eq!(
            sieve_burn::argsort_descending(x(), dim).dims(),
            dims,
            "{case}"
        );

        let len = dims[dim];
        for k in [0, len] {
            let case = format!("{case} k {k}");
            let out = with(dims, dim, k);
            assert_eq!(sieve_burn::topk(x(), k, dim).dims(), out, "{case}: topk");
            assert_eq!(
                sieve_burn::argtopk(x(), k, dim).dims(),
                out,
                "{case}: argtopk"
            );
            let (values, indices) = sieve_burn::topk_with_indices(x(), k, dim);
            assert_eq!((values.dims(), indices.dims()), (out, out), "{case}");
            let (values, indices) = sieve_burn::bottomk_with_indices(x(), k, dim);
            assert_eq!((values.dims(), indices.dims()), (out, out), "{case}");
            let options = TopKOptions {
                largest: false,
                sorted: false,
                ..TopKOptions::default()
            };
            let (values, indices) = sieve_burn::topk_with_options(x(), k, dim, options);
            assert_eq!((values.dims(), indices.dims()), (out, out), "{case}");
        }
    }
    assert_eq!(sieve_burn::mask_select(x(), mask()).dims(), [0], "{case}");
    dirty_the_pool(device, 1);
    let (values, count) = sieve_burn::mask_select_padded(x(), mask());
    assert_eq!(values.dims(), [0], "{case}: mask_select_padded");
    assert_eq!(ints(count), vec![0], "{case}: mask_select_padded count");
    assert_eq!(
        sieve_burn::argwhere(mask()).dims(),
        [0, D],
        "{case}: argwhere"
    );
    assert!(sieve_burn::nonzero(mask()).is_empty(), "{case}: nonzero");
}

/// `split_by_bit` (Int only) on an empty `keys` of `dims`, every dim.
fn empty_split_by_bit<const D: usize>(dims: [usize; D], device: &Device, case: &str) {
    for dim in 0..D {
        let counts_dims = with(dims, dim, 1);
        dirty_the_pool(device, counts_dims.iter().product());
        let keys = Tensor::<D, Int>::zeros(dims, device);
        let (values, indices, counts) = sieve_burn::split_by_bit(keys, 0, dim);
        let case = format!("{case} {dims:?} dim {dim}: split_by_bit");
        assert_eq!((values.dims(), indices.dims()), (dims, dims), "{case}");
        assert_eq!(counts.dims(), counts_dims, "{case}: counts");
        assert_eq!(
            ints(counts),
            vec![0; counts_dims.iter().product()],
            "{case}"
        );
    }
}

/// `compact_rows` (2-D only) on an empty `[rows, n]`.
fn empty_compact_rows<K: SieveKind + 'static>(dims: [usize; 2], device: &Device, case: &str) {
    dirty_the_pool(device, dims[0]);
    let (values, counts) = sieve_burn::compact_rows(
        Tensor::<2, K>::zeros(dims, device),
        Tensor::<2, Bool>::empty(dims, device),
    );
    let case = format!("{case} {dims:?}: compact_rows");
    assert_eq!(values.dims(), dims, "{case}");
    assert_eq!(ints(counts), vec![0; dims[0]], "{case}: counts");
}

/// Every public op on `[0]`, `[3, 0]` and `[0, 4]` on `device`.
pub(crate) fn empty_shapes_on(device: &Device, case: &str) {
    empty_ops::<1, burn::tensor::Float>([0], device, case);
    empty_ops::<1, Int>([0], device, case);
    empty_split_by_bit([0], device, case);
    for dims in [[3, 0], [0, 4]] {
        empty_ops::<2, burn::tensor::Float>(dims, device, case);
        empty_ops::<2, Int>(dims, device, case);
        empty_split_by_bit(dims, device, case);
        empty_compact_rows::<burn::tensor::Float>(dims, device, case);
        empty_compact_rows::<Int>(dims, device, case);
    }
}

#[test]
fn empty_shapes_on_the_cube_backend() {
    let _serial = crate::common::serial();
    empty_shapes_on(&Device::default(), "cube");
}

#[test]
fn empty_shapes_under_autodiff() {
    let _serial = crate::common::serial();
    let device = Device::default().autodiff();
    empty_shapes_on(&device, "autodiff");
    // The differentiable ops pass gradients of the input's (empty) shape back.
    for dims in [[3usize, 0], [0, 4]] {
        for dim in 0..2 {
            let x = Tensor::<2>::zeros(dims, &device).require_grad();
            let mask = Tensor::<2, Bool>::empty(dims, &device);
            let loss = sieve_burn::cumsum(x.clone(), dim).sum()
                + sieve_burn::mask_select_padded(x.clone(), mask.clone())
                    .0
                    .sum()
                + sieve_burn::stable_partition(x.clone(), mask, dim).0.sum()
                + sieve_burn::sort(x.clone(), dim).sum()
                + sieve_burn::topk(x.clone(), dims[dim], dim).sum();
            let grads = loss.backward();
            let grad = x.grad(&grads).expect("a gradient for x");
            assert_eq!(grad.dims(), dims, "{dims:?} dim {dim}: gradient shape");
        }
    }
}

#[test]
fn empty_shapes_on_flex() {
    empty_shapes_on(&Device::flex(), "flex");
}

// ---------------------------------------------------------------------------------------------
// The Flex fallback compares keys exactly

/// Keys that differ only past 2^53 (f64 would tie them), in an order no stable tie-break
/// gives: `base + [3, 0, 2, 0, 1]` with a repeat, so stability shows too.
pub(crate) fn past_f64(base: i64) -> Vec<i64> {
    [3, 0, 2, 0, 1].iter().map(|&d| base + d).collect()
}

/// Sorts and top-ks `x` (`[5]`, keys `base + offsets`) on Flex and checks the permutation
/// against the exact one, both directions.
pub(crate) fn check_exact_order(x: Tensor<1, Int>, keys: &[i128], case: &str) {
    let read = |t: Tensor<1, Int>| -> Vec<i128> {
        let data = t.into_data();
        match data.dtype() {
            DType::U64 => data.iter::<u64>().map(i128::from).collect(),
            _ => data.iter::<i64>().map(i128::from).collect(),
        }
    };
    for descending in [false, true] {
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| {
            let o = keys[a].cmp(&keys[b]);
            if descending { o.reverse() } else { o }
        });
        let want_indices: Vec<i64> = order.iter().map(|&i| i as i64).collect();
        let want_values: Vec<i128> = order.iter().map(|&i| keys[i]).collect();
        let case = format!("{case} descending {descending}");
        let (values, indices) = if descending {
            sieve_burn::sort_descending_with_indices(x.clone(), 0)
        } else {
            sieve_burn::sort_with_indices(x.clone(), 0)
        };
        assert_eq!(ints(indices), want_indices, "{case}: sort indices");
        assert_eq!(read(values), want_values, "{case}: sort values");
        let k = 3;
        let (values, indices) = if descending {
            sieve_burn::topk_with_indices(x.clone(), k, 0)
        } else {
            sieve_burn::bottomk_with_indices(x.clone(), k, 0)
        };
        assert_eq!(ints(indices), want_indices[..k], "{case}: top-k indices");
        assert_eq!(read(values), want_values[..k], "{case}: top-k values");
    }
}

#[test]
fn flex_orders_i64_keys_past_2_pow_53_exactly() {
    let device = Device::flex();
    for base in [1i64 << 60, -(1i64 << 60), i64::MAX - 3] {
        let keys = past_f64(base);
        let x =
            Tensor::<1, Int>::from_data(TensorData::new(keys.clone(), [5]), (&device, DType::I64));
        assert_eq!(x.dtype(), DType::I64, "the keys stay i64");
        let wide: Vec<i128> = keys.iter().map(|&k| i128::from(k)).collect();
        check_exact_order(x, &wide, &format!("i64 base {base}"));
    }
}

#[test]
fn flex_orders_u64_keys_past_2_pow_53_exactly() {
    let device = Device::flex();
    for base in [1u64 << 60, u64::MAX - 3] {
        let keys: Vec<u64> = [3u64, 0, 2, 0, 1].iter().map(|&d| base + d).collect();
        let x =
            Tensor::<1, Int>::from_data(TensorData::new(keys.clone(), [5]), (&device, DType::U64));
        assert_eq!(x.dtype(), DType::U64, "the keys stay u64");
        let wide: Vec<i128> = keys.iter().map(|&k| i128::from(k)).collect();
        check_exact_order(x, &wide, &format!("u64 base {base}"));
    }
}

/// Floats on Flex keep PyTorch's order through the exact path: NaN largest, -0.0 == +0.0
/// (ties in input order), f64 keys that differ in their last bit apart.
#[test]
fn flex_orders_floats_in_pytorch_order() {
    let device = Device::flex();
    let one_up = f64::from_bits(1.0f64.to_bits() + 1);
    let keys = [one_up, f64::NAN, 0.0, -0.0, 1.0, f64::NEG_INFINITY];
    let x = Tensor::<1>::from_data(TensorData::new(keys.to_vec(), [6]), (&device, DType::F64));
    let (_, indices) = sieve_burn::sort_with_indices(x.clone(), 0);
    assert_eq!(ints(indices), vec![5, 2, 3, 4, 0, 1]);
    let (_, indices) = sieve_burn::topk_with_indices(x, 3, 0);
    assert_eq!(ints(indices), vec![1, 0, 4]);
}

// ---------------------------------------------------------------------------------------------
// The device's barriers hold inside loops, at every cube size sieve may launch

/// Each round: the bins are cleared (sieve's own `clear_bins`), every unit adds `1 + round` to
/// bin `UNIT_POS % SELECT_DIGITS` and reads that bin back (past `SELECT_DIGITS` units it holds
/// other units' adds too), with a cube barrier between the steps. Every unit's total is
/// `ceil(units / SELECT_DIGITS) * (1 + 2 + ... + rounds)` exactly when every barrier holds the
/// whole cube.
#[cube(launch)]
fn barriers_in_a_loop(out: &mut [u32], rounds: u32) {
    let bins = Shared::<[Atomic<u32>]>::new_slice(SELECT_DIGITS);
    let bin = (UNIT_POS % comptime!(SELECT_DIGITS as u32)) as usize;
    let mut total = 0u32;
    for round in 0..rounds {
        clear_bins(&bins, SELECT_DIGITS);
        sync_cube();
        bins[bin].fetch_add(1u32 + round);
        sync_cube();
        total += bins[bin].load();
        sync_cube();
    }
    out[UNIT_POS as usize] = total;
}

/// sieve's one-cube-per-row kernels (top-k's row select and rank cube, the digit passes) sync
/// their cube inside loops. This checks the device does what they assume, at every cube size
/// from 256 units to the largest it allows. Lavapipe (Mesa 22.3) fails it past 256 units
/// when the kernel comes through CubeCL's SPIR-V compiler (`bench/spirv_shared_memory/`):
/// only half or a quarter of the adds land before the reads. The same device through wgpu's
/// WGSL path (CI) passes it at 256, 512 and 1,024 units.
#[test]
fn cube_barriers_hold_inside_loops() {
    const ROUNDS: u32 = 4;
    let client = client();
    let most = sieve::DeviceCaps::of(&client).max_units_per_cube.min(1024);
    let mut units = 256u32.min(most);
    while units <= most {
        let out = client.empty(units as usize * 4);
        // SAFETY: `out` holds one u32 per unit, and each unit writes only its own.
        unsafe {
            barriers_in_a_loop::launch(
                &client,
                CubeCount::Static(1, 1, 1),
                CubeDim::new_1d(units),
                BufferArg::from_raw_parts(out.clone(), units as usize),
                ROUNDS,
            );
        }
        let got: Vec<u32> = download(&client, out, units as usize);
        let want = units.div_ceil(SELECT_DIGITS as u32) * (ROUNDS * (ROUNDS + 1) / 2);
        let bad = got.iter().filter(|&&g| g != want).count();
        assert_eq!(
            bad,
            0,
            "{units} units: {bad} units summed wrong, want {want}, got {:?}",
            &got[..4]
        );
        eprintln!("cube_barriers_hold_inside_loops: {units} units hold");
        units *= 2;
    }
}

/// `common::fill` (the workspaces' status words and counters) writes its value to exactly the
/// first `len` elements, the rest of the buffer keeping its poison: lengths around a unit's
/// and a cube's share (8 elements a unit, 256 units a cube or the device's most).
#[test]
fn fill_writes_exactly_the_first_len_elements() {
    let _device = crate::common::serial();
    let client = client();
    let elem = |d: sieve::Dtype| d.elem_type();
    for len in [1usize, 7, 8, 9, 255, 2047, 2048, 2049, 4097, 100_000] {
        let size = len + 5;
        let buffer = poisoned(&client, size, 0xdead_beefu32);
        sieve::common::fill::fill(&client, &buffer, len, elem(sieve::Dtype::U32), 7);
        let got = download::<u32>(&client, buffer, size);
        let wrong = (0..size)
            .filter(|&i| got[i] != if i < len { 7 } else { 0xdead_beef })
            .count();
        assert_eq!(
            wrong, 0,
            "fill of {len} u32 in a buffer of {size}: {wrong} elements wrong"
        );
    }
}
