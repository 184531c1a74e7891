//! Arguments of `cannery corpus info`, `corpus export` and `corpus scan-secrets`.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Corpus subcommands.
#[derive(Subcommand, Debug)]
pub enum CorpusCommand {
    /// Summarize a snapshot, a .pages file or a corpus directory.
    Info(InfoArgs),
    /// Write a corpus's pages (all, one workload's, or a seeded sample per
    /// workload) as raw 4 KiB pages or as JSON Lines records.
    Export(ExportArgs),
    /// Flag secret-looking strings (private keys, tokens, KEY/TOKEN/PASSWORD
    /// variables). Exit status: 0 none found, 1 found, 2 error (nothing
    /// scanned, unreadable input).
    ScanSecrets(ScanArgs),
}

/// Arguments of `corpus info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Corpus directory, snapshot file or .pages file.
    pub path: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `corpus export` writes per page.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum EmitArg {
    /// Raw 4096-byte pages back to back (a `.pages` file).
    Pages,
    /// JSON Lines: workload, index, region, data (hex).
    Records,
}

/// Arguments of `corpus export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Corpus directory, snapshot file or .pages file (or a name under corpora/).
    pub path: PathBuf,
    /// Only this workload.
    #[arg(long)]
    pub workload: Option<String>,
    /// At most this many pages per workload, chosen uniformly at random.
    #[arg(long)]
    pub sample: Option<u64>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What to write per page.
    #[arg(long, value_enum, default_value = "pages")]
    pub emit: EmitArg,
    /// Output file (`-` for standard output).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// Print what was exported as JSON on stdout (not with `-o -`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `corpus scan-secrets`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Directory (scanned recursively) or file.
    pub path: PathBuf,
    /// Print findings as JSON.
    #[arg(long)]
    pub json: bool,
}
