//! `--host-costs`: what the host spends per call on the steps between a Burn op and its
//! kernels (issue 15, item 4), each timed over many calls on this device: reading the device's
//! capabilities, finding the CubeCL client, an allocation, and one 1024-element cumsum queued
//! raw (one strategy, no sync) and through the Burn op (its queue, then the whole call with
//! the device's sync every 64 calls).

use std::time::Instant;

use burn::tensor::{Device, Tensor};
use cubecl::prelude::*;
use sieve::Dtype;
use sieve::scan::{self, ScanKind, ScanOp, ScanOptions, ScanProblem, ScanStrategy};

/// Microseconds per call of `f`, over `calls` calls.
fn per_call_us(calls: usize, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / calls as f64
}

pub fn print_costs(device: &Device, client: &Client) {
    let line = |what: &str, us: f64| println!("host {what:<58} {us:>9.2} us/call");
    line(
        "DeviceCaps::of",
        per_call_us(10_000, || {
            std::hint::black_box(sieve::DeviceCaps::of(client));
        }),
    );
    line(
        "sieve_burn::cube_client",
        per_call_us(10_000, || {
            std::hint::black_box(sieve_burn::cube_client(device));
        }),
    );
    line(
        "sieve::device::check_dtype(f32)",
        per_call_us(10_000, || {
            std::hint::black_box(sieve::device::check_dtype(client, Dtype::F32)).ok();
        }),
    );
    line(
        "client.empty(4 KiB), dropped",
        per_call_us(10_000, || {
            std::hint::black_box(client.empty(4096));
        }),
    );
    let n = 1024;
    let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let input = client.create_from_slice(bytemuck::cast_slice(&data));
    let output = client.empty(4 * n);
    let sync = || cubecl::future::block_on(client.sync()).expect("device sync");
    for strategy in [
        ScanStrategy::ReduceThenScan,
        ScanStrategy::DecoupledLookback,
    ] {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        let call = || {
            scan::scan_op(
                client,
                &input,
                &output,
                ScanProblem { rows: 1, len: n },
                Dtype::F32,
                ScanOp::Sum,
                ScanKind::Inclusive,
                options,
            )
        };
        if let Err(e) = call() {
            println!("host raw cumsum [1024] {}: not run: {e}", strategy.name());
            continue;
        }
        sync();
        let queue = per_call_us(2_000, || {
            call().expect("raw cumsum");
        });
        sync();
        line(
            &format!("raw cumsum [1024] {}: queue", strategy.name()),
            queue,
        );
        let whole = per_call_us(64 * 30, {
            let mut i = 0;
            move || {
                call().expect("raw cumsum");
                i += 1;
                if i % 64 == 0 {
                    sync();
                }
            }
        });
        line(
            &format!("raw cumsum [1024] {}: with a sync per 64", strategy.name()),
            whole,
        );
    }
    let x = Tensor::<1>::from_data(data.as_slice(), device);
    let queue = per_call_us(2_000, || {
        std::hint::black_box(sieve_burn::cumsum(x.clone(), 0));
    });
    device.sync().expect("device sync");
    line("Burn op cumsum [1024]: queue", queue);
    let whole = per_call_us(64 * 30, {
        let mut i = 0;
        move || {
            std::hint::black_box(sieve_burn::cumsum(x.clone(), 0));
            i += 1;
            if i % 64 == 0 {
                device.sync().expect("device sync");
            }
        }
    });
    line("Burn op cumsum [1024]: with a sync per 64", whole);
}
