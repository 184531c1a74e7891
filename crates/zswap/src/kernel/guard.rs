//! The restore guard: every system setting `cannery zswap-kernel --setup`
//! changes goes through [`Restore`], which remembers the value it replaced
//! (or the swap file it added) and puts everything back, newest first, when
//! [`Restore::restore`] is called or the guard is dropped (normal return,
//! error, or panic). SIGINT/SIGTERM are turned into an early, normal return
//! by the caller (`cannery_capture::interrupt`), so they restore too.
//!
//! What it can change: files below the [`System`] root (zswap's parameters,
//! `vm.page-cluster`), one kind of swap state (a swap file it creates,
//! formats and enables, then disables and deletes) and one mount (debugfs,
//! mounted where nothing was, unmounted afterwards). Nothing else.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::sysfs::System;

/// One change to undo.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Change {
    /// A file below the root was written; it held `old`.
    Write { rel: String, old: String },
    /// A swap file was created (and maybe enabled).
    SwapFile { path: PathBuf, enabled: bool },
    /// debugfs was mounted at `path` (where nothing was mounted).
    Mount { path: PathBuf },
}

/// Remembers each change and undoes them all, newest first.
#[derive(Debug)]
#[must_use = "dropping the guard restores the settings at once"]
pub struct Restore {
    system: System,
    changes: Vec<Change>,
}

impl Restore {
    /// A guard with nothing to undo yet.
    pub fn new(system: System) -> Restore {
        Restore {
            system,
            changes: Vec::new(),
        }
    }

    /// Writes `value` to the file `rel` below the root, remembering what it
    /// held before the guard first changed it; nothing is written (or
    /// remembered) when it already holds `value`. True when it wrote.
    pub fn set(&mut self, rel: &str, value: &str) -> io::Result<bool> {
        let old = self.system.read(rel)?;
        if old == value {
            return Ok(false);
        }
        fs::write(self.system.path(rel), value).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write {value:?} to /{rel}: {e}"))
        })?;
        let seen = self
            .changes
            .iter()
            .any(|c| matches!(c, Change::Write { rel: r, .. } if r == rel));
        if !seen {
            self.changes.push(Change::Write {
                rel: rel.to_string(),
                old,
            });
        }
        Ok(true)
    }

    /// Creates a swap file of `bytes` at `path` (which must not exist),
    /// formats it (`mkswap`) and enables it (`swapon`); undone by `swapoff`
    /// and deleting the file.
    pub fn add_swap_file(&mut self, path: &Path, bytes: u64) -> io::Result<()> {
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| {
                io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
            })?;
        self.changes.push(Change::SwapFile {
            path: path.to_path_buf(),
            enabled: false,
        });
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
        run("swapon", &[], path)?;
        if let Some(Change::SwapFile { enabled, .. }) = self.changes.last_mut() {
            *enabled = true;
        }
        Ok(())
    }

    /// Mounts debugfs at `path` (`mount -t debugfs none PATH`); undone by
    /// `umount PATH`. The caller checks that nothing is mounted there.
    pub fn mount_debugfs(&mut self, path: &Path) -> io::Result<()> {
        run("mount", &["-t", "debugfs", "none"], path)?;
        self.changes.push(Change::Mount {
            path: path.to_path_buf(),
        });
        Ok(())
    }

    /// What the guard will undo, oldest first, as readable lines.
    pub fn describe(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| match c {
                Change::Write { rel, old } => format!("/{rel} back to {old}"),
                Change::SwapFile { path, .. } => format!("swapoff and delete {}", path.display()),
                Change::Mount { path } => format!("umount {}", path.display()),
            })
            .collect()
    }

    /// Undoes every change, newest first; returns what could not be undone
    /// (empty when all went back). Calling it again does nothing.
    pub fn restore(&mut self) -> Vec<String> {
        let mut failed = Vec::new();
        while let Some(change) = self.changes.pop() {
            match change {
                Change::Write { rel, old } => {
                    if let Err(e) = fs::write(self.system.path(&rel), &old) {
                        failed.push(format!("/{rel} could not be set back to {old:?}: {e}"));
                    }
                }
                Change::SwapFile { path, enabled } => {
                    if enabled {
                        if let Err(e) = run("swapoff", &[], &path) {
                            failed.push(format!("{e}; the swap file {} is kept", path.display()));
                            continue;
                        }
                    }
                    if let Err(e) = fs::remove_file(&path) {
                        failed.push(format!("cannot delete {}: {e}", path.display()));
                    }
                }
                Change::Mount { path } => {
                    if let Err(e) = run("umount", &[], &path) {
                        failed.push(e.to_string());
                    }
                }
            }
        }
        failed
    }
}

impl Drop for Restore {
    /// The fallback when the caller did not call [`Restore::restore`]
    /// (an early return or a panic): undo, and say on stderr what could not
    /// be undone, since there is no one else to tell.
    fn drop(&mut self) {
        for e in self.restore() {
            eprintln!("cannery: not restored: {e}");
        }
    }
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
    use crate::kernel::sysfs::PARAMETERS;

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

    #[test]
    fn every_change_is_undone_newest_first() {
        let (_d, s) = tree();
        let en = format!("{PARAMETERS}/enabled");
        let comp = format!("{PARAMETERS}/compressor");
        let mut g = Restore::new(s.clone());
        g.set(&en, "Y").unwrap();
        g.set(&comp, "deflate").unwrap();
        g.set(&comp, "lzo-rle").unwrap();
        g.set("proc/sys/vm/page-cluster", "0").unwrap();
        assert_eq!(
            (read(&s, &en).as_str(), read(&s, &comp).as_str()),
            ("Y", "lzo-rle")
        );
        // The compressor, changed twice, is remembered once, with its first value.
        assert_eq!(g.describe().len(), 3);
        assert!(g.restore().is_empty());
        assert_eq!(read(&s, &en), "N");
        assert_eq!(read(&s, &comp), "lzo");
        assert_eq!(read(&s, "proc/sys/vm/page-cluster"), "3");
        assert!(g.restore().is_empty(), "a second restore does nothing");
    }

    #[test]
    fn dropping_the_guard_restores() {
        let (_d, s) = tree();
        let en = format!("{PARAMETERS}/enabled");
        {
            let mut g = Restore::new(s.clone());
            g.set(&en, "Y").unwrap();
            assert_eq!(read(&s, &en), "Y");
        }
        assert_eq!(read(&s, &en), "N");
        // A panic unwinds through the guard as well.
        let s2 = s.clone();
        let en2 = en.clone();
        let r = std::panic::catch_unwind(move || {
            let mut g = Restore::new(s2);
            g.set(&en2, "Y").unwrap();
            panic!("measurement failed");
        });
        assert!(r.is_err());
        assert_eq!(read(&s, &en), "N");
    }

    #[test]
    fn unchanged_values_are_not_remembered_and_missing_files_fail() {
        let (_d, s) = tree();
        let mut g = Restore::new(s.clone());
        assert!(!g.set(&format!("{PARAMETERS}/compressor"), "lzo").unwrap());
        assert!(g.describe().is_empty());
        assert!(g.set(&format!("{PARAMETERS}/nope"), "1").is_err());
        assert!(g.describe().is_empty());
    }

    #[test]
    fn an_existing_file_is_never_taken_as_a_swap_file() {
        let (d, s) = tree();
        let p = d.path().join("keep.swap");
        fs::write(&p, b"user data").unwrap();
        let mut g = Restore::new(s);
        assert_eq!(
            g.add_swap_file(&p, 1 << 20).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        drop(g);
        assert_eq!(fs::read(&p).unwrap(), b"user data");
    }
}
