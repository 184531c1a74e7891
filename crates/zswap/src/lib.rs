//! cannery-zswap: a model of zswap storing and loading 4 KiB pages, driven
//! through the batch path of `cannery_engines::batch`, so any
//! [`Engine`](cannery_engines::Engine) (bound to a mode and table,
//! [`Bound`](cannery_engines::Bound)) can be measured for pool size, effective ratio, rejected pages and per-page
//! store/load latency. This is where the policy `cannery_engines::batch`
//! leaves out lives: what to do with incompressible and same-filled pages,
//! and where stored pages go.
//!
//! What is modelled (each a model, not the kernel):
//! - Folios ([`folio`]): the corpus, in order, is cut into folios of 4, 16,
//!   32 or 64 KiB (`mixed` repeats 64k, 4k, 32k, 16k). A store takes one
//!   folio and compresses its pages in batches of `compress_batch`
//!   consecutive pages, never across folios (zswap_store of a large folio,
//!   kernel series v14). Loads take `decompress_batch` consecutive stored
//!   pages, across folios (swap-in readahead).
//! - Same-filled pages (one 8-byte value repeated, as zswap tested before
//!   6.12 and zram still does) are not compressed: the entry keeps the value
//!   and takes no pool space; a load fills the page.
//! - Incompressible pages (output of 4096 bytes or more) and pages the codec
//!   fails on are stored raw, 4096 bytes, as zswap does when memcg writeback
//!   is enabled (the default, [`Policy::StoreRaw`]). With [`Policy::Reject`]
//!   (writeback disabled) such a page makes the whole folio's store fail, as
//!   zswap rejects a large folio if any page fails: every page of that folio
//!   is counted in `rejected_pages` and none is in the pool.
//! - The pool ([`zsmalloc`]): zsmalloc size classes on x86-64 with 4 KiB
//!   pages. An object of `len` bytes asks for `len + 8` (zs_malloc adds
//!   ZS_HANDLE_SIZE), is put in the class of index ceil((len + 8 - 32) / 16)
//!   of the classes 32, 48, ..., 4096 (the last for anything larger), and
//!   classes with the same pages-per-zspage and objects-per-zspage are merged
//!   into the larger one as zs_create_pool does, each zspage as long as
//!   `calculate_zspage_chain_size` makes it (up to 8 pages,
//!   CONFIG_ZSMALLOC_CHAIN_SIZE's default; the fewest bytes left over).
//!   `pool_bytes` is the sum
//!   of the class sizes of the stored objects; `zspage_bytes` is the memory
//!   of a perfectly compacted pool (whole zspages per class). Partly empty
//!   zspages left by frees, zswap's entry metadata and compaction are not
//!   modelled.
//! - Latency: the wall time of each store batch (same-filled check,
//!   compression, copy into the pool) or load batch (fill, copy or
//!   decompression) divided by its pages, recorded once per page; p50 and
//!   p99 are nearest-rank percentiles over all pages.
//!
//! Every loaded page is compared with the original; mismatches are counted
//! in the [`RunReport`], not raised.
//!
//! [`replay::run`] is the engine (one run, one batch size); [`report`] holds
//! the serializable report of a sweep and its text rendering; [`corpus`]
//! reads a corpus into memory for replay. The engine reads no files and the
//! crate prints nothing: callers hand it pages back to back and the codecs,
//! and get reports back (`cannery zswap-sim` is one such caller).
//!
//! The pool model on its own: a 1,000-byte object asks zs_malloc for 1,008
//! bytes and lands in the 1,024-byte class.
//!
//! ```
//! use cannery_zswap::zsmalloc::{Pool, Zsmalloc};
//! assert_eq!(Zsmalloc::new().class_size(1000), 1024);
//! let mut pool = Pool::new();
//! pool.add(1000);
//! pool.add(1000);
//! assert!(pool.zspage_bytes() >= 2 * 1024);
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod corpus;
pub mod folio;
pub mod kernel;
pub mod replay;
pub mod report;
mod session_table;
pub mod sweep;
pub mod zram_kernel;
pub mod zsmalloc;

pub use corpus::ReplayCorpus;
pub use folio::{folios, FolioSize};
pub use replay::{run, Policy, RunConfig};
pub use report::{BesideReport, Report, RunReport};
pub use sweep::{default_workers, simulate, sweep, Sweep, SweepCodec, SWEEP};
pub use zsmalloc::{Pool, Zsmalloc};

/// Why a replay could not run (a loaded page that differs is not an error:
/// it is counted in [`RunReport::mismatches`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The batch path refused the settings or lost an engine.
    #[error(transparent)]
    Batch(#[from] cannery_engines::batch::BatchError),
    /// A codec could not be set up.
    #[error("{0}")]
    Setup(String),
}
