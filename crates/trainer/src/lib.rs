//! cannery-trainer: turns 4 KiB pages into deflate symbol statistics, trains
//! canned Huffman tables for IAA from them, and evaluates tables against the
//! compressors zswap users pick.
//!
//! The modules follow the data flow:
//! [`pages`] (sources of pages, the train/test split) →
//! [`gather`] (parse pages, count symbols) → [`histogram`] (the mergeable
//! statistics) → [`smoothing`] (weights for zero and rare counts) →
//! [`code_lengths`] (optimal limited codes under IAA/QPL constraints) →
//! [`train`] (tables, `best` refinement) → [`cluster`] (K tables) →
//! [`evaluate`] (held-out sizes for every codec, drift) → [`fleet`]
//! (per-workload and fleet training of a corpus) → [`report`] (its report) →
//! [`render`] (the reports as text).
//! [`bench`] times cannery's modes and the peer compressors
//! (`cannery_engines::peer`) page by page (`cannery bench`).
//!
//! The crate prints nothing, and its core reads no files: callers hand it
//! pages (any [`pages::PageSource`]) or histograms, and get tables and
//! reports back; [`corpus`] is the thin adapter that streams page files
//! (through `cannery_capture`) as a source.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bench;
pub mod bounds;
pub mod cluster;
pub mod code_lengths;
pub mod corpus;
pub mod error;
pub mod eval_corpus;
pub mod evaluate;
pub mod fleet;
pub mod gather;
pub mod header_aware;
pub mod histogram;
pub mod mode_key;
pub mod pages;
pub mod refine;
pub mod render;
pub mod report;
pub mod scan;
pub mod smoothing;
pub mod target;
#[doc(hidden)]
pub mod testutil;
pub mod train;

pub use error::{TrainError, MIN_TRAINING_PAGES};
pub use histogram::{Histogram, HistogramError, ParseModel, Settings};
pub use mode_key::ModeKey;
pub use pages::{PageSource, Split};
pub use scan::TrainOptions;
pub use smoothing::Smoothing;
pub use train::TableOptions;
