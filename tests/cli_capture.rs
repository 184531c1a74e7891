//! The `cannery capture` and `cannery corpus` commands end to end: the
//! shipped corpus summarizes as documented and scans clean, a planted secret
//! is flagged, and a spawned workload is captured with a clean environment.

use std::path::Path;
use std::process::{Command, Output};

fn cannery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn shipped_corpus_summary() {
    let o = cannery(&["corpus", "info", "fleet-snapshots", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let workloads = v["workloads"].as_array().unwrap();
    assert!(workloads.len() >= 5, "at least five workloads");
    let total: u64 = workloads.iter().map(|w| w["pages"].as_u64().unwrap()).sum();
    assert_eq!(total, v["pages"].as_u64().unwrap());
    assert!(
        v["bytes_on_disk"].as_u64().unwrap() < 24 << 20,
        "corpus stays under 24 MiB"
    );
    for w in workloads {
        assert!(w["pages"].as_u64().unwrap() >= 1000, "{}", w["name"]);
    }
}

#[test]
fn scan_secrets_passes_the_corpus_and_flags_a_planted_key() {
    let o = cannery(&["corpus", "scan-secrets", "corpora"]);
    assert!(
        o.status.success(),
        "shipped corpus must scan clean: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let dir = tempfile::tempdir().unwrap();
    let mut page = vec![0x41u8; 4096];
    let secret = b"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY";
    page[100..100 + secret.len()].copy_from_slice(secret);
    let p = dir.path().join("leak.pages");
    std::fs::write(&p, &page).unwrap();
    let o = cannery(&["corpus", "scan-secrets", s(&p)]);
    assert_eq!(o.status.code(), Some(1), "a planted secret fails the scan");
    // Kinds are named in text as in JSON.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("leak.pages: page 0 offset 0: secret-variable "),
        "{out}"
    );

    // No corpus at all is not "no secrets found".
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.txt"), "nothing here").unwrap();
    let o = cannery(&["corpus", "scan-secrets", s(empty.path())]);
    // An error, not a finding.
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("holds no snapshot or .pages file"), "{err}");
    assert!(!err.contains("no secret-looking strings found"), "{err}");
}

#[test]
fn spawned_workload_is_captured_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.cansnap");
    // A workload that fills a buffer and keeps it resident for a while.
    let script = "x=$(head -c 300000 /dev/zero | tr '\\0' 'q'); sleep 5; echo ${#x}";
    let o = cannery(&[
        "capture",
        "--label",
        "shell",
        "--out",
        s(&out),
        "--count",
        "1",
        "--interval",
        "1s",
        "--env",
        "CANNERY_TEST=1",
        "--",
        "/bin/sh",
        "-c",
        script,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cannery(&["corpus", "info", s(&out), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["files"][0]["label"], "shell");
    assert!(w["scanned_pages"].as_u64().unwrap() > 0);
    let before = std::fs::read(&out).unwrap();
    // The snapshot exists: without --force it is kept and nothing runs.
    let o = cannery(&["capture", "--out", s(&out), "--", "/bin/true"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("already exists"), "{err}");
    // Missing workload, even with --force: a one-line error, non-zero exit,
    // and the snapshot is left as it was, with no temporary file beside it.
    let o = cannery(&[
        "capture",
        "-f",
        "--out",
        s(&out),
        "--",
        "/nonexistent/program",
    ]);
    assert!(!o.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".partial")), "{names:?}");
}
