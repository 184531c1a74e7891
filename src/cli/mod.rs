//! Subcommand modules of the `cannery` CLI, one per group.

pub mod codec;
pub mod export;
pub mod table;
