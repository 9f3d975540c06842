//! The device scan against its CPU twin: every dtype the device has, both strategies, both
//! kinds; odd and tiny lengths, every length across one tile boundary, many rows (a grid
//! past 65,535 cubes), rows beyond 2^24, adversarial floats, and run-to-run determinism.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use cubecl::server::Handle;
use half::f16;
use rand::{Rng, rngs::StdRng};
use sieve::scan::{self, ScanKind, ScanOptions, ScanProblem, ScanStrategy, ScanTuning, reference};
use sieve::{DeviceCaps, Dtype};

const KINDS: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];

/// Strategies to test on this device: reduce-then-scan always; the look-back where the
/// runtime promises forward progress and has 64-bit atomics (CUDA, HIP). Forcing it elsewhere
/// is allowed but not safe: on software Vulkan (lavapipe) it deadlocks.
fn strategies(caps: &DeviceCaps) -> Vec<ScanStrategy> {
    eprintln!("device: {caps:?}");
    let mut s = vec![ScanStrategy::ReduceThenScan];
    if caps.forward_progress && caps.atomic_u64 {
        s.push(ScanStrategy::DecoupledLookback);
    }
    s
}

/// Tiny tiles (one plane-multiple of units, one element each) so short rows cross many tile
/// boundaries and the tile sums recurse.
fn tiny_tuning(caps: &DeviceCaps) -> ScanTuning {
    ScanTuning {
        units_per_cube: caps.plane_size_max.max(4).next_power_of_two(),
        elements_per_unit: 1,
        max_vector_size: 4,
        use_planes: caps.plane_ops,
        // Integer rows of two tiles scan in one launch (`scan_row_tiles_kernel`), of three or
        // more in three.
        looped_max_tiles: 2,
    }
}

fn run(
    client: &Client,
    input: &Handle,
    rows: usize,
    len: usize,
    dtype: Dtype,
    kind: ScanKind,
    options: ScanOptions,
) -> Handle {
    // Every byte 0xFF (NaN for floats, -1 / MAX for ints), so unwritten outputs show.
    let output = poisoned(client, rows * len * dtype.size_bytes(), 0xFFu8);
    scan::scan(
        client,
        input,
        &output,
        ScanProblem { rows, len },
        dtype,
        kind,
        options,
    )
    .expect("scan failed");
    output
}

/// Integer scans are exact: compare every element with the CPU twin, both kinds.
fn check_exact<T>(
    client: &Client,
    data: &[T],
    rows: usize,
    len: usize,
    dtype: Dtype,
    options: ScanOptions,
    case: &str,
) where
    T: reference::ScanElement + bytemuck::Pod + PartialEq + std::fmt::Debug,
{
    let input = upload(client, data);
    for kind in KINDS {
        let out = run(client, &input, rows, len, dtype, kind, options);
        let got: Vec<T> = download(client, out, rows * len);
        let want = reference::scan_rows(data, rows, len, kind == ScanKind::Exclusive);
        assert_same(
            &got,
            &want,
            &format!("{case} {dtype} {kind:?} {options:?} rows={rows} len={len}"),
        );
    }
}

fn check_u32(
    client: &Client,
    data: &[u32],
    rows: usize,
    len: usize,
    options: ScanOptions,
    case: &str,
) {
    check_exact(client, data, rows, len, Dtype::U32, options, case);
}

/// Reference and error scale of a float scan, in f64.
fn float_reference(data: &[f64], rows: usize, len: usize, exclusive: bool) -> (Vec<f64>, Vec<f64>) {
    let want = reference::scan_rows(
        &data.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        rows,
        len,
        exclusive,
    )
    .into_iter()
    .map(|x| x as f64)
    .collect::<Vec<_>>();
    // Exact f64 sums, so the tolerance is against the true value, not the f32 reference.
    let mut exact = Vec::with_capacity(data.len());
    let mut scale = Vec::with_capacity(data.len());
    for row in data.chunks(len.max(1)).take(rows) {
        let (mut s, mut m) = (0.0f64, 0.0f64);
        for &x in row {
            if exclusive {
                exact.push(s);
                scale.push(m);
            }
            s += x;
            m += x.abs();
            if !exclusive {
                exact.push(s);
                scale.push(m);
            }
        }
    }
    // Where the f32 reference says NaN or inf, keep that: overflow to inf happens in f32.
    let exact = exact
        .into_iter()
        .zip(&want)
        .map(|(e, &w)| if w.is_finite() { e } else { w })
        .collect();
    (exact, scale)
}

fn check_f32(
    client: &Client,
    data: &[f32],
    rows: usize,
    len: usize,
    options: ScanOptions,
    case: &str,
) {
    let input = upload(client, data);
    let wide: Vec<f64> = data.iter().map(|&x| x as f64).collect();
    for kind in KINDS {
        let out = run(client, &input, rows, len, Dtype::F32, kind, options);
        let got: Vec<f64> = download::<f32>(client, out, rows * len)
            .into_iter()
            .map(|x| x as f64)
            .collect();
        let (want, scale) = float_reference(&wide, rows, len, kind == ScanKind::Exclusive);
        assert_close(
            &got,
            &want,
            &scale,
            1e-5,
            1e-6,
            &format!("{case} f32 {kind:?} {options:?} rows={rows} len={len}"),
        );
    }
}

fn check_f16(
    client: &Client,
    data: &[f16],
    rows: usize,
    len: usize,
    options: ScanOptions,
    case: &str,
) {
    let input = upload(client, data);
    let wide: Vec<f64> = data.iter().map(|x| x.to_f64()).collect();
    for kind in KINDS {
        let out = run(client, &input, rows, len, Dtype::F16, kind, options);
        let got: Vec<f64> = download::<f16>(client, out, rows * len)
            .into_iter()
            .map(|x| x.to_f64())
            .collect();
        let (want, scale) = float_reference(&wide, rows, len, kind == ScanKind::Exclusive);
        // One f16 rounding of the output (2^-11 relative) on top of f32 accumulation.
        assert_close(
            &got,
            &want,
            &scale,
            1e-3,
            1e-3,
            &format!("{case} f16 {kind:?} {options:?} rows={rows} len={len}"),
        );
    }
}

/// Random data of every supported dtype for one shape, checked under `options`.
fn check_all_dtypes(
    client: &Client,
    caps: &DeviceCaps,
    rng: &mut StdRng,
    rows: usize,
    len: usize,
    options: ScanOptions,
    case: &str,
) {
    let n = rows * len;
    check_u32(
        client,
        &random_u32(rng, n, u32::MAX),
        rows,
        len,
        options,
        case,
    );
    check_exact(
        client,
        &(0..n)
            .map(|_| rng.random_range(-1000..=1000))
            .collect::<Vec<i32>>(),
        rows,
        len,
        Dtype::I32,
        options,
        case,
    );
    check_f32(
        client,
        &(0..n)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect::<Vec<_>>(),
        rows,
        len,
        options,
        case,
    );
    if caps.supports(Dtype::I64) && options.strategy != ScanStrategy::DecoupledLookback {
        check_exact(
            client,
            &(0..n)
                .map(|_| rng.random_range(-(1i64 << 40)..(1i64 << 40)))
                .collect::<Vec<i64>>(),
            rows,
            len,
            Dtype::I64,
            options,
            case,
        );
    }
    if caps.supports(Dtype::F16) {
        check_f16(
            client,
            &(0..n)
                .map(|_| f16::from_f32(rng.random_range(-1.0f32..1.0)))
                .collect::<Vec<_>>(),
            rows,
            len,
            options,
            case,
        );
    }
}

#[test]
fn odd_and_tiny_lengths() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("odd_and_tiny_lengths");
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        for &(rows, len) in &[
            (1, 0),
            (0, 5),
            (1, 1),
            (1, 2),
            (3, 31),
            (2, 33),
            (1, 4097),
            (5, 127),
            (3, 8191),
            (1, 65_537),
            (7, 10_007),
        ] {
            check_all_dtypes(&client, &caps, &mut rng, rows, len, options, "odd_and_tiny");
        }
    }
}

#[test]
fn every_length_across_a_tile_boundary() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("every_length_across_a_tile_boundary");
    let tuning = tiny_tuning(&caps);
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: Some(tuning),
        };
        // With vectors of 4 a tile holds 4 * units elements, with scalars `units`.
        let tile = tuning.units_per_cube as usize;
        for len in tile - 1..=2 * tile + 1 {
            let data = random_u32(&mut rng, 2 * len, 1000);
            check_u32(
                &client,
                &data,
                2,
                len,
                options,
                "tile boundary (scalar/vector)",
            );
        }
        for len in [4 * tile - 4, 4 * tile, 4 * tile + 4, 8 * tile + 4] {
            let data = random_u32(&mut rng, 3 * len, 1000);
            check_u32(
                &client,
                &data,
                3,
                len,
                options,
                "tile boundary (vector of 4)",
            );
        }
        // Deep recursion of the tile sums: len / tile^3 > 1.
        let len = tile * tile * tile * 2 + 3;
        check_all_dtypes(
            &client,
            &caps,
            &mut rng,
            1,
            len,
            options,
            "three levels of tile sums",
        );
    }
}

#[test]
fn many_rows_need_a_split_grid() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("many_rows_need_a_split_grid");
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        // 70,000 rows of one tile each: more cubes than one grid dimension holds.
        check_u32(
            &client,
            &random_u32(&mut rng, 70_000 * 3, 50),
            70_000,
            3,
            options,
            "many rows",
        );
        check_f32(
            &client,
            &(0..66_000 * 5)
                .map(|_| rng.random_range(-1.0f32..1.0))
                .collect::<Vec<_>>(),
            66_000,
            5,
            options,
            "many rows",
        );
    }
}

#[test]
fn ones_count_exactly_past_65535_and_2_pow_24() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        // Stock Burn's cumsum of 2^16 ones ended in 65535 on software Vulkan.
        let n = 1 << 16;
        let input = upload(&client, &vec![1.0f32; n]);
        let out = run(
            &client,
            &input,
            1,
            n,
            Dtype::F32,
            ScanKind::Inclusive,
            options,
        );
        let got: Vec<f32> = download(&client, out, n);
        assert_eq!(got[n - 1], n as f32, "{strategy:?}: cumsum of 2^16 ones");
        assert!(
            got.iter().enumerate().all(|(i, &v)| v == (i + 1) as f32),
            "{strategy:?}: ones"
        );

        // A row longer than 2^24 (where f32 stops counting): u32 ones, exact.
        let n = (1 << 24) + 5;
        let input = upload(&client, &vec![1u32; n]);
        let out = run(
            &client,
            &input,
            1,
            n,
            Dtype::U32,
            ScanKind::Exclusive,
            options,
        );
        let got: Vec<u32> = download(&client, out, n);
        let bad = got.iter().enumerate().find(|&(i, &v)| v != i as u32);
        assert!(
            bad.is_none(),
            "{strategy:?}: exclusive count of 2^24+5 ones: first bad {bad:?}"
        );
    }
}

#[test]
fn adversarial_floats() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("adversarial_floats");
    let n = 5000;
    let cases: Vec<(&str, Vec<f32>)> = vec![
        ("all equal", vec![0.25; n]),
        ("sorted", (0..n).map(|i| i as f32 * 0.5).collect()),
        ("reversed", (0..n).rev().map(|i| i as f32 * 0.5).collect()),
        (
            "signed zeros",
            (0..n)
                .map(|i| if i % 2 == 0 { 0.0 } else { -0.0 })
                .collect(),
        ),
        (
            "nan in the middle",
            (0..n)
                .map(|i| if i == 2500 { f32::NAN } else { 1.0 })
                .collect(),
        ),
        (
            "inf then -inf",
            (0..n)
                .map(|i| match i {
                    100 => f32::INFINITY,
                    4000 => f32::NEG_INFINITY,
                    _ => rng.random_range(-1.0..1.0),
                })
                .collect(),
        ),
        (
            "huge cancellations",
            (0..n)
                .map(|i| if i % 2 == 0 { 1e30 } else { -1e30 })
                .collect(),
        ),
    ];
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: None,
        };
        for (name, data) in &cases {
            check_f32(&client, data, 1, n, options, name);
            check_f32(&client, data, 5, n / 5, options, name);
        }
    }
}

#[test]
fn same_bits_on_every_run() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("same_bits_on_every_run");
    let n = 300_001;
    let data: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let input = upload(&client, &data);
    for strategy in strategies(&caps) {
        let options = ScanOptions {
            strategy,
            tuning: Some(tiny_tuning(&caps)),
        };
        let bits = || -> Vec<u32> {
            let out = run(
                &client,
                &input,
                1,
                n,
                Dtype::F32,
                ScanKind::Inclusive,
                options,
            );
            download(&client, out, n)
        };
        let first = bits();
        for _ in 0..3 {
            let again = bits();
            assert_same(
                &again,
                &first,
                &format!("{strategy:?}: bits differ between runs"),
            );
        }
    }
}

#[test]
fn planes_off_fallback_matches() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, _) = rng("planes_off_fallback_matches");
    let tuning = ScanTuning {
        use_planes: false,
        ..ScanTuning::for_device(&caps, false)
    };
    let options = ScanOptions {
        strategy: ScanStrategy::ReduceThenScan,
        tuning: Some(tuning),
    };
    for &(rows, len) in &[(1, 1), (2, 33), (1, 10_007), (3, 70_001)] {
        check_all_dtypes(&client, &caps, &mut rng, rows, len, options, "planes off");
    }
}

#[test]
fn bad_arguments_are_named() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let input = upload(&client, &[1u32; 8]);
    let output = client.empty(32);
    let bad = ScanTuning {
        units_per_cube: 100,
        ..ScanTuning::for_device(&caps, false)
    };
    let err = scan::scan(
        &client,
        &input,
        &output,
        ScanProblem { rows: 1, len: 8 },
        Dtype::U32,
        ScanKind::Inclusive,
        ScanOptions {
            strategy: ScanStrategy::ReduceThenScan,
            tuning: Some(bad),
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("units_per_cube"), "{err}");
    let err = scan::scan(
        &client,
        &input,
        &output,
        ScanProblem { rows: 1, len: 8 },
        Dtype::I64,
        ScanKind::Inclusive,
        ScanOptions {
            strategy: ScanStrategy::DecoupledLookback,
            tuning: None,
        },
    );
    if caps.supports(Dtype::I64) {
        assert!(err.unwrap_err().to_string().contains("decoupled_lookback"));
    } else {
        assert!(err.unwrap_err().to_string().contains("i64"));
    }
}
