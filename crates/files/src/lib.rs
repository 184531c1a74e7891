//! The one owner of file I/O in cannery: every file a command or library
//! writes or reads whole goes through here. Knows no file format: the
//! crates that own a format (codec for tables, trainer for histograms,
//! export for C headers, capture for snapshots) parse and serialize bytes,
//! this crate moves them.
//!
//! - [`output`]: atomic outputs (temporary name, one rename at the commit),
//!   existing files kept unless replacing, devices and FIFOs written
//!   through, symlinks followed, modes (0600 for memory contents), sets of
//!   files written all or none, an output that is an input refused.
//! - [`message`]: outside text in messages (control characters escaped),
//!   an error and its causes on one line.
//! - [`sink`]: a command's main output, standard output (`-`) or an atomic
//!   file.
//! - [`input`]: bounded reads of small files (tables, histograms, headers)
//!   and the registry of every input a command-line process opened
//!   ([`input::guard_inputs`]), which [`output`] never replaces.
//! - [`interrupt`]: the one owner of SIGINT/SIGTERM: removes registered
//!   partial files, or sets the flag long jobs (captures, jobs that change
//!   the machine) poll to stop and undo what they did.
//!
//! # Unsafe code
//!
//! Denied everywhere but the private module `sys`, which wraps `sigaction`,
//! `unlink`, `_exit` (and, for the tests, `kill`) in safe functions, each
//! unsafe block with a `// SAFETY:` note.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod error;
pub mod input;
pub mod interrupt;
pub mod message;
pub mod output;
pub mod sink;
#[allow(unsafe_code)]
mod sys;

pub use error::{Error, ErrorKind, Result};
pub use output::{AtomicFile, Existing, Privacy};
pub use sink::Sink;
