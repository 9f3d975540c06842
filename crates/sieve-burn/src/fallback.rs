//! Portable bodies of sieve's ops from stock Burn backend ops, for backends without sieve
//! kernels (Flex). Device-side and sync-free like the kernels: each survivor's slot is the
//! running count of the mask (stock `int_cumsum`), survivors are scattered to their slots
//! and rejected elements to one spare column that is then sliced off. Padding is zeros.

use burn::backend::{
    Backend, Scalar, TensorMetadata, get_device_settings,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{DType, IndexingUpdateOp, IntDType, Shape, Slice, TensorData, try_read_sync};
use sieve::sort::reference::{SortKey, sort_rows};

use crate::compact::compact_shapes;
use crate::values::Values;

/// Where each element goes, as `[rows, len]` column indices: survivors to their slot in the
/// row, rejected elements to the spare column `len`. Also the per-row counts `[rows]`.
fn destinations<B: Backend>(
    mask: BoolTensor<B>,
    rows: usize,
    len: usize,
    index_dtype: IntDType,
) -> (IntTensor<B>, BoolTensor<B>, IntTensor<B>) {
    let mask = B::bool_reshape(mask, Shape::new([rows, len]));
    let flags = B::bool_into_int(mask.clone(), index_dtype);
    let counts = B::int_reshape(B::int_sum_dim(flags.clone(), 1), Shape::new([rows]));
    let slots = B::int_sub_scalar(B::int_cumsum(flags, 1), 1i64.into());
    let rejected = B::bool_not(mask);
    let destinations = B::int_mask_fill(slots, rejected.clone(), (len as i64).into());
    (destinations, rejected, counts)
}

fn rows_of(shape: &Shape, per_row: bool) -> (usize, usize) {
    if per_row {
        (shape[0], shape[1])
    } else {
        (1, shape.num_elements())
    }
}

fn first_columns(len: usize) -> [Slice; 2] {
    [
        Slice {
            start: 0,
            end: None,
            step: 1,
        },
        Slice {
            start: 0,
            end: Some(len as isize),
            step: 1,
        },
    ]
}

/// `CompactOps::sieve_compact`: every row's survivors scattered to their slots, the rejected
/// elements to one spare column, which is sliced off.
pub fn compact<B: Backend>(
    x: Values<B>,
    mask: BoolTensor<B>,
    per_row: bool,
    index_dtype: IntDType,
) -> (Values<B>, IntTensor<B>) {
    let shape = x.shape();
    let (rows, len) = rows_of(&shape, per_row);
    let (values_shape, _) = compact_shapes(&shape, per_row);
    let (destinations, _, counts) = destinations::<B>(mask, rows, len, index_dtype);
    let placed = x.reshape(Shape::new([rows, len])).scatter_into_zeros(
        Shape::new([rows, len + 1]),
        1,
        destinations,
    );
    let values = placed.slice(&first_columns(len));
    (values.reshape(values_shape), counts)
}

pub fn argwhere<B: Backend>(
    mask: BoolTensor<B>,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>) {
    let len = mask.shape().num_elements();
    let positions = B::int_arange(0..len as i64, &mask.device(), index_dtype);
    let mask = B::bool_reshape(mask, Shape::new([len]));
    let (positions, count) = compact::<B>(Values::Int(positions), mask, false, index_dtype);
    (positions.int(), count)
}

/// The count step of a counted compaction on a stock backend: a placeholder workspace (the
/// stock path keeps no tile offsets) beside the `count`.
pub fn counted<B: Backend>(
    count: IntTensor<B>,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>) {
    let workspace = B::int_zeros(Shape::new([1]), &count.device(), index_dtype);
    (workspace, count)
}

/// How many elements of `mask` are true, `[1]` of `index_dtype`.
pub fn mask_count<B: Backend>(mask: BoolTensor<B>, index_dtype: IntDType) -> IntTensor<B> {
    let n = mask.shape().num_elements();
    let flags = B::bool_into_int(B::bool_reshape(mask, Shape::new([n])), index_dtype);
    B::int_sum(flags)
}

/// How many runs of equal elements the flat `x` holds, `[1]` of `index_dtype`.
pub fn run_count<B: Backend>(x: Values<B>, index_dtype: IntDType) -> IntTensor<B> {
    mask_count::<B>(run_start_mask(x).1, index_dtype)
}

/// The flat `x` and its run-start mask: the first element, and each element unequal to the
/// one before it.
fn run_start_mask<B: Backend>(x: Values<B>) -> (Values<B>, BoolTensor<B>) {
    let n = x.shape().num_elements();
    let device = x.device();
    let bools = get_device_settings::<B>(&device).bool_dtype;
    let x = x.reshape(Shape::new([n]));
    let first = B::bool_ones(Shape::new([n.min(1)]), &device, bools);
    let mask = if n < 2 {
        first
    } else {
        let earlier = x.clone().slice(&[Slice::new(0, Some(n as isize - 1), 1)]);
        let later = x.clone().slice(&[Slice::new(1, None, 1)]);
        B::bool_cat(vec![first, later.unequal(earlier)], 0)
    };
    (x, mask)
}

/// `CompactOps::sieve_run_starts`: the flat tensor compacted by its run-start mask.
pub fn run_starts<B: Backend>(
    x: Values<B>,
    positions: bool,
    index_dtype: IntDType,
) -> (Values<B>, IntTensor<B>, IntTensor<B>) {
    let device = x.device();
    let (x, mask) = run_start_mask(x);
    if positions {
        // One running count of the mask: the starts' positions, then their values by them
        // (past the count, position 0's value: the contract leaves those slots unspecified).
        let (at, count) = argwhere::<B>(mask, index_dtype);
        return (x.select(0, at.clone()), at, count);
    }
    let (values, count) = compact::<B>(x, mask, false, index_dtype);
    (values, no_positions::<B>(&device, index_dtype), count)
}

/// The `[0]` positions of a run-starts call that asked for none.
fn no_positions<B: Backend>(
    device: &burn::backend::tensor::Device<B>,
    index_dtype: IntDType,
) -> IntTensor<B> {
    B::int_zeros(Shape::new([0]), device, index_dtype)
}

/// Each element's destination along `dim` in a stable partition: selected elements to their
/// rank among the selected, the rest to the row's count plus their rank among the rest. Also
/// the counts (size 1 along `dim`).
fn partition_destinations<B: Backend>(
    mask: BoolTensor<B>,
    dim: usize,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>) {
    let selected = B::bool_into_int(mask.clone(), index_dtype);
    let rejected = B::bool_into_int(B::bool_not(mask.clone()), index_dtype);
    let counts = B::int_sum_dim(selected.clone(), dim);
    let shape = selected.shape();
    let selected_slot = B::int_sub_scalar(B::int_cumsum(selected, dim), 1i64.into());
    let rejected_slot = B::int_add(
        B::int_sub_scalar(B::int_cumsum(rejected, dim), 1i64.into()),
        B::int_expand(counts.clone(), shape),
    );
    let destinations = B::int_mask_where(rejected_slot, mask, selected_slot);
    (destinations, counts)
}

/// Every element's position along `dim`, broadcast to `shape`, from the backend's `arange`
/// (the fallbacks' own; the cube backends' ops take `autodiff::scanned_positions`).
pub(crate) fn positions<B: Backend>(
    shape: &Shape,
    dim: usize,
    device: &burn::backend::tensor::Device<B>,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let along = B::int_arange(0..shape[dim] as i64, device, index_dtype);
    spread::<B>(along, shape, dim)
}

/// `along` (the `shape[dim]` positions `0, 1, ...`) broadcast to `shape` along `dim`. A
/// backend's reshape takes its shape as given, where Burn's `Tensor::reshape` reads a 0 as
/// "the source's dim".
pub(crate) fn spread<B: Backend>(along: IntTensor<B>, shape: &Shape, dim: usize) -> IntTensor<B> {
    let mut view = vec![1; shape.num_dims()];
    view[dim] = shape[dim];
    B::int_expand(B::int_reshape(along, Shape::from(view)), shape.clone())
}

/// `CompactOps::sieve_partition`: every element scattered to its destination along `dim`.
pub fn partition<B: Backend>(
    x: Values<B>,
    mask: BoolTensor<B>,
    dim: usize,
    index_dtype: IntDType,
) -> (Values<B>, IntTensor<B>, IntTensor<B>) {
    let shape = x.shape();
    let device = x.device();
    let (destinations, counts) = partition_destinations::<B>(mask, dim, index_dtype);
    let values = x.scatter_into_zeros(shape.clone(), dim, destinations.clone());
    let indices = scatter_positions::<B>(&shape, dim, destinations, &device, index_dtype);
    (values, indices, counts)
}

fn scatter_positions<B: Backend>(
    shape: &Shape,
    dim: usize,
    destinations: IntTensor<B>,
    device: &burn::backend::tensor::Device<B>,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let zeros = B::int_zeros(shape.clone(), device, index_dtype);
    let from = positions::<B>(shape, dim, device, index_dtype);
    B::int_scatter(dim, zeros, destinations, from, IndexingUpdateOp::Assign)
}

pub fn split_by_bit<B: Backend>(
    keys: IntTensor<B>,
    bit: u32,
    dim: usize,
    index_dtype: IntDType,
) -> (IntTensor<B>, IntTensor<B>, IntTensor<B>) {
    let bool_dtype = get_device_settings::<B>(&keys.device()).bool_dtype;
    // Unsigned keys divide by 2^bit instead of shifting: NdArray's right shift and bitwise
    // and go through i64 and panic on u64 keys past i64::MAX; its division does not.
    let shifted = if keys.dtype().is_uint() {
        B::int_div_scalar(keys.clone(), Scalar::UInt(1u64 << bit))
    } else {
        B::bitwise_right_shift_scalar(keys.clone(), (bit as i64).into())
    };
    let bits = B::int_remainder_scalar(shifted, 2i64.into());
    let zero = B::int_equal_elem(bits, 0i64.into(), bool_dtype);
    let (values, indices, counts) = partition::<B>(Values::Int(keys), zero, dim, index_dtype);
    (values.int(), indices, counts)
}

/// The stable sort permutation along `dim` of row-major `values` of `shape`, in sieve's order
/// (each row sorted by `sieve::sort::reference::sort_rows`, the kernels' CPU twin), as
/// indices along `dim` in the same layout.
fn stable_permutation<T: SortKey>(
    values: &[T],
    shape: &Shape,
    dim: usize,
    descending: bool,
) -> Vec<i64> {
    let len = shape[dim];
    let inner: usize = (dim + 1..shape.num_dims()).map(|d| shape[d]).product();
    let outer = values.len() / (len * inner).max(1);
    let mut out = vec![0i64; values.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            let row: Vec<T> = (0..len).map(|k| values[at(k)]).collect();
            let order = sort_rows(&row, 1, len, descending);
            for (slot, k) in order.into_iter().enumerate() {
                out[at(slot)] = k as i64;
            }
        }
    }
    out
}

/// [`stable_permutation`] of `data`, compared in a type that holds every key exactly: signed
/// integers as i64, unsigned as u64 (keys that differ only past 2^53 stay apart), floats as
/// f64 (f16, bf16 and f32 widen exactly; PyTorch's order: NaN largest, -0.0 == +0.0).
fn stable_permutation_of(
    data: &TensorData,
    shape: &Shape,
    dim: usize,
    descending: bool,
) -> Vec<i64> {
    match data.dtype() {
        DType::I64 | DType::I32 | DType::I16 | DType::I8 => {
            let keys: Vec<i64> = data.iter::<i64>().collect();
            stable_permutation(&keys, shape, dim, descending)
        }
        DType::U64 | DType::U32 | DType::U16 | DType::U8 => {
            let keys: Vec<u64> = data.iter::<u64>().collect();
            stable_permutation(&keys, shape, dim, descending)
        }
        _ => {
            let keys: Vec<f64> = data.iter::<f64>().collect();
            stable_permutation(&keys, shape, dim, descending)
        }
    }
}

/// Stable sort on the host (the fallback reads the data: it serves CPU backends), then a
/// gather by the permutation on the backend, so the values keep their bits.
pub fn sort_with_indices<B: Backend>(
    x: Values<B>,
    dim: usize,
    descending: bool,
    index_dtype: IntDType,
) -> (Values<B>, IntTensor<B>) {
    let (shape, device) = (x.shape(), x.device());
    let data = x.clone().read("sort");
    let indices = host_sort_indices::<B>(data, &shape, &device, dim, descending, index_dtype);
    (x.gather(dim, indices.clone()), indices)
}

/// The stable sort permutation of `data` (of `shape`) along `dim`, uploaded as indices.
fn host_sort_indices<B: Backend>(
    data: TensorData,
    shape: &Shape,
    device: &B::Device,
    dim: usize,
    descending: bool,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let order = stable_permutation_of(&data, shape, dim, descending);
    B::int_from_data(
        TensorData::new(order, shape.clone()).convert_dtype(index_dtype.into()),
        device,
    )
}

/// Every element of `shape` except along `dim`, where the first `k`.
pub fn first_along(shape: &Shape, dim: usize, k: usize) -> Vec<Slice> {
    (0..shape.num_dims())
        .map(|d| {
            if d == dim {
                prefix_slice(k)
            } else {
                prefix_slice(shape[d])
            }
        })
        .collect()
}

/// Elements `0..len` along one axis.
pub fn prefix_slice(len: usize) -> Slice {
    Slice {
        start: 0,
        end: Some(len as isize),
        step: 1,
    }
}

/// `SampleOps::sieve_uniform_rows` on the host: the seeds read back, `sieve::random`'s CPU
/// reference (the device kernel's numbers, bit for bit), uploaded.
pub fn uniform_rows<B: Backend>(seeds: IntTensor<B>, len: usize) -> FloatTensor<B> {
    let device = seeds.device();
    let words = seed_words(read("uniform_rows", B::int_into_data(seeds)));
    let values = sieve::random::reference::uniform_rows(&words, len);
    B::float_from_data(TensorData::new(values, [words.len(), len]), &device)
}

/// `SampleOps::sieve_uniform_at` on the host, as [`uniform_rows`].
pub fn uniform_at<B: Backend>(seeds: IntTensor<B>, columns: IntTensor<B>) -> FloatTensor<B> {
    let device = seeds.device();
    let words = seed_words(read("uniform_at", B::int_into_data(seeds)));
    let columns = read("uniform_at", B::int_into_data(columns));
    let shape = columns.shape().clone();
    let columns = low_words(columns);
    let values = sieve::random::reference::uniform_at(&words, &columns, shape[1]);
    B::float_from_data(TensorData::new(values, shape), &device)
}

/// `SampleOps::sieve_sample` on the host: every input read back,
/// `sieve::sample::reference::sample_row` row by row, the tokens uploaded as `index_dtype`.
pub fn sample<B: Backend>(
    logits: FloatTensor<B>,
    seeds: IntTensor<B>,
    top_k: IntTensor<B>,
    top_p: FloatTensor<B>,
    temperature: FloatTensor<B>,
    cut: usize,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let op = "top_k_top_p_sample";
    let top_k: Vec<i64> = match read(op, B::int_into_data(top_k)) {
        k if k.dtype() == DType::U64 => k
            .iter::<u64>()
            .map(|v| v.min(i64::MAX as u64) as i64)
            .collect(),
        k => k.iter::<i64>().collect(),
    };
    let top_p: Vec<f32> = read(op, B::float_into_data(top_p)).iter::<f32>().collect();
    let t: Vec<f32> = read(op, B::float_into_data(temperature))
        .iter::<f32>()
        .collect();
    let params = |r: usize| (top_k[r], top_p[r], t[r]);
    sample_rows::<B>(logits, seeds, params, cut, index_dtype)
}

/// `SampleOps::sieve_sample_same` on the host, as [`sample`].
pub fn sample_same<B: Backend>(
    logits: FloatTensor<B>,
    seeds: IntTensor<B>,
    top_k: usize,
    top_p: f32,
    temperature: f32,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let k = crate::sampling::k_param(top_k);
    sample_rows::<B>(
        logits,
        seeds,
        |_| (k, top_p, temperature),
        top_k,
        index_dtype,
    )
}

/// Row `r` drawn under `params(r)` = (top-k, top-p, temperature).
fn sample_rows<B: Backend>(
    logits: FloatTensor<B>,
    seeds: IntTensor<B>,
    params: impl Fn(usize) -> (i64, f32, f32),
    cut: usize,
    index_dtype: IntDType,
) -> IntTensor<B> {
    let op = "top_k_top_p_sample";
    let device = logits.device();
    let logits = read(op, B::float_into_data(logits));
    let [rows, vocab] = [logits.shape()[0], logits.shape()[1]];
    let logits: Vec<f32> = logits.iter::<f32>().collect();
    let seeds = seed_words(read(op, B::int_into_data(seeds)));
    let tokens: Vec<i64> = (0..rows)
        .map(|r| {
            let (k, p, t) = params(r);
            let params = sieve::sample::reference::RowParams {
                seed: seeds[r],
                k,
                p,
                t,
            };
            let row = &logits[r * vocab..(r + 1) * vocab];
            sieve::sample::reference::sample_row(row, cut, params)
                .1
                .token
        })
        .collect();
    B::int_from_data(
        TensorData::new(tokens, [rows]).convert_dtype(index_dtype.into()),
        &device,
    )
}

/// An Int tensor's elements by their low 32 bits (what the device reads).
fn low_words(data: TensorData) -> Vec<u32> {
    match data.dtype() {
        DType::U64 => data.iter::<u64>().map(|v| v as u32).collect(),
        DType::U32 => data.iter::<u32>().collect(),
        _ => data.iter::<i64>().map(|v| v as u32).collect(),
    }
}

/// Seeds' `(lo, hi)` words as the device reads them.
fn seed_words(data: TensorData) -> Vec<(u32, u32)> {
    match data.dtype() {
        DType::I64 => data.iter::<i64>().map(|v| split_words(v as u64)).collect(),
        DType::U64 => data.iter::<u64>().map(split_words).collect(),
        // Narrower seeds as the i32 (or u32) the device reads them as.
        DType::U32 => data.iter::<u32>().map(|v| (v, 0)).collect(),
        _ => data.iter::<i64>().map(|v| (v as i32 as u32, 0)).collect(),
    }
}

fn split_words(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

/// The data of a pending read for `op`'s fallback, waited for here (the fallbacks serve CPU
/// backends).
pub fn read<E: std::fmt::Debug>(
    op: &str,
    data: impl std::future::Future<Output = Result<TensorData, E>>,
) -> TensorData {
    try_read_sync(data)
        .unwrap_or_else(|| panic!("{op} fallback: the read did not complete synchronously"))
        .unwrap_or_else(|e| panic!("{op} fallback: reading a tensor: {e:?}"))
}

/// `SortOps::sieve_searchsorted` on the host: a binary search per value in sieve's
/// order, the positions uploaded to `device`.
pub fn searchsorted<B: Backend>(
    sorted: &TensorData,
    values: &TensorData,
    right: bool,
    index_dtype: IntDType,
    device: &B::Device,
) -> IntTensor<B> {
    let positions: Vec<i64> = match values.dtype() {
        DType::I64 | DType::I32 | DType::I16 | DType::I8 => {
            search_host::<i64>(sorted, values, right)
        }
        DType::U64 | DType::U32 | DType::U16 | DType::U8 => {
            search_host::<u64>(sorted, values, right)
        }
        _ => search_host::<f64>(sorted, values, right),
    };
    B::int_from_data(
        TensorData::new(positions, values.shape().clone()).convert_dtype(index_dtype.into()),
        device,
    )
}

fn search_host<T: SortKey + burn::tensor::Element>(
    sorted: &TensorData,
    values: &TensorData,
    right: bool,
) -> Vec<i64> {
    let keys: Vec<T> = sorted.iter::<T>().collect();
    values
        .iter::<T>()
        .map(|v| {
            keys.partition_point(|k| match T::order(k, &v) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => right,
                std::cmp::Ordering::Greater => false,
            }) as i64
        })
        .collect()
}
