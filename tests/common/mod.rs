//! Helpers shared by the CLI integration tests: run the built `cannery`
//! from the repository root and read what it printed. Not a test itself.

// Each test file uses the helpers it needs.
#![allow(dead_code)]

pub mod measure;

use std::process::{Command, Output};

/// Runs `cannery ARGS…` from the repository root.
pub fn cannery(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cannery"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// What a run printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a run printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
