//! Subcommand modules of the `cannery` CLI, one per group.

pub mod codec;
pub mod table;
pub mod zswap_sim;
