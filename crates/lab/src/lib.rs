//! cannery-lab: measures tables and engines on pages and reports what it
//! found. It sits above the format (`cannery_codec`), the engines and the
//! trainer (`cannery_trainer`), and is where every figure a user reads is
//! computed and laid out:
//!
//! [`evaluate`] (held-out sizes of one workload for every codec, drift) →
//! [`eval_corpus`] (a corpus against given tables) and [`fleet`]
//! (per-workload and fleet training of a corpus, then its evaluation) →
//! [`report`] (the serializable report) → [`render`] (its text and markdown);
//! [`bench`](mod@bench) times cannery's modes and the peer compressors page by page
//! (`cannery bench`); [`mode_key`] names a measured mode;
//! [`histogram_files`] reads and merges histogram files and trains a table
//! from them; [`table_file`] loads a table argument (a file or a built-in) and
//! writes one; [`train_files`] plans and fills the files `cannery train` writes;
//! [`table_summary`] and [`corpus_summary`] are what `table show` and
//! `corpus info` print, [`engine_reports`] what `validate`, `fuzz` and
//! `backends` print ([`reproducers`] writes the files of their failures).
//! Every report computes its ratios and percentiles with
//! [`figures`], lays out its tables with [`tabular`] and formats sizes and
//! times with [`units`] (cannery-zswap's reports too).
//!
//! The crate prints nothing: callers hand it pages, corpora and tables and
//! get reports back.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bench;
pub mod corpus_summary;
pub mod engine_reports;
pub mod eval_corpus;
pub mod evaluate;
pub mod figures;
pub mod fleet;
pub mod histogram_files;
pub mod mode_key;
pub mod render;
pub mod report;
pub mod reproducers;
pub mod table_file;
pub mod table_summary;
pub mod tabular;
pub mod train_files;
pub mod units;

pub use mode_key::ModeKey;
