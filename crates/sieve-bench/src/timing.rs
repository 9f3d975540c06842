//! Device-synchronised timing. After two warm-up calls, each of `runs` samples times `batch`
//! back-to-back calls followed by one device sync, divided by `batch`: the device throughput
//! of the op as a model sees it when ops are queued back to back, with the host's launch and
//! sync latency overlapped instead of counted once per call. `batch` is chosen so a sample
//! lasts about 3 ms (1 for calls slower than that, at most 64). Ops that read data back (a
//! count, a host round trip) wait inside every call anyway. `bench/torch_reference.py`
//! times torch the same way, with CUDA events around the batch. A call slower than
//! [`SLOW_CALL_MS`] (stock Burn's host sorts: 5.5 s at 2^24) takes [`SLOW_SAMPLES`] samples,
//! not `runs`: its median still reads to the millisecond, and 15 of them would spend a GPU
//! call's time on one row (as in `bench/results/h200/13-e`).
//!
//! `--warm-ms`: untimed samples for that long before the timed ones. NVIDIA's driver lowers
//! the SM clock of a Vulkan process whose GPU looks idle to its governor (a bench spends most
//! of its time on the host: `bench/results/h200/27-c`, 345 MHz against CUDA's 1980 within 4 s
//! of the process's start), so a short timed burst after host work runs at the idle clock;
//! a sustained load first is how a model's stream of ops meets the op.

use std::collections::BTreeMap;
use std::time::Instant;

use burn::tensor::kind::Numeric;
use burn::tensor::{Device, Tensor};

use crate::case::Case;
use crate::report::Row;
use cubecl::prelude::Client;

/// Calls per timed sample at most, per 3 ms of `--sample-ms` (the default sample).
const MAX_BATCH_PER_3_MS: usize = 64;
/// A call at least this slow (its second warm-up) is sampled [`SLOW_SAMPLES`] times.
pub const SLOW_CALL_MS: f64 = 1000.0;
/// Samples of a call slower than [`SLOW_CALL_MS`].
pub const SLOW_SAMPLES: usize = 3;

#[derive(Debug, Clone)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Calls per timed sample.
    pub batch: usize,
    /// Timed samples (the runs asked for, or [`SLOW_SAMPLES`] for a slow call).
    pub samples: usize,
    /// Host time per call to queue it (the batch's calls before the sync, per call; median
    /// over the samples). Where it reaches `median_ms`, the host, not the device, sets the
    /// pace of back-to-back calls.
    pub queue_ms: f64,
    /// CPU time per call of each of the process's threads over the timed samples, by thread
    /// name (`/proc/self/task/*/schedstat`; empty where the system has none). Which thread
    /// sets the pace when the host does: the caller, Fusion's server, CubeCL's device
    /// thread (whose time includes its spin in the sync).
    pub thread_ms: BTreeMap<String, f64>,
}

/// Every thread's name and CPU nanoseconds so far (`/proc/self/task/<tid>/schedstat`'s first
/// field), by thread id.
fn thread_times() -> BTreeMap<u64, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        let read = |f: &str| std::fs::read_to_string(task.path().join(f)).ok();
        let (Some(comm), Some(stat)) = (read("comm"), read("schedstat")) else {
            continue;
        };
        if let Some(ns) = stat.split_whitespace().next().and_then(|v| v.parse().ok()) {
            out.insert(tid, (comm.trim().to_string(), ns));
        }
    }
    out
}

/// CPU ms per call of each thread between two [`thread_times`] snapshots, summed by thread
/// name; threads under a microsecond a call are left out.
fn thread_ms(
    before: &BTreeMap<u64, (String, u64)>,
    after: &BTreeMap<u64, (String, u64)>,
    calls: usize,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for (tid, (name, ns)) in after {
        let start = before.get(tid).map_or(0, |b| b.1);
        *out.entry(name.clone()).or_insert(0.0) +=
            ns.saturating_sub(start) as f64 * 1e-6 / calls.max(1) as f64;
    }
    out.retain(|_, ms| *ms >= 1e-3);
    out
}

/// How a row is sampled: timed samples, each about `sample_ms` long, after `warm_ms` of
/// untimed ones.
#[derive(Debug, Clone, Copy)]
pub struct Sampling {
    pub runs: usize,
    pub sample_ms: f64,
    pub warm_ms: f64,
}

/// Times `call` (which only queues work); `sync` waits for the device.
fn time(sampling: Sampling, mut call: impl FnMut(), mut sync: impl FnMut()) -> Stats {
    let Sampling {
        runs,
        sample_ms,
        warm_ms,
    } = sampling;
    // (per call: the whole sample, the calls before the sync)
    let mut timed_batch = |batch: usize| {
        let start = Instant::now();
        for _ in 0..batch {
            call();
        }
        let queued = start.elapsed();
        sync();
        let per_call = |d: std::time::Duration| d.as_secs_f64() * 1e3 / batch as f64;
        (per_call(start.elapsed()), per_call(queued))
    };
    timed_batch(1);
    let single = timed_batch(1).0;
    let max_batch = ((MAX_BATCH_PER_3_MS as f64 * sample_ms / 3.0) as usize).max(1);
    let batch = ((sample_ms / single.max(1e-6)).ceil() as usize).clamp(1, max_batch);
    let runs = if single >= SLOW_CALL_MS {
        runs.min(SLOW_SAMPLES)
    } else {
        runs
    };
    // (A call slower than `SLOW_CALL_MS`, stock Burn's host work, is its own long load.)
    let warm = Instant::now();
    while single < SLOW_CALL_MS && warm.elapsed().as_secs_f64() * 1e3 < warm_ms {
        timed_batch(batch);
    }
    let before = thread_times();
    let samples: Vec<(f64, f64)> = (0..runs).map(|_| timed_batch(batch)).collect();
    let thread_ms = thread_ms(&before, &thread_times(), runs * batch);
    let mut ms: Vec<f64> = samples.iter().map(|s| s.0).collect();
    let mut queue: Vec<f64> = samples.iter().map(|s| s.1).collect();
    ms.sort_by(f64::total_cmp);
    queue.sort_by(f64::total_cmp);
    Stats {
        median_ms: ms[ms.len() / 2],
        min_ms: ms[0],
        max_ms: ms[ms.len() - 1],
        batch,
        samples: runs,
        queue_ms: queue[queue.len() / 2],
        thread_ms,
    }
}

/// [`time`] for a raw sieve call on `client`: the sync drains the client's queue.
pub fn time_raw(client: &Client, sampling: Sampling, call: impl FnMut()) -> Stats {
    time(sampling, call, || {
        cubecl::future::block_on(client.sync()).expect("device sync");
    })
}

/// [`time`] for a Burn-level call on `device`: the sync flushes Fusion and waits for it.
pub fn time_burn(device: &Device, sampling: Sampling, call: impl FnMut()) -> Stats {
    time(sampling, call, || {
        device.sync().expect("device sync");
    })
}

/// What every row of one bench process shares: Burn's device and its raw client, the samples
/// a row takes, whether stock Burn's rows run, and the backend's name the rows carry.
pub struct Bench<'a> {
    pub device: &'a Device,
    pub client: &'a Client,
    /// Samples a row takes (`--runs`, `--sample-ms`, `--warm-ms`).
    pub sampling: Sampling,
    pub with_burn: bool,
    pub backend: String,
}

impl Bench<'_> {
    /// A row for `case` run by `implementation` on this bench's backend (see [`Row::new`]).
    pub fn row(
        &self,
        case: &Case,
        implementation: &str,
        floor_bytes: u64,
        extra: &[(&str, &str)],
    ) -> Row {
        Row::new(case, implementation, &self.backend, floor_bytes, extra)
    }

    /// A sieve row of a tuning sweep ([`Case::tunings`]): tagged `tag` (the strategy or the
    /// stage it times), the sweep's values as its params.
    pub fn swept_row(
        &self,
        case: &Case,
        floor_bytes: u64,
        tag: (&str, &str),
        swept: &[(&'static str, String)],
    ) -> Row {
        let params: Vec<(&str, &str)> = swept.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.row(
            case,
            "sieve",
            floor_bytes,
            &[[tag].as_slice(), &params].concat(),
        )
    }

    /// The Burn op's input as the case asks: uploaded from the host (the default), or with
    /// `input=op` made on the device by a Burn op (`x * 1`, synchronised once; Float or Int), as a model's
    /// tensors are: whether the input's origin changes the Burn op's time.
    pub fn burn_input<const D: usize, K: Numeric>(
        &self,
        case: &Case,
        x: Tensor<D, K>,
    ) -> Tensor<D, K> {
        match case.params.get("input").map(String::as_str) {
            None | Some("host") => x,
            Some("op") => {
                let y = x.mul_scalar(1);
                self.device.sync().expect("device sync");
                y
            }
            Some(other) => panic!("{} bench: input={other} (host or op)", case.op),
        }
    }

    /// `handle` (contiguous, `shape`, `dtype`) as a tensor of Burn's CubeCL backend itself, for
    /// the `cube` rows: sieve-burn's `CubeBackend` impls called with no Dispatch and no Fusion in
    /// front, which splits a Burn op's time over the raw call into Fusion's share and the
    /// rest. `None` on a device of another backend.
    pub fn cube_tensor(
        &self,
        handle: cubecl::server::Handle,
        shape: &[usize],
        dtype: burn::backend::DType,
    ) -> Option<burn_cubecl::tensor::CubeTensor> {
        match self.device.clone().inner().as_dispatch() {
            burn::backend::DispatchDevice::Cube(device) => {
                Some(burn_cubecl::tensor::CubeTensor::new_contiguous(
                    self.client.clone(),
                    device.clone(),
                    burn::tensor::Shape::from(shape.to_vec()),
                    handle,
                    dtype,
                ))
            }
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// [`time_raw`] with this bench's client and runs.
    pub fn time_raw(&self, call: impl FnMut()) -> Stats {
        time_raw(self.client, self.sampling, call)
    }

    /// [`time_burn`] of a sieve Burn op as the case asks: with `flush=1`, each call is
    /// followed by `Device::flush` (Fusion dispatches what it holds without waiting), so the
    /// device starts on a call while the host queues the next one.
    pub fn time_sieve_burn(&self, case: &Case, mut call: impl FnMut()) -> Stats {
        if case.param_u32("flush").is_some_and(|f| f != 0) {
            self.time_burn(|| {
                call();
                self.device.flush().expect("device flush");
            })
        } else {
            self.time_burn(call)
        }
    }

    /// [`time_burn`] with this bench's device and runs.
    pub fn time_burn(&self, call: impl FnMut()) -> Stats {
        time_burn(self.device, self.sampling, call)
    }
}
