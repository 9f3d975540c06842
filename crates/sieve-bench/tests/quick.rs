//! The bench must never rot: a `--quick` run on the test device finishes, writes the JSON
//! schema, and every sieve row's output matched its CPU reference.

use std::process::Command;

/// Runs the bench with `args` and `--json`, asserts it succeeded, and returns its report.
fn report_of(name: &str, args: &[&str]) -> serde_json::Value {
    let json = std::env::temp_dir().join(format!("sieve-bench-{name}-{}.json", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_sieve-bench"))
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("run sieve-bench");
    println!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(
        output.status.success(),
        "sieve-bench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
    report
}

#[test]
fn quick_run_checks_and_times_every_row() {
    let report = report_of("quick", &["--quick", "--runs", "10"]);
    for key in ["device", "backend", "command", "rows"] {
        assert!(report.get(key).is_some(), "report lacks `{key}`");
    }
    let rows = report["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["impl"] == "copy" && r["median_ms"].is_number()),
        "no timed copy row"
    );
    let sieve: Vec<_> = rows.iter().filter(|r| r["impl"] == "sieve").collect();
    assert!(!sieve.is_empty());
    for r in sieve {
        assert!(
            r["status"] == "ok" || (r["status"] == "skipped" && r["params"]["strategy"] != "auto"),
            "sieve row not ok: {r}"
        );
        for key in [
            "op",
            "shape",
            "dtype",
            "params",
            "backend",
            "min_ms",
            "max_ms",
            "floor_bytes",
            "gbps",
        ] {
            assert!(r.get(key).is_some(), "row lacks `{key}`: {r}");
        }
    }
}

/// A case whose dtype field holds its params (`i32,k=8` for `i32:k=8`) is refused, not run on
/// other data than it names; `--with` adds a param to every case, and a case's own value wins.
#[test]
fn misspelt_cases_are_refused_and_with_params_reach_every_case() {
    let bench = env!("CARGO_BIN_EXE_sieve-bench");
    let bad = Command::new(bench)
        .args([
            "--no-burn",
            "--runs",
            "10",
            "--case",
            "topk_with_indices:4x64:i32,k=8",
        ])
        .output()
        .expect("run sieve-bench");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success(), "a misspelt case ran");
    assert!(
        stderr.contains("dtype `i32,k=8`"),
        "unclear refusal: {stderr}"
    );

    let report = report_of(
        "with",
        &[
            "--no-burn",
            "--runs",
            "10",
            "--with",
            "flush=1",
            "--case",
            "sort_with_indices:4x64:f32",
            "--case",
            "topk_with_indices:4x64:f32:k=8,flush=0",
        ],
    );
    let flush_of = |op: &str| -> Vec<String> {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["op"] == op && r["impl"] == "sieve")
            .map(|r| {
                r["params"]["flush"]
                    .to_string()
                    .trim_matches('"')
                    .to_string()
            })
            .collect()
    };
    let sort = flush_of("sort_with_indices");
    let topk = flush_of("topk_with_indices");
    assert!(
        !sort.is_empty() && sort.iter().all(|f| f == "1"),
        "sort rows: {sort:?}"
    );
    assert!(
        !topk.is_empty() && topk.iter().all(|f| f == "0"),
        "topk rows: {topk:?}"
    );
    for r in report["rows"].as_array().unwrap() {
        if r["impl"] == "sieve" && r["params"]["strategy"] == "auto" {
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
}

/// The `cube` rows (sieve-burn's CubeBackend op with no Fusion in front) are checked against
/// the CPU reference like every sieve row; every timed row carries each thread's CPU time where
/// the system reports it; `--sample-ms` sets the batch (a longer sample takes more calls).
#[test]
fn cube_rows_thread_times_and_sample_length() {
    let cases = [
        "--case",
        "cumsum:4096:f32:dim=0",
        "--case",
        "topk_with_indices:8x128:f32:k=4",
    ];
    let batch_of = |report: &serde_json::Value, op: &str, implementation: &str| {
        let rows = report["rows"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|r| r["op"] == op && r["impl"] == implementation)
            .unwrap_or_else(|| panic!("no {implementation} row of {op}"));
        assert_eq!(row["status"], "ok", "{row}");
        if std::path::Path::new("/proc/self/task").exists() {
            let threads = row["thread_ms"].as_object().expect("thread_ms");
            assert!(!threads.is_empty(), "no thread times: {row}");
        }
        row["batch"].as_u64().unwrap()
    };
    let mut args = vec!["--no-burn", "--runs", "10", "--sample-ms", "0.01"];
    args.extend(cases);
    let short = report_of("sample-short", &args);
    args[4] = "30";
    let long = report_of("sample-long", &args);
    for op in ["cumsum", "topk_with_indices"] {
        let (a, b) = (batch_of(&short, op, "cube"), batch_of(&long, op, "cube"));
        assert!(
            a < b,
            "{op}: a 30 ms sample took {b} calls, a 0.01 ms one {a}"
        );
    }
}
