//! Arguments of `cannery zram-kernel`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery zram-kernel`.
#[derive(Args, Debug)]
pub struct ZramKernelArgs {
    /// Corpus: a name under corpora/ or a path (each workload is measured
    /// on its own).
    #[arg(long)]
    pub corpus: String,
    /// zram compressors to measure, in order [default: every one the
    /// kernel's zram offers].
    #[arg(long, num_args = 1..)]
    pub compressor: Vec<String>,
    /// A `cannery train` output directory: each workload is also measured
    /// with its dictionary (`NAME.dict`) under lz4, lz4hc and zstd.
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// `level=` for zram's algorithm_params (lz4's acceleration, zstd's level).
    #[arg(long, allow_negative_numbers = true)]
    pub level: Option<i32>,
    /// Which pages: test (the held-out part of `train`'s split, so a
    /// dictionary is never scored on its own training pages) or all.
    #[arg(long, default_value = "test", value_parser = ["test", "all"])]
    pub part: String,
    /// The train/test split.
    #[command(flatten)]
    pub split: crate::common::SplitArgs,
    /// At most this many pages of each workload.
    #[arg(long, value_parser = crate::common::at_least_one)]
    pub max_pages: Option<usize>,
    /// Also print one comparison per workload on the same pages: the
    /// kernel's zram beside canned deflate (the workload's table from
    /// --tables at the fast and default parses, kernel-2024) and zstd -1
    /// with and without the dictionary, through zram's accounting.
    #[arg(long)]
    pub compare: bool,
    /// A saved `cannery zswap-kernel --json` report whose kernel zswap
    /// rows join the comparison (its own pages: every page, or its
    /// --max-pages). Without it, --compare measures zswap (deflate, lzo)
    /// on the same pages when the machine is ready for `zswap-kernel`
    /// without --setup, and says why not otherwise.
    #[arg(long, requires = "compare")]
    pub zswap_report: Option<PathBuf>,
    /// How the report is written.
    #[command(flatten)]
    pub report: crate::common::ReportArgs,
}
