//! What a machine-changing command needs and its `--setup`: the shared
//! preflight pieces ([`Need`]: root, free swap) and [`swap_and_zswap`],
//! which makes the swap room (a temporary swap file when the free swap is
//! short), enables zswap and sets `vm.page-cluster` to 0, all through the
//! caller's [`Restore`] guard. Used by `zswap-kernel --setup` and
//! `capture --cold reclaim:… --setup`.

use std::io;
use std::path::Path;

use crate::guard::Restore;
use crate::system::System;
use crate::zswap::{DEBUGFS_MOUNT, PAGE_CLUSTER, PARAMETERS};

/// One missing prerequisite and how to provide it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Need {
    /// What is missing.
    pub what: String,
    /// The command(s) that provide it.
    pub fix: String,
}

/// The needs as lines under `headline`: what, then the fix indented.
pub fn render_needs(headline: &str, needs: &[Need]) -> String {
    let mut s = headline.to_string();
    for n in needs {
        s.push_str(&format!(
            "\n  - {}\n      {}",
            n.what,
            n.fix.replace('\n', "\n      ")
        ));
    }
    s
}

/// Root, when this process is not: `why` says what needs it, `example`
/// is the command to run as root.
pub fn root_need(system: &System, why: &str, example: &str) -> Option<Need> {
    (system.effective_uid().ok() != Some(0)).then(|| Need {
        what: format!("root: {why}"),
        fix: format!("run as root, e.g. sudo {example}"),
    })
}

/// Free swap space over all active areas, bytes.
pub fn free_swap(system: &System) -> u64 {
    system
        .swaps()
        .map(|v| v.iter().map(|a| a.size.saturating_sub(a.used)).sum())
        .unwrap_or(0)
}

/// `needed` bytes of free swap, when there is less (`--setup` provides it).
pub fn swap_need(system: &System, needed: u64, why: &str) -> Option<Need> {
    let free = free_swap(system);
    (free < needed).then(|| {
        let mib = needed.div_ceil(1 << 20);
        Need {
            what: format!(
                "swap space: {} MiB free, {mib} MiB needed ({why})",
                free >> 20
            ),
            fix: format!(
                "fallocate -l {mib}M /var/tmp/cannery.swap && chmod 600 /var/tmp/cannery.swap \
                 && mkswap /var/tmp/cannery.swap && swapon /var/tmp/cannery.swap\n\
                 (or pass --setup, which makes a temporary swap file and removes it afterwards)"
            ),
        }
    })
}

/// What `--setup` does, through `guard`: mounts debugfs when asked and
/// nothing is mounted there, adds a swap file of `needed` bytes at
/// `swap_file` when the free swap is short, enables zswap (when the
/// kernel has it) and sets `vm.page-cluster` to 0, so each fault brings
/// back one page. `progress` hears one line per change.
pub fn swap_and_zswap(
    guard: &mut Restore,
    needed: u64,
    swap_file: &Path,
    debugfs: bool,
    progress: &mut dyn FnMut(&str),
) -> io::Result<()> {
    let system = guard.system().clone();
    let ctx =
        |what: &'static str| move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    if debugfs && !system.debugfs_mounted() {
        let at = system.path(DEBUGFS_MOUNT);
        progress(&format!("setup: mount debugfs on {}", at.display()));
        guard.mount_debugfs(&at).map_err(ctx("mounting debugfs"))?;
    }
    if free_swap(&system) < needed {
        progress(&format!(
            "setup: swap file {} ({} MiB)",
            swap_file.display(),
            needed >> 20
        ));
        guard
            .add_swap_file(swap_file, needed)
            .map_err(ctx("making the swap file"))?;
    }
    if system.has_zswap() {
        guard
            .set(&format!("{PARAMETERS}/enabled"), "Y")
            .map_err(ctx("enabling zswap"))?;
    }
    guard
        .set(PAGE_CLUSTER, "0")
        .map_err(ctx("setting vm.page-cluster"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn setup_enables_zswap_and_page_cluster_and_restore_undoes_it() {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        fs::create_dir_all(s.path(PARAMETERS)).unwrap();
        fs::create_dir_all(s.path("proc/sys/vm")).unwrap();
        fs::write(s.path(&format!("{PARAMETERS}/enabled")), "N\n").unwrap();
        fs::write(s.path(PAGE_CLUSTER), "3\n").unwrap();
        fs::write(
            s.path("proc/swaps"),
            "Filename Type Size Used Priority\n/swap file 1048576 0 -2\n",
        )
        .unwrap();
        fs::create_dir_all(s.path("proc/self")).unwrap();
        fs::write(s.path("proc/self/status"), "Uid:\t1000\t1000\t1000\t1000\n").unwrap();
        assert!(root_need(&s, "x", "cannery y").is_some());
        assert!(swap_need(&s, 1 << 30, "z").is_none());
        let n = swap_need(&s, 2 << 30, "z").unwrap();
        assert!(n.what.contains("1024 MiB free, 2048 MiB needed"), "{n:?}");
        assert!(render_needs("cannot:", &[n]).contains("\n      fallocate -l 2048M"));
        let mut g = Restore::begin(&s, "test").unwrap();
        let mut lines = Vec::new();
        // 1 GiB free: no swap file is made (the path is never touched).
        swap_and_zswap(
            &mut g,
            1 << 20,
            Path::new("/nonexistent/x"),
            false,
            &mut |l| lines.push(l.to_string()),
        )
        .unwrap();
        assert!(lines.is_empty());
        assert_eq!(s.read(&format!("{PARAMETERS}/enabled")).unwrap(), "Y");
        assert_eq!(s.read(PAGE_CLUSTER).unwrap(), "0");
        assert!(g.restore().is_empty());
        assert_eq!(s.read(&format!("{PARAMETERS}/enabled")).unwrap(), "N");
        assert_eq!(s.read(PAGE_CLUSTER).unwrap(), "3");
    }
}
