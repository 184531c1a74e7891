//! One effective ratio: `train`, `eval` and `bench` report the same ratio
//! and effective ratio for the same table on the same pages (the held-out
//! pages of one workload of the shipped corpus), because all three compute
//! it with `cannery_lab::figures` and attribute the workload's zero and
//! same-filled pages (seen, and counted at capture) the same way. The
//! Python package's `train` and `evaluate` are checked against each other in
//! python/tests/test_train.py.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// A workload with many zero and same-filled pages counted at capture.
const WORKLOAD: &str = "corpora/fleet-snapshots/node-service";

fn cannery(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn figures(v: &Value) -> (f64, f64) {
    (
        v["ratio"].as_f64().unwrap(),
        v["effective_ratio"].as_f64().unwrap(),
    )
}

#[test]
fn train_eval_and_bench_agree_on_the_effective_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let train = cannery(&[
        "train",
        "--corpus",
        WORKLOAD,
        "--out",
        &s(&out),
        "--no-peers",
        "--json",
    ]);
    let w = &train["workloads"][0];
    assert_eq!(w["name"], "node-service");
    let trained = figures(&w["modes"]["canned-fast"]);
    // Zero and same-filled pages make a difference here.
    assert!(trained.1 > trained.0, "{trained:?}");
    let table = s(&out.join("node-service.table.json"));

    let eval = cannery(&[
        "eval",
        "--table",
        &table,
        "--corpus",
        WORKLOAD,
        "--part",
        "test",
        "--no-peers",
        "--json",
    ]);
    let e = &eval["workloads"][0];
    assert_eq!(e["pages"], w["test_pages"]);
    let evaluated = figures(&e["modes"]["canned-fast"]);
    assert_eq!(evaluated, trained);

    let bench = cannery(&[
        "bench",
        "--corpus",
        WORKLOAD,
        "--table",
        &table,
        "--max-pages",
        "1000000",
        "--reps",
        "1",
        "--no-cycled",
        "--json",
    ]);
    let b = bench
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["codec"] == "canned-fast")
        .expect("bench measured canned-fast");
    assert_eq!(b["pages"], w["test_pages"]);
    let benched = figures(b);
    // bench does not round to 4 decimals.
    assert!(
        (benched.0 - trained.0).abs() < 1e-4,
        "{benched:?} {trained:?}"
    );
    assert!(
        (benched.1 - trained.1).abs() < 1e-4,
        "{benched:?} {trained:?}"
    );
}

/// On a workload with more held-out pages than `--eval-pages`, `train` and
/// `eval --part test` sample the same pages and report the same figures.
#[test]
fn train_and_eval_sample_the_same_held_out_pages() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let workload = "corpora/fleet-snapshots/gcc-build";
    let train = cannery(&[
        "train",
        "--corpus",
        workload,
        "--out",
        &s(&out),
        "--no-peers",
        "--json",
        "--eval-pages",
        "300",
    ]);
    let w = &train["workloads"][0];
    let table = s(&out.join("gcc-build.table.json"));
    let eval = cannery(&[
        "eval",
        "--table",
        &table,
        "--corpus",
        workload,
        "--part",
        "test",
        "--no-peers",
        "--json",
        "--eval-pages",
        "300",
    ]);
    let e = &eval["workloads"][0];
    assert!(e["sampled_from"].as_u64().unwrap() > 300, "{e}");
    assert_eq!(e["pages"], w["test_pages"]);
    assert_eq!(
        figures(&e["modes"]["canned-fast"]),
        figures(&w["modes"]["canned-fast"])
    );
}
