//! The bench must never rot: a `--quick` run on the test device finishes, writes the JSON
//! schema, and every sieve row's output matched its CPU reference.

use std::process::Command;

#[test]
fn quick_run_checks_and_times_every_row() {
    let json = std::env::temp_dir().join(format!("sieve-bench-quick-{}.json", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_sieve-bench"))
        .args(["--quick", "--runs", "10", "--json"])
        .arg(&json)
        .output()
        .expect("run sieve-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "sieve-bench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).ok();
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
