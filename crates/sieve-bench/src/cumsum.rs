//! cumsum rows: sieve through its Burn op (Auto strategy), sieve's raw kernels with each
//! strategy forced (rows along the last dim), and stock Burn's `Tensor::cumsum`.
//!
//! Data: random values from {-2, -1, 1, 2} as f32. Every partial sum of such data is a small
//! integer, exact in f32 in any association order, so each output is checked *exactly*
//! against the CPU reference before it is timed.

use burn::tensor::{Device, Tensor, TensorData};
use cubecl::prelude::*;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sieve::scan::{self, ScanKind, ScanOptions, ScanProblem, ScanStrategy, ScanTuning};

use crate::case::Case;
use crate::report::{Row, backend_name, mismatch};
use crate::timing;

/// Stock Burn's cumsum kernel sums the whole prefix for every element (O(len^2) per row);
/// above this row length one call takes tens of seconds, so the row is reported as skipped.
const BURN_MAX_ROW: usize = 1 << 20;

pub fn run(
    case: &Case,
    device: &Device,
    client: &Client,
    runs: usize,
    with_burn: bool,
) -> Vec<Row> {
    assert_eq!(
        case.dtype, "f32",
        "cumsum bench: only f32 cases are defined"
    );
    match case.shape.len() {
        1 => run_rank::<1>(case, device, client, runs, with_burn),
        2 => run_rank::<2>(case, device, client, runs, with_burn),
        3 => run_rank::<3>(case, device, client, runs, with_burn),
        r => panic!("cumsum bench: rank {r} is not supported (1..=3)"),
    }
}

fn run_rank<const D: usize>(
    case: &Case,
    device: &Device,
    client: &Client,
    runs: usize,
    with_burn: bool,
) -> Vec<Row> {
    let dim = case.dim();
    assert!(dim < D, "cumsum bench: dim {dim} out of range for rank {D}");
    let n = case.numel();
    let backend = backend_name(&sieve::DeviceCaps::of(client));
    let floor = 8 * n as u64;
    let mut rng = StdRng::seed_from_u64(0x51e7e);
    let data: Vec<f32> = (0..n)
        .map(|_| [-2.0, -1.0, 1.0, 2.0][rng.random_range(0..4)])
        .collect();
    let expected = reference(&data, &case.shape, dim);
    let input = Tensor::<D>::from_data(TensorData::new(data.clone(), case.shape.clone()), device);
    let mut rows = Vec::new();

    // sieve through Burn (what a model calls).
    let row = Row::new(case, "sieve", &backend, floor, &[("strategy", "auto")]);
    let out = sieve_burn::cumsum(input.clone(), dim);
    rows.push(row.checked(
        mismatch(&out.into_data().try_to_vec::<f32>().unwrap(), &expected),
        || {
            timing::time(
                runs,
                || {
                    let _out = sieve_burn::cumsum(input.clone(), dim);
                },
                || {
                    device.sync().expect("device sync");
                },
            )
        },
    ));

    // sieve's raw kernels with each strategy forced (contiguous rows: dim is the last axis).
    if dim + 1 == D {
        let len = case.shape[dim];
        let problem = ScanProblem {
            rows: n / len.max(1),
            len,
        };
        let in_handle = client.create_from_slice(bytemuck::cast_slice(&data));
        let out_handle = client.empty(4 * n.max(1));
        for strategy in raw_strategies(case) {
            let row = Row::new(
                case,
                "sieve",
                &backend,
                floor,
                &[("strategy", strategy.name())],
            );
            let options = ScanOptions {
                strategy,
                tuning: tuning_override(case, client, strategy),
            };
            let launch = || {
                scan::scan(
                    client,
                    &in_handle,
                    &out_handle,
                    problem,
                    sieve::Dtype::F32,
                    ScanKind::Inclusive,
                    options,
                )
            };
            if let Err(e) = launch() {
                rows.push(row.untimed("skipped", e.to_string()));
                continue;
            }
            let got = client.read_one(out_handle.clone()).expect("read back");
            let got: &[f32] = bytemuck::cast_slice(&got[..4 * n]);
            rows.push(row.checked(mismatch(got, &expected), || {
                timing::time(
                    runs,
                    || {
                        launch().expect("scan");
                    },
                    || {
                        cubecl::future::block_on(client.sync()).expect("device sync");
                    },
                )
            }));
        }
    }

    // Stock Burn.
    let row = Row::new(case, "burn", &backend, floor, &[]);
    if !with_burn {
        rows.push(row.untimed("skipped", "--no-burn".into()));
    } else if case.shape[dim] > BURN_MAX_ROW {
        rows.push(row.untimed(
            "skipped",
            format!(
                "stock cumsum is O(len^2) per row; not run for rows longer than {BURN_MAX_ROW}"
            ),
        ));
    } else {
        let out = input.clone().cumsum(dim);
        rows.push(row.checked(
            mismatch(&out.into_data().try_to_vec::<f32>().unwrap(), &expected),
            || {
                timing::time(
                    runs,
                    || {
                        let _out = input.clone().cumsum(dim);
                    },
                    || {
                        device.sync().expect("device sync");
                    },
                )
            },
        ));
    }
    rows
}

/// The forced strategies to time: the one named by `strategy=` (other than `auto`), else both.
fn raw_strategies(case: &Case) -> Vec<ScanStrategy> {
    match case.params.get("strategy").map(String::as_str) {
        Some("reduce_then_scan") => vec![ScanStrategy::ReduceThenScan],
        Some("decoupled_lookback") => vec![ScanStrategy::DecoupledLookback],
        _ => vec![
            ScanStrategy::ReduceThenScan,
            ScanStrategy::DecoupledLookback,
        ],
    }
}

/// A tuning from the case's `units=` / `epu=` (elements per unit) params, over the device's
/// defaults for `strategy`; `None` when the case names neither.
fn tuning_override(case: &Case, client: &Client, strategy: ScanStrategy) -> Option<ScanTuning> {
    let get = |k: &str| case.param_u32(k);
    let (units, epu) = (get("units"), get("epu"));
    if units.is_none() && epu.is_none() {
        return None;
    }
    let caps = sieve::DeviceCaps::of(client);
    let base = ScanTuning::for_device(&caps, strategy == ScanStrategy::DecoupledLookback);
    Some(ScanTuning {
        units_per_cube: units.unwrap_or(base.units_per_cube),
        elements_per_unit: epu.unwrap_or(base.elements_per_unit),
        ..base
    })
}

/// CPU cumsum of a row-major tensor along `dim`.
fn reference(data: &[f32], shape: &[usize], dim: usize) -> Vec<f32> {
    let len = shape[dim];
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let mut out = vec![0.0f32; data.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = 0.0f64;
            for k in 0..len {
                let at = (o * len + k) * inner + i;
                acc += data[at] as f64;
                out[at] = acc as f32;
            }
        }
    }
    out
}
