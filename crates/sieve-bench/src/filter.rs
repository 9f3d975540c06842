//! Filter rows: `mask_select`, `argwhere` and `compact_rows` through sieve's Burn ops (Auto
//! strategy), sieve's raw compaction with each strategy forced, and stock Burn where it has
//! the op (`Tensor::mask_select`, `Tensor::argwhere`: a host round trip in Burn 0.22).
//!
//! Data: values uniform in [1, 2) (never zero), a random mask of the case's `density`
//! (default 0.5). Every output is checked exactly against the CPU before it is timed.
//! Floor bytes: the mask and values read once, the outputs written once (the mask counted at
//! the storage Burn uses on the device: 1 byte, or 4 on wgpu devices without byte buffers).
//! The raw rows use byte masks where the device has byte buffers, else 32-bit words.

use burn::tensor::{Bool, Int, Tensor, TensorData};
use cubecl::prelude::*;
use cubecl::server::Handle;
use rand::{Rng, SeedableRng, rngs::StdRng};
use sieve::compact::{
    self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, CountedIo, FlagWords, Flags,
    MaskStorage, Rejected,
};
use sieve::{DeviceCaps, Dtype};

use crate::case::{Case, Op};
use crate::report::{Row, mismatch};
use crate::timing::Bench;

/// Stock Burn reads the tensor back to the host; one call at 2^24 takes over a second, so
/// larger rows are reported as skipped.
const BURN_MAX: usize = 1 << 24;

/// The inputs of one case, on the host and on the device.
struct Inputs {
    values: Vec<f32>,
    mask: Vec<bool>,
    storage: MaskStorage,
}

impl Inputs {
    fn new(case: &Case, client: &Client) -> Self {
        let n = case.numel();
        let density: f64 = case
            .params
            .get("density")
            .map(|d| d.parse().expect("density must be a number"))
            .unwrap_or(0.5);
        let mut rng = StdRng::seed_from_u64(0xf11e7);
        let values = if case.op == Op::Argwhere {
            Vec::new()
        } else {
            (0..n).map(|_| rng.random_range(1.0f32..2.0)).collect()
        };
        let mask: Vec<bool> = (0..n).map(|_| rng.random_bool(density)).collect();
        let caps = DeviceCaps::of(client);
        let storage = if caps.u8 {
            MaskStorage::U8
        } else {
            MaskStorage::U32
        };
        Inputs {
            values,
            mask,
            storage,
        }
    }

    fn survivors(&self) -> u64 {
        self.mask.iter().filter(|&&m| m).count() as u64
    }

    fn upload_mask(&self, client: &Client) -> Handle {
        match self.storage {
            MaskStorage::U8 => {
                let mut bytes: Vec<u8> = self.mask.iter().map(|&m| m as u8).collect();
                bytes.resize(bytes.len().next_multiple_of(4).max(4), 0);
                client.create_from_slice(&bytes)
            }
            MaskStorage::U32 => {
                let words: Vec<u32> = self.mask.iter().map(|&m| m as u32).collect();
                client.create_from_slice(bytemuck::cast_slice(&words))
            }
        }
    }
}

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    assert_eq!(
        case.dtype,
        if case.op == Op::Argwhere {
            "bool"
        } else {
            "f32"
        },
        "{}: dtype must be {}",
        case.op,
        if case.op == Op::Argwhere {
            "bool"
        } else {
            "f32"
        }
    );
    let inputs = Inputs::new(case, bench.client);
    match case.op {
        Op::MaskSelect => mask_select(case, &inputs, bench),
        Op::Argwhere => argwhere(case, &inputs, bench),
        Op::CompactRows => compact_rows(case, &inputs, bench),
        other => panic!("filter bench: {other} is not a filter op"),
    }
}

fn mask_select(case: &Case, inputs: &Inputs, bench: &Bench<'_>) -> Vec<Row> {
    let n = case.numel();
    let expected: Vec<f32> = (0..n)
        .filter(|&i| inputs.mask[i])
        .map(|i| inputs.values[i])
        .collect();
    let x = Tensor::<1>::from_data(TensorData::new(inputs.values.clone(), [n]), bench.device);
    let m = Tensor::<1, Bool>::from_data(TensorData::new(inputs.mask.clone(), [n]), bench.device);
    let floor = n as u64 * (4 + mask_bytes(&m)) + 4 * inputs.survivors();
    let mut rows = Vec::new();

    let row = bench.row(case, "sieve", floor, &[("strategy", "auto")]);
    let got = sieve_burn::mask_select(x.clone(), m.clone());
    rows.push(row.checked(mismatch(&to_vec(got), &expected), || {
        bench.time_sieve_burn(case, || {
            let _out = sieve_burn::mask_select(x.clone(), m.clone());
        })
    }));

    // The sync-free form: the same kernels without the count read (and its wait).
    let row = bench.row(
        case,
        "sieve",
        floor,
        &[("strategy", "auto"), ("form", "padded")],
    );
    let (got, count) = sieve_burn::mask_select_padded(x.clone(), m.clone());
    let got = to_vec(got);
    let count: i64 = count.into_scalar();
    rows.push(
        row.checked(mismatch(&got[..count as usize], &expected), || {
            bench.time_sieve_burn(case, || {
                let _out = sieve_burn::mask_select_padded(x.clone(), m.clone());
            })
        }),
    );

    rows.push(count_read_floor(case, inputs, bench, &m, floor));
    rows.extend(raw_rows(case, inputs, bench, floor, Rejected::Drop, true));

    let row = bench.row(case, "burn", floor, &[]);
    let too_big = (n > BURN_MAX).then(|| {
        (
            "skipped",
            format!("stock mask_select copies to the host; not run above {BURN_MAX} elements"),
        )
    });
    rows.push(row.stock(bench.with_burn, too_big, |row| {
        let got = x.clone().mask_select(m.clone());
        row.checked(mismatch(&to_vec(got), &expected), || {
            bench.time_burn(|| {
                let _out = x.clone().mask_select(m.clone());
            })
        })
    }));
    rows
}

fn argwhere(case: &Case, inputs: &Inputs, bench: &Bench<'_>) -> Vec<Row> {
    let n = case.numel();
    assert_eq!(case.shape.len(), 1, "argwhere bench: 1-D masks only");
    let m = Tensor::<1, Bool>::from_data(TensorData::new(inputs.mask.clone(), [n]), bench.device);
    let index_bytes = Tensor::<1, Int>::empty([1], bench.device).dtype().size() as u64;
    let floor = n as u64 * mask_bytes(&m) + index_bytes * inputs.survivors();
    let expected: Vec<i64> = (0..n as i64).filter(|&i| inputs.mask[i as usize]).collect();
    let mut rows = Vec::new();

    let row = bench.row(case, "sieve", floor, &[("strategy", "auto")]);
    let got: Vec<i64> = sieve_burn::argwhere(m.clone())
        .into_data()
        .iter::<i64>()
        .collect();
    rows.push(row.checked(mismatch(&got, &expected), || {
        bench.time_sieve_burn(case, || {
            let _out = sieve_burn::argwhere(m.clone());
        })
    }));

    rows.push(count_read_floor(case, inputs, bench, &m, floor));
    rows.extend(raw_rows(case, inputs, bench, floor, Rejected::Drop, false));

    let row = bench.row(case, "burn", floor, &[]);
    let too_big = (n > BURN_MAX).then(|| {
        (
            "skipped",
            format!("stock argwhere copies to the host; not run above {BURN_MAX} elements"),
        )
    });
    rows.push(row.stock(bench.with_burn, too_big, |row| {
        let got: Vec<i64> = m.clone().argwhere().into_data().iter::<i64>().collect();
        row.checked(mismatch(&got, &expected), || {
            bench.time_burn(|| {
                let _out = m.clone().argwhere();
            })
        })
    }));
    rows
}

/// Stock Burn's own count of the mask read to the host (`form=sum_read`), each call waiting
/// for the device through Fusion as `mask_select` and `argwhere` do (issue 15 item 4). Meant
/// as the floor under any Burn op that reads a count, it bounds nothing: Burn 0.22's sum took
/// 0.82 ms at 2^24 on an H100 (`bench/results/h100/50-m`). Runs with `--no-burn` too (no host
/// copy of the data).
fn count_read_floor(
    case: &Case,
    inputs: &Inputs,
    bench: &Bench<'_>,
    m: &Tensor<1, Bool>,
    floor: u64,
) -> Row {
    let row = bench.row(case, "burn", floor, &[("form", "sum_read")]);
    let count = || -> i64 { m.clone().int().sum().into_scalar() };
    let want = inputs.survivors() as i64;
    let got = count();
    let wrong = (got != want).then(|| format!("sum {got}, expected {want}"));
    row.checked(wrong, || {
        bench.time_burn(|| {
            let _ = count();
        })
    })
}

fn compact_rows(case: &Case, inputs: &Inputs, bench: &Bench<'_>) -> Vec<Row> {
    assert_eq!(case.shape.len(), 2, "compact_rows bench: [rows, len] only");
    let (r, len) = (case.shape[0], case.shape[1]);
    let n = r * len;
    let mut expected = vec![0.0f32; n];
    for row in 0..r {
        let mut slot = row * len;
        for i in row * len..(row + 1) * len {
            if inputs.mask[i] {
                expected[slot] = inputs.values[i];
                slot += 1;
            }
        }
    }
    let x = Tensor::<2>::from_data(
        TensorData::new(inputs.values.clone(), [r, len]),
        bench.device,
    );
    let m =
        Tensor::<2, Bool>::from_data(TensorData::new(inputs.mask.clone(), [r, len]), bench.device);
    // Every slot is written (survivors, then zeros), plus one count per row.
    let floor = n as u64 * (4 + mask_bytes(&m)) + 4 * n as u64 + 4 * r as u64;
    let mut rows = Vec::new();

    let row = bench.row(case, "sieve", floor, &[("strategy", "auto")]);
    let (got, _) = sieve_burn::compact_rows(x.clone(), m.clone());
    rows.push(row.checked(mismatch(&to_vec(got), &expected), || {
        bench.time_sieve_burn(case, || {
            let _out = sieve_burn::compact_rows(x.clone(), m.clone());
        })
    }));

    rows.extend(raw_rows(case, inputs, bench, floor, Rejected::Zero, true));
    rows.push(
        bench
            .row(case, "burn", floor, &[])
            .untimed("skipped", "stock Burn has no per-row compaction".into()),
    );
    rows
}

/// sieve's raw compaction with each strategy forced (or the one named by `strategy=`):
/// values (`with_values`) or positions, i32 indices.
fn raw_rows(
    case: &Case,
    inputs: &Inputs,
    bench: &Bench<'_>,
    floor: u64,
    rejected: Rejected,
    with_values: bool,
) -> Vec<Row> {
    let (rows, len) = match case.shape.as_slice() {
        [r, l] if case.op == Op::CompactRows => (*r, *l),
        _ => (1, case.numel()),
    };
    let n = rows * len;
    let mask = inputs.upload_mask(bench.client);
    let values = with_values.then(|| {
        bench
            .client
            .create_from_slice(bytemuck::cast_slice(&inputs.values))
    });
    let out = bench.client.empty(4 * n.max(1));
    let counts = bench.client.empty(4 * rows.max(1));
    let asked = case.params.get("strategy").map(String::as_str);
    // `raw=none`: no raw rows; `raw=<strategy>` (or `counted`): that one only.
    let only: String = case.param_or("raw", String::from("all"));
    // `alloc=per_call`: also time each strategy with outputs allocated on every call.
    let per_call = case.params.get("alloc").is_some_and(|a| a == "per_call");
    let mut out_rows = Vec::new();
    for strategy in CompactStrategy::ALL.into_iter().skip(1) {
        if asked.is_some_and(|a| a != "auto" && a != strategy.name())
            || (only != "all" && only != strategy.name())
        {
            continue;
        }
        let mut extra = vec![("strategy", strategy.name())];
        if per_call {
            extra.push(("alloc", "once"));
        }
        let row = bench.row(case, "sieve", floor, &extra);
        // One compaction into the given output and count buffers.
        let launch_into = |out: &Handle, counts: &Handle| {
            compact::compact(
                bench.client,
                Flags::Mask {
                    mask: &mask,
                    storage: inputs.storage,
                },
                CompactIo {
                    values: values.as_ref(),
                    value_dtype: Dtype::F32,
                    values_out: with_values.then_some(out),
                    indices_out: (!with_values).then_some(out),
                    counts,
                    index_dtype: Dtype::I32,
                },
                CompactProblem { rows, len },
                rejected,
                CompactOptions {
                    strategy,
                    tuning: crate::cumsum::scan_tuning_override(
                        case,
                        bench.client,
                        strategy == CompactStrategy::ScatterLookback,
                    ),
                    // `reread=1`: the values written loaded again after the tile's rank.
                    reread_values: case.param_or("reread", 0u32) == 1,
                    flag_words: flag_words(case),
                    unpacked_ranks: unpacked_ranks(case),
                    word_rank_sparsity: word_rank_sparsity(case),
                },
            )
        };
        let launch = || launch_into(&out, &counts);
        if let Err(e) = launch() {
            out_rows.push(row.untimed("skipped", e.to_string()));
            continue;
        }
        let wrong = check_raw(
            bench.client,
            inputs,
            &out,
            &counts,
            rows,
            len,
            rejected,
            with_values,
        );
        out_rows.push(row.checked(wrong, || {
            bench.time_raw(|| {
                launch().expect("compaction");
            })
        }));
        if per_call {
            // The same launch with outputs allocated per call, as a Burn op must.
            let row = bench.row(
                case,
                "sieve",
                floor,
                &[("strategy", strategy.name()), ("alloc", "per_call")],
            );
            out_rows.push(row.timed(bench.time_raw(|| {
                let fresh_out = bench.client.empty(4 * n.max(1));
                let fresh_counts = bench.client.empty(4 * rows.max(1));
                launch_into(&fresh_out, &fresh_counts).expect("compaction");
            })));
        }
    }
    if rows == 1 && (only == "all" || only == "counted") {
        out_rows.extend(counted_rows(
            case,
            inputs,
            bench,
            floor,
            &mask,
            values.as_ref(),
        ));
    }
    out_rows
}

/// `words=1` / `words=0`: the count pass's flag words forced on / off (else `Auto`).
pub fn flag_words(case: &Case) -> FlagWords {
    match case.params.get("words").map(String::as_str) {
        Some("1") => FlagWords::On,
        Some("0") => FlagWords::Off,
        _ => FlagWords::Auto,
    }
}

/// `wsparse=S`: a counted scatter with flag words ranks from them alone where at most one
/// element in `S` survives (`CompactOptions::word_rank_sparsity`; 1: at every density).
pub fn word_rank_sparsity(case: &Case) -> Option<usize> {
    case.params.get("wsparse").and_then(|s| s.parse().ok())
}

/// `prank=0`: the scatter's rank one plane scan a vector (`CompactOptions::unpacked_ranks`;
/// else several vectors' flag counts packed into one word a plane scan).
pub fn unpacked_ranks(case: &Case) -> bool {
    case.param_or("prank", 1u32) == 0
}

/// Where a Burn op's count read costs its time, without Burn or Fusion (issue 16: the counted
/// compaction through Vulkan): `strategy=counted` is what `mask_select` / `argwhere` do
/// through the raw API (count and scan, read the count, outputs of exactly that size
/// allocated, the scatter); `strategy=scatter, read=1` the scatter into outputs allocated once
/// with the count read after it (the read at the end, no allocation). Both against the
/// plain `strategy=scatter` row, which reads nothing.
fn counted_rows(
    case: &Case,
    inputs: &Inputs,
    bench: &Bench<'_>,
    floor: u64,
    mask: &Handle,
    values: Option<&Handle>,
) -> Vec<Row> {
    let n = case.numel();
    let client = bench.client;
    let flags = Flags::Mask {
        mask,
        storage: inputs.storage,
    };
    let workspace = client.empty(4 * compact::counted_workspace_with_words(n));
    let count = client.empty(4);
    let io = CountedIo {
        values,
        value_dtype: Dtype::F32,
        write_values: values.is_some(),
        write_indices: values.is_none(),
        index_dtype: Dtype::I32,
        workspace: &workspace,
    };
    let read_count = |count: &Handle| -> usize {
        let bytes = client.read_one(count.clone()).expect("read back");
        bytemuck::cast_slice::<u8, i32>(&bytes[..4])[0] as usize
    };
    let options = CompactOptions {
        flag_words: flag_words(case),
        unpacked_ranks: unpacked_ranks(case),
        word_rank_sparsity: word_rank_sparsity(case),
        ..Default::default()
    };
    let counted = || -> Handle {
        compact::count_survivors(client, flags, io, n, &count, options).expect("count_survivors");
        let total = read_count(&count);
        let out = client.empty(4 * total.max(1));
        compact::write_survivors(
            client,
            flags,
            io,
            n,
            total,
            values.is_some().then_some(&out),
            values.is_none().then_some(&out),
            options,
        )
        .expect("write_survivors");
        out
    };
    // Both rows write one row of survivors and its count.
    let check = |out: &Handle, count: &Handle| {
        check_raw(
            client,
            inputs,
            out,
            count,
            1,
            n,
            Rejected::Drop,
            values.is_some(),
        )
    };
    let mut out_rows = Vec::new();
    let row = bench.row(case, "sieve", floor, &[("strategy", "counted")]);
    let out = counted();
    let wrong = check(&out, &count);
    out_rows.push(row.checked(wrong, || {
        bench.time_raw(|| {
            let _ = counted();
        })
    }));

    // The scatter into outputs made once, its count read after it.
    let out = client.empty(4 * n.max(1));
    let counts = client.empty(4);
    let row = bench.row(
        case,
        "sieve",
        floor,
        &[("strategy", "scatter"), ("read", "1")],
    );
    let scatter_then_read = || -> usize {
        compact::compact(
            client,
            flags,
            CompactIo {
                values,
                value_dtype: Dtype::F32,
                values_out: values.is_some().then_some(&out),
                indices_out: values.is_none().then_some(&out),
                counts: &counts,
                index_dtype: Dtype::I32,
            },
            CompactProblem { rows: 1, len: n },
            Rejected::Drop,
            CompactOptions {
                strategy: CompactStrategy::Scatter,
                tuning: None,
                ..Default::default()
            },
        )
        .expect("compaction");
        read_count(&counts)
    };
    scatter_then_read();
    let wrong = check(&out, &counts);
    out_rows.push(row.checked(wrong, || {
        bench.time_raw(|| {
            let _ = scatter_then_read();
        })
    }));
    out_rows
}

/// Checks a raw compaction's counts and survivors (and zero padding) against the CPU.
#[allow(clippy::too_many_arguments)]
fn check_raw(
    client: &Client,
    inputs: &Inputs,
    out: &Handle,
    counts: &Handle,
    rows: usize,
    len: usize,
    rejected: Rejected,
    with_values: bool,
) -> Option<String> {
    let got_counts = client.read_one(counts.clone()).expect("read back");
    let got_counts: &[i32] = bytemuck::cast_slice(&got_counts[..4 * rows]);
    // The whole output: a counted compaction's holds only its survivors.
    let got = client.read_one(out.clone()).expect("read back");
    let got: &[u32] = bytemuck::cast_slice(&got);
    for (r, &count) in got_counts.iter().enumerate() {
        let base = r * len;
        let want: Vec<u32> = (0..len)
            .filter(|&i| inputs.mask[base + i])
            .map(|i| {
                if with_values {
                    inputs.values[base + i].to_bits()
                } else {
                    i as u32
                }
            })
            .collect();
        if count as usize != want.len() {
            return Some(format!("row {r}: count {count} instead of {}", want.len()));
        }
        let mut slots = want;
        if rejected == Rejected::Zero {
            slots.resize(len, 0);
        }
        let Some(got) = got.get(base..base + slots.len()) else {
            return Some(format!(
                "row {r}: the output holds {} elements, not the {} its slots need",
                got.len(),
                base + slots.len()
            ));
        };
        if let Some(why) = mismatch(got, &slots) {
            return Some(format!("row {r}: {why}"));
        }
    }
    None
}

/// Bytes per element of the mask as Burn stores it on this device.
fn mask_bytes<const D: usize>(mask: &Tensor<D, Bool>) -> u64 {
    mask.dtype().size() as u64
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}
