//! Arguments of `cannery eval`.

use clap::Args;

/// `cannery eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Table file (JSON or binary) or a built-in name (kernel-2024, fixed).
    #[arg(long)]
    pub table: String,
    /// Corpus (name under corpora/ or path).
    #[arg(
        long,
        required_unless_present = "histograms",
        conflicts_with = "histograms"
    )]
    pub corpus: Option<String>,
    /// Histogram files (from `cannery stats`): the table's drift against
    /// each and all together, without pages.
    #[arg(long, num_args = 1..)]
    pub histograms: Vec<std::path::PathBuf>,
    /// Pages evaluated per workload at most; a larger part is sampled by
    /// page hash (deterministic), as `train` samples its held-out pages.
    /// 0 evaluates them all.
    #[arg(long, default_value_t = cannery_lab::report::DEFAULT_EVAL_PAGES)]
    pub eval_pages: u64,
    /// Which pages of each workload: all, or the held-out (test) or training
    /// part of the split `train` uses (same --test-fraction and --seed).
    #[arg(long, default_value = "all", value_parser = ["all", "test", "train"])]
    pub part: String,
    /// The train/test split.
    #[command(flatten)]
    pub split: crate::common::SplitArgs,
    /// Skip the peer compressors.
    #[arg(long)]
    pub no_peers: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Table construction.
    #[command(flatten)]
    pub table_args: crate::train::TableArgs,
}
