//! The trainer's typed errors. Each message says what was found and what is
//! needed, in lower case, so the CLI can print it as is (zstd's trainer's
//! "Error (generic)" is the anti-example). Histogram file errors are in
//! [`crate::histogram::HistogramError`].

use crate::histogram::HistogramError;

/// An error a page source reports (I/O, a corrupt snapshot, ...).
pub type SourceError = Box<dyn std::error::Error + Send + Sync>;

/// Smallest number of training pages a table is built from.
///
/// A table has 316 code lengths; with fewer pages than this the rare
/// symbols' lengths are mostly smoothing, and held-out results are noise.
pub const MIN_TRAINING_PAGES: u64 = 32;

/// Why training or evaluation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// The page source failed (unreadable file, corrupt snapshot, ...).
    #[error("cannot read pages: {0}")]
    Source(SourceError),
    /// A page of the wrong size.
    #[error("page {index} is {len} bytes; pages are 4096 bytes")]
    PageSize {
        /// Position in the stream.
        index: u64,
        /// Its length.
        len: usize,
    },
    /// No page at all.
    #[error("{what}: no pages found; a table needs at least {needed} training pages (4 KiB each)")]
    Empty {
        /// Workload or corpus name.
        what: String,
        /// Pages needed.
        needed: u64,
    },
    /// An evaluation that measured no page (none at all, or only zero and
    /// same-filled ones): a ratio over no pages is no result.
    #[error(
        "{what}: no page to measure ({same_filled} zero or same-filled pages, which zswap stores \
         without compressing them); a measurement with no pages is no result"
    )]
    NothingMeasured {
        /// Corpus name.
        what: String,
        /// Same-filled pages found.
        same_filled: f64,
    },
    /// Only zero or same-filled pages: nothing a compressor ever sees.
    #[error(
        "{what}: all {same_filled} pages are zero or same-filled (zswap stores those without \
         compressing them); a table needs at least {needed} other pages"
    )]
    AllSameFilled {
        /// Workload or corpus name.
        what: String,
        /// Same-filled pages found.
        same_filled: u64,
        /// Pages needed.
        needed: u64,
    },
    /// Some pages, not enough.
    #[error(
        "{what}: found {found} training pages ({total} pages read, {same_filled} zero or \
         same-filled, {held_out} held out for testing); need at least {needed}. Capture more \
         pages, lower --test-fraction, or use the kernel-2024 table"
    )]
    TooFewPages {
        /// Workload or corpus name.
        what: String,
        /// Training pages found.
        found: u64,
        /// Pages read in total.
        total: u64,
        /// Same-filled pages skipped.
        same_filled: u64,
        /// Pages held out for testing.
        held_out: u64,
        /// Training pages needed.
        needed: u64,
    },
    /// A test fraction outside 0..1.
    #[error("test fraction {0} is out of range: use a value from 0.0 up to (not including) 1.0")]
    BadTestFraction(f64),
    /// `--tables K` with K = 0 or above the limit.
    #[error("cannot train {found} tables: choose 1 to {max}")]
    BadTableCount {
        /// K asked for.
        found: usize,
        /// Largest K supported.
        max: usize,
    },
    /// A workload the corpus does not have.
    #[error("no workload {name:?} in the corpus (it has: {})", has.join(", "))]
    NoWorkload {
        /// The name asked for.
        name: String,
        /// The corpus' workloads.
        has: Vec<String>,
    },
    /// Histograms that cannot be combined or read.
    #[error(transparent)]
    Histogram(#[from] HistogramError),
    /// The codec refused a table or page (a bug if it happens after training).
    #[error(transparent)]
    Encode(#[from] cannery_codec::EncodeError),
    /// A trained table broke a table rule (a bug: training guarantees them).
    #[error(transparent)]
    Table(#[from] cannery_codec::TableError),
    /// A trained table broke an IAA rule (a bug: training guarantees them).
    #[error("trained table is not usable by IAA: {0}")]
    NotIaaSafe(cannery_codec::table::IaaRule),
    /// A table trained with `qpl_compatible` is not QPL-loadable (a bug:
    /// training guarantees it).
    #[error("trained table is not QPL-loadable: {0}")]
    NotQplLoadable(String),
    /// A peer compressor failed.
    #[error(transparent)]
    Peer(#[from] cannery_engines::peer::PeerError),
    /// A page did not decode back to itself.
    #[error("round trip failed: {codec} page {index} {what}")]
    RoundTrip {
        /// Codec name.
        codec: String,
        /// Page index among the evaluated pages.
        index: u64,
        /// What differed.
        what: String,
    },
    /// A parse (`--target`) of a library this build does not include.
    #[error(
        "the {parse} parse needs cannery built with the `{feature}` feature \
         (cargo build --release --features {feature}; README, \"Training for QPL and ISA-L\")"
    )]
    ParseUnavailable {
        /// The parse asked for.
        parse: &'static str,
        /// The cargo feature it needs.
        feature: &'static str,
    },
    /// Another library failed while gathering statistics or compressing.
    #[error("{library}: {message}")]
    Library {
        /// `qpl` or `isal`.
        library: &'static str,
        /// What it said.
        message: String,
    },
    /// Tokens were asked of a parse that yields only counts (a library's).
    #[error("the {0} parse gives symbol counts, not tokens")]
    NoTokens(&'static str),
}
