//! Rows, the printed table and the JSON file.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::case::Case;
use crate::timing::Stats;

/// One line of the report. `median_ms` and friends are `None` when the row was not timed
/// (`status` says why: `wrong`, `skipped`).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub op: String,
    pub shape: Vec<usize>,
    pub dtype: String,
    pub params: Map<String, Value>,
    #[serde(rename = "impl")]
    pub implementation: String,
    pub backend: String,
    pub median_ms: Option<f64>,
    pub min_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub floor_bytes: u64,
    pub gbps: Option<f64>,
    /// Calls per timed sample (see `timing`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
    /// Timed samples (fewer than `--runs` for a call past `timing::SLOW_CALL_MS`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    /// Host time per call to queue it (see `timing::Stats::queue_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_ms: Option<f64>,
    /// CPU ms per call of each thread (see `timing::Stats::thread_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_ms: Option<std::collections::BTreeMap<String, f64>>,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Row {
    /// A row for `case` run by `implementation`, with extra params (e.g. the strategy).
    pub fn new(
        case: &Case,
        implementation: &str,
        backend: &str,
        floor_bytes: u64,
        extra: &[(&str, &str)],
    ) -> Self {
        let mut params = Map::new();
        for (k, v) in case
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(extra.iter().copied())
        {
            let value = v
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| v.parse::<f64>().map(Value::from))
                .unwrap_or_else(|_| Value::from(v));
            params.insert(k.to_string(), value);
        }
        Row {
            op: case.op.name().to_string(),
            shape: case.shape.clone(),
            dtype: case.dtype.clone(),
            params,
            implementation: implementation.into(),
            backend: backend.into(),
            median_ms: None,
            min_ms: None,
            max_ms: None,
            floor_bytes,
            gbps: None,
            batch: None,
            samples: None,
            queue_ms: None,
            thread_ms: None,
            status: "ok".into(),
            note: None,
        }
    }

    pub fn timed(mut self, stats: Stats) -> Self {
        self.median_ms = Some(stats.median_ms);
        self.min_ms = Some(stats.min_ms);
        self.max_ms = Some(stats.max_ms);
        self.gbps = Some(self.floor_bytes as f64 / (stats.median_ms * 1e-3) / 1e9);
        self.batch = Some(stats.batch);
        self.samples = Some(stats.samples);
        self.queue_ms = Some(stats.queue_ms);
        self.thread_ms = Some(stats.thread_ms);
        self
    }

    /// Timed by `time` when the output was right (`wrong` is `None`); otherwise reported as
    /// wrong, with the reason, and never timed.
    pub fn checked(self, wrong: Option<String>, time: impl FnOnce() -> Stats) -> Self {
        match wrong {
            Some(why) => self.untimed("wrong", why),
            None => self.timed(time()),
        }
    }

    /// A stock-Burn row: skipped under `--no-burn` (`with_burn` false), not run where
    /// `not_run` says why (stock Burn lacks the op, or would take minutes at this size: its
    /// status and reason), else `measure`d (checked and timed).
    pub fn stock(
        self,
        with_burn: bool,
        not_run: Option<(&str, String)>,
        measure: impl FnOnce(Self) -> Self,
    ) -> Self {
        match not_run {
            _ if !with_burn => self.untimed("skipped", "--no-burn".into()),
            Some((status, why)) => self.untimed(status, why),
            None => measure(self),
        }
    }

    pub fn untimed(mut self, status: &str, note: String) -> Self {
        self.status = status.into();
        self.note = Some(note);
        self
    }
}

#[derive(Serialize)]
pub struct Report {
    device: String,
    backend: String,
    /// What sieve read of the device (`DeviceCaps`): plane width and operations, forward
    /// progress, shared memory, ...; so a row's strategy and tuning can be told from the file.
    caps: String,
    command: String,
    rows: Vec<Row>,
}

impl Report {
    pub fn new(caps: &sieve::DeviceCaps, command: String) -> Self {
        Report {
            device: caps.device_name.clone(),
            backend: backend_name(caps),
            caps: format!("{caps:?}"),
            command,
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    pub fn print(&self) {
        let copy_gbps = self
            .rows
            .iter()
            .find(|r| r.implementation == "copy")
            .and_then(|r| r.gbps);
        println!("device: {} ({})", self.device, self.backend);
        println!("caps: {}", self.caps);
        println!(
            "{:<12} {:<14} {:<5} {:<44} {:<6} {:>10} {:>10} {:>10} {:>8} {:>7} {:>9}  status",
            "op",
            "shape",
            "dtype",
            "params",
            "impl",
            "median ms",
            "min ms",
            "max ms",
            "GB/s",
            "% copy",
            "queue ms"
        );
        for r in &self.rows {
            let shape: Vec<String> = r.shape.iter().map(|d| d.to_string()).collect();
            let params = Value::Object(r.params.clone()).to_string();
            let f = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_else(|| "-".into());
            let pct = match (r.gbps, copy_gbps) {
                (Some(g), Some(c)) => format!("{:.0}%", 100.0 * g / c),
                _ => "-".into(),
            };
            println!(
                "{:<12} {:<14} {:<5} {:<44} {:<6} {:>10} {:>10} {:>10} {:>8} {:>7} {:>9}  {}{}",
                r.op,
                shape.join("x"),
                r.dtype,
                params,
                r.implementation,
                f(r.median_ms),
                f(r.min_ms),
                f(r.max_ms),
                r.gbps
                    .map(|g| format!("{g:.0}"))
                    .unwrap_or_else(|| "-".into()),
                pct,
                f(r.queue_ms),
                r.status,
                r.note
                    .as_ref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default(),
            );
            if let Some(threads) = r.thread_ms.as_ref().filter(|t| !t.is_empty()) {
                let cpu: Vec<String> = threads
                    .iter()
                    .map(|(n, ms)| format!("{n} {ms:.4}"))
                    .collect();
                println!("{:<12} cpu ms a call by thread: {}", "", cpu.join(", "));
            }
        }
    }

    pub fn write_json(&self, path: &std::path::Path) -> std::io::Result<()> {
        std::fs::write(path, serde_json::to_string_pretty(self)?)
    }
}

/// `cuda`, `hip`, `vulkan`, `wgpu` ...: the runtime the rows ran on.
pub fn backend_name(caps: &sieve::DeviceCaps) -> String {
    match caps.runtime {
        r if r.starts_with("wgpu") && cfg!(feature = "vulkan") => "vulkan".into(),
        r if r.starts_with("wgpu") => "wgpu".into(),
        r => r.into(),
    }
}

/// `None` when `got` equals `expected`; otherwise how many elements differ, the first one, and
/// the last elements of both (where a wrong running count shows).
pub fn mismatch<T: PartialEq + std::fmt::Debug>(got: &[T], expected: &[T]) -> Option<String> {
    if got.len() != expected.len() {
        return Some(format!(
            "{} elements, expected {}",
            got.len(),
            expected.len()
        ));
    }
    let bad = got.iter().zip(expected).filter(|(g, e)| g != e).count();
    let first = got.iter().zip(expected).position(|(g, e)| g != e)?;
    Some(format!(
        "{bad}/{} elements wrong, first at {first}: {:?} instead of {:?} (last: {:?} instead of {:?})",
        got.len(),
        got[first],
        expected[first],
        got[got.len() - 1],
        expected[expected.len() - 1]
    ))
}
