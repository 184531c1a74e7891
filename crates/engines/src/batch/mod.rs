//! Batch compression and decompression of 4 KiB units: the user-space
//! counterpart of the kernel's IAA batching (iaa_crypto's `batch_size` of 8,
//! zswap compressing a large folio as 4 KiB units, swap-in decompressing up
//! to 32 pages at once).
//!
//! A [`BatchCompressor`] takes up to `batch_size` units (1..=32) in one call
//! and spreads them over `workers`. Worker 0 is the calling thread; workers
//! 1.. are persistent worker threads started once, each owning its own codec
//! and its own buffers. Every unit gets its own [`UnitStatus`]: a compressed
//! length, [`UnitStatus::Incompressible`] (the output would be 4096 bytes or
//! more, so zswap stores the page raw), or the codec's typed error. One
//! unit's failure never changes another unit's result. [`BatchDecompressor`]
//! does the same for compressed streams, decoding stream `i` into the `i`-th
//! 4 KiB slot of the caller's buffer.
//!
//! The layers, one file each: `claim.rs` is the claim protocol (which worker
//! does which unit of a call); `seat.rs` the `Lane` trait, a worker thread
//! and the hand-off of its lane (one atomic state word); `worker.rs` the
//! workers of one direction (the waiting, the owner map; it uses seats,
//! seats never use it); `compress.rs` and
//! `decompress.rs` the two directions' lanes and public batch objects;
//! `loan.rs` the call's units and output slots as the workers see them
//! (raw pointers). `unsafe` is in `loan.rs` (the raw pointers) and
//! `seat.rs` (the shared seat), and at their call sites: `claim.rs`
//! (reading the call's loan through the board), `compress.rs` and
//! `decompress.rs` (a lane reading a unit and writing its slot through the
//! loan), each block with its `SAFETY:` comment. Work is
//! split dynamically by claiming: the caller takes units from the bottom of
//! a shared counter, workers from the top (a decompression call's streams
//! longest first from both ends, `loan.rs`); every worker reads the caller's
//! units in place and writes the caller's output slots (a decompressing
//! worker through a page of its own, see `decompress.rs`); nothing is
//! copied back by the caller.
//!
//! Words: a *worker* is one of the executors of a batch object (worker 0 is
//! the calling thread, worker `k + 1` the worker thread `k`); a *lane* is a
//! worker's codec and buffers; a *unit* is one page (or stream) of a call.
//!
//! Batch size 1 is the plain single-page call: a call with one unit (or with
//! no worker at home) stays with worker 0, the calling thread, which calls
//! [`Bound::compress_page`] directly on the caller's slice, with no
//! copy, no claim counter and no thread hand-off.
//!
//! If a worker's codec panics, the worker thread dies and the call (or the
//! next one) returns [`BatchError::WorkerLost`]; from then on the batch
//! object only returns that error. If worker 0's codec panics, the panic
//! reaches the caller, once the workers' lanes are back (so no worker still
//! uses the caller's memory).
//!
//! No allocation per unit in steady state: every buffer (outputs, statuses)
//! is allocated in `new` with room for a full batch and reused; the units of
//! a call are gathered in an array on the stack, and lanes never move. Only
//! a codec that allocates on its own (dynamic mode builds a table per page;
//! some peer libraries return fresh vectors), an error value, or an
//! oversized (invalid) unit allocates. The one-time allocations of a new
//! thread happen in `new`, which waits for each worker to start (workers
//! park with `thread::park`, which never allocates).
//! The `cannery-benches` package checks this with a counting global
//! allocator (`tests/no_alloc.rs`).
//!
//! Not here: policy (what to do with incompressible pages, pools, same-filled
//! pages: see `cannery_zswap::replay`), hardware queues (a QPL backend would
//! submit all units and poll, behind the same Engine trait), and timing.

use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::Table;

use crate::engine::{Engine, EngineError};

mod claim;
mod compress;
mod decompress;
mod loan;
mod seat;
mod worker;

pub use compress::{BatchCompressor, CompressedBatch};
pub use decompress::{BatchDecompressor, DecompressedBatch};

/// Largest batch: the swap-in readahead batch the kernel series decompresses.
pub const MAX_BATCH_SIZE: usize = 32;

/// The batch size of iaa_crypto (`IAA_CRYPTO_MAX_BATCH_SIZE`) and zswap
/// (`ZSWAP_MAX_BATCH_SIZE`) in the kernel series.
pub const IAA_BATCH_SIZE: usize = 8;

/// An engine bound to the mode and table of every unit of a batch: what
/// each lane of a [`BatchCompressor`] or [`BatchDecompressor`] runs. Any
/// `Send` engine can be a lane: cannery's software engine, the reference
/// libraries, the peers (mode dynamic, no table); not the FFI engines,
/// whose handles stay on one thread.
#[derive(Debug)]
pub struct Bound<E> {
    /// The engine.
    pub engine: E,
    /// The mode of every unit.
    pub mode: Mode,
    /// The table, for canned mode.
    pub table: Option<Table>,
}

impl<E: Engine> Bound<E> {
    /// `engine` running every unit in `mode` (with `table` when canned).
    pub fn new(engine: E, mode: Mode, table: Option<&Table>) -> Bound<E> {
        Bound {
            engine,
            mode,
            table: table.cloned(),
        }
    }

    /// Compresses `unit` into `out` (cleared first). On
    /// [`Outcome::Incompressible`] the contents of `out` are unspecified.
    #[inline]
    pub fn compress_page(
        &mut self,
        unit: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, EngineError> {
        self.engine
            .compress(self.mode, self.table.as_ref(), unit, out)
    }

    /// Decodes `data` into `out` (whose length is the limit); returns the
    /// number of bytes produced.
    #[inline]
    pub fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, EngineError> {
        self.engine
            .decompress(self.mode, self.table.as_ref(), data, out)
    }
}

/// What became of one unit of a compression batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitStatus<E> {
    /// Compressed to this many bytes (below 4096).
    Compressed(usize),
    /// The output would be 4096 bytes or more: store the unit raw (the
    /// kernel reports `-ENOSPC`/`-E2BIG` here).
    Incompressible,
    /// The codec failed on this unit (other units are unaffected).
    Failed(E),
}

impl<E> UnitStatus<E> {
    /// The status of a single-page call's result.
    #[inline]
    pub fn from_result(r: Result<Outcome, E>) -> UnitStatus<E> {
        match r {
            Ok(Outcome::Compressed(n)) => UnitStatus::Compressed(n),
            Ok(Outcome::Incompressible) => UnitStatus::Incompressible,
            Err(e) => UnitStatus::Failed(e),
        }
    }
}

/// Why a whole batch call (rather than one unit) failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The batch size is not in 1..=32.
    #[error("batch size {0} is out of range: it must be between 1 and 32")]
    BatchSize(usize),
    /// No codec was given, so there is no worker.
    #[error("a batch needs at least one engine (no codec was given)")]
    NoWorkers,
    /// A call gave more units than the batch size.
    #[error("{given} units were given but the batch size is {batch_size}")]
    TooManyUnits {
        /// Units in the call.
        given: usize,
        /// The configured batch size.
        batch_size: usize,
    },
    /// The decompression output buffer has fewer 4 KiB slots than streams.
    #[error("output buffer of {bytes} bytes has no room for {units} pages of 4096 bytes")]
    OutputTooSmall {
        /// Streams in the call.
        units: usize,
        /// Length of the output buffer.
        bytes: usize,
    },
    /// A worker thread could not be started.
    #[error("could not start a batch worker thread: {0}")]
    Spawn(String),
    /// A worker thread died (its codec panicked); the batch object is unusable.
    #[error("batch worker {0} stopped (its codec panicked); create a new batch object")]
    WorkerLost(usize),
}
