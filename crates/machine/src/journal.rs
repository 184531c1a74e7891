//! The journal: the write-ahead record of what a running guard has changed
//! on the machine, for what no handler can catch (SIGKILL, a lost process,
//! a reboot). Before [`crate::Restore`] changes anything it appends the
//! change, with the value it replaces, to `/run/cannery/journal.json`
//! (written atomically: a temporary file, fsync, rename) and to a copy in
//! `/var/lib/cannery/journal.json`, which survives a reboot: after one,
//! settings, mounts, cgroups, zram devices and processes are gone with the
//! old boot, but a swap file is still on disk, and the copy names it.
//!
//! A live owner holds an exclusive `flock` on `/run/cannery/lock` for as
//! long as its guard lives, and the record names the owner (PID and start
//! time), so a journal whose lock nobody holds is a dead run's: every
//! machine-changing command refuses to start on top of it until `cannery
//! restore` has undone it ([`Journal::begin`] returns [`JournalError::Stale`]).
//! Restoring is idempotent: each undo checks the state first.
//!
//! All paths are below the [`System`] root, so the tests use a fake tree.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::system::System;

/// The live journal's directory, below the root (a tmpfs: empty after boot).
pub const RUN_DIR: &str = "run/cannery";
/// The copy that survives a reboot, below the root.
pub const KEEP_DIR: &str = "var/lib/cannery";
const FILE: &str = "journal.json";
const LOCK: &str = "lock";
/// The record's format version.
const VERSION: u32 = 1;

/// One change to the machine, with what undoes it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A file below the root (a sysfs, procfs or cgroup file) was written;
    /// it held `old`.
    Write {
        /// The file, relative to the root.
        rel: String,
        /// What it held before.
        old: String,
    },
    /// A swap file was created (and maybe enabled).
    SwapFile {
        /// The file.
        path: PathBuf,
    },
    /// debugfs was mounted here (where nothing was mounted).
    Mount {
        /// The mount point.
        path: PathBuf,
    },
    /// A cgroup directory was created, relative to the root.
    Cgroup {
        /// The directory, relative to the root.
        rel: String,
    },
    /// A zram device was added (`hot_add`).
    ZramDevice {
        /// Its number (`/sys/block/zramN`).
        id: u32,
    },
    /// A process was started; stopped if it still runs.
    Process {
        /// Its PID.
        pid: u32,
        /// Its start time (field 22 of `/proc/PID/stat`), so a reused PID
        /// is never signalled.
        start_time: u64,
    },
}

impl Change {
    /// What undoing it does, as a readable line.
    pub fn describe(&self) -> String {
        match self {
            Change::Write { rel, old } => format!("/{rel} back to {old}"),
            Change::SwapFile { path } => format!("swapoff and delete {}", path.display()),
            Change::Mount { path } => format!("umount {}", path.display()),
            Change::Cgroup { rel } => format!("move the processes out of /{rel} and remove it"),
            Change::ZramDevice { id } => format!("reset and remove /dev/zram{id}"),
            Change::Process { pid, .. } => format!("stop process {pid} if it still runs"),
        }
    }
}

/// What the journal file holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    /// Format version.
    pub version: u32,
    /// The owner's command (`zswap-kernel`, `capture`, …).
    pub command: String,
    /// The owner's PID.
    pub pid: u32,
    /// The owner's start time (field 22 of `/proc/PID/stat`).
    pub start_time: u64,
    /// The boot the changes belong to (`/proc/sys/kernel/random/boot_id`).
    pub boot_id: String,
    /// The changes, oldest first.
    pub changes: Vec<Change>,
}

/// Why a journal could not be begun or replayed.
#[derive(Debug)]
#[non_exhaustive]
pub enum JournalError {
    /// A dead run's journal is waiting to be restored.
    Stale(Record),
    /// Another live run holds the lock.
    Busy(Option<Record>),
    /// A file could not be read or written.
    Io(io::Error),
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::Stale(r) => write!(
                f,
                "a previous `cannery {}` (pid {}) ended before it restored the machine; \
                 its {} change(s) are in the journal: run `cannery restore` first",
                r.command,
                r.pid,
                r.changes.len()
            ),
            JournalError::Busy(Some(r)) => write!(
                f,
                "another `cannery {}` (pid {}) is changing this machine now; wait for it \
                 or stop it (SIGTERM restores)",
                r.command, r.pid
            ),
            JournalError::Busy(None) => {
                write!(f, "another cannery run is changing this machine now")
            }
            JournalError::Io(e) => write!(f, "the restore journal: {e}"),
        }
    }
}

impl std::error::Error for JournalError {}

impl From<io::Error> for JournalError {
    fn from(e: io::Error) -> Self {
        JournalError::Io(e)
    }
}

/// A held journal: the lock and the record, written through on each change.
#[derive(Debug)]
pub struct Journal {
    system: System,
    _lock: File,
    record: Record,
}

impl Journal {
    /// Takes the lock and starts an empty journal for `command`. Refuses
    /// when another live run holds the lock or a dead run's journal has
    /// changes left ([`JournalError::Stale`]).
    pub fn begin(system: &System, command: &str) -> Result<Journal, JournalError> {
        let lock = take_lock(system)?;
        if let Some(old) = load(system)? {
            if !old.changes.is_empty() {
                return Err(JournalError::Stale(old));
            }
        }
        let record = Record {
            version: VERSION,
            command: command.to_string(),
            pid: std::process::id(),
            start_time: start_time(system, std::process::id()).unwrap_or(0),
            boot_id: boot_id(system),
            changes: Vec::new(),
        };
        let journal = Journal {
            system: system.clone(),
            _lock: lock,
            record,
        };
        journal.remove_files()?;
        Ok(journal)
    }

    /// Takes the lock over a dead run's journal, for replaying it; `None`
    /// when there is nothing to restore.
    pub fn take_stale(system: &System) -> Result<Option<Journal>, JournalError> {
        let lock = take_lock(system)?;
        Ok(load(system)?.map(|record| Journal {
            system: system.clone(),
            _lock: lock,
            record,
        }))
    }

    /// The record as it stands.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// Appends `change` and writes the journal (before the change is made).
    pub fn push(&mut self, change: Change) -> io::Result<()> {
        self.record.changes.push(change);
        self.write()
    }

    /// Drops the newest change (undone, or never made) and writes.
    pub fn pop(&mut self) -> io::Result<Option<Change>> {
        let c = self.record.changes.pop();
        self.write()?;
        Ok(c)
    }

    /// The newest change, if any.
    pub fn last(&self) -> Option<&Change> {
        self.record.changes.last()
    }

    /// Writes the record to both places, or removes them when it has no
    /// changes left.
    fn write(&self) -> io::Result<()> {
        if self.record.changes.is_empty() {
            return self.remove_files();
        }
        let text = serde_json::to_vec_pretty(&self.record).map_err(io::Error::other)?;
        for dir in [RUN_DIR, KEEP_DIR] {
            write_atomic(&self.system.path(dir), FILE, &text)?;
        }
        Ok(())
    }

    fn remove_files(&self) -> io::Result<()> {
        for dir in [RUN_DIR, KEEP_DIR] {
            match fs::remove_file(self.system.path(dir).join(FILE)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The journal left on the machine, if any: the live one under `/run`,
/// else the copy that survives a reboot.
pub fn load(system: &System) -> io::Result<Option<Record>> {
    for dir in [RUN_DIR, KEEP_DIR] {
        let path = system.path(dir).join(FILE);
        let text = match crate::system::read_bounded(&path, 1 << 20) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let record: Record = serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{} is not a cannery journal: {e}", path.display()),
            )
        })?;
        if record.version != VERSION {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} has journal version {}, this cannery reads {VERSION}",
                    path.display(),
                    record.version
                ),
            ));
        }
        return Ok(Some(record));
    }
    Ok(None)
}

/// Opens `/run/cannery/lock` and takes an exclusive, non-blocking flock.
fn take_lock(system: &System) -> Result<File, JournalError> {
    let dir = system.path(RUN_DIR);
    fs::create_dir_all(&dir)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.join(LOCK))?;
    // SAFETY: flock on a file descriptor this function owns; no memory is
    // passed to the kernel.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(JournalError::Busy(load(system).ok().flatten()));
        }
        return Err(e.into());
    }
    Ok(file)
}

/// Writes `name` in `dir` atomically (0600): a temporary file, fsync,
/// rename, fsync of the directory.
fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&tmp, dir.join(name))?;
    File::open(dir)?.sync_all()
}

/// This boot's id, or empty when the kernel does not say.
pub fn boot_id(system: &System) -> String {
    system
        .read("proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
}

/// A process's start time (field 22 of `/proc/PID/stat`, in clock ticks
/// since boot), or `None` when it does not exist.
pub fn start_time(system: &System, pid: u32) -> Option<u64> {
    let text = fs::read_to_string(system.path(&format!("proc/{pid}/stat"))).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What [`crate::restore_stale`] did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Restored {
    /// The dead run's record (none when there was nothing to restore).
    pub record: Option<Record>,
    /// True when the journal is from an earlier boot (only swap files are
    /// left of it).
    pub earlier_boot: bool,
    /// The undone changes, newest first.
    pub undone: Vec<String>,
    /// What could not be undone (kept in the journal).
    pub failed: Vec<String>,
}

impl Restored {
    /// What `cannery restore` prints: whose changes were undone, one line
    /// each, or that there was nothing to restore.
    pub fn render_text(&self) -> String {
        let Some(r) = &self.record else {
            return "nothing to restore: no cannery journal on this machine\n".into();
        };
        let boot = if self.earlier_boot {
            ", from an earlier boot"
        } else {
            ""
        };
        let mut text = format!(
            "restored what `cannery {}` (pid {}) left{boot}:\n",
            r.command, r.pid
        );
        for line in &self.undone {
            text.push_str(&format!("  {line}\n"));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, System) {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        (d, s)
    }

    #[test]
    fn every_change_is_written_ahead_and_an_empty_journal_leaves_no_file() {
        let (_d, s) = tree();
        let mut j = Journal::begin(&s, "test").unwrap();
        assert_eq!(load(&s).unwrap(), None);
        j.push(Change::Write {
            rel: "a".into(),
            old: "1".into(),
        })
        .unwrap();
        j.push(Change::ZramDevice { id: 3 }).unwrap();
        let r = load(&s).unwrap().unwrap();
        assert_eq!(r.changes.len(), 2);
        assert_eq!(r.command, "test");
        assert_eq!(r.pid, std::process::id());
        // Both places, the same record.
        let keep = fs::read(s.path(KEEP_DIR).join(FILE)).unwrap();
        assert_eq!(keep, fs::read(s.path(RUN_DIR).join(FILE)).unwrap());
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(s.path(RUN_DIR).join(FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        j.pop().unwrap();
        j.pop().unwrap();
        assert_eq!(load(&s).unwrap(), None);
        assert!(!s.path(KEEP_DIR).join(FILE).exists());
    }

    #[test]
    fn a_live_owner_blocks_others_and_a_dead_ones_journal_is_stale() {
        let (_d, s) = tree();
        let mut j = Journal::begin(&s, "capture").unwrap();
        j.push(Change::Mount { path: "/x".into() }).unwrap();
        // flock locks belong to the open file description: a second open in
        // this process conflicts like another process's would.
        match Journal::begin(&s, "zswap-kernel") {
            Err(JournalError::Busy(Some(r))) => assert_eq!(r.command, "capture"),
            other => panic!("{other:?}"),
        }
        drop(j); // the owner dies without restoring: the file stays
        match Journal::begin(&s, "zswap-kernel") {
            Err(e @ JournalError::Stale(_)) => {
                assert!(e.to_string().contains("cannery restore"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        let mut stale = Journal::take_stale(&s).unwrap().unwrap();
        assert_eq!(stale.record().changes.len(), 1);
        stale.pop().unwrap();
        drop(stale);
        assert!(Journal::begin(&s, "zswap-kernel").is_ok());
    }

    #[test]
    fn after_a_reboot_the_kept_copy_is_found() {
        let (_d, s) = tree();
        let mut j = Journal::begin(&s, "zswap-kernel").unwrap();
        j.push(Change::SwapFile {
            path: "/var/tmp/cannery-zswap-1.swap".into(),
        })
        .unwrap();
        drop(j);
        fs::remove_dir_all(s.path(RUN_DIR)).unwrap(); // /run is a tmpfs
        let r = load(&s).unwrap().unwrap();
        assert!(matches!(r.changes[0], Change::SwapFile { .. }));
    }

    #[test]
    fn a_damaged_journal_is_an_error_not_nothing() {
        let (_d, s) = tree();
        fs::create_dir_all(s.path(RUN_DIR)).unwrap();
        fs::write(s.path(RUN_DIR).join(FILE), "{not json").unwrap();
        let e = load(&s).unwrap_err();
        assert!(e.to_string().contains("not a cannery journal"), "{e}");
        assert!(Journal::begin(&s, "x").is_err());
    }

    #[test]
    fn start_time_reads_field_22_past_a_name_with_spaces() {
        let (_d, s) = tree();
        fs::create_dir_all(s.path("proc/42")).unwrap();
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        fs::write(s.path("proc/42/stat"), stat).unwrap();
        assert_eq!(start_time(&s, 42), Some(987654));
        assert_eq!(start_time(&s, 43), None);
        assert!(start_time(&System::default(), std::process::id()).is_some());
    }
}
