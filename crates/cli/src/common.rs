//! What several subcommands share: the train/test split's arguments, how
//! a kernel measurement's report is written, and the `--max-pages` parser.

/// The train/test split, as `train` makes it and the commands that
/// measure on its held-out pages repeat it.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct SplitArgs {
    /// Fraction of pages held out for testing, chosen by page content hash
    /// (give `train`'s to measure on its held-out pages).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    pub test_fraction: f64,
    /// Seed of the train/test split (and of `train`'s clustering).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl SplitArgs {
    /// The split (a fraction outside 0..1 is refused).
    pub fn split(&self) -> anyhow::Result<cannery_trainer::Split> {
        Ok(cannery_trainer::Split::new(self.test_fraction, self.seed)?)
    }
}

/// A count of at least 1 (`--max-pages`): 0 would measure nothing.
pub fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>().map_err(|e| e.to_string())? {
        0 => Err("0 measures nothing; give at least 1".into()),
        n => Ok(n),
    }
}

/// How `zswap-kernel` and `zram-kernel` write their report.
#[derive(clap::Args, Clone, Debug)]
pub struct ReportArgs {
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the report as markdown tables (as in BENCHMARKS.md).
    #[arg(long)]
    pub markdown: bool,
    /// Write the report here instead of standard output (`-`).
    #[arg(short = 'o', long = "out", default_value = "-")]
    pub out: std::path::PathBuf,
    /// Replace an existing output file.
    #[arg(short, long)]
    pub force: bool,
}
