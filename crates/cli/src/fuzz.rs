//! Arguments of `cannery fuzz`.

use cannery_codec::Mode;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery fuzz`.
#[derive(Args)]
pub struct FuzzArgs {
    /// The backend under test; every checked pair involves it.
    #[arg(long)]
    pub backend: String,
    /// Backends to check it against, comma-separated (default: every available one).
    #[arg(long, value_delimiter = ',')]
    pub against: Option<Vec<String>>,
    /// Pages to generate (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub iterations: u64,
    /// Seed of the page generator (same seed, same pages).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Table for canned mode (file or built-in name). Default: kernel-2024,
    /// or, if the backend under test cannot compress with it (qpl), its
    /// QPL-loadable variant (every symbol coded, within the 56-bit budget).
    #[arg(long)]
    pub table: Option<String>,
    /// Modes to check, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "canned,fixed,dynamic")]
    pub modes: Vec<Mode>,
    /// Corpus whose pages are mutated (snapshot, `.pages` file or directory; the first 2,000 pages of each workload).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Directory for reproducer files.
    #[arg(long, default_value = "cannery-fuzz-repro")]
    pub repro_dir: PathBuf,
    /// Exit 0 even if some requested checks could not run (still counted).
    #[arg(long)]
    pub allow_skips: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
