//! `cannery table ...`: show a table (`cannery_lab::table_summary`),
//! import one from raw lengths or a kernel C header (parsed and
//! cross-checked by `cannery_export::import`), or write a built-in one.

use std::path::PathBuf;

use cannery_codec::Table;
use cannery_lab::table_file;
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

pub fn run(cmd: TableCommand) -> anyhow::Result<()> {
    match cmd {
        TableCommand::Show { table, json } => {
            let s = TableSummary::of(&load_table(&table)?);
            crate::cli::print_report(json, &s, |r| r.render_text())?;
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
            let mut t = if from == "kernel-header" {
                let t = table_file::import_kernel_header(&file)?;
                let name = t.name.as_deref().unwrap_or("unnamed");
                let (id, file) = (t.id(), file.display());
                crate::cli::out::status(format!("imported table {id} ({name}) from {file}"));
                t
            } else {
                let t = table_file::import_lengths(&file)?;
                let (id, out) = (t.id(), out.display());
                crate::cli::out::status(format!("table {id} written to {out}"));
                t
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
