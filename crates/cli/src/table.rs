//! Arguments of `cannery table show`, `table import` and `table builtin`.

use cannery_codec::Table;
use clap::Subcommand;
use std::path::PathBuf;

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
