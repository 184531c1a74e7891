//! cannery-cli: the `cannery` command line's surface. Every subcommand's
//! arguments, their help text (the doc comments) and their value parsers,
//! as clap derives, one module per subcommand group. It runs nothing: the
//! `cannery` binary (`src/`) parses with these types, dispatches, and does
//! each command's glue around the library crates. Kept apart so the help
//! a user reads has one home and the binary stays thin (the layout of
//! uv's `uv-cli`).

#![warn(missing_docs)]
// The doc comments are the help users read (`[286]` is an array length
// there, not a link).
#![allow(rustdoc::broken_intra_doc_links)]
#![forbid(unsafe_code)]

pub mod backends;
pub mod bench;
pub mod capture;
pub mod codec;
pub mod common;
pub mod corpus;
pub mod eval;
pub mod export;
pub mod fuzz;
pub mod restore;
pub mod stats;
pub mod table;
pub mod train;
pub mod validate;
pub mod version;
pub mod zram_kernel;
pub mod zswap_kernel;
pub mod zswap_sim;

pub use common::{at_least_one, SplitArgs};
