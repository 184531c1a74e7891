//! Typed errors of the capture crate: an opaque [`Error`] with a
//! `#[non_exhaustive]` [`ErrorKind`], the path involved and, for file formats,
//! the byte offset where reading failed. Does not print or exit; callers decide.

#![forbid(unsafe_code)]

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// What went wrong, broadly. New kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An operating-system I/O error not covered by a more specific kind.
    Io,
    /// The caller may not read the target process (ptrace access check).
    PermissionDenied,
    /// The process does not exist (or is already gone).
    NoSuchProcess,
    /// The PID was reused by another process while attaching.
    PidReused,
    /// A file ends before its format says it should.
    Truncated,
    /// A file's contents do not follow the format.
    Corrupt,
    /// A snapshot written by a newer, unknown format version.
    UnsupportedVersion,
    /// A bad argument or an input file of the wrong kind.
    InvalidInput,
    /// A path that does not exist.
    NotFound,
    /// An output file that exists and is not to be replaced.
    AlreadyExists,
    /// A capture ended before its first sample (nothing was written).
    NoSample,
    /// The workload command could not be started.
    Spawn,
    /// A ptrace request (used by `--freeze`) failed.
    Ptrace,
    /// The kernel lacks what the request needs (e.g. idle page tracking).
    Unsupported,
}

/// An error from this crate: a kind, a one-line lower-case message that
/// already names the path, offset and OS error, and the underlying OS
/// error itself if any ([`Error::io_error`]).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    offset: Option<u64>,
    source: Option<io::Error>,
}

impl Error {
    /// A new error with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            path: None,
            offset: None,
            source: None,
        }
    }

    /// A format error in `path` at byte `offset`; the message names both.
    pub fn at(kind: ErrorKind, path: &Path, offset: u64, what: impl fmt::Display) -> Error {
        Error {
            kind,
            message: format!("{}: {what} (at byte offset {offset})", path.display()),
            path: Some(path.to_path_buf()),
            offset: Some(offset),
            source: None,
        }
    }

    /// An I/O error on `path`, classified by its OS error code.
    pub fn io(path: &Path, what: &str, err: io::Error) -> Error {
        let esrch = err.raw_os_error() == Some(libc::ESRCH);
        let e = Error::from(cannery_files::Error::io(path, what, err));
        if esrch {
            e.with_kind(ErrorKind::NoSuchProcess)
        } else {
            e
        }
    }

    /// The broad kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file or /proc path involved, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The byte offset in the file where reading failed, for format errors.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    pub(crate) fn with_kind(mut self, kind: ErrorKind) -> Error {
        self.kind = kind;
        self
    }

    pub(crate) fn with_message(mut self, message: String) -> Error {
        self.message = message;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

// The message already contains the OS error text, so `source()` is left
// empty (error reporters would print it twice); see [`Error::io_error`].
impl std::error::Error for Error {}

impl Error {
    /// The underlying OS error, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }
}

impl From<cannery_files::Error> for Error {
    fn from(e: cannery_files::Error) -> Error {
        use cannery_files::ErrorKind as K;
        let (kind, message, path, source) = e.into_parts();
        let kind = match kind {
            K::PermissionDenied => ErrorKind::PermissionDenied,
            K::NotFound => ErrorKind::NotFound,
            K::Truncated => ErrorKind::Truncated,
            K::InvalidInput => ErrorKind::InvalidInput,
            K::AlreadyExists => ErrorKind::AlreadyExists,
            _ => ErrorKind::Io,
        };
        Error {
            kind,
            message,
            path,
            offset: None,
            source,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
