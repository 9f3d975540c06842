//! The cumulative family's rows (`cumsum`, `cumprod`, `cummin`, `cummax`): sieve through its
//! Burn op (Auto strategy), sieve's raw kernels with each strategy forced (rows along the
//! last dim), and stock Burn's `Tensor::cumsum` (`cumprod`, ...).
//!
//! Data, f32 or i32 (an Int tensor for the Burn ops), such that every output is exact in any
//! association order and so is checked *exactly* against the CPU reference before it is
//! timed: cumsum random in {-2, -1, 1, 2} (every partial sum a small integer); cumprod random
//! in {-1, 1} (every partial product +-1); cummin and cummax random integers below 2^24
//! (outputs are inputs, moved). i32 rows take the integer folds (exact in any grouping), so
//! beside the f32 rows they separate a fold's cost from its float rules.

use burn::tensor::{Device, Int, Tensor, TensorData};
use cubecl::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sieve::scan::reference::scan_rows_op;
use sieve::scan::{self, ScanKind, ScanOp, ScanOptions, ScanProblem, ScanStrategy, ScanTuning};
use sieve_burn::SieveKind;

use crate::case::{Case, Op};
use crate::report::{Row, mismatch};
use crate::timing::Bench;

/// Stock Burn's cumulative kernel folds the whole prefix for every element (O(len^2) per
/// row); above this row length one call takes tens of seconds, so the row is reported as
/// skipped.
const BURN_MAX_ROW: usize = 1 << 20;

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    case.require_dtype(&["f32", "i32"]);
    match case.shape.len() {
        1 => run_rank::<1>(case, bench),
        2 => run_rank::<2>(case, bench),
        3 => run_rank::<3>(case, bench),
        r => panic!("{} bench: rank {r} is not supported (1..=3)", case.op),
    }
}

fn run_rank<const D: usize>(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    let dim = case.dim();
    assert!(
        dim < D,
        "{} bench: dim {dim} out of range for rank {D}",
        case.op
    );
    let op = scan_op(case.op);
    let n = case.numel();
    let int = case.dtype == "i32";
    // Read once, written once, in the raw kernels' 4 bytes; the Burn rows in the tensor's own
    // dtype (an Int tensor takes the bench.device's int dtype).
    let floor = 8 * n as u64;
    let mut rng = StdRng::seed_from_u64(0x51e7e);
    let data: Vec<f32> = (0..n)
        .map(|_| match op {
            ScanOp::Sum => [-2.0, -1.0, 1.0, 2.0][rng.random_range(0..4)],
            ScanOp::Prod => [-1.0, 1.0][rng.random_range(0..2)],
            ScanOp::Min | ScanOp::Max => rng.random_range(-(1 << 23)..1 << 23) as f32,
        })
        .collect();
    let expected = reference(&data, &case.shape, dim, op);
    let input = Input::<D>::new(&data, &case.shape, int, bench.device);
    let burn_floor = 2 * input.elem_bytes() * n as u64;
    let mut rows = Vec::new();

    // sieve through Burn (what a model calls).
    let row = bench.row(case, "sieve", burn_floor, &[("strategy", "auto")]);
    rows.push(row.checked(
        mismatch(&input.apply(dim, op, false).values(), &expected),
        || {
            bench.time_sieve_burn(case, || {
                let _out = input.apply(dim, op, false);
            })
        },
    ));

    // The input on the device once (as i32 for Int cases), for the `cube` row and the raw rows.
    let (raw_dtype, in_handle) = if int {
        let ints: Vec<i32> = data.iter().map(|&x| x as i32).collect();
        (
            sieve::Dtype::I32,
            bench.client.create_from_slice(bytemuck::cast_slice(&ints)),
        )
    } else {
        (
            sieve::Dtype::F32,
            bench.client.create_from_slice(bytemuck::cast_slice(&data)),
        )
    };
    // The same op through sieve-burn's CubeCL impl with no Dispatch and no Fusion (f32
    // cumsum only): the Burn op's time less Fusion's.
    if !int && op == ScanOp::Sum {
        let x = bench.cube_tensor(in_handle.clone(), &case.shape, burn::backend::DType::F32);
        if let Some(x) = x {
            use sieve_burn::{ScanOps, Values};
            let call = || {
                burn_cubecl::CubeBackend::sieve_cumulative(Values::Float(x.clone()), dim, op)
                    .float()
            };
            let out = call();
            let got = bench
                .client
                .read_one(out.handle.clone())
                .expect("read back");
            let got: Vec<f32> = bytemuck::cast_slice(&got[..4 * n]).to_vec();
            let row = bench.row(case, "cube", burn_floor, &[]);
            rows.push(row.checked(mismatch(&got, &expected), || {
                bench.time_raw(|| drop(call()))
            }));
        }
    }

    // sieve's raw kernels with each strategy forced (contiguous rows: dim is the last axis).
    if dim + 1 == D {
        let len = case.shape[dim];
        let problem = ScanProblem {
            rows: n / len.max(1),
            len,
        };
        let out_handle = bench.client.empty(4 * n.max(1));
        for strategy in raw_strategies(case) {
            let row = bench.row(case, "sieve", floor, &[("strategy", strategy.name())]);
            let options = ScanOptions {
                strategy,
                tuning: scan_tuning_override(
                    case,
                    bench.client,
                    strategy == ScanStrategy::DecoupledLookback,
                ),
            };
            let launch = || {
                scan::scan_op(
                    bench.client,
                    &in_handle,
                    &out_handle,
                    problem,
                    raw_dtype,
                    op,
                    ScanKind::Inclusive,
                    options,
                )
            };
            if let Err(e) = launch() {
                rows.push(row.untimed("skipped", e.to_string()));
                continue;
            }
            let got = bench
                .client
                .read_one(out_handle.clone())
                .expect("read back");
            let got: Vec<f32> = if int {
                let ints: &[i32] = bytemuck::cast_slice(&got[..4 * n]);
                ints.iter().map(|&x| x as f32).collect()
            } else {
                bytemuck::cast_slice(&got[..4 * n]).to_vec()
            };
            rows.push(row.checked(mismatch(&got, &expected), || {
                bench.time_raw(|| {
                    launch().expect("scan");
                })
            }));
        }
    }

    // Stock Burn.
    let row = bench.row(case, "burn", burn_floor, &[]);
    let too_long = (case.shape[dim] > BURN_MAX_ROW).then(|| {
        (
            "skipped",
            format!(
                "stock {} is O(len^2) per row; not run for rows longer than {BURN_MAX_ROW}",
                case.op
            ),
        )
    });
    rows.push(row.stock(bench.with_burn, too_long, |row| {
        row.checked(
            mismatch(&input.apply(dim, op, true).values(), &expected),
            || {
                bench.time_burn(|| {
                    let _out = input.apply(dim, op, true);
                })
            },
        )
    }));
    rows
}

/// The forced strategies to time: the one named by `strategy=` or `raw=` (other than `auto`),
/// none at `raw=none`, else both.
fn raw_strategies(case: &Case) -> Vec<ScanStrategy> {
    let named = case.params.get("raw").or(case.params.get("strategy"));
    match named.map(String::as_str) {
        Some("none") => vec![],
        Some("reduce_then_scan") => vec![ScanStrategy::ReduceThenScan],
        Some("decoupled_lookback") => vec![ScanStrategy::DecoupledLookback],
        _ => vec![
            ScanStrategy::ReduceThenScan,
            ScanStrategy::DecoupledLookback,
        ],
    }
}

/// A scan tuning (the scan's, or the compaction's, which scans its flags) from the case's
/// `units=`, `epu=` (elements per unit) and `vec=` (widest vector) params, over the device's
/// defaults for the look-back or reduce-then-scan; `None` when the case names none of them.
pub(crate) fn scan_tuning_override(
    case: &Case,
    client: &Client,
    lookback: bool,
) -> Option<ScanTuning> {
    let named = ["units", "epu", "vec"]
        .iter()
        .any(|k| case.params.contains_key(k));
    named.then(|| scan_tuning_from(client, lookback, |k| case.param_u32(k)))
}

/// A scan tuning whose `units`, `epu` (elements per unit) and `vec` (widest vector) are what
/// `get` gives for those keys, the device's defaults (look-back or reduce-then-scan) for the
/// others.
pub(crate) fn scan_tuning_from(
    client: &Client,
    lookback: bool,
    get: impl Fn(&str) -> Option<u32>,
) -> ScanTuning {
    let caps = sieve::DeviceCaps::of(client);
    let base = ScanTuning::for_device(&caps, lookback);
    ScanTuning {
        units_per_cube: get("units").unwrap_or(base.units_per_cube),
        elements_per_unit: get("epu").unwrap_or(base.elements_per_unit),
        max_vector_size: get("vec").map_or(base.max_vector_size, |v| v as usize),
        ..base
    }
}

/// The scan operator of a scan-family op.
fn scan_op(op: Op) -> ScanOp {
    match op {
        Op::Cumsum => ScanOp::Sum,
        Op::Cumprod => ScanOp::Prod,
        Op::Cummin => ScanOp::Min,
        Op::Cummax => ScanOp::Max,
        other => panic!("{other} is not a cumulative op (cumsum, cumprod, cummin, cummax)"),
    }
}

/// A case's input as a Burn tensor of its dtype: f32 Float, or Int made from i32 (every value
/// is an integer below 2^24, exact in either).
#[derive(Clone)]
enum Input<const D: usize> {
    Float(Tensor<D>),
    Int(Tensor<D, Int>),
}

impl<const D: usize> Input<D> {
    fn new(data: &[f32], shape: &[usize], int: bool, device: &Device) -> Self {
        if int {
            let ints: Vec<i32> = data.iter().map(|&x| x as i32).collect();
            Input::Int(Tensor::from_data(
                TensorData::new(ints, shape.to_vec()),
                device,
            ))
        } else {
            Input::Float(Tensor::from_data(
                TensorData::new(data.to_vec(), shape.to_vec()),
                device,
            ))
        }
    }

    fn elem_bytes(&self) -> u64 {
        match self {
            Input::Float(x) => x.dtype().size() as u64,
            Input::Int(x) => x.dtype().size() as u64,
        }
    }

    /// sieve's Burn op for `op`, or stock Burn's (`stock`), queued.
    fn apply(&self, dim: usize, op: ScanOp, stock: bool) -> Self {
        match self {
            Input::Float(x) if stock => Input::Float(stock_op(x.clone(), dim, op)),
            Input::Float(x) => Input::Float(sieve_op(x.clone(), dim, op)),
            Input::Int(x) if stock => Input::Int(stock_op(x.clone(), dim, op)),
            Input::Int(x) => Input::Int(sieve_op(x.clone(), dim, op)),
        }
    }

    /// Reads the values back, as f32 (exact: they are integers below 2^24).
    fn values(self) -> Vec<f32> {
        let data = match self {
            Input::Float(x) => x.into_data(),
            Input::Int(x) => x.into_data(),
        };
        data.iter::<f32>().collect()
    }
}

/// sieve's Burn op for `op`.
fn sieve_op<const D: usize, K: SieveKind>(x: Tensor<D, K>, dim: usize, op: ScanOp) -> Tensor<D, K> {
    match op {
        ScanOp::Sum => sieve_burn::cumsum(x, dim),
        ScanOp::Prod => sieve_burn::cumprod(x, dim),
        ScanOp::Min => sieve_burn::cummin(x, dim),
        ScanOp::Max => sieve_burn::cummax(x, dim),
    }
}

/// Stock Burn's op for `op`.
fn stock_op<const D: usize, K: burn::tensor::kind::Ordered>(
    x: Tensor<D, K>,
    dim: usize,
    op: ScanOp,
) -> Tensor<D, K> {
    match op {
        ScanOp::Sum => x.cumsum(dim),
        ScanOp::Prod => x.cumprod(dim),
        ScanOp::Min => x.cummin(dim),
        ScanOp::Max => x.cummax(dim),
    }
}

/// CPU scan of a row-major tensor along `dim` with `op`: each lane through sieve's sequential
/// reference (sums in f64, rounded once per output).
fn reference(data: &[f32], shape: &[usize], dim: usize, op: ScanOp) -> Vec<f32> {
    let len = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let mut out = vec![0.0f32; data.len()];
    let mut lane = Vec::with_capacity(len);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * len + k) * inner + i;
            lane.clear();
            lane.extend((0..len).map(|k| data[at(k)]));
            for (k, v) in scan_rows_op(&lane, 1, len, op, false)
                .into_iter()
                .enumerate()
            {
                out[at(k)] = v;
            }
        }
    }
    out
}
