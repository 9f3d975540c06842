//! Set-operation rows, f32: `unique` of `n` values drawn from `distinct=` integers (sorted
//! output, checked in O(n) against a bitmap of the values drawn), and `searchsorted` of `n`
//! random queries into `keys=` sorted keys (every result checked by a host binary search).
//! sieve's Burn ops only; torch's rows come from `bench/torch_reference.py`. Stock Burn has
//! neither op.

use burn::tensor::{Int, Tensor, TensorData};
use rand::{Rng, SeedableRng, rngs::StdRng};

use crate::case::{Case, Op};
use crate::report::Row;
use crate::timing::Bench;

pub fn run(case: &Case, bench: &Bench<'_>) -> Vec<Row> {
    let n = case.numel();
    let mut rng = StdRng::seed_from_u64(0x5e75);
    match case.op {
        Op::Unique => {
            let distinct = case.param_or("distinct", 1usize << 20).max(1);
            // The keys are integers as f32: above 2^24 they would round onto each other.
            assert!(
                distinct <= 1 << 24,
                "unique bench: distinct={distinct} must be at most 2^24 (16777216): larger \
                 integers are not exact in f32"
            );
            let data: Vec<f32> = (0..n)
                .map(|_| rng.random_range(0..distinct) as f32)
                .collect();
            let mut seen = vec![0i64; distinct];
            data.iter().for_each(|&v| seen[v as usize] += 1);
            let want: Vec<f32> = (0..distinct)
                .filter(|&v| seen[v] > 0)
                .map(|v| v as f32)
                .collect();
            let want_counts: Vec<i64> = seen.iter().copied().filter(|&c| c > 0).collect();
            // `inverse=1`: `unique_with` with the inverse and the counts too.
            let full = case.param_or("inverse", 0u32) == 1;
            let index_bytes = Tensor::<1, Int>::empty([1], bench.device).dtype().size();
            let x = Tensor::<1>::from_data(TensorData::new(data.clone(), [n]), bench.device);
            let floor = 4 * (n + want.len()) as u64
                + if full {
                    (index_bytes * (n + want.len())) as u64
                } else {
                    0
                };
            let row = bench.row(case, "sieve", floor, &[]);
            let got = sieve_burn::unique_with(x.clone(), full, full);
            let values: Vec<f32> = got.values.into_data().iter::<f32>().collect();
            let mut wrong = (values != want).then(|| {
                format!(
                    "{} values, expected {} distinct ascending",
                    values.len(),
                    want.len()
                )
            });
            if full && wrong.is_none() {
                // Every element's group holds its value; each value's count is exact.
                let inverse: Vec<i64> = got.inverse.unwrap().into_data().iter::<i64>().collect();
                let counts: Vec<i64> = got.counts.unwrap().into_data().iter::<i64>().collect();
                let bad = data
                    .iter()
                    .zip(&inverse)
                    .position(|(&v, &g)| want.get(g as usize) != Some(&v));
                wrong = match bad {
                    Some(i) => Some(format!("inverse[{i}] = {} holds another value", inverse[i])),
                    None => crate::report::mismatch(&counts, &want_counts),
                };
            }
            let mut rows = vec![row.checked(wrong, || {
                bench.time_sieve_burn(case, || {
                    drop(sieve_burn::unique_with(x.clone(), full, full))
                })
            })];
            if case.param_or("stages", 0u32) == 1 {
                // `stages=1`: the values path's two stages timed alone on the same data, the
                // Burn sort (keys only) and the run starts of its output.
                let sorted = sieve_burn::sort(x.clone(), 0);
                let runs: Vec<f32> = sieve_burn::unique_consecutive(sorted.clone(), false, false)
                    .values
                    .into_data()
                    .iter::<f32>()
                    .collect();
                // The sort is checked through its run starts: ascending distinct values.
                let wrong = (runs != want).then(|| "run starts of the sorted values".to_string());
                let row = bench.row(case, "sieve", 8 * n as u64, &[("stage", "sort")]);
                rows.push(row.checked(wrong.clone(), || {
                    bench.time_sieve_burn(case, || drop(sieve_burn::sort(x.clone(), 0)))
                }));
                let floor = 4 * (n + want.len()) as u64;
                let row = bench.row(case, "sieve", floor, &[("stage", "run_starts")]);
                rows.push(row.checked(wrong.clone(), || {
                    bench.time_sieve_burn(case, || {
                        drop(sieve_burn::unique_consecutive(sorted.clone(), false, false))
                    })
                }));
                // The sort path whole (what `unique` ran before its hash path, and runs where
                // the table gives up): the sort, then the run starts of its output.
                let row = bench.row(case, "sieve", floor, &[("stage", "sort_path")]);
                rows.push(row.checked(wrong, || {
                    bench.time_sieve_burn(case, || {
                        let sorted = sieve_burn::sort(x.clone(), 0);
                        drop(sieve_burn::unique_consecutive(sorted, false, false))
                    })
                }));
            }
            rows.extend(raw_run_starts(case, bench, &seen, &want));
            rows.extend(raw_distinct(case, bench, &data, &want));
            rows
        }
        Op::Searchsorted => {
            let m = case.param_or("keys", 1usize << 20);
            let mut keys: Vec<f32> = (0..m).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            keys.sort_by(f32::total_cmp);
            let queries: Vec<f32> = (0..n).map(|_| rng.random_range(-1.1f32..1.1)).collect();
            let want: Vec<i64> = queries
                .iter()
                .map(|q| keys.partition_point(|k| k < q) as i64)
                .collect();
            let seq = Tensor::<1>::from_data(TensorData::new(keys.clone(), [m]), bench.device);
            let q = Tensor::<1>::from_data(TensorData::new(queries.clone(), [n]), bench.device);
            let index_bytes = Tensor::<1, Int>::empty([1], bench.device).dtype().size() as u64;
            let floor = 4 * (m + n) as u64 + index_bytes * n as u64;
            let row = bench.row(case, "sieve", floor, &[]);
            let search = || sieve_burn::searchsorted(seq.clone(), q.clone(), false);
            let got: Vec<i64> = search().into_data().iter::<i64>().collect();
            let wrong = crate::report::mismatch(&got, &want);
            let mut rows =
                vec![row.checked(wrong, || bench.time_sieve_burn(case, || drop(search())))];
            rows.extend(raw_searches(case, bench, &keys, &queries, &want));
            rows
        }
        op => panic!("sets bench: {op} is not a set op"),
    }
}

/// Raw `searchsorted_with` rows (i32 positions), one per combination of the case's tuning
/// params: `per_unit=` (queries a unit), `splitters=` (the most a cube holds),
/// `units=`; none where the case names none of them.
fn raw_searches(
    case: &Case,
    bench: &Bench<'_>,
    keys: &[f32],
    queries: &[f32],
    want: &[i64],
) -> Vec<Row> {
    let client = bench.client;
    let base = sieve::search::SearchTuning::for_device(&sieve::DeviceCaps::of(client));
    let tunings = case.tunings(&["per_unit", "splitters", "units"], |s| {
        sieve::search::SearchTuning {
            queries_per_unit: s.get("per_unit").unwrap_or(base.queries_per_unit),
            max_splitters: s.get("splitters").unwrap_or(base.max_splitters),
            units_per_cube: s.get("units").unwrap_or(base.units_per_cube),
        }
    });
    if tunings.iter().all(|(_, tuning)| tuning.is_none()) {
        return Vec::new();
    }
    let sorted = client.create_from_slice(bytemuck::cast_slice(keys));
    let asked = client.create_from_slice(bytemuck::cast_slice(queries));
    let out = client.empty(4 * queries.len().max(1));
    let floor = 4 * (keys.len() + queries.len()) as u64 + 4 * queries.len() as u64;
    tunings
        .into_iter()
        .map(|(swept, tuning)| {
            let tuning = tuning.expect("a named tuning (checked above)");
            let row = bench.swept_row(case, floor, ("strategy", "raw"), &swept);
            let search = || {
                sieve::search::searchsorted_with(
                    client,
                    sieve::search::SearchIo {
                        sorted: &sorted,
                        queries: &asked,
                        dtype: sieve::Dtype::F32,
                        out: &out,
                        index_dtype: sieve::Dtype::I32,
                    },
                    keys.len(),
                    queries.len(),
                    false,
                    tuning,
                )
            };
            match search() {
                Err(e) => row.untimed("skipped", e.to_string()),
                Ok(()) => {
                    let bytes = client.read_one(out.clone()).expect("read the positions");
                    let got: Vec<i64> =
                        bytemuck::cast_slice::<u8, i32>(&bytes[..4 * queries.len()])
                            .iter()
                            .map(|&p| i64::from(p))
                            .collect();
                    row.checked(crate::report::mismatch(&got, want), || {
                        bench.time_raw(|| search().expect("searched once already"))
                    })
                }
            }
        })
        .collect()
}

/// `unique`'s run starts alone through the raw counted compaction (count and scan, the count
/// read, the scatter into outputs of that size: what the Burn op does after its sort), at each
/// tile of the case's `units=` / `epu=` / `vec=` / `reread=` sweep over the compaction's
/// defaults (the defaults alone with `lookback=1`); none where the case names none of them.
/// With `lookback=1`, also the single pass a Burn op could take instead
/// ([`lookback_run_starts`]). The input is the sorted values, made on the host from `seen`
/// (each value's count).
fn raw_run_starts(case: &Case, bench: &Bench<'_>, seen: &[i64], want: &[f32]) -> Vec<Row> {
    use sieve::compact::{self, CompactOptions, CountedIo, Flags};
    // Each tile with whether the values written are loaded again after the rank (`reread=`).
    let tunings = case.tunings(&["units", "epu", "vec", "reread"], |s| {
        (
            crate::cumsum::scan_tuning_from(bench.client, false, |k| s.get(k)),
            s.get("reread") == Some(1),
        )
    });
    let lookback = case.param_or("lookback", 0u32) == 1;
    if !lookback && tunings.iter().all(|(_, tuning)| tuning.is_none()) {
        return Vec::new();
    }
    let client = bench.client;
    let n = case.numel();
    let mut sorted = Vec::with_capacity(n);
    for (v, &c) in seen.iter().enumerate() {
        sorted.extend(std::iter::repeat_n(v as f32, c as usize));
    }
    let values = client.create_from_slice(bytemuck::cast_slice(&sorted));
    drop(sorted);
    let count = client.empty(4);
    let floor = 4 * (n + want.len()) as u64;
    let mut rows: Vec<Row> = tunings
        .into_iter()
        .map(|(swept, tuning)| {
            let row = bench.swept_row(case, floor, ("stage", "run_starts_raw"), &swept);
            let options = CompactOptions {
                tuning: tuning.map(|(scan, _)| scan),
                reread_values: tuning.is_some_and(|(_, reread)| reread),
                flag_words: crate::filter::flag_words(case),
                unpacked_ranks: crate::filter::unpacked_ranks(case),
                word_rank_sparsity: crate::filter::word_rank_sparsity(case),
                ..Default::default()
            };
            let flags = Flags::RunStarts;
            let scratch = client.empty(4);
            let shape_io = CountedIo {
                values: Some(&values),
                value_dtype: sieve::Dtype::F32,
                write_values: true,
                write_indices: false,
                index_dtype: sieve::Dtype::I32,
                workspace: &scratch,
            };
            let tiles = match compact::counted_tiles(client, flags, shape_io, n, options) {
                Ok(tiles) => tiles,
                Err(e) => return row.untimed("skipped", e.to_string()),
            };
            // The Burn op's workspace (room for the flag words at the default tiles).
            let workspace = client.empty(4 * tiles.max(compact::counted_workspace_with_words(n)));
            let io = CountedIo {
                workspace: &workspace,
                ..shape_io
            };
            // What the Burn op does after its sort: count, read, allocate, scatter.
            let counted = || -> (cubecl::server::Handle, usize) {
                compact::count_survivors(client, flags, io, n, &count, options)
                    .expect("count_survivors");
                let bytes = client.read_one(count.clone()).expect("read the count");
                let total = bytemuck::cast_slice::<u8, i32>(&bytes[..4])[0] as usize;
                let out = client.empty(4 * total.max(1));
                compact::write_survivors(client, flags, io, n, total, Some(&out), None, options)
                    .expect("write_survivors");
                (out, total)
            };
            let (out, total) = counted();
            let bytes = client.read_one(out).expect("read the values");
            let got: Vec<f32> = bytemuck::cast_slice::<u8, f32>(&bytes[..4 * total]).to_vec();
            row.checked(crate::report::mismatch(&got, want), || {
                bench.time_raw(|| drop(counted()))
            })
        })
        .collect();
    if lookback {
        rows.push(lookback_run_starts(case, bench, &values, n, want, floor));
    }
    rows
}

/// `lookback=1`: the run starts through the raw look-back compaction (one pass over the
/// sorted values; runtimes with forward progress between cubes only, else skipped) into
/// outputs of `n` elements, then the count read: the single pass a Burn op could take instead
/// of the counted form's two (before copying its survivors into outputs of their own size,
/// which this row does not time). Checked against the distinct values.
fn lookback_run_starts(
    case: &Case,
    bench: &Bench<'_>,
    values: &cubecl::server::Handle,
    n: usize,
    want: &[f32],
    floor: u64,
) -> Row {
    use sieve::compact::{self, CompactIo, CompactOptions, CompactProblem, CompactStrategy, Flags};
    let client = bench.client;
    let row = bench.row(case, "sieve", floor, &[("stage", "run_starts_lookback")]);
    let out = client.empty(4 * n.max(1));
    let counts = client.empty(4);
    let run = || -> Result<usize, sieve::SieveError> {
        compact::compact(
            client,
            Flags::RunStarts,
            CompactIo {
                values: Some(values),
                value_dtype: sieve::Dtype::F32,
                values_out: Some(&out),
                indices_out: None,
                counts: &counts,
                index_dtype: sieve::Dtype::I32,
            },
            CompactProblem { rows: 1, len: n },
            compact::Rejected::Drop,
            CompactOptions {
                strategy: CompactStrategy::ScatterLookback,
                tuning: None,
                ..Default::default()
            },
        )?;
        let bytes = client.read_one(counts.clone()).expect("read the count");
        Ok(bytemuck::cast_slice::<u8, i32>(&bytes[..4])[0] as usize)
    };
    match run() {
        Err(e) => row.untimed("skipped", e.to_string()),
        Ok(total) => {
            let bytes = client.read_one(out.clone()).expect("read the values");
            let got = &bytemuck::cast_slice::<u8, f32>(&bytes)[..total.min(n)];
            row.checked(crate::report::mismatch(got, want), || {
                bench.time_raw(|| {
                    run().expect("ran once already");
                })
            })
        }
    }
}

/// `unique`'s hash path alone through the raw API (`sieve::distinct`: step one, the count
/// read, step two into an output of that size: what the Burn op does, without Burn), at each
/// combination of the case's `slots=` (the table's most slots), `hepu=` (elements a unit of
/// the insert pass) and `hcubes=` (its cubes a multiprocessor; 0: a cube a chunk) over the
/// defaults; none where the case names none of them. A row whose table gave up times step
/// one and the count read alone (`strategy=raw_hash_gave_up`).
fn raw_distinct(case: &Case, bench: &Bench<'_>, data: &[f32], want: &[f32]) -> Vec<Row> {
    use sieve::distinct::{self, DistinctIo, DistinctOptions};
    let tunings = case.tunings(&["slots", "hepu", "hcubes"], |s| {
        let base = DistinctOptions::default();
        DistinctOptions {
            max_table_slots: s.get("slots").map_or(base.max_table_slots, |v| v as usize),
            elements_per_unit: s.get("hepu").unwrap_or(base.elements_per_unit),
            cubes_per_multiprocessor: s.get("hcubes").unwrap_or(base.cubes_per_multiprocessor),
        }
    });
    if tunings.iter().all(|(_, options)| options.is_none()) {
        return Vec::new();
    }
    let client = bench.client;
    let n = data.len();
    let values = client.create_from_slice(bytemuck::cast_slice(data));
    let count = client.empty(4);
    let floor = 4 * (n + want.len()) as u64;
    tunings
        .into_iter()
        .map(|(swept, options)| {
            let options = options.expect("a named tuning (checked above)");
            let workspace = client.empty(4 * distinct::distinct_workspace(n, options));
            let io = DistinctIo {
                values: &values,
                value_dtype: sieve::Dtype::F32,
                workspace: &workspace,
            };
            let unique = || -> Result<Option<cubecl::server::Handle>, sieve::SieveError> {
                distinct::count_distinct(client, io, n, &count, sieve::Dtype::I32, options)?;
                let bytes = client.read_one(count.clone()).expect("read the count");
                let m = bytemuck::cast_slice::<u8, i32>(&bytes[..4])[0] as usize;
                if m == 0 {
                    return Ok(None);
                }
                let out = client.empty(4 * m);
                distinct::write_distinct(client, io, n, m, &out, options)?;
                Ok(Some(out))
            };
            let first = unique();
            // A table that gives up is timed too (step one and the count read: what the Burn
            // op spends before it sorts), as its own strategy.
            let strategy = match first {
                Ok(None) => "raw_hash_gave_up",
                _ => "raw_hash",
            };
            let row = bench.swept_row(case, floor, ("strategy", strategy), &swept);
            match first {
                Err(e) => row.untimed("skipped", e.to_string()),
                Ok(None) => row.checked(None, || {
                    bench.time_raw(|| {
                        let gave_up = unique().expect("ran once already").is_none();
                        assert!(gave_up, "the table gave up once, then held the values");
                    })
                }),
                Ok(Some(out)) => {
                    let bytes = client.read_one(out).expect("read the values");
                    let got: &[f32] =
                        bytemuck::cast_slice(&bytes[..4 * want.len().min(bytes.len() / 4)]);
                    let wrong = (bytes.len() != 4 * want.len() || got != want)
                        .then(|| format!("{} values, expected {}", bytes.len() / 4, want.len()));
                    row.checked(wrong, || {
                        bench.time_raw(|| drop(unique().expect("ran once already")))
                    })
                }
            }
        })
        .collect()
}
