//! Subcommand modules of the `cannery` CLI, one per group.

pub mod backends;
pub mod codec;
pub mod fuzz;
pub mod table;
pub mod validate;
