//! Reading small input files (tables, histograms, C headers, JSON) with a
//! size limit, so a wrong path such as `/dev/zero` or a multi-gigabyte file
//! gives one clear error instead of filling memory. Works on regular files,
//! pipes and `/dev/stdin` alike: it reads at most one byte past the limit.
//! Knows no format: the crates that own one parse the bytes.
//!
//! Every input file is opened through [`open_input`]. In a command-line
//! process (one that called [`guard_inputs`] at start-up) it remembers the
//! file's device and inode, and [`crate::output`] refuses to replace any of
//! them, so no command overwrites what it reads, whatever name (symlink,
//! hard link, sidecar) the output has. A library user (Python, a fuzz
//! target) may read a file and later write it again, as with any file API,
//! so the registry is off unless the program asks for it.

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Device, inode and name of every regular file opened as an input.
static INPUTS: Mutex<Vec<(u64, u64, PathBuf)>> = Mutex::new(Vec::new());
/// Whether inputs are remembered ([`guard_inputs`]).
static GUARDED: AtomicBool = AtomicBool::new(false);

/// From now on, every input this process opens is remembered and never
/// replaced by an output. For command-line programs, at start-up: one
/// command reads a bounded set of files.
pub fn guard_inputs() {
    GUARDED.store(true, Ordering::SeqCst);
}

/// Opens `path` for reading and remembers it as an input of this process
/// (see the module doc); `what` names it in errors.
pub fn open_input(path: &Path, what: &str) -> Result<std::fs::File> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, what, e))?;
    if let Ok(m) = file.metadata() {
        register_input(path, &m);
    }
    Ok(file)
}

/// Remembers a file (of metadata `m`) as an input; only regular files count.
pub fn register_input(path: &Path, m: &std::fs::Metadata) {
    if m.is_file() && GUARDED.load(Ordering::SeqCst) {
        let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        let entry = (m.dev(), m.ino(), path.to_path_buf());
        if !inputs.contains(&entry) {
            inputs.push(entry);
        }
    }
}

/// The name an input of this process had, if the file of metadata `m` is
/// one (and that name still leads to it: an inode number freed by a
/// deleted input and reused by a new file is not the input).
pub fn opened_as_input(m: &std::fs::Metadata) -> Option<PathBuf> {
    let same = |d: u64, i: u64| (d, i) == (m.dev(), m.ino());
    let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs
        .iter()
        .filter(|(d, i, _)| same(*d, *i))
        .find(|(_, _, p)| std::fs::metadata(p).is_ok_and(|n| same(n.dev(), n.ino())))
        .map(|(_, _, p)| p.clone())
}

/// The limit for table, histogram and report files (JSON or binary).
pub const SMALL_FILE_LIMIT: u64 = 16 << 20;

/// Reads all of `path`, failing if it holds more than `limit` bytes; `what`
/// names the file in messages ("table", "histogram", ...).
pub fn read_limited(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let file = open_input(path, &format!("cannot open {what}"))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, &format!("cannot read {what}"), e))?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{what} {}: larger than {} bytes, too large for a {what}",
                path.display(),
                limit
            ),
        ));
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text.
pub fn read_text_limited(path: &Path, limit: u64, what: &str) -> Result<String> {
    String::from_utf8(read_limited(path, limit, what)?).map_err(|e| {
        Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{what} {}: not UTF-8 text (invalid byte at offset {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_device_is_refused_after_the_limit() {
        let e = read_limited(Path::new("/dev/zero"), 1 << 16, "table").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.to_string().contains("larger than 65536 bytes"), "{e}");
    }

    #[test]
    fn files_up_to_the_limit_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        std::fs::write(&p, b"{}").unwrap();
        assert_eq!(read_limited(&p, 2, "table").unwrap(), b"{}");
        assert_eq!(read_text_limited(&p, 2, "table").unwrap(), "{}");
        assert!(read_limited(&p, 1, "table").is_err());
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(read_text_limited(&p, 2, "table").is_err());
        let e = read_limited(&dir.path().join("missing"), 2, "table").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}
