//! [`super::SortOps`] on the Autodiff backend: gradients where torch has them.

use burn::backend::autodiff::{Autodiff, checkpoint::strategy::CheckpointStrategy};
use burn::backend::tensor::IntTensor;
use burn::backend::{Backend, TensorMetadata, get_device_settings};
use burn::tensor::IntDType;

use super::SortOps;
use crate::SieveOps;
use crate::autodiff::*;
use crate::values::Values;

impl<B: Backend + SieveOps, C: CheckpointStrategy> SortOps for Autodiff<B, C> {
    fn sieve_sort_with_indices(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, indices) =
                    B::sieve_sort_with_indices(Values::Int(x), dim, descending, index_dtype);
                return (int_values(values), indices);
            }
        };
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) =
                B::sieve_sort_with_indices(Values::Float(x), dim, descending, index_dtype);
            (values.float(), indices, ())
        });
        (Values::Float(values), indices)
    }

    fn sieve_sort(x: Values<Self>, dim: usize, descending: bool) -> Values<Self> {
        match x {
            Values::Float(x) => {
                let index_dtype = get_device_settings::<B>(&x.primitive().device()).int_dtype;
                Self::sieve_sort_with_indices(Values::Float(x), dim, descending, index_dtype).0
            }
            Values::Int(x) => int_values(B::sieve_sort(Values::Int(x), dim, descending)),
        }
    }

    /// Indices only: not differentiable.
    fn sieve_argsort(
        x: Values<Self>,
        dim: usize,
        descending: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_argsort(inner_values(x), dim, descending, index_dtype)
    }

    /// The gradient lands on the selected positions (the indices are distinct within a
    /// row, so the scatter is exact), zeros elsewhere.
    fn sieve_topk(
        x: Values<Self>,
        k: usize,
        dim: usize,
        largest: bool,
        sorted: bool,
        strategy: usize,
        index_dtype: IntDType,
    ) -> (Values<Self>, IntTensor<Self>) {
        let x = match x {
            Values::Float(x) => x,
            Values::Int(x) => {
                let (values, indices) = B::sieve_topk(
                    Values::Int(x),
                    k,
                    dim,
                    largest,
                    sorted,
                    strategy,
                    index_dtype,
                );
                return (int_values(values), indices);
            }
        };
        let (values, indices, ()) = gathered::<B, C, _>(x, dim, |x| {
            let (values, indices) = B::sieve_topk(
                Values::Float(x),
                k,
                dim,
                largest,
                sorted,
                strategy,
                index_dtype,
            );
            (values.float(), indices, ())
        });
        (Values::Float(values), indices)
    }

    /// Indices only: not differentiable.
    fn sieve_searchsorted(
        sorted: Values<Self>,
        values: Values<Self>,
        right: bool,
        index_dtype: IntDType,
    ) -> IntTensor<Self> {
        B::sieve_searchsorted(
            inner_values(sorted),
            inner_values(values),
            right,
            index_dtype,
        )
    }
}
