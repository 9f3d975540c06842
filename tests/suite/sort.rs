//! The device radix sort against its CPU twin: both strategies, both orders, f32 (NaN, +-0.0,
//! +-inf, heavy duplicates), i32, u32, i64 and (where the device has it) f16 keys; stability checked through the permutation;
//! tiny, odd and prime lengths, every length across one LSD tile boundary, many rows;
//! determinism; the errors bad calls get.

use crate::common;

use common::*;
use cubecl::prelude::Client;
use rand::{Rng, rngs::StdRng};
use sieve::sort::{
    self, SortIo, SortOptions, SortOrder, SortProblem, SortStrategy, SortTuning, reference,
};
use sieve::{DeviceCaps, Dtype};

const ORDERS: [SortOrder; 2] = [SortOrder::Ascending, SortOrder::Descending];
const POISON: u32 = 0xDEAD_BEEF;

/// Small device-wide tiles (one plane of units, 2-3 keys each) so short rows cross many tiles.
fn tiny_tuning(client: &Client) -> SortTuning {
    let caps = DeviceCaps::of(client);
    SortTuning {
        units_per_cube: caps.plane_size_max.max(4).next_power_of_two(),
        elements_per_unit: 2,
        onesweep_elements_per_unit: 3,
        keys_only_elements_per_unit: 3,
        onesweep_keys_only_elements_per_unit: 2,
        // Not a power of two: the counting bins' copies by `UNIT_POS % parts`.
        count_parts: 3,
        lsd_count_parts: 3,
        // Batches of 3 loads a unit in the counting pass: whole batches, then the rest.
        count_loads: 3,
        ..SortTuning::for_device(&caps)
    }
}

/// The device's default tuning and its variants (below).
fn default_variants(client: &Client, strategy: SortStrategy) -> Vec<Option<SortTuning>> {
    tuning_variants(client, strategy, None)
}

/// `tuning` (`None`: the default); for the device-wide strategies `tuning` with keys held the
/// other way ([`SortTuning::lsd_rereads`], [`SortTuning::onesweep_rereads`],
/// [`SortTuning::keys_only_rereads`]) and the counting passes' loads ([`SortTuning::count_loads`])
/// one at a time, and with f32 keys' plain map switched ([`SortTuning::plain_float_keys`]);
/// for `Onesweep` also with another look-back window.
fn tuning_variants(
    client: &Client,
    strategy: SortStrategy,
    tuning: Option<SortTuning>,
) -> Vec<Option<SortTuning>> {
    if strategy == SortStrategy::InCube {
        return vec![tuning];
    }
    let base = tuning.unwrap_or_else(|| SortTuning::for_device(&DeviceCaps::of(client)));
    let mut tunings = vec![
        tuning,
        Some(SortTuning {
            lsd_rereads: !base.lsd_rereads,
            onesweep_rereads: !base.onesweep_rereads,
            keys_only_rereads: !base.keys_only_rereads,
            // And the counting passes loading one key a unit at a time (or 5).
            count_loads: if base.count_loads == 1 { 5 } else { 1 },
            ..base
        }),
        // f32 keys mapped by the sign flip where the sort met no -0.0 or NaN.
        Some(SortTuning {
            plain_float_keys: !base.plain_float_keys,
            ..base
        }),
    ];
    if strategy == SortStrategy::Onesweep {
        tunings.push(Some(SortTuning {
            walk_window: if base.walk_window == 1 { 3 } else { 1 },
            ..base
        }));
    }
    tunings
}

/// Names a tuning of [`tuning_variants`] in a failure message.
fn variant(tuning: &Option<SortTuning>) -> String {
    match tuning {
        None => "default tuning".into(),
        Some(t) => format!(
            "window {} count loads {} rereads lsd {} onesweep {} keys only {} plain floats {}",
            t.walk_window,
            t.count_loads,
            t.lsd_rereads,
            t.onesweep_rereads,
            t.keys_only_rereads,
            t.plain_float_keys
        ),
    }
}

/// Sorts `keys` (32-bit, given as raw bits) and returns (sorted key bits, permutation).
fn run(
    client: &Client,
    bits: &[u32],
    dtype: Dtype,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
) -> (Vec<u32>, Vec<i32>) {
    let (keys, indices) =
        run_sort(client, bits, dtype, problem, order, options, true).expect("sort failed");
    (keys, indices.expect("indices asked"))
}

/// [`run`], the permutation only `with_indices` (else the sort writes the keys alone), and the
/// sort's error returned.
fn run_sort(
    client: &Client,
    bits: &[u32],
    dtype: Dtype,
    problem: SortProblem,
    order: SortOrder,
    options: SortOptions,
    with_indices: bool,
) -> Result<(Vec<u32>, Option<Vec<i32>>), sieve::SieveError> {
    let n = problem.rows * problem.len;
    let keys = upload(client, bits);
    let keys_out = poisoned(client, n, POISON);
    let indices_out = poisoned(client, n, POISON);
    sort::sort(
        client,
        SortIo {
            keys: &keys,
            key_dtype: dtype,
            keys_out: Some(&keys_out),
            indices_out: with_indices.then_some(&indices_out),
            index_dtype: Dtype::I32,
        },
        problem,
        order,
        options,
    )?;
    Ok((
        download(client, keys_out, n),
        with_indices.then(|| download(client, indices_out, n)),
    ))
}

/// Checks one sort against the reference permutation (stability included: the permutation
/// of a stable sort is unique) and the keys against the input moved by it, bit for bit.
fn check(got: &(Vec<u32>, Vec<i32>), bits: &[u32], want: &[usize], len: usize, case: &str) {
    let want_indices: Vec<i32> = want.iter().map(|&i| i as i32).collect();
    assert_same(&got.1, &want_indices, &format!("{case}: permutation"));
    let want_keys: Vec<u32> = want
        .iter()
        .enumerate()
        .map(|(slot, &i)| bits[(slot / len.max(1)) * len + i])
        .collect();
    assert_same(&got.0, &want_keys, &format!("{case}: keys (bits)"));
}

fn special_floats(rng: &mut StdRng, n: usize) -> Vec<f32> {
    let specials = [
        f32::NAN,
        -f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        f32::MIN_POSITIVE,
        -f32::MAX,
    ];
    (0..n)
        .map(|_| {
            if rng.random_bool(0.3) {
                specials[rng.random_range(0..specials.len())]
            } else {
                rng.random_range(-4i32..4) as f32 * 0.5
            }
        })
        .collect()
}

/// The longest row the in-cube sort takes on this device.
fn in_cube_capacity(client: &Client) -> usize {
    let caps = DeviceCaps::of(client);
    SortTuning::for_device(&caps).in_cube_capacity(&caps)
}

/// Every strategy this device runs: `Onesweep` only where cubes have forward progress.
fn strategies() -> Vec<SortStrategy> {
    let mut all = vec![SortStrategy::InCube];
    all.extend(device_wide());
    all
}

/// The device-wide strategies this device runs (the one-cube sort aside).
fn device_wide() -> Vec<SortStrategy> {
    let mut all = vec![SortStrategy::Lsd];
    if DeviceCaps::of(&client()).forward_progress {
        all.push(SortStrategy::Onesweep);
    }
    all
}

#[test]
fn floats_in_pytorch_order_both_directions() {
    let client = client();
    let (mut rng, seed) = rng("floats_in_pytorch_order_both_directions");
    for (rows, len) in [(1, 1), (3, 31), (2, 33), (5, 128), (1, 997), (2, 4097)] {
        let keys = special_floats(&mut rng, rows * len);
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        for order in ORDERS {
            let want = reference::sort_rows(&keys, rows, len, order == SortOrder::Descending);
            for strategy in strategies() {
                if strategy == SortStrategy::InCube && len > in_cube_capacity(&client) {
                    continue;
                }
                for tuning in default_variants(&client, strategy) {
                    let case = format!(
                        "seed {seed}: [{rows}, {len}] {order:?} {strategy:?} {}",
                        variant(&tuning)
                    );
                    let options = SortOptions { strategy, tuning };
                    let got = run(
                        &client,
                        &bits,
                        Dtype::F32,
                        SortProblem { rows, len },
                        order,
                        options,
                    );
                    check(&got, &bits, &want, len, &case);
                }
            }
        }
    }
}

/// The device-wide passes map f32 keys by the sign flip alone where the sort's first read of
/// the keys met no -0.0 and no NaN. One +0.0 early and one -0.0 (equal keys: input order) or
/// one negative NaN (the largest key) in the last tile of the last row must still switch every
/// pass to the full map; rows without any take the plain one.
#[test]
fn a_late_special_key_switches_every_pass() {
    let client = client();
    let (mut rng, seed) = rng("a_late_special_key_switches_every_pass");
    let (rows, len) = (3, 3 * in_cube_capacity(&client) + 5);
    for last in [None, Some(-0.0f32), Some(-f32::NAN), Some(f32::NAN)] {
        let mut keys: Vec<f32> = (0..rows * len)
            .map(|_| rng.random_range(-8i32..8) as f32 * 0.25)
            .map(|k| if k == 0.0 { 0.5 } else { k })
            .collect();
        if let Some(special) = last {
            keys[len / 2] = 0.0;
            keys[rows * len - 2] = special;
        }
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        for order in ORDERS {
            let want = reference::sort_rows(&keys, rows, len, order == SortOrder::Descending);
            for strategy in device_wide() {
                for tuning in default_variants(&client, strategy) {
                    let case = format!(
                        "seed {seed}: [{rows}, {len}] last {last:?} {order:?} {strategy:?} {}",
                        variant(&tuning)
                    );
                    let options = SortOptions { strategy, tuning };
                    let problem = SortProblem { rows, len };
                    let got = run(&client, &bits, Dtype::F32, problem, order, options);
                    check(&got, &bits, &want, len, &case);
                }
            }
        }
    }
}

#[test]
fn integers_with_duplicates() {
    let client = client();
    let (mut rng, seed) = rng("integers_with_duplicates");
    let (rows, len) = (3, 1031);
    let n = rows * len;
    let signed: Vec<i32> = (0..n)
        .map(|_| {
            if rng.random_bool(0.5) {
                rng.random_range(-3..3)
            } else {
                rng.random()
            }
        })
        .collect();
    let unsigned: Vec<u32> = signed.iter().map(|&k| k as u32).collect();
    for order in ORDERS {
        let descending = order == SortOrder::Descending;
        for (strategy, tuning) in strategies().into_iter().flat_map(|s| {
            default_variants(&client, s)
                .into_iter()
                .map(move |t| (s, t))
        }) {
            let options = SortOptions { strategy, tuning };
            if strategy == SortStrategy::InCube && len > in_cube_capacity(&client) {
                continue;
            }
            let case = format!(
                "seed {seed}: i32 {order:?} {strategy:?} {}",
                variant(&tuning)
            );
            let want = reference::sort_rows(&signed, rows, len, descending);
            let got = run(
                &client,
                &unsigned,
                Dtype::I32,
                SortProblem { rows, len },
                order,
                options,
            );
            check(&got, &unsigned, &want, len, &case);
            let case = format!(
                "seed {seed}: u32 {order:?} {strategy:?} {}",
                variant(&tuning)
            );
            let want = reference::sort_rows(&unsigned, rows, len, descending);
            let got = run(
                &client,
                &unsigned,
                Dtype::U32,
                SortProblem { rows, len },
                order,
                options,
            );
            check(&got, &unsigned, &want, len, &case);
        }
    }
}

#[test]
fn every_length_across_an_lsd_tile_boundary() {
    let client = client();
    let (mut rng, seed) = rng("every_length_across_an_lsd_tile_boundary");
    let tuning = tiny_tuning(&client);
    let tile = tuning.tile();
    for len in (tile - 2)..=(2 * tile + 2) {
        let rows = 2;
        let keys: Vec<i32> = (0..rows * len).map(|_| rng.random_range(-5..5)).collect();
        let bits: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        let want = reference::sort_rows(&keys, rows, len, false);
        for strategy in device_wide() {
            for tuning in tuning_variants(&client, strategy, Some(tuning)) {
                let got = run(
                    &client,
                    &bits,
                    Dtype::I32,
                    SortProblem { rows, len },
                    SortOrder::Ascending,
                    SortOptions { strategy, tuning },
                );
                let case = format!("seed {seed}: len {len} {strategy:?} {}", variant(&tuning));
                check(&got, &bits, &want, len, &case);
            }
        }
    }
}

/// Many tiles a row at tiny and default tunings (look-back windows of 1 and 3), every
/// row's look-back chain long: rows of runs of equal keys (every digit's count spread over
/// many tiles), both orders, for every device-wide strategy; and a forced `Onesweep` refused
/// with its reason where cubes lack forward progress.
#[test]
fn many_tiles_per_row_and_onesweep_refusal() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("many_tiles_per_row_and_onesweep_refusal");
    let tuning = tiny_tuning(&client);
    let (rows, len) = (3, 40 * tuning.tile() + 5);
    let keys: Vec<f32> = (0..rows * len)
        .map(|i| match (i / 97) % 3 {
            0 => (i / 500) as f32,
            1 => rng.random_range(-4i32..4) as f32,
            _ => rng.random(),
        })
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    for order in ORDERS {
        let want = reference::sort_rows(&keys, rows, len, order == SortOrder::Descending);
        for strategy in device_wide() {
            let mut tunings = tuning_variants(&client, strategy, Some(tuning));
            tunings.extend(default_variants(&client, strategy));
            if strategy == SortStrategy::Lsd {
                // The tiles' offsets scanned (0, and one tile short of this row) and summed by
                // each scatter cube (exactly this row's tiles), tiny and default tiles.
                let tiles = len.div_ceil(tuning.tile()) as u32;
                for max in [0, tiles - 1, tiles] {
                    tunings.push(Some(SortTuning {
                        lsd_summed_max_tiles: max,
                        ..tuning
                    }));
                }
                tunings.push(Some(SortTuning {
                    lsd_summed_max_tiles: 0,
                    ..SortTuning::for_device(&caps)
                }));
            }
            for tuning in tunings {
                let got = run(
                    &client,
                    &bits,
                    Dtype::F32,
                    SortProblem { rows, len },
                    order,
                    SortOptions { strategy, tuning },
                );
                let case = format!("seed {seed}: {order:?} {strategy:?} tuning {tuning:?}");
                check(&got, &bits, &want, len, &case);
            }
        }
    }
    // Refused before anything is allocated or read: the keys buffer is a placeholder. Without
    // forward progress every onesweep is refused; with it, rows of 2^30 keys and more (a
    // status word counts below 2^30).
    let keys = client.empty(64);
    let (len, reason) = if caps.forward_progress {
        (1 << 30, "2^30")
    } else {
        (4, "forward progress")
    };
    let e = sort::sort(
        &client,
        SortIo {
            keys: &keys,
            key_dtype: Dtype::F32,
            keys_out: None,
            indices_out: None,
            index_dtype: Dtype::I32,
        },
        SortProblem { rows: 1, len },
        SortOrder::Ascending,
        SortOptions {
            strategy: SortStrategy::Onesweep,
            tuning: None,
        },
    )
    .expect_err("onesweep is refused")
    .to_string();
    assert!(e.contains("options.strategy") && e.contains(reason), "{e}");
}

#[test]
fn all_equal_sorted_and_reversed() {
    let client = client();
    let len = 2001;
    let inputs: [(&str, Vec<f32>); 3] = [
        ("all equal", vec![2.5; len]),
        ("sorted", (0..len).map(|i| i as f32).collect()),
        ("reversed", (0..len).rev().map(|i| i as f32).collect()),
    ];
    for (name, keys) in inputs {
        let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
        for order in ORDERS {
            let want = reference::sort_rows(&keys, 1, len, order == SortOrder::Descending);
            for strategy in strategies() {
                if strategy == SortStrategy::InCube && len > in_cube_capacity(&client) {
                    continue;
                }
                for tuning in default_variants(&client, strategy) {
                    let got = run(
                        &client,
                        &bits,
                        Dtype::F32,
                        SortProblem { rows: 1, len },
                        order,
                        SortOptions { strategy, tuning },
                    );
                    let case = format!("{name} {order:?} {strategy:?} {}", variant(&tuning));
                    check(&got, &bits, &want, len, &case);
                }
            }
        }
    }
}

#[test]
fn many_short_rows() {
    let client = client();
    let (mut rng, seed) = rng("many_short_rows");
    let (rows, len) = (66_000, 3);
    let keys: Vec<f32> = (0..rows * len)
        .map(|_| rng.random_range(-3i32..3) as f32)
        .collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    let want = reference::sort_rows(&keys, rows, len, true);
    // Short rows take the in-cube sort (one cube per row: a grid past 65,535 cubes); the LSD
    // passes' row handling is covered by the other tests' multi-row cases.
    let strategy = SortStrategy::InCube;
    let got = run(
        &client,
        &bits,
        Dtype::F32,
        SortProblem { rows, len },
        SortOrder::Descending,
        SortOptions {
            strategy,
            tuning: None,
        },
    );
    check(
        &got,
        &bits,
        &want,
        len,
        &format!("seed {seed}: {strategy:?}"),
    );
}

#[test]
fn deterministic_and_keys_only() {
    let client = client();
    let (mut rng, _) = rng("deterministic_and_keys_only");
    let len = 50_000;
    let keys: Vec<f32> = (0..len).map(|_| rng.random()).collect();
    let bits: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    let input = upload(&client, &bits);
    let once = || {
        let out = poisoned(&client, len, POISON);
        sort::sort(
            &client,
            SortIo {
                keys: &input,
                key_dtype: Dtype::F32,
                keys_out: Some(&out),
                indices_out: None,
                index_dtype: Dtype::I32,
            },
            SortProblem { rows: 1, len },
            SortOrder::Ascending,
            SortOptions::default(),
        )
        .expect("sort failed");
        download::<u32>(&client, out, len)
    };
    let a = once();
    assert_eq!(a, once(), "two runs differ");
    let want = reference::sort_rows(&keys, 1, len, false);
    let want: Vec<u32> = want.iter().map(|&i| bits[i]).collect();
    assert_same(&a, &want, "keys only");
}

/// A tuning the sort accepts runs: for each device-wide strategy, with positions and keys
/// alone, the widest tile (keys a unit) whose `SortTuning::device_tile_bytes` fits the device's
/// shared memory sorts a row of a few tiles correctly. At 128 units a key a unit adds at most
/// as much shared memory as a digit-sized array (1 KiB), so the widest tile sits within one
/// such array of the limit: an account that leaves out an array a kernel allocates fails here
/// at launch. Devices whose widest tile at 128 units would pass 64 keys a unit (CUDA's 227 KiB)
/// take more units instead, so the kernels stay quick to compile; there the test is weaker.
#[test]
fn widest_accepted_tiles_run() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("widest_accepted_tiles_run");
    let narrow_at = |units: u32| SortTuning {
        units_per_cube: units,
        elements_per_unit: 1,
        onesweep_elements_per_unit: 1,
        keys_only_elements_per_unit: 1,
        onesweep_keys_only_elements_per_unit: 1,
        ..SortTuning::for_device(&caps)
    };
    let units = [128, 256, 512, 1024]
        .map(|u| caps.cube_units(u))
        .into_iter()
        .find(|&u| {
            let wide = SortTuning {
                elements_per_unit: 65,
                ..narrow_at(u)
            };
            wide.device_tile_bytes(&caps) > caps.max_shared_bytes
        })
        .unwrap_or_else(|| caps.max_cube_units());
    let narrow = narrow_at(units);
    type Field = fn(&mut SortTuning) -> &mut u32;
    let tiles: [(&str, SortStrategy, bool, Field); 4] = [
        ("Lsd with positions", SortStrategy::Lsd, true, |t| {
            &mut t.elements_per_unit
        }),
        ("Lsd keys alone", SortStrategy::Lsd, false, |t| {
            &mut t.keys_only_elements_per_unit
        }),
        (
            "onesweep with positions",
            SortStrategy::Onesweep,
            true,
            |t| &mut t.onesweep_elements_per_unit,
        ),
        ("onesweep keys alone", SortStrategy::Onesweep, false, |t| {
            &mut t.onesweep_keys_only_elements_per_unit
        }),
    ];
    for (name, strategy, with_indices, field) in tiles {
        if !device_wide().contains(&strategy) {
            continue;
        }
        let (keys_a_unit, widest) = (1..=1024u32)
            .map(|keys| {
                let mut t = narrow;
                *field(&mut t) = keys;
                (keys, t)
            })
            .take_while(|(_, t)| t.device_tile_bytes(&caps) <= caps.max_shared_bytes)
            .last()
            .expect("a tile of one key a unit fits");
        let len = 2 * (units * keys_a_unit) as usize + 3;
        let keys: Vec<i32> = (0..len).map(|_| rng.random_range(-1000..1000)).collect();
        let bits: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        let want = reference::sort_rows(&keys, 1, len, false);
        let case = format!("seed {seed}: {name}, {units} units x {keys_a_unit} keys");
        let options = SortOptions {
            strategy,
            tuning: Some(widest),
        };
        let problem = SortProblem { rows: 1, len };
        let order = SortOrder::Ascending;
        let (got_keys, got_indices) = run_sort(
            &client,
            &bits,
            Dtype::I32,
            problem,
            order,
            options,
            with_indices,
        )
        .unwrap_or_else(|e| panic!("{case}: {e}"));
        match got_indices {
            Some(indices) => check(&(got_keys, indices), &bits, &want, len, &case),
            None => {
                let want_keys: Vec<u32> = want.iter().map(|&i| bits[i]).collect();
                assert_same(&got_keys, &want_keys, &format!("{case}: keys (bits)"));
            }
        }
    }
}

/// i64 keys (two radix words, sorted one after the other), f16 and bf16 keys (widened to
/// f32) on rows that cross LSD tiles, both orders; keys checked word for word. f16 and bf16
/// only where the device has them (software Vulkan has neither: the refusal is checked there
/// instead).
#[test]
fn wide_and_half_keys() {
    let client = client();
    let caps = DeviceCaps::of(&client);
    let (mut rng, seed) = rng("wide_and_half_keys");
    let (rows, len) = (3, 301);
    let n = rows * len;
    let specials = [
        i64::MIN,
        i64::MAX,
        -1,
        0,
        1,
        1 << 32,
        -(1 << 32),
        (1 << 32) - 1,
    ];
    let wide: Vec<i64> = (0..n)
        .map(|_| match rng.random_range(0..3) {
            0 => specials[rng.random_range(0..specials.len())],
            // Equal high words, so the low words decide (and the reverse).
            1 => (rng.random_range(-2i64..2) << 32) | rng.random_range(0..4i64),
            _ => rng.random(),
        })
        .collect();
    let halves: Vec<half::f16> = special_floats(&mut rng, n)
        .into_iter()
        .map(half::f16::from_f32)
        .collect();
    let brains: Vec<half::bf16> = special_floats(&mut rng, n)
        .into_iter()
        .map(half::bf16::from_f32)
        .collect();
    for order in ORDERS {
        let descending = order == SortOrder::Descending;
        let mut runs = vec![SortOptions::default()];
        runs.extend(device_wide().into_iter().map(|strategy| SortOptions {
            strategy,
            tuning: Some(tiny_tuning(&client)),
        }));
        for options in runs {
            let case = format!("seed {seed}: i64 {order:?} {:?}", options.strategy);
            let want = reference::sort_rows(&wide, rows, len, descending);
            let (keys, indices) =
                run_typed_checked(&client, &wide, Dtype::I64, rows, len, order, options)
                    .expect("sort failed");
            check_typed(&keys, &indices, &wide, &want, len, &case);

            let halves_sorted =
                run_typed_checked(&client, &halves, Dtype::F16, rows, len, order, options);
            match halves_sorted {
                Ok((keys, indices)) => {
                    let case = format!("seed {seed}: f16 {order:?} {:?}", options.strategy);
                    let widened: Vec<f32> = halves.iter().map(|h| h.to_f32()).collect();
                    let want = reference::sort_rows(&widened, rows, len, descending);
                    let bits: Vec<u16> = halves.iter().map(|h| h.to_bits()).collect();
                    let got: Vec<u16> = keys.iter().map(|h| h.to_bits()).collect();
                    check_typed(&got, &indices, &bits, &want, len, &case);
                }
                Err(e) => {
                    eprintln!("{case}: f16 refused: {e}", case = seed);
                    assert!(
                        !caps.supports(Dtype::F16),
                        "f16 keys failed on a device with f16: {e}"
                    );
                    assert!(e.contains("f16"), "{e}");
                }
            }

            let brains_sorted =
                run_typed_checked(&client, &brains, Dtype::BF16, rows, len, order, options);
            match brains_sorted {
                Ok((keys, indices)) => {
                    let case = format!("seed {seed}: bf16 {order:?} {:?}", options.strategy);
                    let widened: Vec<f32> = brains.iter().map(|h| h.to_f32()).collect();
                    let want = reference::sort_rows(&widened, rows, len, descending);
                    let bits: Vec<u16> = brains.iter().map(|h| h.to_bits()).collect();
                    let got: Vec<u16> = keys.iter().map(|h| h.to_bits()).collect();
                    check_typed(&got, &indices, &bits, &want, len, &case);
                }
                Err(e) => {
                    eprintln!("seed {seed}: bf16 refused: {e}");
                    assert!(
                        !caps.supports(Dtype::BF16),
                        "bf16 keys failed on a device with bf16: {e}"
                    );
                    assert!(e.contains("bf16"), "{e}");
                }
            }
        }
    }
}

fn run_typed_checked<T: bytemuck::Pod>(
    client: &Client,
    keys: &[T],
    dtype: Dtype,
    rows: usize,
    len: usize,
    order: SortOrder,
    options: SortOptions,
) -> Result<(Vec<T>, Vec<i32>), String> {
    let n = rows * len;
    let input = upload(client, keys);
    let keys_out = poisoned(client, (n * std::mem::size_of::<T>()).div_ceil(4), POISON);
    let indices_out = poisoned(client, n, POISON);
    sort::sort(
        client,
        SortIo {
            keys: &input,
            key_dtype: dtype,
            keys_out: Some(&keys_out),
            indices_out: Some(&indices_out),
            index_dtype: Dtype::I32,
        },
        SortProblem { rows, len },
        order,
        options,
    )
    .map_err(|e| e.to_string())?;
    Ok((
        download(client, keys_out, n),
        download(client, indices_out, n),
    ))
}

fn check_typed<T: PartialEq + Copy + std::fmt::Debug>(
    keys: &[T],
    indices: &[i32],
    input: &[T],
    want: &[usize],
    len: usize,
    case: &str,
) {
    let want_indices: Vec<i32> = want.iter().map(|&i| i as i32).collect();
    assert_same(indices, &want_indices, &format!("{case}: permutation"));
    let want_keys: Vec<T> = want
        .iter()
        .enumerate()
        .map(|(slot, &i)| input[(slot / len) * len + i])
        .collect();
    assert_same(keys, &want_keys, &format!("{case}: keys (bits)"));
}

#[test]
fn bad_calls_get_clear_errors() {
    let client = client();
    let keys = client.empty(64);
    let io = SortIo {
        keys: &keys,
        key_dtype: Dtype::I64,
        keys_out: None,
        indices_out: None,
        index_dtype: Dtype::I32,
    };
    let problem = SortProblem { rows: 1, len: 4 };
    let e = sort::sort(
        &client,
        io,
        problem,
        SortOrder::Ascending,
        SortOptions {
            strategy: SortStrategy::InCube,
            tuning: None,
        },
    )
    .expect_err("i64 keys in one cube are refused")
    .to_string();
    assert!(e.contains("options.strategy"), "{e}");
    let e = sort::sort(
        &client,
        SortIo {
            key_dtype: Dtype::F32,
            ..io
        },
        SortProblem {
            rows: 1,
            len: 1 << 30,
        },
        SortOrder::Ascending,
        SortOptions {
            strategy: SortStrategy::InCube,
            tuning: None,
        },
    )
    .expect_err("rows too long for one cube are refused")
    .to_string();
    assert!(e.contains("problem.len"), "{e}");
    let caps = DeviceCaps::of(&client);
    // The message refusing an 8-key f32 sort with `tuning`.
    let refused = |strategy, tuning: SortTuning, why: &str| {
        sort::sort(
            &client,
            SortIo {
                key_dtype: Dtype::F32,
                ..io
            },
            SortProblem { rows: 1, len: 8 },
            SortOrder::Ascending,
            SortOptions {
                strategy,
                tuning: Some(tuning),
            },
        )
        .expect_err(why)
        .to_string()
    };
    let e = refused(
        SortStrategy::InCube,
        SortTuning {
            in_cube_keys_per_unit: 3,
            ..SortTuning::for_device(&caps)
        },
        "keys per unit that are not a power of two are refused",
    );
    assert!(
        e.contains("tuning.in_cube_keys_per_unit") && e.contains("power of two"),
        "{e}"
    );
    let base = SortTuning::for_device(&caps);
    for parts in [0, 33] {
        for (name, tuning) in [
            (
                "tuning.count_parts",
                SortTuning {
                    count_parts: parts,
                    ..base
                },
            ),
            (
                "tuning.lsd_count_parts",
                SortTuning {
                    lsd_count_parts: parts,
                    ..base
                },
            ),
            (
                "tuning.count_loads",
                SortTuning {
                    count_loads: parts,
                    ..base
                },
            ),
        ] {
            let e = refused(
                SortStrategy::Auto,
                tuning,
                "bin copies and counting loads outside 1..=32 are refused",
            );
            assert!(e.contains(name) && e.contains("1..=32"), "{e}");
        }
    }
}
