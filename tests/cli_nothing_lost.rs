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
}
