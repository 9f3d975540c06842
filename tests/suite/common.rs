//! Shared helpers of the integration tests: the device under test, seeded random data that
//! prints its seed, and comparisons that name the first bad element.
#![allow(dead_code)]

use cubecl::prelude::*;
use cubecl::server::Handle;
use rand::{Rng, SeedableRng, rngs::StdRng};

/// The client of the device the tests run on: Burn's default device (CUDA when built with
/// `cuda`, else wgpu - software Vulkan in CI).
pub fn client() -> Client {
    sieve_burn::cube_client(&burn::tensor::Device::default()).expect("a CubeCL device")
}

/// Holds the device for one test at a time, for test binaries whose tests must not share it
/// concurrently. The top-k tests take it: on a machine without Vulkan drivers, where wgpu
/// falls back to its GL backend (llvmpipe), two top-k tests at a time (libtest's default
/// on two cores) left one blocked forever in `Client::read_one` twice in three full runs,
/// and a cumsum test elsewhere died on wgpu's "Could not lock adapter context"; CI's
/// lavapipe (Vulkan) was not seen to hang. One test at a time costs the suite nothing on two
/// cores (167 s against 166). A failed test poisons nothing: the lock is taken back from a
/// panic.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DEVICE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A random generator with a fresh seed (or `SIEVE_SEED`), announced so a failure can be
/// replayed.
pub fn rng(test: &str) -> (StdRng, u64) {
    let seed = std::env::var("SIEVE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    eprintln!("{test}: seed {seed} (replay with SIEVE_SEED={seed})");
    (StdRng::seed_from_u64(seed), seed)
}

pub fn upload<T: bytemuck::Pod>(client: &Client, data: &[T]) -> Handle {
    if data.is_empty() {
        return client.empty(4);
    }
    client.create_from_slice(bytemuck::cast_slice(data))
}

/// Uploads `data` padded with zeros to whole 8-byte words: some runtimes bind buffers in
/// words, and rows of 8- or 16-bit elements can end inside one.
pub fn upload_padded<T: bytemuck::Pod>(client: &Client, data: &[T]) -> Handle {
    let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
    bytes.resize(bytes.len().next_multiple_of(8).max(8), 0);
    client.create_from_slice(&bytes)
}

/// A buffer of `len` elements filled with a poison pattern, so unwritten outputs show.
pub fn poisoned<T: bytemuck::Pod>(client: &Client, len: usize, poison: T) -> Handle {
    upload(client, &vec![poison; len.max(1)])
}

pub fn download<T: bytemuck::Pod>(client: &Client, handle: Handle, len: usize) -> Vec<T> {
    if len == 0 {
        return Vec::new();
    }
    let bytes = client.read_one(handle).expect("device read failed");
    // Copied, not cast in place: the bytes need not be aligned for an 8-byte `T`.
    bytemuck::pod_collect_to_vec(&bytes[..len * std::mem::size_of::<T>()])
}

/// Exact comparison; panics naming the case, the seed and the first differing index.
pub fn assert_same<T: PartialEq + std::fmt::Debug>(actual: &[T], expected: &[T], case: &str) {
    assert_eq!(actual.len(), expected.len(), "{case}: length");
    let bad: Vec<usize> = (0..actual.len())
        .filter(|&i| actual[i] != expected[i])
        .collect();
    if let Some(&first) = bad.first() {
        panic!(
            "{case}: {}/{} elements differ; first at {first}: got {:?}, expected {:?}",
            bad.len(),
            actual.len(),
            actual[first],
            expected[first]
        );
    }
}

/// Float comparison against a reference computed in f64: NaN must meet NaN, infinities must
/// match, finite values must be within `rel * scale[i] + abs` where `scale` is the running
/// sum of magnitudes (the error bound of a sum grows with it).
pub fn assert_close(
    actual: &[f64],
    expected: &[f64],
    scale: &[f64],
    rel: f64,
    abs: f64,
    case: &str,
) {
    assert_eq!(actual.len(), expected.len(), "{case}: length");
    for i in 0..actual.len() {
        let (a, e) = (actual[i], expected[i]);
        let ok = if e.is_nan() {
            a.is_nan()
        } else if e.is_infinite() {
            a == e
        } else {
            (a - e).abs() <= rel * scale[i] + abs
        };
        assert!(
            ok,
            "{case}: first bad element at {i}: got {a}, expected {e} (scale {})",
            scale[i]
        );
    }
}

pub fn random_u32(rng: &mut StdRng, n: usize, max: u32) -> Vec<u32> {
    (0..n).map(|_| rng.random_range(0..=max)).collect()
}

/// A float that is 30% of the time special (NaN, +-0.0, +-inf, +-1), else one of a few
/// quarter steps: duplicate-heavy keys for the sort and top-k op tests.
pub fn special_f32(rng: &mut impl Rng) -> f32 {
    let specials = [
        f32::NAN,
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
    ];
    if rng.random_bool(0.3) {
        specials[rng.random_range(0..specials.len())]
    } else {
        rng.random_range(-3i32..3) as f32 * 0.25
    }
}

/// A float tensor's values as bits (for exact comparisons that NaN cannot spoil).
pub fn bits<const D: usize>(t: burn::tensor::Tensor<D>) -> Vec<u32> {
    t.into_data().iter::<f32>().map(f32::to_bits).collect()
}

/// The message `f` panics with, if it does.
pub fn panic_message(f: impl FnOnce()) -> Option<String> {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).err()?;
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
}

pub fn f32s<const D: usize>(t: burn::tensor::Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

pub fn i64s<const D: usize>(t: burn::tensor::Tensor<D, burn::tensor::Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

/// One lane of a row-major tensor along a dim: the flat positions of its elements, in order.
pub struct Lane {
    /// Flat position of the lane's `j`-th element.
    pub at: Vec<usize>,
    outer: usize,
    inner: usize,
    inner_len: usize,
}

impl Lane {
    /// Flat position of this lane's `slot`-th element in an output whose `dim` has length
    /// `k` (the other dims as the input's).
    pub fn out(&self, k: usize, slot: usize) -> usize {
        (self.outer * k + slot) * self.inner_len + self.inner
    }
}

/// Every lane of a row-major `shape` along `dim`, in row-major order of the other dims.
pub fn lanes(shape: &[usize], dim: usize) -> Vec<Lane> {
    let len = shape[dim];
    let inner_len: usize = shape[dim + 1..].iter().product();
    let outer_len: usize = shape[..dim].iter().product();
    let mut all = Vec::with_capacity(outer_len * inner_len);
    for outer in 0..outer_len {
        for inner in 0..inner_len {
            all.push(Lane {
                at: (0..len)
                    .map(|j| (outer * len + j) * inner_len + inner)
                    .collect(),
                outer,
                inner,
                inner_len,
            });
        }
    }
    all
}

/// The first `k` of a stable sort of every row of a row-major `shape` along `dim`: indices
/// along `dim` and the flat source of each output element, in the output's row-major order
/// (`shape` with `dim` cut to `k`).
pub fn first_k_along<T: sieve::sort::reference::SortKey>(
    data: &[T],
    shape: &[usize],
    dim: usize,
    k: usize,
    largest: bool,
) -> (Vec<i64>, Vec<usize>) {
    let outputs: usize = (0..shape.len())
        .map(|d| if d == dim { k } else { shape[d] })
        .product();
    let mut indices = vec![0i64; outputs];
    let mut source = vec![0usize; outputs];
    for lane in lanes(shape, dim) {
        let row: Vec<T> = lane.at.iter().map(|&p| data[p]).collect();
        let order = sieve::sort::reference::sort_rows(&row, 1, row.len(), largest);
        for (slot, j) in order.into_iter().take(k).enumerate() {
            let out = lane.out(k, slot);
            indices[out] = j as i64;
            source[out] = lane.at[j];
        }
    }
    (indices, source)
}

/// `topk_with_indices` (`largest`) or `bottomk_with_indices` of `x` (`data`, row-major
/// `shape`) along `dim` against the first `k` of the stable CPU sort, values bit for bit.
/// Returns the expected indices and value bits, for the caller's further checks.
pub fn check_first_k<const D: usize>(
    x: &burn::tensor::Tensor<D>,
    data: &[f32],
    shape: &[usize],
    dim: usize,
    k: usize,
    largest: bool,
    case: &str,
) -> (Vec<i64>, Vec<u32>) {
    let (indices, source) = first_k_along(data, shape, dim, k, largest);
    let want: Vec<u32> = source.iter().map(|&s| data[s].to_bits()).collect();
    let (values, got) = if largest {
        sieve_burn::topk_with_indices(x.clone(), k, dim)
    } else {
        sieve_burn::bottomk_with_indices(x.clone(), k, dim)
    };
    assert_same(&bits(values), &want, &format!("{case}: values"));
    assert_same(&i64s(got), &indices, &format!("{case}: indices"));
    (indices, want)
}

/// What a device test starts with: the device held for it alone ([`serial`]; released when
/// this is dropped), its client and capabilities, and the test's name for messages.
pub struct Setup {
    _device: std::sync::MutexGuard<'static, ()>,
    pub client: Client,
    pub caps: sieve::DeviceCaps,
    pub test: &'static str,
}

impl Setup {
    pub fn new(test: &'static str) -> Self {
        let _device = serial();
        let client = client();
        let caps = sieve::DeviceCaps::of(&client);
        Self {
            _device,
            client,
            caps,
            test,
        }
    }

    /// [`Setup::new`] and a seeded generator for the test, its seed printed (see [`rng`]).
    pub fn seeded(test: &'static str) -> (Self, StdRng) {
        let setup = Self::new(test);
        (setup, rng(test).0)
    }

    /// The reduce-then-scan's default tile length on this device, in elements.
    pub fn default_scan_tile(&self) -> usize {
        let tuning = sieve::scan::ScanTuning::for_device(&self.caps, false);
        (tuning.units_per_cube * tuning.elements_per_unit) as usize
    }
}

/// Tiny scan tiles (one plane-multiple of units, one element each; 4-16 elements on
/// lavapipe), so short rows cross many tile boundaries and the tile sums recurse.
pub fn tiny_scan_tuning(caps: &sieve::DeviceCaps) -> sieve::scan::ScanTuning {
    sieve::scan::ScanTuning {
        units_per_cube: caps.plane_size_max.max(4).next_power_of_two(),
        elements_per_unit: 1,
        max_vector_size: 4,
        use_planes: caps.plane_ops,
        // Rows of two tiles in one launch, of three or more in three.
        looped_max_tiles: 2,
    }
}

/// Tiny top-k tiles (one plane of units, 2 keys each) so short rows cross many tiles, and few
/// cubes per pass, so each cube walks a chunk of many tiles (the last chunk of a row shorter).
/// The one-cube-per-row radix select (when a test forces it) has tiles as small, and fewer
/// units than digits. The scatter's tiles are two pass tiles (so chunks of an odd number of
/// tiles end in half a scatter tile).
pub fn tiny_topk_tuning(caps: &sieve::DeviceCaps) -> sieve::topk::TopkTuning {
    let units = caps.plane_size_max.max(4).next_power_of_two();
    sieve::topk::TopkTuning {
        units_per_cube: units,
        elements_per_unit: 2,
        target_cubes: 5,
        row_units_per_cube: units,
        row_elements_per_unit: 2,
        ..sieve::topk::TopkTuning::for_device(caps)
    }
}

/// The compaction mask storage Burn uses on this device.
pub fn mask_storage(caps: &sieve::DeviceCaps) -> sieve::compact::MaskStorage {
    if caps.u8 {
        sieve::compact::MaskStorage::U8
    } else {
        sieve::compact::MaskStorage::U32
    }
}

/// `flags` as a compaction mask in `storage`.
pub fn upload_mask(
    client: &Client,
    flags: &[bool],
    storage: sieve::compact::MaskStorage,
) -> Handle {
    match storage {
        sieve::compact::MaskStorage::U8 => {
            // Pad to a whole word: some runtimes bind buffers in 4-byte units.
            let mut bytes: Vec<u8> = flags.iter().map(|&f| f as u8).collect();
            bytes.resize(flags.len().next_multiple_of(4).max(4), 0);
            upload(client, &bytes)
        }
        sieve::compact::MaskStorage::U32 => {
            let words: Vec<u32> = flags.iter().map(|&f| f as u32).collect();
            upload(client, &words)
        }
    }
}

/// Every comparison rule of the compaction's flags.
pub const FLAG_RULES: [sieve::compact::FlagRule; 6] = [
    sieve::compact::FlagRule::Greater,
    sieve::compact::FlagRule::GreaterEqual,
    sieve::compact::FlagRule::Less,
    sieve::compact::FlagRule::LessEqual,
    sieve::compact::FlagRule::Equal,
    sieve::compact::FlagRule::NotEqual,
];
