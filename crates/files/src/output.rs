//! Output files that never lose data: every file cannery writes (snapshots,
//! tables, histograms, records, exports, reports) goes through here.
//!
//! - An [`AtomicFile`] is written under a temporary name in the target's
//!   directory (`.NAME.PID.N.partial`) and only [`AtomicFile::commit`] puts
//!   it at its final path, by one `rename`: a failed or killed writer never
//!   leaves a partial file at the final path, and the file it would have
//!   replaced is untouched. Dropped without a commit, the temporary file is
//!   removed (a process killed outright leaves it behind, under its
//!   temporary name).
//! - An existing file is kept unless the caller asks to replace it
//!   ([`Existing::Replace`], a command's `--force`); [`Existing::Keep`] is
//!   checked when the file is created (fail before the work) and again at
//!   commit, without a window (a hard link, which fails if the name exists).
//! - [`refuse_same_file`] refuses an output that is one of the inputs (also
//!   through a symlink or another hard link), which would otherwise be
//!   truncated before it is read; every file opened through
//!   [`crate::input`] is such an input, checked again at the commit.
//! - What is not a regular file is never replaced: a character device or
//!   FIFO (`/dev/null`, a pipe) is written through, as a shell redirection
//!   would (a block device only with `Replace`); a symlink is followed and
//!   its target replaced in the target's own directory, so the link stays.
//! - Modes: the temporary file is created 0600; at the commit a new file
//!   gets 0666 less the umask (0600 for [`Privacy::Private`] data such as
//!   snapshots and page exports) and a replaced file its old mode (masked
//!   to 0600 for private data). Each temporary name is registered with
//!   [`crate::interrupt`], whose SIGINT/SIGTERM handler removes it.
//!
//! This module does not decide what goes in a file, and does not handle
//! standard output (`-`): commands write that themselves.

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Whether a file holds memory contents (created 0600) or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privacy {
    /// Tables, reports: 0666 less the umask, or the replaced file's mode.
    Normal,
    /// Snapshots, page exports: 0600, or the replaced file's mode & 0600.
    Private,
}

/// What to do when the output file already exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Fail, leaving it as it is (the default of every command).
    Keep,
    /// Replace it atomically (`--force`).
    Replace,
}

impl Existing {
    /// `Replace` when `force` is set, else `Keep`.
    pub fn replace_if(force: bool) -> Existing {
        if force {
            Existing::Replace
        } else {
            Existing::Keep
        }
    }
}

/// A file being written under a temporary name until [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    /// The temporary name; `None` when writing through a device or FIFO.
    tmp: Option<PathBuf>,
    /// The path asked for (in messages).
    path: PathBuf,
    /// Where the file goes: `path` with symlinks followed.
    target: PathBuf,
    existing: Existing,
    privacy: Privacy,
    committed: bool,
}

fn exists_error(path: &Path) -> Error {
    Error::new(
        ErrorKind::AlreadyExists,
        format!("{}: already exists (not replaced)", path.display()),
    )
}

/// What an output path is, symlinks followed.
#[derive(Debug)]
enum Target {
    /// Nothing there yet: a new file at this path.
    New(PathBuf),
    /// A regular file with this mode, to be replaced.
    Regular(PathBuf, u32),
    /// A character device, FIFO (or, when replacing, block device): written
    /// through, never replaced.
    WriteThrough(PathBuf),
}

fn invalid(path: &Path, what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!("{}: {what}", path.display()),
    )
}

/// Follows `path` through symlinks (at most 40, as the kernel does) to the
/// file an output replaces; a dangling link leads to the path it names.
fn follow(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to =
                    std::fs::read_link(&p).map_err(|e| Error::io(&p, "cannot read link", e))?;
                p = match p.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(invalid(
        path,
        "too many levels of symbolic links (a symlink loop?)",
    ))
}

/// Resolves `path` and checks it: a directory or socket is refused, an
/// existing regular (or block) file unless `existing` is `Replace`.
fn check_target(path: &Path, existing: Existing) -> Result<Target> {
    let target = follow(path)?;
    let m = match std::fs::metadata(&target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::New(target)),
        Err(e) => return Err(Error::io(path, "cannot write", e)),
    };
    let ft = m.file_type();
    if ft.is_dir() {
        Err(invalid(path, "is a directory, not a file"))
    } else if ft.is_char_device()
        || ft.is_fifo()
        || (ft.is_block_device() && existing == Existing::Replace)
    {
        Ok(Target::WriteThrough(target))
    } else if !ft.is_file() && !ft.is_block_device() {
        Err(invalid(path, "not a regular file, device or FIFO"))
    } else if existing == Existing::Keep {
        Err(exists_error(path))
    } else if let Some(input) = crate::input::opened_as_input(&m) {
        Err(same_file_error(path, &input))
    } else {
        Ok(Target::Regular(target, m.mode()))
    }
}

fn same_file_error(output: &Path, input: &Path) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "output {} is the input {}; write to another file",
            output.display(),
            input.display()
        ),
    )
}

/// The process's umask, from `/proc/self/status` (022 if unknown).
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

impl AtomicFile {
    /// Starts writing `path`: checks it (see [`Existing`]) and creates the
    /// temporary file beside its target (a [`Privacy::Normal`] file).
    pub fn create(path: &Path, existing: Existing) -> Result<AtomicFile> {
        AtomicFile::create_with(path, existing, Privacy::Normal)
    }

    /// [`AtomicFile::create`] for a file of the given [`Privacy`].
    pub fn create_with(path: &Path, existing: Existing, privacy: Privacy) -> Result<AtomicFile> {
        let target = match check_target(path, existing)? {
            Target::WriteThrough(t) => {
                let file = OpenOptions::new()
                    .write(true)
                    .open(&t)
                    .map_err(|e| Error::io(path, "cannot open", e))?;
                return Ok(AtomicFile {
                    file: Some(file),
                    tmp: None,
                    path: path.to_path_buf(),
                    target: t,
                    existing,
                    privacy,
                    committed: false,
                });
            }
            Target::New(t) | Target::Regular(t, _) => t,
        };
        let name = target
            .file_name()
            .ok_or_else(|| invalid(path, "not a file name"))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let pid = std::process::id();
        for n in 0u32.. {
            let mut tmp_name = std::ffi::OsString::from(".");
            tmp_name.push(name);
            tmp_name.push(format!(".{pid}.{n}.partial"));
            let tmp = dir.join(tmp_name);
            // Registered before it exists, so a signal between the create
            // and the registration cannot leave it behind (the name is
            // ours: pid and counter; unregistered again if it is taken).
            crate::interrupt::register_partial(&tmp);
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
            {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file: Some(file),
                        tmp: Some(tmp),
                        path: path.to_path_buf(),
                        target,
                        existing,
                        privacy,
                        committed: false,
                    });
                }
                Err(e) => {
                    crate::interrupt::unregister_partial(&tmp);
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        continue;
                    }
                    return Err(Error::io(path, "cannot create", e));
                }
            }
        }
        unreachable!("u32 temporary names exhausted")
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the data sits until the commit (the target itself when
    /// writing through a device or FIFO).
    pub fn partial_path(&self) -> &Path {
        self.tmp.as_deref().unwrap_or(&self.target)
    }

    fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("present until commit")
    }

    /// Flushes the data to disk and puts the file at its final path.
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("present until commit");
        let io_err = |what: &str, e| Error::io(&self.path, what, e);
        let Some(tmp) = self.tmp.clone() else {
            // A device or FIFO: the data went through as it was written.
            self.committed = true;
            return Ok(());
        };
        file.sync_all().map_err(|e| io_err("cannot write", e))?;
        let mode = match check_target(&self.path, self.existing) {
            Ok(Target::Regular(_, old)) if self.privacy == Privacy::Private => old & 0o600,
            Ok(Target::Regular(_, old)) => old & 0o7777,
            Ok(Target::New(_)) if self.privacy == Privacy::Private => 0o600,
            Ok(Target::New(_)) => 0o666 & !umask(),
            // It became a device or FIFO meanwhile: not replaced.
            Ok(Target::WriteThrough(_)) => {
                return Err(invalid(&self.path, "became a device or FIFO; not replaced"))
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => 0o666 & !umask(),
            Err(e) => return Err(e),
        };
        file.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(|e| io_err("cannot set the mode of", e))?;
        drop(file);
        let target = self.target.clone();
        match self.existing {
            Existing::Replace => {
                std::fs::rename(&tmp, &target).map_err(|e| io_err("cannot write", e))?;
            }
            Existing::Keep => match std::fs::hard_link(&tmp, &target) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    return Err(exists_error(&self.path))
                }
                // A file system without hard links: check, then rename.
                Err(_) => {
                    check_target(&self.path, Existing::Keep)?;
                    std::fs::rename(&tmp, &target).map_err(|e| io_err("cannot write", e))?;
                }
            },
        }
        self.committed = true;
        // After a hard link the temporary name remains; Drop removes it
        // only if the commit did not happen, so remove it here.
        let _ = std::fs::remove_file(&tmp);
        crate::interrupt::unregister_partial(&tmp);
        // The rename is durable once the directory is; best effort.
        if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file().seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (false, Some(tmp)) = (self.committed, &self.tmp) {
            let _ = std::fs::remove_file(tmp);
            crate::interrupt::unregister_partial(tmp);
        }
    }
}

/// Creates the directory `path` goes in, if it has one and it is missing.
pub fn create_parent_dir(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create", e)),
        None => Ok(()),
    }
}

/// Writes `bytes` to `path` atomically (see the module doc).
pub fn write_file(path: &Path, bytes: &[u8], existing: Existing) -> Result<()> {
    let mut f = AtomicFile::create(path, existing)?;
    f.write_all(bytes)
        .map_err(|e| Error::io(path, "cannot write", e))?;
    f.commit()
}

/// Checks a set of outputs before the work that makes them: no two are the
/// same path, none is a directory, and none exists unless replacing. Long
/// commands (`train`) call it first, so a refusal costs nothing.
pub fn check_outputs<P: AsRef<Path>>(paths: &[P], existing: Existing) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for p in paths {
        let p = p.as_ref();
        if !seen.insert(p) {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("{} would be written twice", p.display()),
            ));
        }
        check_target(p, existing)?;
    }
    Ok(())
}

/// Writes a set of files all or none: each is written under its temporary
/// name first, and only when every one is complete are they committed (a
/// failure while writing leaves every final path as it was). The commits
/// are separate renames, so a crash between two of them can leave part of
/// the set committed, never a partial file.
pub fn write_files(files: &[(PathBuf, Vec<u8>)], existing: Existing) -> Result<()> {
    let paths: Vec<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
    check_outputs(&paths, existing)?;
    let mut pending = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let mut f = AtomicFile::create(path, existing)?;
        f.write_all(bytes)
            .map_err(|e| Error::io(path, "cannot write", e))?;
        pending.push(f);
    }
    pending.into_iter().try_for_each(AtomicFile::commit)
}

/// Fails if `output` is the same file as any of `inputs` (same device and
/// inode, following symlinks); an output that does not exist yet is never
/// an input.
pub fn refuse_same_file<P: AsRef<Path>>(inputs: &[P], output: &Path) -> Result<()> {
    let Ok(out) = std::fs::metadata(output) else {
        return Ok(());
    };
    for input in inputs {
        let input = input.as_ref();
        if let Ok(m) = std::fs::metadata(input) {
            if m.is_file() && m.dev() == out.dev() && m.ino() == out.ino() {
                return Err(same_file_error(output, input));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect()
    }

    #[test]
    fn nothing_is_at_the_final_path_before_the_commit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&p, Existing::Keep).unwrap();
        f.write_all(b"hello").unwrap();
        assert!(!p.exists());
        assert!(f.partial_path().exists());
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"hello");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn an_existing_file_is_kept_unless_replacing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        let e = write_file(&p, b"new", Existing::Keep).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        write_file(&p, b"new", Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_file_created_meanwhile_is_not_replaced_by_a_keep_commit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        let mut f = AtomicFile::create(&p, Existing::Keep).unwrap();
        f.write_all(b"mine").unwrap();
        std::fs::write(&p, b"theirs").unwrap();
        assert_eq!(f.commit().unwrap_err().kind(), ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_dropped_file_leaves_nothing_and_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        std::fs::write(&p, b"old").unwrap();
        {
            let mut f = AtomicFile::create(&p, Existing::Replace).unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_set_is_written_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&b, b"old b").unwrap();
        let set = vec![
            (a.clone(), b"new a".to_vec()),
            (b.clone(), b"new b".to_vec()),
        ];
        // b exists: refused before anything is written.
        let e = write_files(&set, Existing::Keep).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::AlreadyExists);
        assert!(!a.exists());
        write_files(&set, Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        assert_eq!(std::fs::read(&b).unwrap(), b"new b");
        // The same path twice is refused.
        let twice = vec![(a.clone(), vec![1]), (a.clone(), vec![2])];
        let e = write_files(&twice, Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("written twice"), "{e}");
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_file(dir.path(), b"x", Existing::Replace).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn the_input_cannot_be_the_output_even_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.pages");
        std::fs::write(&input, b"data").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let other = dir.path().join("other");
        std::fs::write(&other, b"x").unwrap();
        for out in [&input, &link] {
            let e = refuse_same_file(&[&input], out).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        }
        refuse_same_file(&[&input], &other).unwrap();
        refuse_same_file(&[&input], &dir.path().join("new")).unwrap();
        assert_eq!(std::fs::read(&input).unwrap(), b"data");
    }

    #[test]
    fn devices_and_fifos_are_written_through_and_symlinks_followed() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        // /dev/null is written through with or without Replace.
        for existing in [Existing::Keep, Existing::Replace] {
            write_file(Path::new("/dev/null"), b"x", existing).unwrap();
            let m = std::fs::metadata("/dev/null").unwrap();
            assert!(m.file_type().is_char_device());
        }
        // A symlink stays a link; its target is replaced with its old mode.
        let real = dir.path().join("real");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("real", &link).unwrap();
        write_file(&link, b"new", Existing::Replace).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        // Private data: a new file is 0600, a replaced one at most 0600.
        let snap = dir.path().join("s.cansnap");
        let mut f = AtomicFile::create_with(&snap, Existing::Keep, Privacy::Private).unwrap();
        let partial = std::fs::metadata(f.partial_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(partial & 0o777, 0o600);
        f.write_all(b"pages").unwrap();
        f.commit().unwrap();
        assert_eq!(
            std::fs::metadata(&snap).unwrap().permissions().mode() & 0o777,
            0o600
        );
        std::fs::set_permissions(&snap, std::fs::Permissions::from_mode(0o644)).unwrap();
        let f = AtomicFile::create_with(&snap, Existing::Replace, Privacy::Private).unwrap();
        f.commit().unwrap();
        assert_eq!(
            std::fs::metadata(&snap).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // A symlink loop is named as such.
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let e = write_file(&a, b"x", Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("symlink loop"), "{e}");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn a_file_opened_as_input_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.json");
        std::fs::write(&input, b"{}").unwrap();
        let hard = dir.path().join("hard.json");
        std::fs::hard_link(&input, &hard).unwrap();
        crate::input::guard_inputs();
        crate::input::read_limited(&input, 16, "table").unwrap();
        let e = write_file(&hard, b"x", Existing::Replace).unwrap_err();
        assert!(e.to_string().contains("is the input"), "{e}");
        assert_eq!(std::fs::read(&input).unwrap(), b"{}");
        assert!(leftovers(dir.path()).is_empty());
    }
}
