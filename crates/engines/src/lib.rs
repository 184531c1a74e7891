//! cannery-engines: the compressors that run pages, each wrapped once.
//!
//! [`backend`] puts cannery's own encoder and decoder, the reference
//! inflaters (zlib, miniz_oxide, libdeflate) and, behind the `qpl` and
//! `qat` features, Intel QPL and QATzip behind one trait, with the
//! validation and fuzz matrix `cannery validate` and `cannery fuzz` run
//! over them ([`backend::check`]). [`peer`] wraps the outside compressors
//! zswap users pick (zstd, lz4, the kernel's deflate and lzo). [`batch`]
//! runs any of them over up to 32 pages at once on worker threads. `isal`
//! (feature `isal`) is ISA-L's level-0 compressor and statistics;
//! [`library`] puts QPL's and ISA-L's compressors to work as training
//! targets (their parse, their statistics, a table inside each).
//!
//! The stream formats, tables and cannery's own codec are
//! `cannery-codec`'s; this crate calls them and never changes them.
//! Unsafe code is denied everywhere except the FFI modules (QPL, QATzip,
//! ISA-L, liblz4's dictionary calls) and the batch path's hand-off of
//! pages to worker threads (`batch/`).

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod backend;
pub mod batch;
pub mod engine;
#[cfg(feature = "isal")]
#[allow(unsafe_code)]
pub mod isal;
pub mod library;
#[cfg(feature = "reference")]
pub mod peer;

pub use batch::{BatchCompressor, BatchDecompressor, BatchError, Bound, UnitStatus};
pub use engine::{Capabilities, Engine, EngineError, ExecPath, Job};
