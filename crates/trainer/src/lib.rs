//! cannery-trainer: turns 4 KiB pages into deflate symbol statistics, trains
//! canned Huffman tables for IAA, QPL and ISA-L from them.
//!
//! The modules follow the data flow:
//! [`pages`] (sources of pages, the train/test split) →
//! [`gather`] (parse pages, count symbols) → [`histogram`] (the mergeable
//! statistics) → [`smoothing`] (weights for zero and rare counts) →
//! [`code_lengths`] (optimal limited codes under IAA/QPL constraints) →
//! [`train`] (tables, `best` refinement) → [`cluster`] (K tables);
//! [`bounds`] gives a table's distance from the optimum (drift). Every
//! step takes the one options type, [`TrainOptions`] ([`options`]). Measuring
//! tables against other codecs, fleet runs and reports are `cannery_lab`'s.
//!
//! The crate prints nothing, and its core reads no files: callers hand it
//! pages (any [`pages::PageSource`]) or histograms, and get tables and
//! reports back; [`corpus`] is the thin adapter that streams page files
//! (through `cannery_capture`) as a source.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bounds;
pub mod cluster;
pub mod code_lengths;
pub mod corpus;
pub mod error;
pub mod gather;
pub mod header_aware;
pub mod histogram;
pub mod options;
pub mod pages;
pub mod refine;
pub mod scan;
pub mod smoothing;
pub mod target;
#[doc(hidden)]
pub mod testutil;
pub mod train;

pub use error::{TrainError, MIN_TRAINING_PAGES};
pub use histogram::{Histogram, HistogramError, ParseModel, Settings};
pub use options::TrainOptions;
pub use pages::{PageSource, Split};
pub use smoothing::Smoothing;
