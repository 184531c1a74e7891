//! `cannery zram-kernel` against the running kernel. These add a zram
//! device (and remove it) and need root and zram with `hot_add`, so they
//! are ignored by default; run them on a machine that allows it with
//!
//! ```sh
//! sudo flock /tmp/cannery-machine.lock cargo test --release --test zram_kernel -- --ignored --test-threads 1
//! ```
//!
//! Each checks that the zram devices are the same afterwards as before.

mod common;

use common::cannery;
use std::fs;
use std::io::Read;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The zram devices that exist.
fn zram_devices() -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir("/sys/block")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("zram"))
        .collect();
    v.sort();
    v
}

#[test]
#[ignore = "needs root and zram"]
fn lz4_with_and_without_a_dictionary_and_lzo_rle_give_every_page_back() {
    let before = zram_devices();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let out = cannery(&[
        "train",
        "--corpus",
        "fleet-snapshots",
        "--no-peers",
        "-q",
        "-o",
        t.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cannery(&[
        "zram-kernel",
        "--corpus",
        "fleet-snapshots",
        "--tables",
        t.to_str().unwrap(),
        "--compressor",
        "lz4",
        "lzo-rle",
        "--max-pages",
        "300",
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(zram_devices(), before, "the device is removed");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r["restore_failures"].as_array().unwrap().is_empty());
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6 * 3, "6 workloads × (lz4, lz4+dict, lzo-rle)");
    let (mut with, mut without) = (0u64, 0u64);
    for row in rows {
        let pages = row["pages"].as_u64().unwrap();
        let zero = row["zero_pages_added"].as_u64().unwrap();
        let mm = &row["mm_stat"];
        assert_eq!(pages, 300 + zero, "{row}");
        assert_eq!(row["pages_compared"].as_u64(), Some(pages), "{row}");
        assert_eq!(row["mismatches"].as_u64(), Some(0), "{row}");
        assert_eq!(mm["orig_data_size"].as_u64(), Some(pages * 4096), "{row}");
        assert!(mm["same_pages"].as_u64().unwrap() >= zero, "{row}");
        let data = mm["compr_data_size"].as_u64().unwrap();
        assert!(data > 0 && data < pages * 4096, "{row}");
        assert!(mm["mem_used_total"].as_u64().unwrap() >= data, "{row}");
        let dict = !row["dictionary"].is_null();
        assert_eq!(dict, !row["dictionary_change"].is_null(), "{row}");
        if dict {
            assert_eq!(row["compressor"], "lz4", "{row}");
        }
        if row["compressor"] == "lz4" {
            *if dict { &mut with } else { &mut without } += data;
        }
    }
    assert!(with < without, "lz4 with dictionaries {with} vs {without}");
}

/// Starts `zram-kernel` on the whole corpus and returns once it has begun
/// measuring (its status line for the first compressor), with the status
/// lines so far.
fn start_measuring() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args([
            "zram-kernel",
            "--corpus",
            "fleet-snapshots",
            "--compressor",
            "lzo-rle",
            "lz4",
            "--part",
            "all",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains("lzo-rle: ") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "ended early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    child.stderr = Some(stderr);
    (child, String::from_utf8_lossy(&seen).into_owned())
}

#[test]
#[ignore = "needs root and zram"]
fn sigterm_mid_run_removes_the_device() {
    let before = zram_devices();
    let (mut child, seen) = start_measuring();
    assert!(seen.contains("added /dev/zram"), "{seen}");
    assert!(zram_devices().len() > before.len(), "a device of its own");
    std::thread::sleep(std::time::Duration::from_millis(200));
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let mut rest = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted"), "{rest}");
    assert_eq!(zram_devices(), before, "device removed after SIGTERM");
}

#[test]
#[ignore = "needs root and zram"]
fn sigkill_leaves_the_device_to_cannery_restore() {
    let before = zram_devices();
    let (mut child, _) = start_measuring();
    child.kill().unwrap();
    child.wait().unwrap();
    let left = zram_devices();
    assert_eq!(left.len(), before.len() + 1, "SIGKILL leaves the device");
    // A new run refuses while the dead run's journal waits.
    let out = cannery(&["zram-kernel", "--corpus", "fleet-snapshots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannery restore"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cannery(&["restore"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("zram"), "{text}");
    assert_eq!(zram_devices(), before, "`cannery restore` removed it");
}
