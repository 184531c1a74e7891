//! `cannery table ...`: show a table (`cannery_lab::table_summary`),
//! import one from raw lengths or a kernel C header (parsed and
//! cross-checked by `cannery_export::import`), or write a built-in one.

use std::path::PathBuf;

use anyhow::{bail, Context};
use cannery_codec::Table;
use cannery_files::input::{read_limited, read_text_limited};
use cannery_lab::table_summary::TableSummary;
use clap::Subcommand;

use super::{load_table, write_table};

/// Table subcommands.
#[derive(Subcommand)]
pub enum TableCommand {
    /// Show a table: id, rules it meets, code-length profile (`--json` for machines).
    Show {
        /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
        table: String,
        /// Print JSON with `id`, `litlen_lengths` [286], `dist_lengths` [30], ...
        #[arg(long)]
        json: bool,
    },
    /// Import a table from another form.
    Import {
        /// Source form: `lengths` (316 raw bytes: 286 literal/length then 30
        /// distance lengths) or `kernel-header` (a C header with kernel-format
        /// arrays, ours or the 2024 patch's; codes, lengths and header are
        /// cross-checked).
        #[arg(long, value_parser = ["lengths", "kernel-header"])]
        from: String,
        /// The file to import.
        file: PathBuf,
        /// Output table (JSON if it ends in .json, else binary).
        #[arg(short, long)]
        out: PathBuf,
        /// Replace the output file if it exists.
        #[arg(short, long)]
        force: bool,
        /// Name to record in the table.
        #[arg(long)]
        name: Option<String>,
    },
    /// Write a built-in table (fixed or kernel-2024).
    Builtin {
        /// Which: fixed or kernel-2024.
        #[arg(value_parser = Table::BUILTIN_NAMES)]
        which: String,
        /// Output table (JSON if it ends in .json, else binary).
        #[arg(short, long)]
        out: PathBuf,
        /// Replace the output file if it exists.
        #[arg(short, long)]
        force: bool,
    },
}

/// Largest C header `table import` reads (the kernel's are a few KiB; the
/// scan keeps one token per byte at most, so this bounds its memory too).
const HEADER_LIMIT: u64 = 2 << 20;

pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {
        TableCommand::Show { table, json } => {
            let s = TableSummary::of(&load_table(&table)?);
            if json {
                outln!("{}", serde_json::to_string_pretty(&s)?)?;
            } else {
                out!("{}", s.render_text())?;
            }
            Ok(())
        }
        TableCommand::Import {
            from,
            file,
            out,
            force,
            name,
        } => {
            cannery_files::output::refuse_same_file(&[&file], &out)?;
            let mut t = match from.as_str() {
                "kernel-header" => {
                    let text = read_text_limited(&file, HEADER_LIMIT, "C header")?;
                    let t = cannery_export::table_from_kernel_header(&text)
                        .with_context(|| format!("cannot import {}", file.display()))?;
                    crate::cli::out::status(format!(
                        "imported table {} ({}) from {}",
                        t.id(),
                        t.name.as_deref().unwrap_or("unnamed"),
                        file.display()
                    ));
                    t
                }
                _ => {
                    let bytes = read_limited(&file, 316, "lengths file")?;
                    if bytes.len() != 316 {
                        bail!("{}: {} bytes; a lengths file is exactly 316 bytes (286 literal/length then 30 distance lengths)", file.display(), bytes.len());
                    }
                    let mut t = Table::from_lengths(&bytes[..286], &bytes[286..])
                        .with_context(|| format!("{}", file.display()))?;
                    t.provenance.source =
                        Some(format!("imported from raw lengths {}", file.display()));
                    crate::cli::out::status(format!(
                        "table {} written to {}",
                        t.id(),
                        out.display()
                    ));
                    t
                }
            };
            if name.is_some() {
                t.name = name;
            }
            write_table(&t, &out, force)
        }
        TableCommand::Builtin { which, out, force } => {
            let t = Table::builtin(&which).expect("clap checked the name");
            write_table(&t, &out, force)?;
            crate::cli::out::status(format!(
                "table {} ({which}) written to {}",
                t.id(),
                out.display()
            ));
            Ok(())
        }
    }
}
