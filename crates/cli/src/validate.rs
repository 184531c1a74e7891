//! Arguments of `cannery validate`.

use cannery_codec::Mode;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
    #[arg(long)]
    pub table: String,
    /// Corpus: a snapshot or raw `.pages` file, a directory of them, or a
    /// directory of workload directories (a bare name is looked up under corpora/).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Backends to use, comma-separated (default: every available one).
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<String>>,
    /// Modes to check, comma-separated (default: canned,fixed,dynamic).
    #[arg(long, value_delimiter = ',', default_value = "canned,fixed,dynamic")]
    pub modes: Vec<Mode>,
    /// Directory for one reproducer file per mismatch.
    #[arg(long)]
    pub repro_dir: Option<PathBuf>,
    /// Check at most this many pages of each workload (its first ones; at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages: Option<u64>,
    /// Exit 0 even if some requested checks could not run (they are still
    /// counted and listed).
    #[arg(long)]
    pub allow_skips: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
