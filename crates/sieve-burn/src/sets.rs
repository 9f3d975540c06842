//! Set operations and order statistics on the sort and compaction engines: [`unique`],
//! [`unique_with`], [`unique_consecutive`], [`searchsorted`], [`bucketize`], [`kthvalue`],
//! [`median`]. Float and Int tensors of every dtype the sort takes; sieve's order throughout
//! (PyTorch's: `-inf < ... < -0.0 == +0.0 < ... < +inf < NaN`, every NaN equal to every
//! other), so unlike `torch.unique`, NaNs form one group and the two zeros another.

use burn::tensor::{AsIndex, Int, Tensor};

use crate::SieveKind;
use crate::tensor::{DtypeUse, check_served, dim_index, positions};

/// [`unique_with`]'s outputs.
#[derive(Debug, Clone)]
pub struct Unique<const D: usize, K: burn::tensor::kind::Basic> {
    /// The distinct values in ascending order: each group's first element in the input's
    /// row-major order (its bits: which zero, which NaN payload).
    pub values: Tensor<1, K>,
    /// For every input element (the input's shape), the position of its value in `values`.
    pub inverse: Option<Tensor<D, Int>>,
    /// How many input elements each value has.
    pub counts: Option<Tensor<1, Int>>,
}

/// The distinct values of `x` (all of it, row-major), ascending: `torch.unique(x,
/// sorted=True)`, but NaNs are one value (see the module docs). Reads one count back (the
/// output's length depends on the data).
///
/// # Example
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::default();
/// let x = Tensor::<1, Int>::from_data([3, 1, 3, 2, 1], &device);
/// let values = sieve_burn::unique(x);
/// assert_eq!(values.into_data().iter::<i64>().collect::<Vec<_>>(), [1, 2, 3]);
/// ```
pub fn unique<const D: usize, K: SieveKind>(x: Tensor<D, K>) -> Tensor<1, K> {
    flat_groups("unique", x, true, false, false).values
}

/// [`unique`] with, on request, the inverse (each element's position in the values) and the
/// counts, as `torch.unique(x, sorted=True, return_inverse=..., return_counts=...)`.
pub fn unique_with<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    return_inverse: bool,
    return_counts: bool,
) -> Unique<D, K> {
    flat_groups("unique_with", x, true, return_inverse, return_counts)
}

/// The first of every run of equal consecutive elements of `x` (all of it, row-major), with
/// the inverse and counts on request: `torch.unique_consecutive` (NaNs equal, as everywhere
/// in sieve).
pub fn unique_consecutive<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    return_inverse: bool,
    return_counts: bool,
) -> Unique<D, K> {
    flat_groups(
        "unique_consecutive",
        x,
        false,
        return_inverse,
        return_counts,
    )
}

/// The `k`-th smallest element along `dim` (`k` counts from 1, as `torch.kthvalue`) and its
/// index; `dim` is kept with size 1 (as Burn's `min_dim`). Ties: the element of the stable
/// ascending sort's slot `k - 1` (the lowest index among equal values goes first); NaN is
/// the largest value. Gradients (Float, Autodiff) go to the chosen element.
pub fn kthvalue<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    k: usize,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    let dim = dim_index("Kthvalue", dim, D);
    check_served("kthvalue", &x, DtypeUse::Keys);
    let len = x.dims()[dim];
    assert!(
        (1..=len).contains(&k),
        "kthvalue: invalid argument `k` = {k}: expected 1..={len} (the length of dim {dim})"
    );
    if x.shape().num_elements() == 0 {
        // No lane has an element: the bottom 1 has the output's shape, and stays in Autodiff's
        // graph, where Burn's `narrow` of a tensor without elements returns an untracked one
        // (a later `backward` would panic).
        return crate::bottomk_with_indices(x, 1, dim as isize);
    }
    let (values, indices) = crate::bottomk_with_indices(x, k, dim as isize);
    (values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1))
}

/// The lower median along `dim` (the element of rank `(len - 1) / 2`, as `torch.median`)
/// and its index, `dim` kept with size 1. As in torch, a lane holding a NaN has a NaN median:
/// its first NaN and that NaN's index. Ties as [`kthvalue`].
///
/// # Example
/// ```
/// use burn::tensor::{Device, Tensor};
/// let device = Device::default();
/// let x = Tensor::<2>::from_data([[3.0, 1.0, 2.0, 5.0], [f32::NAN, 0.0, 1.0, 2.0]], &device);
/// let (values, indices) = sieve_burn::median(x, 1);
/// let v: Vec<f32> = values.into_data().iter::<f32>().collect();
/// assert_eq!(v[0], 2.0);
/// assert!(v[1].is_nan());
/// assert_eq!(indices.into_data().iter::<i64>().collect::<Vec<_>>(), [2, 0]);
/// ```
pub fn median<const D: usize, K: SieveKind>(
    x: Tensor<D, K>,
    dim: impl AsIndex,
) -> (Tensor<D, K>, Tensor<D, Int>) {
    // Burn's `median` names itself so.
    let dim = dim_index("Median", dim, D);
    check_served("median", &x, DtypeUse::Keys);
    let len = x.dims()[dim];
    assert!(
        len > 0,
        "median: invalid argument `x`: dim {dim} has length 0: expected at least 1"
    );
    let (values, indices) = kthvalue(x.clone(), (len - 1) / 2 + 1, dim);
    // NaN lanes: NaN is the only value unequal to itself (Int lanes never have one).
    let nan = x.clone().not_equal(x.clone());
    let position = positions::<D>(&x.shape(), dim, &x.device());
    // The lane's running minimum's last element (sieve's scan), not Burn's `min_dim`, which
    // drops the last element of some lanes (65,535 and 131,071 long on lavapipe).
    let first_nan = crate::cummin(position.mask_fill(nan.clone().bool_not(), len as i64), dim)
        .narrow(dim, len - 1, 1);
    let has_nan = first_nan.clone().lower_elem(len as i64);
    let at = first_nan.clamp_max(len as i64 - 1);
    let nan_value = x.gather(dim, at.clone());
    (
        values.mask_where(has_nan.clone(), nan_value),
        indices.mask_where(has_nan, at),
    )
}

/// [`unique_with`] (`sort`) or [`unique_consecutive`] of `x`, flattened; `op` names the
/// public op in a refusal.
fn flat_groups<const D: usize, K: SieveKind>(
    op: &str,
    x: Tensor<D, K>,
    sort: bool,
    return_inverse: bool,
    return_counts: bool,
) -> Unique<D, K> {
    // The groups' values are moved as values: the device must have the dtype (refused here,
    // naming the public op, before the sort or the compaction inside would).
    check_served(op, &x, DtypeUse::Values);
    let shape = x.shape();
    let n = shape.num_elements();
    // `flatten`, not `reshape([n])`: Burn's `reshape` reads a 0 in its target as "the source's
    // dim", so `[3, 0]` would not reshape to `[0]`.
    let flat = x.flatten::<1>(0, D - 1);
    if n == 0 {
        return empty_unique(flat, shape, return_inverse, return_counts);
    }
    let (grouped, order) = match (sort, return_inverse) {
        (true, true) => {
            let (sorted, order) = crate::sort_with_indices(flat, 0);
            (sorted, Some(order))
        }
        (true, false) => {
            // The distinct values alone: hashed where the table holds them (one pass, and a
            // sort of the distinct values only).
            if !return_counts && let Some(values) = crate::compact::distinct(flat.clone()) {
                return Unique {
                    values,
                    inverse: None,
                    counts: None,
                };
            }
            // Values and counts need no permutation: a keys-only sort moves less.
            (crate::sort(flat, 0), None)
        }
        (false, _) => (flat, None),
    };
    groups(grouped, order, shape, return_inverse, return_counts)
}

/// Group boundaries of `sorted` (equal neighbours, NaNs equal) as values, inverse, counts;
/// `order`: where each element of `sorted` came from (`None`: the input order itself). One
/// compaction by run starts gives the values and, for the inverse or counts, where each group
/// starts: a group's count is the distance to the next start, and an element's group is the
/// number of starts after position 0 up to it (ones scattered at the starts, summed by
/// `cumsum`).
fn groups<const D: usize, K: SieveKind>(
    sorted: Tensor<1, K>,
    order: Option<Tensor<1, Int>>,
    shape: burn::tensor::Shape,
    return_inverse: bool,
    return_counts: bool,
) -> Unique<D, K> {
    let [n] = sorted.dims();
    let device = sorted.device();
    let (values, starts) = crate::compact::run_starts(sorted, return_inverse || return_counts);
    let [m] = values.dims();
    if m == 1 {
        // One group (Burn's `narrow` refuses the empty rest).
        return Unique {
            values,
            inverse: return_inverse.then(|| Tensor::<1, Int>::zeros([n], &device).reshape(shape)),
            counts: return_counts.then(|| Tensor::<1, Int>::from_data([n as i64], &device)),
        };
    }
    let counts = return_counts.then(|| {
        let starts = starts.clone().expect("asked for above");
        let ends = Tensor::cat(
            vec![
                starts.clone().narrow(0, 1, m - 1),
                Tensor::<1, Int>::from_data([n as i64], &device),
            ],
            0,
        );
        ends.sub(starts)
    });
    let inverse = return_inverse.then(|| {
        let starts = starts.expect("asked for above").narrow(0, 1, m - 1);
        let marks = Tensor::<1, Int>::zeros([n], &device).scatter(
            0,
            starts,
            Tensor::<1, Int>::ones([m - 1], &device),
            burn::tensor::IndexingUpdateOp::Add,
        );
        let group = crate::cumsum(marks, 0);
        let inverse = match order {
            Some(order) => Tensor::<1, Int>::zeros([n], &device).scatter(
                0,
                order,
                group,
                burn::tensor::IndexingUpdateOp::Add,
            ),
            None => group,
        };
        inverse.reshape(shape)
    });
    Unique {
        values,
        inverse,
        counts,
    }
}

fn empty_unique<const D: usize, K: SieveKind>(
    flat: Tensor<1, K>,
    shape: burn::tensor::Shape,
    return_inverse: bool,
    return_counts: bool,
) -> Unique<D, K> {
    let device = flat.device();
    Unique {
        values: flat,
        // Made in its shape (a reshape of `[0]` to a shape with a 0 would not: see above).
        inverse: return_inverse.then(|| Tensor::<D, Int>::zeros(shape, &device)),
        counts: return_counts.then(|| Tensor::<1, Int>::zeros([0], &device)),
    }
}
