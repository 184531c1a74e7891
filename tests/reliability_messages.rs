//! The reliability harness's message and corpus-reader cases (issue #33):
//! messages that once misled (a cause printed twice, a doubled word, the
//! wrong advice, raw control characters), unreadable page files (an error
//! naming the file, or `--skip-unreadable`), and secrets in a snapshot's
//! metadata. The cells of input class × command are in
//! `tests/reliability.rs`, the resource cases in `reliability_resources.rs`.

mod common;

use common::measure::{is_root, run};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Runs `cannery ARGS` in `d` (as `nobody` if `drop_root`); exit status,
/// stdout and stderr.
fn run_out(d: &Path, a: &[&str], drop_root: bool) -> (Option<i32>, String, String) {
    let out = d.join(".stdout");
    let _ = std::fs::remove_file(&out);
    let f = std::fs::File::create(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o666)).unwrap();
    let r = run(d, &args(a), Stdio::from(f), drop_root);
    let stdout = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
    std::fs::remove_file(&out).unwrap();
    (r.code, stdout, r.stderr)
}

/// A directory of pages readable by `nobody`.
fn world_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

fn pages(n: usize) -> Vec<u8> {
    (0..n * 4096)
        .map(|i| (i % 251) as u8 ^ (i / 4096) as u8)
        .collect()
}

#[test]
fn messages_say_what_happened_once_and_escaped() {
    let dir = world_dir();
    let d = dir.path();
    std::fs::write(d.join("p.pages"), pages(4)).unwrap();
    std::fs::create_dir(d.join("dd")).unwrap();
    std::os::unix::fs::symlink("loop2", d.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", d.join("loop2")).unwrap();
    let evil = "w\x1b[31mred\u{202e}txt";
    std::fs::create_dir_all(d.join("c").join(evil)).unwrap();
    std::fs::write(d.join("c").join(evil).join("a.pages"), pages(2)).unwrap();
    // (args, exit status, wanted in stderr, not wanted in stderr)
    let cases: &[(&[&str], i32, &str, &str)] = &[
        (
            &[
                "zswap-sim",
                "--mode",
                "fixed",
                "--max-pages",
                "0",
                "--corpus",
                "p.pages",
            ],
            2,
            "0 measures nothing",
            "no pages",
        ),
        (
            &[
                "bench",
                "--max-pages",
                "0",
                "--corpus",
                "p.pages",
                "-o",
                "b.md",
            ],
            2,
            "0 measures nothing",
            "no workload",
        ),
        (
            &[
                "table",
                "import",
                "--from",
                "lengths",
                "/dev/zero",
                "-o",
                "t.json",
            ],
            2,
            "too large for a lengths file",
            "file file",
        ),
        (
            &["table", "show", "loop1"],
            2,
            "symbolic links",
            "no such file",
        ),
        (&["table", "show", evil], 2, "not a built-in", "\x1b"),
        (&["corpus", "info", "c"], 0, "", "\x1b"),
    ];
    let mut failures = Vec::new();
    for (a, want, has, hasnt) in cases {
        let (code, stdout, stderr) = run_out(d, a, false);
        let bad = code != Some(*want)
            || !stderr.contains(has)
            || stderr.contains(hasnt)
            || stdout.contains(['\x1b', '\u{202e}']);
        if bad {
            failures.push(format!("{a:?}: exit {code:?}: {stderr}{stdout}"));
        }
    }
    // A cause printed once, not again after the message that holds it.
    let (code, _, stderr) = run_out(
        d,
        &["decompress", "--mode", "fixed", "--in", "dd", "-o", "x"],
        false,
    );
    if code != Some(2) || stderr.matches("Is a directory").count() != 1 {
        failures.push(format!("decompress of a directory: {code:?}: {stderr}"));
    }
    // The workload's name is shown, escaped.
    let (_, stdout, _) = run_out(d, &["corpus", "info", "c"], false);
    if !stdout.contains("w\\u001b[31mred\\u202etxt") {
        failures.push(format!("corpus info: the name is not escaped: {stdout}"));
    }
    // Root that may not read PID 1 (a container) is not told to be root.
    if is_root() {
        let (code, _, stderr) = run_out(
            d,
            &["capture", "--pid", "1", "--count", "1", "-o", "p1.cansnap"],
            false,
        );
        if code != Some(0) && stderr.contains("run cannery as root") {
            failures.push(format!("capture --pid 1 as root: {stderr}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A page file the reader may not open is an error naming it; with
/// `--skip-unreadable` it is left out and the rest is read. Runs as
/// `nobody` when the suite is root (root reads a mode-000 file).
#[test]
fn an_unreadable_snapshot_is_named_or_skipped_on_request() {
    let dir = world_dir();
    let d = dir.path();
    for w in ["alpha", "beta"] {
        let wd = d.join("c").join(w);
        std::fs::create_dir_all(&wd).unwrap();
        std::fs::set_permissions(&wd, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(wd.join("x.pages"), pages(40)).unwrap();
    }
    std::fs::set_permissions(d.join("c"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let locked = d.join("c/beta/x.pages");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut failures = Vec::new();
    for cmd in [
        &["corpus", "info", "c"][..],
        &["corpus", "scan-secrets", "c"],
        &["stats", "--corpus", "c", "-o", "h.json"],
    ] {
        let (code, _, stderr) = run_out(d, cmd, true);
        if code != Some(2) || !stderr.contains("beta/x.pages") {
            failures.push(format!("{cmd:?}: exit {code:?}: {stderr}"));
        }
        let mut skip = vec!["--skip-unreadable"];
        skip.extend(cmd);
        let (code, stdout, stderr) = run_out(d, &skip, true);
        if code != Some(0)
            || (cmd[0] == "corpus"
                && cmd[1] == "info"
                && (stdout.contains("beta") || !stdout.contains("alpha")))
        {
            failures.push(format!("{skip:?}: exit {code:?}: {stderr}{stdout}"));
        }
        let _ = std::fs::remove_file(d.join("h.json"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `corpus scan-secrets` reads a snapshot's metadata too: a secret in the
/// label is found, the file is not called clean.
#[test]
fn scan_secrets_reads_snapshot_metadata() {
    let dir = world_dir();
    let d = dir.path();
    let (code, _, stderr) = run_out(
        d,
        &[
            "capture",
            "--count",
            "1",
            "--interval",
            "10ms",
            "--label",
            "GITHUB_TOKEN=abc123def",
            "-o",
            "s.cansnap",
            "--",
            "sleep",
            "2",
        ],
        false,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stdout, stderr) =
        run_out(d, &["corpus", "scan-secrets", "--json", "s.cansnap"], false);
    assert_eq!(code, Some(1), "{stderr}{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found = v["findings"].as_array().unwrap();
    assert!(
        found
            .iter()
            .any(|f| f["page"].is_null() && f["finding"]["kind"] == "secret-variable"),
        "{stdout}"
    );
}
