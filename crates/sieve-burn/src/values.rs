//! [`Values`]: a Float or an Int tensor, the operand of every op that serves both kinds. Each
//! such op is one trait method whose kind is picked at run time (as Burn's own
//! `TensorPrimitive` picks float or quantized), not a float/int pair of methods in every layer.
//! The helpers here are the stock ops the fallbacks need, each routed to Burn's float or int
//! op by the kind.

use burn::backend::fusion::custom::TensorSpec;
use burn::backend::{
    Backend, Dispatch, DispatchTensor, ExtensionType, TensorMetadata,
    tensor::{BoolTensor, Device, FloatTensor, IntTensor},
};
use burn::tensor::{IndexingUpdateOp, Shape, Slice, TensorData};

/// A Float or an Int tensor.
#[derive(ExtensionType)]
#[extension_type(fusion)]
pub enum Values<B: Backend> {
    /// A Float tensor.
    Float(FloatTensor<B>),
    /// An Int tensor.
    Int(IntTensor<B>),
}

impl<B: Backend> Values<B> {
    /// The Float tensor (an op's output for a Float input).
    ///
    /// # Panics
    /// On an Int tensor: a backend returned another kind than its input's.
    pub fn float(self) -> FloatTensor<B> {
        match self {
            Values::Float(x) => x,
            Values::Int(_) => panic!("sieve_burn: an Int result where a Float one was due"),
        }
    }

    /// The Int tensor (an op's output for an Int input).
    ///
    /// # Panics
    /// On a Float tensor: a backend returned another kind than its input's.
    pub fn int(self) -> IntTensor<B> {
        match self {
            Values::Int(x) => x,
            Values::Float(_) => panic!("sieve_burn: a Float result where an Int one was due"),
        }
    }

    pub(crate) fn shape(&self) -> Shape {
        match self {
            Values::Float(x) => x.shape(),
            Values::Int(x) => x.shape(),
        }
    }

    pub(crate) fn device(&self) -> Device<B> {
        match self {
            Values::Float(x) => x.device(),
            Values::Int(x) => x.device(),
        }
    }

    pub(crate) fn reshape(self, shape: Shape) -> Self {
        match self {
            Values::Float(x) => Values::Float(B::float_reshape(x, shape)),
            Values::Int(x) => Values::Int(B::int_reshape(x, shape)),
        }
    }

    pub(crate) fn slice(self, slices: &[Slice]) -> Self {
        match self {
            Values::Float(x) => Values::Float(B::float_slice(x, slices)),
            Values::Int(x) => Values::Int(B::int_slice(x, slices)),
        }
    }

    pub(crate) fn select(self, dim: usize, indices: IntTensor<B>) -> Self {
        match self {
            Values::Float(x) => Values::Float(B::float_select(x, dim, indices)),
            Values::Int(x) => Values::Int(B::int_select(x, dim, indices)),
        }
    }

    pub(crate) fn gather(self, dim: usize, indices: IntTensor<B>) -> Self {
        match self {
            Values::Float(x) => Values::Float(B::float_gather(dim, x, indices)),
            Values::Int(x) => Values::Int(B::int_gather(dim, x, indices)),
        }
    }

    /// Zeros of `shape` (this tensor's dtype) with this tensor's elements assigned along `dim`
    /// at `destinations`.
    pub(crate) fn scatter_into_zeros(
        self,
        shape: Shape,
        dim: usize,
        destinations: IntTensor<B>,
    ) -> Self {
        let device = self.device();
        match self {
            Values::Float(x) => {
                let zeros = B::float_zeros(shape, &device, x.dtype().into());
                let op = IndexingUpdateOp::Assign;
                Values::Float(B::float_scatter(dim, zeros, destinations, x, op))
            }
            Values::Int(x) => {
                let zeros = B::int_zeros(shape, &device, x.dtype().into());
                let op = IndexingUpdateOp::Assign;
                Values::Int(B::int_scatter(dim, zeros, destinations, x, op))
            }
        }
    }

    /// Each element against the next's `later` neighbour, unequal in sieve's order (IEEE's
    /// `!=`, except that two NaNs are equal).
    pub(crate) fn unequal(self, later: Self) -> BoolTensor<B> {
        let bools = burn::backend::get_device_settings::<B>(&self.device()).bool_dtype;
        match (self, later) {
            (Values::Float(a), Values::Float(b)) => {
                let nan = |t: FloatTensor<B>| B::float_not_equal(t.clone(), t, bools);
                let both_nan = B::bool_and(nan(a.clone()), nan(b.clone()));
                B::bool_and(B::float_not_equal(a, b, bools), B::bool_not(both_nan))
            }
            (Values::Int(a), Values::Int(b)) => B::int_not_equal(a, b, bools),
            _ => unreachable!("both operands come from one tensor"),
        }
    }

    /// The tensor's data (a blocking read).
    pub(crate) fn read(self, op: &str) -> TensorData {
        match self {
            Values::Float(x) => crate::fallback::read(op, B::float_into_data(x)),
            Values::Int(x) => crate::fallback::read(op, B::int_into_data(x)),
        }
    }
}

impl<B: Backend> Clone for Values<B> {
    fn clone(&self) -> Self {
        match self {
            Values::Float(x) => Values::Float(x.clone()),
            Values::Int(x) => Values::Int(x.clone()),
        }
    }
}

impl Values<Dispatch> {
    /// The dispatch tensor, of either kind.
    pub fn into_dispatch(self) -> DispatchTensor {
        match self {
            Values::Float(x) | Values::Int(x) => x,
        }
    }
}

impl ValuesMetadata {
    /// The operand's spec.
    pub(crate) fn spec(&self) -> &TensorSpec {
        match self {
            ValuesMetadata::Float(spec) | ValuesMetadata::Int(spec) => spec,
        }
    }

    /// An output of this operand's kind, of `spec`.
    pub(crate) fn with(&self, spec: TensorSpec) -> Self {
        match self {
            ValuesMetadata::Float(_) => ValuesMetadata::Float(spec),
            ValuesMetadata::Int(_) => ValuesMetadata::Int(spec),
        }
    }
}
