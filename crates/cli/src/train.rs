//! Arguments of `cannery train`, and the table options `stats` and `eval` share.

use cannery_codec::Level;
use cannery_trainer::target::parse_of_target;
use cannery_trainer::{ParseModel, Smoothing, TrainOptions};
use clap::Args;
use std::path::PathBuf;

/// `--tables K`, range-checked where it is parsed (before any plan is made).
pub fn parse_tables(s: &str) -> Result<usize, String> {
    let max = cannery_trainer::cluster::MAX_TABLES;
    match s.parse::<usize>() {
        Ok(k) if (1..=max).contains(&k) => Ok(k),
        _ => Err(format!("{s:?} is not a table count in 1..={max}")),
    }
}

/// Options shared by the commands that build tables.
#[derive(Args, Clone, Debug)]
pub struct TableArgs {
    /// Smoothing of zero and rare counts: add-one, uniform:MASS or
    /// prior:MASS [default: prior:0.005; add-one with --parse qpl-default,
    /// qpl-high or isal, as those libraries do]
    #[arg(long)]
    pub smoothing: Option<Smoothing>,
    /// Tables QPL (and stock ISA-L) load unchanged: every one of the 286 + 30
    /// symbols coded (implies --all-distances), complete codes, and the
    /// longest literal/length + length + distance code (with extra bits)
    /// within 56 bits. The report states what this costs.
    #[arg(long)]
    pub qpl_compatible: bool,
    /// Code all 30 distance symbols (by default 0..=23, all a 4 KiB window uses).
    #[arg(long)]
    pub all_distances: bool,
}

impl TableArgs {
    /// The trainer's table options these give.
    pub fn options(&self) -> TrainOptions {
        TrainOptions::with_table(self.smoothing, self.all_distances, self.qpl_compatible)
    }
}

/// `cannery train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Corpus: a name under corpora/ or a path (a directory with one
    /// sub-directory per workload, or a single snapshot or .pages file).
    #[arg(
        long,
        required_unless_present = "histograms",
        conflicts_with = "histograms"
    )]
    pub corpus: Option<String>,
    /// Train one table from histogram files (`cannery stats`) instead of a corpus.
    #[arg(long, num_args = 1..)]
    pub histograms: Vec<PathBuf>,
    /// Directory the tables are written to (one `NAME.table.json` per
    /// workload, `fleet.table.json`, `cluster-<i>.table.json`).
    #[arg(long, short = 'o', default_value = "tables", value_parser = parse_out_dir)]
    pub out: PathBuf,
    /// Replace table files that already exist.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// The train/test split.
    #[command(flatten)]
    pub split: crate::common::SplitArgs,
    /// The parse the statistics are gathered with, so the tokens the table
    /// is trained on: fast (cannery's model of IAA hardware's greedy parse;
    /// `iaa` is the same), default (lazy), best (cost-aware, refined with
    /// the table's costs), or a library compressor's own: qpl-default or
    /// qpl-high (the symbols QPL's canned compressor emits at that level;
    /// feature `qpl`), isal (ISA-L's level-0 compressor; feature `isal`).
    /// A library's parse implies --qpl-compatible, and the report compares
    /// each table with the library's own under the library's compressor.
    /// (`--level` and `--target` are older names of this flag.)
    #[arg(long = "parse", visible_aliases = ["level", "target"], value_name = "PARSE",
          default_value = "fast", value_parser = parse_model)]
    pub parse: ParseModel,
    /// Also train a fleet table for every target this build can run and
    /// report each under every target's compressor (how much a table
    /// trained for one target loses on another).
    #[arg(long)]
    pub target_matrix: bool,
    /// Also train K tables by clustering pages, and report best-of-K (1..=16).
    #[arg(long, default_value_t = 1, value_parser = parse_tables)]
    pub tables: usize,
    /// Skip the peer compressors (zstd, lz4, libdeflate) in the report.
    #[arg(long)]
    pub no_peers: bool,
    /// Write no dictionaries (by default `NAME.dict` per workload and
    /// `fleet.dict`: zstd's trainer on the training pages, at most 32 KiB,
    /// for zram's `algorithm_params dict=` and `zstd -D`).
    #[arg(long)]
    pub no_dicts: bool,
    /// Largest dictionary, bytes (zstd's trainer; at most 65536, the most
    /// the kernel's lz4 backend loads).
    #[arg(long, default_value_t = cannery_lab::report::DICTIONARY_SIZE as u32,
        value_parser = clap::value_parser!(u32).range(1024..=65536))]
    pub dict_size: u32,
    /// Held-out pages evaluated per workload at most; a larger test part
    /// is sampled by page hash (deterministic). Over 5 workloads, 5000
    /// pages are shared out (at least 100 each). 0 evaluates them all.
    #[arg(long, default_value_t = cannery_lab::report::DEFAULT_EVAL_PAGES)]
    pub eval_pages: u64,
    /// Write the kernel-2024 table for workloads with too few pages (with a warning).
    #[arg(long)]
    pub fallback: bool,
    /// Name of the table trained from --histograms.
    #[arg(long, default_value = "fleet")]
    pub name: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Table construction.
    #[command(flatten)]
    pub table: TableArgs,
}

/// `--out` of `train` is a directory: a name ending in `.json` is a mistake
/// (it would become a directory of that name).
pub fn parse_out_dir(s: &str) -> Result<PathBuf, String> {
    if s.ends_with(".json") {
        return Err(format!(
            "{s} looks like a file; --out is the directory the tables are written to"
        ));
    }
    Ok(PathBuf::from(s))
}

/// `--parse`: cannery's fast, default or best parse (`iaa` is fast), or
/// a library compressor's (qpl-default, qpl-high, isal).
pub fn parse_model(s: &str) -> Result<ParseModel, String> {
    match s.parse::<Level>() {
        Ok(level) => Ok(ParseModel::from_level(level)),
        Err(_) => parse_of_target(s).map_err(|_| {
            format!("unknown parse {s:?}; expected fast, default, best, iaa, qpl-default, qpl-high or isal")
        }),
    }
}
