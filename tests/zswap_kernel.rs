//! `cannery zswap-kernel` against the running kernel. These change system
//! settings (zswap, vm.page-cluster, a temporary swap file) and need root,
//! zswap built in and debugfs, so they are ignored by default; run them on
//! a machine that allows it with
//!
//! ```sh
//! sudo cargo test --release --features lzo --test zswap_kernel -- --ignored --test-threads 1
//! ```
//!
//! Each checks that every setting is back as it was afterwards.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

const PAGE: usize = 4096;

mod common;
use common::machine_state;

fn cannery(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// `zswap-kernel --setup --compare-sim --json` on the shipped corpus with
/// `args`: its report, once it succeeded and every setting is back.
fn session(args: &[&str]) -> serde_json::Value {
    let before = machine_state();
    let mut all = vec![
        "zswap-kernel",
        "--setup",
        "--corpus",
        "fleet-snapshots",
        "--compare-sim",
        "--json",
    ];
    all.extend_from_slice(args);
    let out = cannery(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(machine_state(), before, "settings restored");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A corpus of workloads each made of one page repeated: every object of a
/// workload has the same size, so the simulator's pool must be exact.
fn uniform_corpus(dir: &Path) {
    let mut x = 0x2545f4914f6cdd1du64;
    for (name, random_bytes) in [
        ("small", 40usize),
        ("medium", 900),
        ("large", 2500),
        ("raw", 4096),
    ] {
        let mut page: Vec<u8> = (0..random_bytes)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        page.extend((0..PAGE - random_bytes).map(|i| (i % 7) as u8 + 1));
        fs::create_dir_all(dir.join(name)).unwrap();
        fs::write(dir.join(name).join("p.pages"), page.repeat(700)).unwrap();
    }
    // Zero pages go to swap's zero map, never to zswap.
    fs::create_dir_all(dir.join("zero")).unwrap();
    fs::write(dir.join("zero").join("p.pages"), vec![0u8; 100 * PAGE]).unwrap();
}

#[test]
#[ignore = "needs root, zswap and debugfs; changes and restores zswap settings and swap"]
fn the_kernel_stores_what_the_simulator_predicts_and_everything_is_restored() {
    let before = machine_state();
    let dir = tempfile::tempdir().unwrap();
    uniform_corpus(dir.path());
    let out = cannery(&[
        "zswap-kernel",
        "--setup",
        "--corpus",
        dir.path().to_str().unwrap(),
        "--compressor",
        "deflate",
        "lzo",
        "--compare-sim",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(machine_state(), before, "settings restored");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["restore_failures"].as_array().unwrap().is_empty());
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * 5);
    for r in rows {
        let m = &r["measured"];
        let name = format!("{} {}", r["compressor"], r["workload"]);
        assert_eq!(m["mismatches"], 0, "{name}: every page came back intact");
        assert_eq!(m["stored_after_swapin"], 0, "{name}");
        assert_eq!(
            m["swapped_out"], m["pages"],
            "{name}: every page was paged out"
        );
        if r["workload"] == "zero" {
            assert_eq!(m["stored"], 0, "{name}: zero pages never reach zswap");
            assert_eq!(m["pool_bytes"], 0, "{name}");
            continue;
        }
        assert_eq!(m["stored"], 700, "{name}");
        if r["workload"] == "raw" {
            assert_eq!(m["incompressible"], 700, "{name}: stored as they are");
        }
        // Deflate always has a model; lzo only in a build with `lzo`.
        if r["compressor"] == "deflate" || !r["predicted"].is_null() {
            assert_eq!(r["stored_error"], 0, "{name}");
            if r["shared_pool"] == false {
                assert_eq!(r["pool_error"].as_f64(), Some(0.0), "{name}: {r}");
            }
        }
    }
}

#[test]
#[ignore = "needs root, zswap and debugfs; changes and restores zswap settings and swap"]
fn the_shipped_corpus_is_predicted_within_two_percent() {
    let report = session(&["--compressor", "deflate"]);
    for r in report["rows"].as_array().unwrap() {
        assert_eq!(r["measured"]["mismatches"], 0);
        if r["shared_pool"] == false {
            let e = r["pool_error"].as_f64().unwrap();
            assert!(e.abs() <= 0.02, "{}: {:+.2} %", r["workload"], e * 100.0);
        }
    }
}

/// Small pools: 512 pages of each shipped workload, each compressor with a
/// model. Here the last, partly filled zspage of every size class is a
/// large share of the pool, so zspage lengths must be the kernel's
/// (`calculate_zspage_chain_size`, crates/zswap/src/zsmalloc.rs): with the
/// pre-6.3 rule the errors reached -3.5 % (deflate) and +5.6 % (lzo).
#[test]
#[ignore = "needs root, zswap and swap"]
fn small_pools_are_predicted_within_two_percent() {
    let report = session(&["--compressor", "deflate", "lzo", "--max-pages", "512"]);
    let mut checked = 0;
    for r in report["rows"].as_array().unwrap() {
        let name = format!("{} {}", r["compressor"], r["workload"]);
        let m = &r["measured"];
        assert_eq!(m["mismatches"], 0, "{name}");
        assert_eq!(m["pages"], 512, "{name}");
        if r["predicted"].is_null() {
            // lzo without the `lzo` feature: no model, nothing to compare.
            assert_eq!(r["compressor"], "lzo", "{name}");
            continue;
        }
        // From an empty pool: nothing of another process's shares our zspages.
        assert_eq!(m["pool_bytes_before"], 0, "{name}: the pool was not empty");
        assert_eq!(r["shared_pool"], false, "{name}");
        let e = r["pool_error"].as_f64().unwrap();
        assert!(e.abs() <= 0.02, "{name}: {:+.2} %", e * 100.0);
        checked += 1;
    }
    // Five workloads under deflate at least, each a measurement that ran.
    assert!(checked >= 5, "{checked} rows compared");
}

/// Starts `zswap-kernel --setup` on the shipped corpus and returns it, with
/// its stderr, once the first measurement has begun (the machine changed).
fn setup_session_in_flight() -> (std::process::Child, std::process::ChildStderr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args([
            "zswap-kernel",
            "--setup",
            "--corpus",
            "fleet-snapshots",
            "--compressor",
            "deflate",
            "lzo",
            "lzo-rle",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("deflate: ") {
        let n = std::io::Read::read(&mut stderr, &mut buf).unwrap();
        assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    (child, stderr)
}

#[test]
#[ignore = "needs root, zswap and debugfs; changes and restores zswap settings and swap"]
fn sigterm_mid_session_restores_every_setting() {
    let before = machine_state();
    let (mut child, mut stderr) = setup_session_in_flight();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(rest.contains("interrupted"), "{rest}");
    assert_eq!(machine_state(), before, "settings restored after SIGTERM");
}
