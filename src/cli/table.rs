//! `cannery table ...`: show, import and write tables.

use clap::Subcommand;

/// Table subcommands.
#[derive(Subcommand)]
pub enum TableCommand {}

pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {}
}
