//! The restore guard: every change cannery makes to the machine goes
//! through [`Restore`], which writes it to the [`Journal`] before making
//! it (with the value it replaces) and undoes everything, newest first,
//! when [`Restore::restore`] is called or the guard is dropped (normal
//! return, error, or panic). SIGINT/SIGTERM are turned into an early,
//! normal return by the caller (`cannery_files::interrupt`), so they
//! restore too; what no handler catches (SIGKILL) the journal keeps, and
//! [`restore_stale`] (`cannery restore`) undoes it later.
//!
//! What it can change: files below the [`System`] root (sysfs and procfs
//! settings, cgroup files), swap files it creates, formats and enables,
//! one mount (debugfs, where nothing was), cgroup directories it creates,
//! zram devices it adds, and processes it starts. Nothing else.
//!
//! Every undo checks the state first, so undoing twice (the guard, then
//! `cannery restore` after a crash in between) does no harm.

use std::fs;
use std::io;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::journal::{self, Change, Journal, JournalError, Restored};
use crate::system::System;

/// Remembers each change and undoes them all, newest first.
#[derive(Debug)]
#[must_use = "dropping the guard restores the settings at once"]
pub struct Restore {
    system: System,
    journal: Journal,
    /// Changes whose undo failed: kept in the journal for `cannery restore`.
    kept: Vec<Change>,
}

impl Restore {
    /// A guard with nothing to undo yet, owning the machine's journal for
    /// `command`; refuses while another run owns it or a dead run's
    /// journal waits to be restored.
    pub fn begin(system: &System, command: &str) -> Result<Restore, JournalError> {
        Ok(Restore {
            system: system.clone(),
            journal: Journal::begin(system, command)?,
            kept: Vec::new(),
        })
    }

    /// The root the guard works below.
    pub fn system(&self) -> &System {
        &self.system
    }

    /// Writes `value` to the file `rel` below the root, remembering what it
    /// held before the guard first changed it; nothing is written (or
    /// remembered) when it already holds `value`. True when it wrote.
    pub fn set(&mut self, rel: &str, value: &str) -> io::Result<bool> {
        let old = self.system.read(rel)?;
        if old == value {
            return Ok(false);
        }
        let seen = self
            .journal
            .record()
            .changes
            .iter()
            .any(|c| matches!(c, Change::Write { rel: r, .. } if r == rel));
        if !seen {
            self.journal.push(Change::Write {
                rel: rel.to_string(),
                old,
            })?;
        }
        if let Err(e) = fs::write(self.system.path(rel), value) {
            if !seen {
                self.journal.pop()?;
            }
            return Err(io::Error::new(
                e.kind(),
                format!("cannot write {value:?} to /{rel}: {e}"),
            ));
        }
        Ok(true)
    }

    /// Writes `value` to `rel`, a file inside a cgroup this guard created,
    /// without remembering it: the file goes with the cgroup on restore
    /// (for files whose read form cannot be written back, such as v1's
    /// `memory.oom_control`). Anything else is refused.
    pub fn write_in_own_cgroup(&mut self, rel: &str, value: &str) -> io::Result<()> {
        let ours = self.journal.record().changes.iter().any(|c| {
            matches!(c, Change::Cgroup { rel: cg } if rel.strip_prefix(cg.as_str())
                .is_some_and(|f| f.starts_with('/') && !f.contains("..")))
        });
        if !ours {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("/{rel} is not in a cgroup this run created"),
            ));
        }
        fs::write(self.system.path(rel), value)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write {value:?} to /{rel}: {e}")))
    }

    /// Creates a swap file of `bytes` at `path` (which must not exist),
    /// formats it (`mkswap`) and enables it (`swapon`); undone by `swapoff`
    /// and deleting the file.
    pub fn add_swap_file(&mut self, path: &Path, bytes: u64) -> io::Result<()> {
        self.journal.push(Change::SwapFile {
            path: path.to_path_buf(),
        })?;
        let file = match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(f) => f,
            Err(e) => {
                // Not ours: forget it without touching it.
                self.journal.pop()?;
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", path.display()),
                ));
            }
        };
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
        // swapon refuses files with holes: allocate every block (fallocate,
        // or zeros where the filesystem does not support it).
        if run("fallocate", &["-l", &bytes.to_string()], path).is_err() {
            let zeros = vec![0u8; 1 << 20];
            let mut f = &file;
            let mut left = bytes;
            while left > 0 {
                let n = left.min(zeros.len() as u64) as usize;
                io::Write::write_all(&mut f, &zeros[..n])?;
                left -= n as u64;
            }
            file.sync_all()?;
        }
        drop(file);
        run("mkswap", &[], path)?;
        run("swapon", &[], path)
    }

    /// Mounts debugfs at `path` (`mount -t debugfs none PATH`); undone by
    /// `umount PATH`. The caller checks that nothing is mounted there.
    pub fn mount_debugfs(&mut self, path: &Path) -> io::Result<()> {
        self.journal.push(Change::Mount {
            path: path.to_path_buf(),
        })?;
        if let Err(e) = run("mount", &["-t", "debugfs", "none"], path) {
            self.journal.pop()?;
            return Err(e);
        }
        Ok(())
    }

    /// Creates the cgroup directory `rel` below the root (which must not
    /// exist); undone by moving its processes to the parent cgroup and
    /// removing it.
    pub fn add_cgroup(&mut self, rel: &str) -> io::Result<()> {
        self.journal.push(Change::Cgroup {
            rel: rel.to_string(),
        })?;
        if let Err(e) = fs::create_dir(self.system.path(rel)) {
            self.journal.pop()?;
            return Err(io::Error::new(
                e.kind(),
                format!("cannot create the cgroup /{rel}: {e}"),
            ));
        }
        Ok(())
    }

    /// Adds a zram device (reads `/sys/class/zram-control/hot_add`) and
    /// returns its number; undone by resetting and removing it.
    pub fn add_zram_device(&mut self) -> io::Result<u32> {
        let text = self.system.read(ZRAM_HOT_ADD).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot add a zram device (/{ZRAM_HOT_ADD}): {e}"),
            )
        })?;
        let id: u32 = text.parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("/{ZRAM_HOT_ADD} gave {text:?}, not a device number"),
            )
        })?;
        // Recorded right after the kernel names the device: a kill between
        // the two reads leaves one empty device, which `hot_remove` by hand
        // removes.
        self.journal.push(Change::ZramDevice { id })?;
        Ok(id)
    }

    /// Remembers a process this run started, stopped on restore if it
    /// still runs (and is still the same process).
    pub fn add_process(&mut self, pid: u32) -> io::Result<()> {
        let Some(start_time) = journal::start_time(&self.system, pid) else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("process {pid} is gone"),
            ));
        };
        self.journal.push(Change::Process { pid, start_time })
    }

    /// What the guard will undo, oldest first, as readable lines.
    pub fn describe(&self) -> Vec<String> {
        self.journal
            .record()
            .changes
            .iter()
            .map(Change::describe)
            .collect()
    }

    /// Undoes every change, newest first; returns what could not be undone
    /// (empty when all went back; what failed stays in the journal for
    /// `cannery restore`). Calling it again does nothing.
    pub fn restore(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(change) = self.journal.last().cloned() {
            if let Err(e) = undo(&self.system, &change) {
                failed.push(e);
                self.kept.push(change.clone());
            }
            if let Err(e) = self.journal.pop() {
                failed.push(format!("cannot update the restore journal: {e}"));
            }
        }
        // What failed goes back into the journal, oldest first.
        for c in self.kept.drain(..).rev() {
            if let Err(e) = self.journal.push(c) {
                failed.push(format!("cannot update the restore journal: {e}"));
            }
        }
        if !failed.is_empty() {
            failed.push("the journal keeps what was not restored: run `cannery restore`".into());
        }
        failed
    }
}

impl Drop for Restore {
    /// The fallback when the caller did not call [`Restore::restore`]
    /// (an early return or a panic): undo, and say on stderr what could not
    /// be undone, since there is no one else to tell.
    fn drop(&mut self) {
        if self.journal.last().is_none() {
            return;
        }
        for e in self.restore() {
            eprintln!("cannery: not restored: {e}");
        }
    }
}

/// Undoes a dead run's journal (`cannery restore`), newest first. After a
/// reboot only swap files are left to remove. Refuses while a live run
/// holds the lock.
pub fn restore_stale(system: &System) -> Result<Restored, JournalError> {
    // No journal, nothing to take the lock for (and no root needed to say so).
    if journal::load(system)?.is_none() {
        return Ok(Restored::default());
    }
    let Some(mut journal) = Journal::take_stale(system)? else {
        return Ok(Restored::default());
    };
    let record = journal.record().clone();
    let earlier_boot = !record.boot_id.is_empty() && record.boot_id != journal::boot_id(system);
    let mut out = Restored {
        record: Some(record),
        earlier_boot,
        ..Restored::default()
    };
    let mut kept = Vec::new();
    while let Some(change) = journal.last().cloned() {
        let gone_with_boot = earlier_boot && !matches!(change, Change::SwapFile { .. });
        if gone_with_boot {
            out.undone
                .push(format!("{} (gone with the reboot)", change.describe()));
        } else {
            match undo(system, &change) {
                Ok(()) => out.undone.push(change.describe()),
                Err(e) => {
                    out.failed.push(e);
                    kept.push(change);
                }
            }
        }
        journal.pop()?;
    }
    for c in kept.into_iter().rev() {
        journal.push(c)?;
    }
    Ok(out)
}

/// The file that adds a zram device when read, below the root.
pub const ZRAM_HOT_ADD: &str = "sys/class/zram-control/hot_add";
/// The file that removes a zram device when its number is written.
pub const ZRAM_HOT_REMOVE: &str = "sys/class/zram-control/hot_remove";

/// Undoes one change, checking the state first (so it may run twice).
fn undo(system: &System, change: &Change) -> Result<(), String> {
    match change {
        Change::Write { rel, old } => fs::write(system.path(rel), old)
            .map_err(|e| format!("/{rel} could not be set back to {old:?}: {e}")),
        Change::SwapFile { path } => {
            let active = system
                .swaps()
                .map(|v| v.iter().any(|a| Path::new(&a.path) == path))
                .unwrap_or(true);
            if active {
                if let Err(e) = run("swapoff", &[], path) {
                    // Not active after all (or no /proc/swaps): go on to delete.
                    if system.swaps().is_ok() {
                        return Err(format!("{e}; the swap file {} is kept", path.display()));
                    }
                }
            }
            match fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    Err(format!("cannot delete {}: {e}", path.display()))
                }
                _ => Ok(()),
            }
        }
        Change::Mount { path } => {
            if system.is_mount_point(path) == Some(false) {
                return Ok(());
            }
            run("umount", &[], path).map_err(|e| e.to_string())
        }
        Change::Cgroup { rel } => remove_cgroup(system, rel),
        Change::ZramDevice { id } => {
            let dev = format!("sys/block/zram{id}");
            if !system.path(&dev).exists() {
                return Ok(());
            }
            // A device in use refuses reset and removal: say so.
            let _ = fs::write(system.path(&format!("{dev}/reset")), "1");
            fs::write(system.path(ZRAM_HOT_REMOVE), id.to_string())
                .map_err(|e| format!("cannot remove /dev/zram{id}: {e}"))
        }
        Change::Process { pid, start_time } => {
            stop_process(system, *pid, *start_time);
            Ok(())
        }
    }
}

/// Moves every process of the cgroup `rel` to its parent, then removes it.
fn remove_cgroup(system: &System, rel: &str) -> Result<(), String> {
    let dir = system.path(rel);
    if !dir.exists() {
        return Ok(());
    }
    let parent = dir.parent().map(|p| p.join("cgroup.procs"));
    let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    for pid in procs.split_whitespace() {
        if let Some(parent) = &parent {
            // A process that exits in between cannot be moved: fine.
            let _ = fs::write(parent, pid);
        }
    }
    // A cgroup's directory goes with rmdir even with its control files in
    // it; a real process still inside (or a fake tree's plain files) is
    // reported, the latter removed whole.
    let mut last = None;
    for _ in 0..50 {
        match fs::remove_dir(&dir) {
            Ok(()) => return Ok(()),
            Err(e) if !system.is_cgroupfs(&dir) => {
                return fs::remove_dir_all(&dir)
                    .map_err(|e2| format!("cannot remove /{rel}: {e}; {e2}"));
            }
            // EBUSY while the last task's exit is still being accounted.
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!(
        "cannot remove the cgroup /{rel}: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    ))
}

/// SIGTERM, then SIGKILL after 2 s, to `pid` if it is still the process
/// that started at `start_time`.
fn stop_process(system: &System, pid: u32, start_time: u64) {
    let same = || journal::start_time(system, pid) == Some(start_time);
    if !same() {
        return;
    }
    for (sig, wait) in [(libc::SIGTERM, 2000), (libc::SIGKILL, 2000)] {
        // SAFETY: kill(2) takes no pointers; the PID was checked to be the
        // process we started (start time) just before.
        unsafe { libc::kill(pid as libc::pid_t, sig) };
        let deadline = Instant::now() + Duration::from_millis(wait);
        while Instant::now() < deadline {
            if !same() || is_zombie(system, pid) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn is_zombie(system: &System, pid: u32) -> bool {
    fs::read_to_string(system.path(&format!("proc/{pid}/stat")))
        .ok()
        .and_then(|t| {
            let rest = t[t.rfind(')')? + 1..].trim_start().to_string();
            rest.chars().next()
        })
        .is_some_and(|c| c == 'Z' || c == 'X')
}

/// Runs `program args… path`, quietly; an error names the command.
fn run(program: &str, args: &[&str], path: &Path) -> io::Result<()> {
    let out = Command::new(program)
        .args(args)
        .arg(path)
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("cannot run {program}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "{program} {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zswap::PARAMETERS;

    fn tree() -> (tempfile::TempDir, System) {
        let dir = tempfile::tempdir().unwrap();
        let s = System::at(dir.path());
        fs::create_dir_all(s.path(PARAMETERS)).unwrap();
        fs::create_dir_all(s.path("proc/sys/vm")).unwrap();
        fs::write(s.path(&format!("{PARAMETERS}/enabled")), "N\n").unwrap();
        fs::write(s.path(&format!("{PARAMETERS}/compressor")), "lzo\n").unwrap();
        fs::write(s.path("proc/sys/vm/page-cluster"), "3\n").unwrap();
        (dir, s)
    }

    fn read(s: &System, rel: &str) -> String {
        s.read(rel).unwrap()
    }

    /// `f`, again while the lock is busy, for up to 5 s: a test that runs a
    /// tool forks, and the child holds every open file (a lock this test
    /// just released too) until it execs. A real owner stays busy longer.
    fn when_free<T>(mut f: impl FnMut() -> Result<T, JournalError>) -> Result<T, JournalError> {
        let start = std::time::Instant::now();
        loop {
            match f() {
                Err(JournalError::Busy(_)) if start.elapsed().as_secs() < 5 => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                r => return r,
            }
        }
    }

    #[test]
    fn every_change_is_undone_newest_first() {
        let (_d, s) = tree();
        let en = format!("{PARAMETERS}/enabled");
        let comp = format!("{PARAMETERS}/compressor");
        let mut g = Restore::begin(&s, "test").unwrap();
        g.set(&en, "Y").unwrap();
        g.set(&comp, "deflate").unwrap();
        g.set(&comp, "lzo-rle").unwrap();
        g.set("proc/sys/vm/page-cluster", "0").unwrap();
        fs::create_dir_all(s.path("cg")).unwrap();
        g.add_cgroup("cg/cannery-1").unwrap();
        g.set("cg/cannery-1/memory.limit_in_bytes", "").unwrap_err();
        fs::write(s.path("cg/cannery-1/memory.limit_in_bytes"), "9").unwrap();
        g.set("cg/cannery-1/memory.limit_in_bytes", "5").unwrap();
        assert_eq!(
            (read(&s, &en).as_str(), read(&s, &comp).as_str()),
            ("Y", "lzo-rle")
        );
        // The compressor, changed twice, is remembered once, with its first value.
        assert_eq!(g.describe().len(), 5);
        // Newest first: the limit is set back before its cgroup goes.
        assert!(g.describe()[4].contains("limit_in_bytes back to 9"));
        assert!(g.restore().is_empty());
        assert_eq!(read(&s, &en), "N");
        assert_eq!(read(&s, &comp), "lzo");
        assert_eq!(read(&s, "proc/sys/vm/page-cluster"), "3");
        assert!(!s.path("cg/cannery-1").exists());
        assert!(g.restore().is_empty(), "a second restore does nothing");
        assert!(journal::load(&s).unwrap().is_none(), "journal emptied");
    }

    #[test]
    fn dropping_the_guard_restores() {
        let (_d, s) = tree();
        let en = format!("{PARAMETERS}/enabled");
        {
            let mut g = Restore::begin(&s, "test").unwrap();
            g.set(&en, "Y").unwrap();
            assert_eq!(read(&s, &en), "Y");
        }
        assert_eq!(read(&s, &en), "N");
        // A panic unwinds through the guard as well.
        let s2 = s.clone();
        let en2 = en.clone();
        let r = std::panic::catch_unwind(move || {
            let mut g = Restore::begin(&s2, "test").unwrap();
            g.set(&en2, "Y").unwrap();
            panic!("measurement failed");
        });
        assert!(r.is_err());
        assert_eq!(read(&s, &en), "N");
        assert!(journal::load(&s).unwrap().is_none());
    }

    #[test]
    fn a_killed_runs_changes_are_undone_by_restore_stale() {
        let (_d, s) = tree();
        let en = format!("{PARAMETERS}/enabled");
        let mut g = Restore::begin(&s, "zswap-kernel").unwrap();
        g.set(&en, "Y").unwrap();
        g.set("proc/sys/vm/page-cluster", "0").unwrap();
        // SIGKILL: nothing runs, neither restore nor drop. (A forgotten
        // guard keeps its lock open in this process, where a killed
        // process's lock is released: the copy of the tree stands for that.)
        std::mem::forget(g);
        let copy = tempfile::tempdir().unwrap();
        copy_tree(s.root(), copy.path());
        let s2 = System::at(copy.path());
        let e = when_free(|| Restore::begin(&s2, "capture")).unwrap_err();
        assert!(matches!(e, JournalError::Stale(_)), "{e}");
        let done = when_free(|| restore_stale(&s2)).unwrap();
        assert_eq!(done.undone.len(), 2, "{done:?}");
        assert!(done.failed.is_empty());
        assert_eq!(read(&s2, &en), "N");
        assert_eq!(read(&s2, "proc/sys/vm/page-cluster"), "3");
        // Idempotent: nothing left, and a new run may start.
        assert!(when_free(|| restore_stale(&s2)).unwrap().record.is_none());
        if let Err(e) = when_free(|| Restore::begin(&s2, "capture")) {
            panic!("a new run cannot start after the restore: {e}");
        }
    }

    #[test]
    fn after_a_reboot_only_swap_files_are_left_to_remove() {
        let (_d, s) = tree();
        fs::create_dir_all(s.path("proc/sys/kernel/random")).unwrap();
        fs::write(s.path("proc/sys/kernel/random/boot_id"), "boot-1\n").unwrap();
        let swap = s.root().join("cannery-test.swap");
        let mut g = Restore::begin(&s, "zswap-kernel").unwrap();
        g.set(&format!("{PARAMETERS}/enabled"), "Y").unwrap();
        // A swap file as a crash left it: created, never enabled here.
        g.journal
            .push(Change::SwapFile { path: swap.clone() })
            .unwrap();
        fs::write(&swap, b"swap").unwrap();
        std::mem::forget(g);
        let copy = tempfile::tempdir().unwrap();
        copy_tree(s.root(), copy.path());
        let s2 = System::at(copy.path());
        // The reboot: a new boot id, /run emptied, settings back to boot values.
        fs::write(s2.path("proc/sys/kernel/random/boot_id"), "boot-2\n").unwrap();
        fs::remove_dir_all(s2.path(journal::RUN_DIR)).unwrap();
        fs::write(s2.path(&format!("{PARAMETERS}/enabled")), "Z\n").unwrap();
        let done = when_free(|| restore_stale(&s2)).unwrap();
        assert!(done.earlier_boot);
        assert!(!swap.exists(), "the swap file is removed");
        assert_eq!(
            read(&s2, &format!("{PARAMETERS}/enabled")),
            "Z",
            "settings untouched"
        );
        assert!(done
            .undone
            .iter()
            .any(|l| l.contains("gone with the reboot")));
    }

    #[test]
    fn unchanged_values_are_not_remembered_and_missing_files_fail() {
        let (_d, s) = tree();
        let mut g = Restore::begin(&s, "test").unwrap();
        assert!(!g.set(&format!("{PARAMETERS}/compressor"), "lzo").unwrap());
        assert!(g.describe().is_empty());
        assert!(g.set(&format!("{PARAMETERS}/nope"), "1").is_err());
        assert!(g.describe().is_empty());
    }

    #[test]
    fn an_existing_file_is_never_taken_as_a_swap_file_or_cgroup() {
        let (d, s) = tree();
        let p = d.path().join("keep.swap");
        fs::write(&p, b"user data").unwrap();
        let mut g = Restore::begin(&s, "test").unwrap();
        assert_eq!(
            g.add_swap_file(&p, 1 << 20).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        fs::create_dir_all(s.path("cg/theirs")).unwrap();
        assert!(g.add_cgroup("cg/theirs").is_err());
        assert!(g.describe().is_empty());
        drop(g);
        assert_eq!(fs::read(&p).unwrap(), b"user data");
        assert!(s.path("cg/theirs").exists());
    }

    #[test]
    fn zram_devices_added_are_removed() {
        let (_d, s) = tree();
        fs::create_dir_all(s.path("sys/class/zram-control")).unwrap();
        fs::write(s.path(ZRAM_HOT_ADD), "2\n").unwrap();
        fs::write(s.path(ZRAM_HOT_REMOVE), "").unwrap();
        fs::create_dir_all(s.path("sys/block/zram2")).unwrap();
        let mut g = Restore::begin(&s, "zram-kernel").unwrap();
        assert_eq!(g.add_zram_device().unwrap(), 2);
        assert!(g.restore().is_empty());
        assert_eq!(read(&s, ZRAM_HOT_REMOVE), "2");
        assert_eq!(read(&s, "sys/block/zram2/reset"), "1");
    }

    fn copy_tree(from: &Path, to: &Path) {
        for e in fs::read_dir(from).unwrap().flatten() {
            let dst = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                fs::create_dir_all(&dst).unwrap();
                copy_tree(&e.path(), &dst);
            } else {
                fs::copy(e.path(), dst).unwrap();
            }
        }
    }
}
