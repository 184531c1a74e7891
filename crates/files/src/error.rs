//! Errors of the files crate: an [`Error`] with a `#[non_exhaustive]`
//! [`ErrorKind`], a one-line message that names the path, and the OS error
//! if any. Does not print or exit; callers decide.

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
    /// The file may not be read or written.
    PermissionDenied,
    /// A path that does not exist.
    NotFound,
    /// A file ends early (an I/O read that hit the end).
    Truncated,
    /// A bad path (a directory, a loop, the input as the output) or an
    /// input larger than its limit.
    InvalidInput,
    /// An output file that exists and is not to be replaced.
    AlreadyExists,
}

/// An error of this crate: a kind, a one-line lower-case message that
/// already names the path and OS error, and the OS error itself if any
/// ([`Error::io_error`]).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    path: Option<PathBuf>,
    source: Option<io::Error>,
}

impl Error {
    /// A new error with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            path: None,
            source: None,
        }
    }

    /// An I/O error on `path` (`"{what} {path}: {err}"`), classified by its
    /// OS error code.
    pub fn io(path: &Path, what: &str, err: io::Error) -> Error {
        let kind = match err.kind() {
            io::ErrorKind::NotFound => ErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            io::ErrorKind::UnexpectedEof => ErrorKind::Truncated,
            _ if err.raw_os_error() == Some(libc::EPERM) => ErrorKind::PermissionDenied,
            _ => ErrorKind::Io,
        };
        Error {
            kind,
            message: format!("{what} {}: {err}", path.display()),
            path: Some(path.to_path_buf()),
            source: Some(err),
        }
    }

    /// The broad kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file involved, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The underlying OS error, if any.
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }

    /// The same error with `what: ` in front of its message.
    pub fn prefixed(mut self, what: &str) -> Error {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Its parts: kind, message, path and OS error (for a crate that wraps
    /// it in its own error type).
    pub fn into_parts(self) -> (ErrorKind, String, Option<PathBuf>, Option<io::Error>) {
        (self.kind, self.message, self.path, self.source)
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

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
