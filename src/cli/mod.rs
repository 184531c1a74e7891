//! Subcommand modules of the `cannery` CLI, one per group.

pub mod capture;
pub mod codec;
pub mod corpus;
pub mod table;
