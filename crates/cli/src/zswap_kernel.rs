//! Arguments of `cannery zswap-kernel`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `cannery zswap-kernel`.
#[derive(Args, Debug)]
pub struct ZswapKernelArgs {
    /// A corpus: a snapshot or raw `.pages` file, or a directory with one
    /// sub-directory per workload (each workload is measured on its own).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Kernel compressors to measure, in order (names of `/proc/crypto`,
    /// e.g. deflate lzo lzo-rle).
    #[arg(long, num_args = 1.., default_values = ["deflate", "lzo"])]
    pub compressor: Vec<String>,
    /// Pages per MADV_PAGEOUT call.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub batch: u32,
    /// Set the machine up and undo it afterwards: enable zswap, set
    /// vm.page-cluster to 0 (one page per swap-in), and make a temporary
    /// swap file when the free swap is short.
    #[arg(long)]
    pub setup: bool,
    /// Where --setup makes its swap file (must not exist).
    #[arg(long)]
    pub swap_file: Option<PathBuf>,
    /// Predict each measurement with the simulator and print the error.
    #[arg(long)]
    pub compare_sim: bool,
    /// A directory of per-workload tables as `cannery train` writes them
    /// (`NAME.table.json`): the simulator also predicts IAA's canned mode
    /// with each workload's own table, beside the kernel's compressors.
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// At most this many pages of each workload.
    #[arg(long, value_parser = crate::common::at_least_one)]
    pub max_pages: Option<usize>,
    /// How the report is written.
    #[command(flatten)]
    pub report: crate::common::ReportArgs,
}
