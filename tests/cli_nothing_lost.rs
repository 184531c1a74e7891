//! Nothing lost, nothing panics: commands whose output pipe closes early end
//! quietly, and bad inputs (devices, endless streams) give one clear error
//! instead of a panic or unbounded memory.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs cannery with its stdout a pipe whose reading end is closed before
/// the command writes; returns (exit code, signal, stderr).
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_printing_commands_quietly() {
    for args in [
        &["table", "show", "kernel-2024"][..],
        &["table", "show", "kernel-2024", "--json"],
        &["backends"],
        &["corpus", "info", "fleet-snapshots"],
    ] {
        let (code, signal, err) = with_closed_stdout(args);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(code, Some(101), "{args:?}: {err}");
        // Killed by SIGPIPE like cat or zstd, or done before the first write.
        assert!(
            signal == Some(SIGPIPE) || code == Some(0),
            "{args:?}: code {code:?} signal {signal:?}: {err}"
        );
    }
}

/// SIGPIPE's number on Linux.
const SIGPIPE: i32 = 13;

#[test]
fn endless_inputs_are_refused_not_read_forever() {
    let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(["corpus", "scan-secrets", "/dev/zero"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a regular file"), "{err}");
    // A table or a C header is read up to a limit, then refused.
    for args in [
        &["table", "show", "/dev/zero"][..],
        &[
            "table",
            "import",
            "--from",
            "kernel-header",
            "/dev/zero",
            "-o",
            "/dev/null",
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_cannery"))
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("larger than"), "{args:?}: {err}");
    }
}

fn run(args: &[&str]) -> std::process::Output {
    // A fixed creation time, so tables trained twice are the same bytes.
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn train_checks_its_outputs_first_and_never_writes_two_tables_to_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let snap = std::fs::read_dir("corpora/fleet-snapshots/node-service")
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Names that collide once made file-safe, and one named like the fleet table.
    for w in ["w space", "w_space", "fleet"] {
        std::fs::create_dir_all(corpus.join(w)).unwrap();
        std::fs::copy(&snap, corpus.join(w).join("a.cansnap")).unwrap();
    }
    let out = dir.path().join("tables");
    let (c, o) = (corpus.to_str().unwrap(), out.to_str().unwrap());
    let train = |extra: &[&str]| {
        let mut a = vec![
            "train",
            "--corpus",
            c,
            "--out",
            o,
            "--no-peers",
            "--eval-pages",
            "50",
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    let first = train(&[]);
    assert!(first.status.success(), "{}", stderr(&first));
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // Three workload tables and the fleet table, each with its zram
    // dictionary: eight distinct files.
    assert_eq!(files.len(), 8, "{files:?}");
    assert!(files.contains(&"fleet.dict".to_string()), "{files:?}");
    assert!(files.contains(&"fleet.table.json".to_string()), "{files:?}");
    let fleet_before = std::fs::read(out.join("fleet.table.json")).unwrap();
    // Again without --force: refused before training, nothing touched.
    let again = train(&[]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        std::fs::read(out.join("fleet.table.json")).unwrap(),
        fleet_before
    );
    // With --force: replaced (the same tables, deterministic training).
    let forced = train(&["--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(
        std::fs::read(out.join("fleet.table.json")).unwrap(),
        fleet_before
    );
    let leftovers = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".partial")
        })
        .count();
    assert_eq!(leftovers, 0);
    // An --out that names a file is a mistake, not a directory to create.
    let bad = run(&["train", "--corpus", c, "--out", "fleet.table.json"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("--out is the directory"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn merge_refuses_to_write_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.json");
    let stats = run(&[
        "stats",
        "--corpus",
        "corpora/fleet-snapshots/node-service",
        "--out",
        h.to_str().unwrap(),
    ]);
    assert!(stats.status.success(), "{}", stderr(&stats));
    let before = std::fs::read(&h).unwrap();
    let hs = h.to_str().unwrap();
    for extra in [&[][..], &["--force"]] {
        let mut a = vec!["merge", hs, hs, "--out", hs];
        a.extend_from_slice(extra);
        let o = run(&a);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&h).unwrap(), before);
}

/// A file of pages: a compressible one and an incompressible (random) one.
fn two_pages(dir: &std::path::Path) -> std::path::PathBuf {
    let mut data: Vec<u8> = (0..4096u32).map(|i| (i / 16) as u8).collect();
    data.extend(cannery_codec::rng::XorShift64Star::from_state(7).bytes(4096));
    let p = dir.join("in.pages");
    std::fs::write(&p, &data).unwrap();
    p
}

#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = two_pages(dir.path());
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let before = std::fs::read(&input).unwrap();
    let i = input.to_str().unwrap();
    for out in [i, link.to_str().unwrap()] {
        for cmd in ["compress", "decompress"] {
            let o = run(&[cmd, "--mode", "fixed", "--in", i, "--out", out, "--force"]);
            assert!(!o.status.success(), "{cmd} {out}");
            assert!(stderr(&o).contains("is the input"), "{}", stderr(&o));
            assert_eq!(std::fs::read(&input).unwrap(), before, "{cmd} {out}");
        }
    }
}

#[test]
fn pages_stream_from_pipes_and_records_decode_with_any_limit() {
    let dir = tempfile::tempdir().unwrap();
    let input = two_pages(dir.path());
    let rec = dir.path().join("r.records");
    // Standard input, as a pipe: the page count does not come from metadata.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(["compress", "--mode", "canned", "--table", "kernel-2024"])
        .args(["-i", "-", "-o", rec.to_str().unwrap(), "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&std::fs::read(&input).unwrap()).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["pages"].as_u64(), v["incompressible_pages"].as_u64()),
        (Some(2), Some(1))
    );
    // The raw (incompressible) record decodes under --max-output too, and a
    // huge limit allocates nothing it does not need.
    let back = dir.path().join("back.pages");
    for limit in ["4096", "1000000000"] {
        let o = run(&[
            "decompress",
            "--mode",
            "canned",
            "--table",
            "kernel-2024",
            "--max-output",
            limit,
            "-i",
            rec.to_str().unwrap(),
            "-o",
            back.to_str().unwrap(),
            "-f",
        ]);
        assert!(o.status.success(), "{limit}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(&back).unwrap(),
            std::fs::read(&input).unwrap()
        );
    }
    // Limits beyond 1 GiB are refused by the argument parser, not a panic.
    let o = run(&[
        "decompress",
        "--mode",
        "canned",
        "--table",
        "kernel-2024",
        "--max-output",
        "18446744073709551615",
        "-i",
        rec.to_str().unwrap(),
        "-o",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn a_snapshot_compresses_directly() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("r.records");
    let o = run(&[
        "compress",
        "--mode",
        "fixed",
        "-i",
        "corpora/fleet-snapshots/node-service/node-service.cansnap",
        "-o",
        rec.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["pages"], 4115);
}

#[test]
fn export_qpl_writes_its_counts_and_sidecar_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("t.qpl");
    let sidecar = dir.path().join("t.qpl.json");
    std::fs::write(&sidecar, b"older sidecar").unwrap();
    let args = [
        "export",
        "qpl",
        "--table",
        "kernel-2024",
        "-o",
        q.to_str().unwrap(),
    ];
    // kernel-2024 is not QPL-loadable: refused, nothing written.
    let o = run(&args);
    assert!(!o.status.success());
    assert!(!q.exists());
    // A loadable table, but the sidecar exists: refused before either is written.
    // Complete codes over all 286 + 30 symbols: 226 of 8 bits and 60 of 9;
    // 2 of 4 bits and 28 of 5 (41 bits worst case, within QPL's 56).
    let mut lengths = vec![8u8; 226];
    lengths.extend([9u8; 60]);
    lengths.extend([4u8; 2]);
    lengths.extend([5u8; 28]);
    let raw = dir.path().join("t.lengths");
    std::fs::write(&raw, &lengths).unwrap();
    let t = dir.path().join("t.table.json");
    let imported = run(&[
        "table",
        "import",
        "--from",
        "lengths",
        raw.to_str().unwrap(),
        "-o",
        t.to_str().unwrap(),
    ]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let o = run(&[
        "export",
        "qpl",
        "--table",
        t.to_str().unwrap(),
        "-o",
        q.to_str().unwrap(),
    ]);
    if o.status.success() {
        panic!("an existing sidecar must be kept: {}", stderr(&o));
    }
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert!(!q.exists(), "no counts file without its sidecar");
    assert_eq!(std::fs::read(&sidecar).unwrap(), b"older sidecar");
    // With --force both are written.
    let o = run(&[
        "export",
        "qpl",
        "--table",
        t.to_str().unwrap(),
        "-o",
        q.to_str().unwrap(),
        "-f",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&q).unwrap().len(), 316 * 4);
    assert_ne!(std::fs::read(&sidecar).unwrap(), b"older sidecar");
}
