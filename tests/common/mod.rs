//! Helpers shared by the CLI integration tests: run the built `cannery`
//! from the repository root and read what it printed. Not a test itself.

// Each test file uses the helpers it needs.
#![allow(dead_code)]

pub mod measure;

use std::fs;
use std::path::Path;
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

/// Everything `capture --cold` or `zswap-kernel --setup` may change: zswap's
/// settings, `vm.page-cluster`, the swap areas, the debugfs mount, the
/// memory cgroups and the restore journal.
pub fn machine_state() -> Vec<String> {
    let mut v: Vec<String> = [
        "/sys/module/zswap/parameters/enabled",
        "/sys/module/zswap/parameters/compressor",
        "/proc/sys/vm/page-cluster",
    ]
    .iter()
    .map(|p| format!("{p}={}", fs::read_to_string(p).unwrap_or_default().trim()))
    .collect();
    v.push(fs::read_to_string("/proc/swaps").unwrap_or_default());
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    v.push(format!(
        "debugfs mounted: {}",
        mounts
            .lines()
            .any(|l| l.split(' ').nth(1) == Some("/sys/kernel/debug"))
    ));
    for root in ["/sys/fs/cgroup/memory", "/sys/fs/cgroup"] {
        let mut dirs: Vec<String> = fs::read_dir(root)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        dirs.sort();
        v.push(format!("{root}: {}", dirs.join(" ")));
    }
    v.push(format!(
        "journal: {}",
        Path::new("/run/cannery/journal.json").exists()
    ));
    v
}
