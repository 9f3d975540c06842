//! Indices and counts in a device int dtype other than the default (i32 on the cube backends):
//! with the device's int dtype set to i64 or u32 before its first tensor, every op that
//! returns positions or counts (the sorts, top-k, the order statistics, argwhere, nonzero,
//! the partition, the split, compact_rows, unique's inverse and counts, searchsorted) returns
//! them in that dtype with the values the CPU references give, and the scans take Int tensors
//! of it. Burn fixes a device's settings at its first tensor, so each dtype runs in a child
//! process of this test binary: the `#[ignore]`d `in_a_process_of_its_own`, started by
//! `indices_in_every_int_dtype` with `SIEVE_INDEX_DTYPE` set.

use crate::common::{assert_same, first_k_along, rng, special_f32};

use burn::tensor::{Bool, DType, Device, DeviceConfig, Int, IntDType, Tensor, TensorData};
use rand::Rng;
use sieve::sort::reference::sort_rows;

const CHILD: &str = "index_dtypes::in_a_process_of_its_own";

#[test]
fn indices_in_every_int_dtype() {
    let exe = std::env::current_exe().expect("the test binary's path");
    for dtype in ["i64", "u32"] {
        let out = std::process::Command::new(&exe)
            .args([
                "--exact",
                CHILD,
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("SIEVE_INDEX_DTYPE", dtype)
            .output()
            .expect("the test binary starts");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "index dtype {dtype}: the child process failed ({}):\n{stdout}\n{stderr}",
            out.status
        );
    }
}

#[test]
#[ignore = "run by indices_in_every_int_dtype, in a process of its own"]
fn in_a_process_of_its_own() {
    let dtype = match std::env::var("SIEVE_INDEX_DTYPE").as_deref() {
        Ok("i64") => IntDType::I64,
        Ok("u32") => IntDType::U32,
        other => panic!("SIEVE_INDEX_DTYPE must be i64 or u32, not {other:?}"),
    };
    let mut device = Device::default();
    device
        .configure(DeviceConfig::default().int_dtype(dtype))
        .expect("the device's first use in this process");
    assert_eq!(device.settings().int_dtype, dtype);
    let want_dtype = DType::from(dtype);
    let (mut rng, seed) = rng("index_dtypes");
    let ints = |t: Tensor<2, Int>, case: &str| -> Vec<i64> {
        assert_eq!(t.dtype(), want_dtype, "{case}: dtype");
        t.into_data().iter::<i64>().collect()
    };
    let case = |what: &str| format!("seed {seed}, index dtype {dtype:?}: {what}");

    // Sorts and top-k over rows that take the in-cube sort, rank by counting, the row cube.
    for (rows, len, k) in [(3usize, 777usize, 20usize), (16, 100, 5), (4, 5000, 20)] {
        let data: Vec<f32> = (0..rows * len).map(|_| special_f32(&mut rng)).collect();
        let x = Tensor::<2>::from_data(TensorData::new(data.clone(), [rows, len]), &device);
        let order: Vec<i64> = sort_rows(&data, rows, len, false)
            .into_iter()
            .map(|j| j as i64)
            .collect();
        let (_, got) = sieve_burn::sort_with_indices(x.clone(), 1);
        assert_same(&ints(got, "sort"), &order, &case("sort_with_indices"));
        let got = sieve_burn::argsort(x.clone(), 1);
        assert_same(&ints(got, "argsort"), &order, &case("argsort"));
        let (want, _) = first_k_along(&data, &[rows, len], 1, k, true);
        let (_, got) = sieve_burn::topk_with_indices(x.clone(), k, 1);
        assert_same(
            &ints(got, "topk"),
            &want,
            &case(&format!("topk [{rows}, {len}]")),
        );
        let (want, _) = first_k_along(&data, &[rows, len], 1, k, false);
        let (_, got) = sieve_burn::kthvalue(x.clone(), k, 1);
        let got = ints(got, "kthvalue");
        for r in 0..rows {
            assert_eq!(got[r], want[r * k + k - 1], "{}", case("kthvalue"));
        }
    }

    // Filters: coordinates, per-dim positions, the partition's indices and counts.
    let (rows, len) = (5usize, 401usize);
    let keep: Vec<bool> = (0..rows * len).map(|_| rng.random_bool(0.3)).collect();
    let values: Vec<f32> = (0..rows * len).map(|i| i as f32).collect();
    let x = Tensor::<2>::from_data(TensorData::new(values, [rows, len]), &device);
    let mask = Tensor::<2, Bool>::from_data(TensorData::new(keep.clone(), [rows, len]), &device);
    let coords: Vec<i64> = (0..rows * len)
        .filter(|&i| keep[i])
        .flat_map(|i| [(i / len) as i64, (i % len) as i64])
        .collect();
    let got = sieve_burn::argwhere(mask.clone());
    assert_same(&ints(got, "argwhere"), &coords, &case("argwhere"));
    let got = sieve_burn::nonzero(mask.clone());
    for (d, got) in got.into_iter().enumerate() {
        assert_eq!(got.dtype(), want_dtype, "{}", case("nonzero"));
        let got: Vec<i64> = got.into_data().iter::<i64>().collect();
        let want: Vec<i64> = coords.iter().skip(d).step_by(2).copied().collect();
        assert_same(&got, &want, &case(&format!("nonzero dim {d}")));
    }
    let (_, indices, counts) = sieve_burn::stable_partition(x.clone(), mask.clone(), 1);
    let mut want_indices = Vec::new();
    let mut want_counts = Vec::new();
    for r in 0..rows {
        let row = &keep[r * len..(r + 1) * len];
        let (kept, rest): (Vec<usize>, Vec<usize>) = (0..len).partition(|&j| row[j]);
        want_counts.push(kept.len() as i64);
        want_indices.extend(kept.into_iter().chain(rest).map(|j| j as i64));
    }
    assert_same(
        &ints(indices, "partition"),
        &want_indices,
        &case("stable_partition"),
    );
    assert_same(
        &ints(counts, "partition"),
        &want_counts,
        &case("partition counts"),
    );
    let (_, counts) = sieve_burn::compact_rows(x, mask);
    assert_eq!(counts.dtype(), want_dtype, "{}", case("compact_rows"));
    let counts: Vec<i64> = counts.into_data().iter::<i64>().collect();
    assert_same(&counts, &want_counts, &case("compact_rows counts"));

    // Int tensors are now of this dtype: the split, the scans, unique and searchsorted.
    let n = 2000usize;
    let small: Vec<i64> = (0..n).map(|_| rng.random_range(0..300)).collect();
    let xi = Tensor::<1, Int>::from_data(TensorData::new(small.clone(), [n]), &device);
    assert_eq!(xi.dtype(), want_dtype, "{}", case("an Int tensor"));
    let (_, indices, zeros) = sieve_burn::split_by_bit(xi.clone(), 0, 0);
    let (even, odd): (Vec<usize>, Vec<usize>) = (0..n).partition(|&j| small[j] % 2 == 0);
    let want: Vec<i64> = even.iter().chain(&odd).map(|&j| j as i64).collect();
    assert_same(
        &ints(indices.unsqueeze(), "split"),
        &want,
        &case("split_by_bit"),
    );
    assert_same(
        &ints(zeros.unsqueeze(), "split"),
        &[even.len() as i64],
        &case("split_by_bit zeros"),
    );
    let got = sieve_burn::cumsum(xi.clone(), 0);
    let want: Vec<i64> = small
        .iter()
        .scan(0i64, |sum, &v| {
            *sum += v;
            Some(*sum)
        })
        .collect();
    assert_same(
        &ints(got.unsqueeze(), "cumsum"),
        &want,
        &case("cumsum of Int"),
    );
    let unique = sieve_burn::unique_with(xi.clone(), true, true);
    let mut distinct = small.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let inverse: Vec<i64> = small
        .iter()
        .map(|v| distinct.binary_search(v).expect("a value") as i64)
        .collect();
    let counts: Vec<i64> = distinct
        .iter()
        .map(|d| small.iter().filter(|&v| v == d).count() as i64)
        .collect();
    let values = ints(unique.values.unsqueeze(), "unique");
    assert_same(&values, &distinct, &case("unique values"));
    let got = unique.inverse.expect("asked for the inverse");
    assert_same(
        &ints(got.unsqueeze(), "inverse"),
        &inverse,
        &case("unique inverse"),
    );
    let got = unique.counts.expect("asked for the counts");
    assert_same(
        &ints(got.unsqueeze(), "counts"),
        &counts,
        &case("unique counts"),
    );
    let queries: Vec<i64> = (0..500).map(|_| rng.random_range(0..310)).collect();
    let sorted =
        Tensor::<1, Int>::from_data(TensorData::new(distinct.clone(), [distinct.len()]), &device);
    let q = Tensor::<1, Int>::from_data(TensorData::new(queries.clone(), [queries.len()]), &device);
    let got = sieve_burn::searchsorted(sorted, q, true);
    let want: Vec<i64> = queries
        .iter()
        .map(|q| distinct.partition_point(|d| d <= q) as i64)
        .collect();
    assert_same(
        &ints(got.unsqueeze(), "searchsorted"),
        &want,
        &case("searchsorted"),
    );
}
