//! The checks behind `cannery validate` and `cannery fuzz`: one page through
//! one (compressor, decompressor) pair ([`pair`]), the matrix of every pair
//! with its counts and verdict ([`matrix`]; its text is
//! `cannery_lab::engine_reports`'),
//! `cannery validate`'s whole report ([`report`]), `cannery fuzz`'s
//! batched run over generated pages ([`fuzz`](mod@fuzz)), and what the machine
//! says about IAA and QAT devices ([`devices`]). Which
//! tables a backend accepts comes from its capabilities and
//! [`cannery_codec::table::rules`]; nothing here decides it by backend name, prints,
//! or writes files.

pub mod devices;
pub mod fuzz;
pub mod matrix;
pub mod pair;
pub mod report;

pub use devices::{iaa_devices, qat_devices};
pub use fuzz::{fuzz, FuzzReport};
pub use matrix::{run_matrix, Cell, Counts, Failure, FailureCase, MatrixSpec, Reproducer, Verdict};
pub use pair::{
    check_pair, check_stream, reencode_canned, reencode_canned_with, PairOutcome, PairResult,
    Reencode, QPL_SW_TAIL,
};
pub use report::{rule_results, validate, RuleResult, ValidationReport};
