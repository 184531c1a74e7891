//! Arguments of `cannery stats` and `cannery merge`.

use cannery_trainer::ParseModel;
use clap::Args;
use std::path::PathBuf;

/// `cannery stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Corpus (name under corpora/ or path).
    #[arg(long, required_unless_present = "pid", conflicts_with = "pid")]
    pub corpus: Option<String>,
    /// Only this workload of the corpus.
    #[arg(long, requires = "corpus")]
    pub workload: Option<String>,
    /// Read pages straight from a live process (nothing is written but the histogram).
    #[arg(long)]
    pub pid: Option<u32>,
    /// With --pid: also the process's descendants.
    #[arg(long, requires = "pid")]
    pub children: bool,
    /// Histogram file to write (a new file unless --force).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// The parse: fast (`iaa` is the same), default or best, or a library
    /// compressor's: qpl-default or qpl-high (the symbols QPL's canned
    /// compressor emits at that level; feature `qpl`), isal (those of
    /// ISA-L's level-0 compressor; feature `isal`). (`--level` and
    /// `--target` are older names of this flag.)
    #[arg(long = "parse", visible_aliases = ["level", "target"], value_name = "PARSE",
          default_value = "fast", value_parser = crate::train::parse_model)]
    pub parse: ParseModel,
    /// With --parse best: the table whose code lengths price the parse
    /// (a file or kernel-2024/fixed; default the fixed code).
    #[arg(long)]
    pub pricing: Option<String>,
}

/// `cannery merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Histogram files.
    #[arg(required = true, num_args = 1..)]
    pub histograms: Vec<PathBuf>,
    /// Merged histogram file to write (a new file unless --force; never
    /// one of the inputs).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    pub force: bool,
}
