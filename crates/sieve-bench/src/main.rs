//! `sieve-bench`: times sieve's ops against stock Burn on one device, in one process.
//!
//! Every output (stock Burn's too) is checked against a CPU reference before it is timed; a
//! wrong output is reported as wrong and never timed. Each timed row is the median, min and
//! max of `--runs` device-synchronised runs after a warm-up. A device-to-device copy row is
//! the bandwidth ceiling of the run.
//!
//! ```text
//! sieve-bench                         # the standard rows
//! sieve-bench --quick                 # small sizes (CI runs this)
//! sieve-bench --json out.json         # also write the rows as JSON
//! sieve-bench --case cumsum:4096x32768:f32:dim=0   # one case of your own
//! sieve-bench --with flush=1          # a param added to every case
//! ```
//!
//! Params every sieve Burn op row takes: `flush=1` follows each call with `Device::flush`
//! (Fusion dispatches what it holds instead of holding it to the sync); `input=op` (top-k and
//! sort) makes the op's input on the device by a Burn op instead of uploading it. Tuning
//! overrides (per family: `units=`, `epu=`, `split=`, ...) reach the raw rows only.

// In this binary `missing_docs` flags the crate doc above and any `pub` item or `pub mod` of
// the crate root; the modules below are private, so their items are documented by review,
// not by the lint.
#![warn(missing_docs)]

mod case;
mod copy;
mod cumsum;
mod filter;
mod host;
mod report;
mod sample;
mod sets;
mod sort;
mod timing;
mod topk;

use clap::Parser;

use case::{Case, Family};
use report::{Report, Row};

#[derive(Parser, Debug)]
#[command(version, about = "Benchmark sieve against stock Burn on one device")]
struct Cli {
    /// Small sizes, for a smoke run (CI).
    #[arg(long)]
    quick: bool,
    /// Write the rows as JSON to this path.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Timed runs per row (at least 10).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(10..))]
    runs: u32,
    /// Run only these cases: `op:shape:dtype[:key=value,...]`, e.g.
    /// `cumsum:1048576:f32`, `cumsum:4096x32768:f32:dim=0`,
    /// `mask_select:16777216:f32:density=0.01`, `argwhere:268435456:bool`,
    /// `compact_rows:64x1048576:f32:density=0.1,strategy=gather`. Repeatable.
    #[arg(long = "case")]
    cases: Vec<String>,
    /// Add `key=value` to every case's params (the standard rows or `--case`s), e.g.
    /// `--with flush=1`; a case's own value wins. Repeatable.
    #[arg(long = "with", value_parser = parse_param)]
    with: Vec<(String, String)>,
    /// Target length of one timed sample in ms (batches of up to 64 calls per 3 ms): longer
    /// samples spread the pipeline's fill (the first launch reaching the device through
    /// Fusion's and CubeCL's threads) over more calls.
    #[arg(long, default_value_t = 3.0)]
    sample_ms: f64,
    /// Untimed samples for this long (ms) before each row's timed ones. NVIDIA's driver holds
    /// a CUDA process at boost clocks but lets a Vulkan process's SM clock fall to idle
    /// (345 MHz on the H200) once its GPU looks idle, and most of a bench row is host work,
    /// so without a sustained load first a Vulkan row times the op at the idle clock
    /// (`bench/results/h200/27-c`..`27-e`: the clock took up to 2 s to climb back). Default: 2000
    /// through wgpu (but `--quick`), else 0.
    #[arg(long)]
    warm_ms: Option<f64>,
    /// Skip stock Burn rows (they can take minutes where Burn is quadratic).
    #[arg(long)]
    no_burn: bool,
    /// Only print the host's cost per call of the steps between a Burn op and its kernels.
    #[arg(long)]
    host_costs: bool,
}

/// The device the rows run on: Burn's default; on wgpu builds with `SIEVE_BENCH_MEMORY` set
/// (`exclusive`: one pool page per allocation; `adaptive`: CubeCL's default), a wgpu runtime
/// initialised with that memory configuration (issue 16's probe of where Vulkan's large
/// buffers lose).
fn bench_device() -> burn::tensor::Device {
    #[cfg(any(feature = "wgpu", feature = "vulkan"))]
    if let Ok(mode) = std::env::var("SIEVE_BENCH_MEMORY") {
        use burn::tensor::wgpu::MemoryConfiguration;
        let config = match mode.as_str() {
            "exclusive" => MemoryConfiguration::ExclusivePages,
            "adaptive" => MemoryConfiguration::Adaptive,
            other => {
                eprintln!("SIEVE_BENCH_MEMORY={other}: expected exclusive or adaptive");
                std::process::exit(2)
            }
        };
        eprintln!("wgpu memory configuration: {config:?}");
        return burn::tensor::Device::wgpu_options()
            .memory_config(config)
            .init()
            .expect("initialise the wgpu runtime with SIEVE_BENCH_MEMORY's configuration");
    }
    burn::tensor::Device::default()
}

fn main() {
    let cli = Cli::parse();
    let device = bench_device();
    let client = sieve_burn::cube_client(&device).expect("sieve-bench needs a CubeCL device");
    let caps = sieve::DeviceCaps::of(&client);
    if cli.host_costs {
        host::print_costs(&device, &client);
        return;
    }
    let mut cases: Vec<Case> = if cli.cases.is_empty() {
        case::standard(cli.quick)
    } else {
        cli.cases
            .iter()
            .map(|s| {
                Case::parse(s).unwrap_or_else(|e| {
                    eprintln!("--case {s}: {e}");
                    std::process::exit(2)
                })
            })
            .collect()
    };
    for case in &mut cases {
        for (key, value) in &cli.with {
            case.params.insert_if_absent(key, value);
        }
    }
    // `--with` params go to every case, read by the ops they apply to.
    let with_keys: Vec<&str> = cli.with.iter().map(|(k, _)| k.as_str()).collect();

    let warm_ms = cli
        .warm_ms
        .unwrap_or(if caps.runtime.starts_with("wgpu") && !cli.quick {
            2000.0
        } else {
            0.0
        });
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let mut report = Report::new(&caps, format!("{command} (warm-ms {warm_ms})"));
    let bench = timing::Bench {
        device: &device,
        client: &client,
        sampling: timing::Sampling {
            runs: cli.runs as usize,
            sample_ms: cli.sample_ms,
            warm_ms,
        },
        with_burn: !cli.no_burn,
        backend: report::backend_name(&caps),
    };
    let copy_len = cases.iter().map(Case::numel).max().unwrap_or(1 << 20);
    report.push(copy::time_copy(
        &bench,
        &Case::new(case::Op::Copy, &[copy_len], "f32", &[]),
    ));
    for case in &cases {
        eprintln!("running {case}");
        let rows: Vec<Row> = match case.op.family() {
            Family::Copy => vec![copy::time_copy(&bench, case)],
            Family::Scan => cumsum::run(case, &bench),
            Family::Filter => filter::run(case, &bench),
            Family::Sort => sort::run(case, &bench),
            Family::Topk => topk::run(case, &bench),
            Family::Sample => sample::run(case, &bench),
            Family::Sets => sets::run(case, &bench),
        };
        for row in rows {
            report.push(row);
        }
        for key in case.params.unread(&with_keys) {
            eprintln!(
                "warning: {case}: no row of this case read `{key}` (misspelt, or not a key of \
                 this op's bench): its rows ran without it"
            );
        }
        // Rewritten after every case, so a run stopped by a time limit keeps what it timed.
        if let Some(path) = &cli.json {
            report.write_json(path).expect("writing the JSON report");
        }
    }
    report.print();
    if let Some(path) = &cli.json {
        eprintln!("wrote {}", path.display());
    }
}

/// A `--with` param: `key=value`.
fn parse_param(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .ok_or_else(|| format!("`{s}` is not key=value"))
}
