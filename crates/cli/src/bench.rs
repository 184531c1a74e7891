//! Arguments of `cannery bench`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Corpus: a directory with one sub-directory per workload, a snapshot or
    /// `.pages` file, or a name under corpora/.
    #[arg(long)]
    pub corpus: PathBuf,
    /// Pages per workload to measure at most (held-out pages, spread over the capture).
    #[arg(long, value_parser = crate::common::at_least_one, default_value_t = 400)]
    pub max_pages: usize,
    /// Timed repetitions per page (the fastest counts).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Measure this table (file or built-in name) as `canned-*` instead of
    /// training one per workload on its training pages.
    #[arg(long)]
    pub table: Option<String>,
    /// The train/test split.
    #[command(flatten)]
    pub split: crate::common::SplitArgs,
    /// Write the markdown report here (default: print it; a new file
    /// unless --force).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Print JSON (one entry per workload and codec) instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Skip the cycled pass (each page timed once while cycling through a
    /// working set larger than the last-level cache, as zswap sees pages):
    /// warm figures only, much quicker.
    #[arg(long)]
    pub no_cycled: bool,
    /// Working set of the cycled pass, MiB [default: twice the last-level
    /// cache, at least 64].
    #[arg(long, value_parser = crate::common::at_least_one, conflicts_with = "no_cycled")]
    pub cycled_mib: Option<usize>,
    /// Passes of the cycled pass over its working set, each page once per pass.
    #[arg(long, value_parser = crate::common::at_least_one, default_value_t = 3)]
    pub cycled_passes: usize,
    /// Skip the batch figures (canned-fast, lz4 and zstd -1 in batches of
    /// 1, 8 and 16 pages on one core).
    #[arg(long)]
    pub no_batches: bool,
}
