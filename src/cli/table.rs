//! `cannery table ...`: show, import and write tables.
//!
//! This branch carries only `table import --from kernel-header`; the parser
//! and its checks are `cannery_export::import`.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};

/// Table subcommands.
#[derive(Subcommand)]
pub enum TableCommand {
    /// Read a table from another format and write it as a table file (JSON).
    Import(ImportArgs),
}

/// Formats `table import` reads.
#[derive(Clone, Copy, ValueEnum)]
pub enum ImportFormat {
    /// A C header with kernel-format ll/d arrays (ours, or the kernel
    /// patches' canned_ll_iaa/canned_d_iaa/canned_header); codes, lengths and
    /// header are cross-checked.
    KernelHeader,
}

/// Arguments of `table import`.
#[derive(Args)]
pub struct ImportArgs {
    /// Input format.
    #[arg(long, value_enum)]
    from: ImportFormat,
    /// Input file.
    input: PathBuf,
    /// Table file to write (JSON).
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
}

/// Runs a table subcommand.
pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {
        TableCommand::Import(a) => match a.from {
            ImportFormat::KernelHeader => {
                let text = std::fs::read_to_string(&a.input)
                    .with_context(|| format!("cannot read {}", a.input.display()))?;
                let table = cannery_export::table_from_kernel_header(&text)
                    .with_context(|| format!("cannot import {}", a.input.display()))?;
                std::fs::write(&a.out, table.to_json())
                    .with_context(|| format!("cannot write {}", a.out.display()))?;
                eprintln!(
                    "imported table {} ({}) from {}",
                    table.id(),
                    table.name.as_deref().unwrap_or("unnamed"),
                    a.input.display()
                );
                Ok(())
            }
        },
    }
}
