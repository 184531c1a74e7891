//! `cannery train` (here), `cannery stats` and `cannery merge` ([`stats`])
//! and `cannery eval` ([`eval`]): argument handling, file I/O and printing
//! around `cannery_trainer`.
//!
//! Corpora are read through `cannery_trainer::corpus::CorpusSource`; reports are rendered as text by
//! `cannery_lab::render` (or printed as JSON with `--json`). Progress goes to stderr
//! only when stderr is a terminal. Nothing here trains or measures.

pub mod eval;
mod from_histograms;
pub mod stats;

use std::path::{Path, PathBuf};

use clap::Args;

use cannery_codec::Level;
use cannery_files::output::{self, Existing};
use cannery_lab::fleet::train_corpus;
use cannery_lab::report::{CorpusOptions, Progress};
use cannery_lab::train_files::TrainFiles;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::{ParseModel, Smoothing, TableOptions, TrainOptions};

/// `--tables K`, range-checked where it is parsed (before any plan is made).
fn parse_tables(s: &str) -> Result<usize, String> {
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
    /// prior:MASS [default: prior:0.005; add-one with --target qpl-default,
    /// qpl-high or isal, as those libraries do]
    #[arg(long)]
    smoothing: Option<Smoothing>,
    /// Tables QPL (and stock ISA-L) load unchanged: every one of the 286 + 30
    /// symbols coded (implies --all-distances), complete codes, and the
    /// longest literal/length + length + distance code (with extra bits)
    /// within 56 bits. The report states what this costs.
    #[arg(long)]
    qpl_compatible: bool,
    /// Code all 30 distance symbols (by default 0..=23, all a 4 KiB window uses).
    #[arg(long)]
    all_distances: bool,
}

impl TableArgs {
    fn options(&self) -> TableOptions {
        TableOptions::new(self.smoothing, self.all_distances, self.qpl_compatible)
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
    corpus: Option<String>,
    /// Train one table from histogram files (`cannery stats`) instead of a corpus.
    #[arg(long, num_args = 1..)]
    histograms: Vec<PathBuf>,
    /// Directory the tables are written to (one `NAME.table.json` per
    /// workload, `fleet.table.json`, `cluster-<i>.table.json`).
    #[arg(long, short = 'o', default_value = "tables", value_parser = parse_out_dir)]
    out: PathBuf,
    /// Replace table files that already exist.
    #[arg(long, short = 'f')]
    force: bool,
    #[command(flatten)]
    split: crate::cli::SplitArgs,
    /// Parse model of the statistics: fast (the IAA-like greedy parse),
    /// default (lazy) or best (cost-aware, refined with the table's costs).
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// Train for the compressor that will use the table, with its own
    /// parse: iaa (= --level fast, cannery's model of IAA hardware),
    /// qpl-default or qpl-high (the symbols QPL's canned compressor emits
    /// at that level; feature `qpl`), isal (those of ISA-L's level-0
    /// compressor; feature `isal`). Library targets imply
    /// --qpl-compatible, and the report compares each table with the
    /// library's own under the library's compressor.
    #[arg(long, conflicts_with = "level", value_parser = cannery_trainer::target::parse_of_target)]
    target: Option<ParseModel>,
    /// Also train a fleet table for every target this build can run and
    /// report each under every target's compressor (how much a table
    /// trained for one target loses on another).
    #[arg(long)]
    target_matrix: bool,
    /// Also train K tables by clustering pages, and report best-of-K (1..=16).
    #[arg(long, default_value_t = 1, value_parser = parse_tables)]
    tables: usize,
    /// Skip the peer compressors (zstd, lz4, libdeflate) in the report.
    #[arg(long)]
    no_peers: bool,
    /// Write no dictionaries (by default `NAME.dict` per workload and
    /// `fleet.dict`: zstd's trainer on the training pages, at most 32 KiB,
    /// for zram's `algorithm_params dict=` and `zstd -D`).
    #[arg(long)]
    no_dicts: bool,
    /// Largest dictionary, bytes (zstd's trainer; at most 65536, the most
    /// the kernel's lz4 backend loads).
    #[arg(long, default_value_t = cannery_lab::report::DICTIONARY_SIZE as u32,
        value_parser = clap::value_parser!(u32).range(1024..=65536))]
    dict_size: u32,
    /// Held-out pages evaluated per workload at most; a larger test part
    /// is sampled by page hash (deterministic). Over 5 workloads, 5000
    /// pages are shared out (at least 100 each). 0 evaluates them all.
    #[arg(long, default_value_t = cannery_lab::report::DEFAULT_EVAL_PAGES)]
    eval_pages: u64,
    /// Write the kernel-2024 table for workloads with too few pages (with a warning).
    #[arg(long)]
    fallback: bool,
    /// Name of the table trained from --histograms.
    #[arg(long, default_value = "fleet")]
    name: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    table: TableArgs,
}

/// `--out` of `train` is a directory: a name ending in `.json` is a mistake
/// (it would become a directory of that name).
fn parse_out_dir(s: &str) -> Result<PathBuf, String> {
    if s.ends_with(".json") {
        return Err(format!(
            "{s} looks like a file; --out is the directory the tables are written to"
        ));
    }
    Ok(PathBuf::from(s))
}

pub(super) fn parse_level(s: &str) -> Result<Level, String> {
    match s {
        "iaa" => Ok(Level::Fast),
        _ => s.parse(),
    }
}

/// Training's progress: a bar over its steps (scan, train and evaluate each
/// workload; the fleet and cluster tables) on a terminal, each step as a
/// line with `-v`.
fn progress_printer(workloads: usize, tables: usize, matrix: bool) -> impl FnMut(Progress<'_>) {
    let mut steps = Progress::steps(workloads, tables);
    if matrix {
        let targets = cannery_trainer::target::available_targets().len();
        steps += Progress::matrix_steps(workloads, targets);
    }
    let bar = crate::cli::out::bar(steps, "train", "steps");
    let start = std::time::Instant::now();
    move |p| {
        bar.inc(1);
        bar.set_message(p.to_string());
        bar.suspend(|| {
            crate::cli::out::detail(format!("[{:6.1}s] {p}", start.elapsed().as_secs_f64()))
        });
    }
}

/// When tables are made ([`cannery_codec::timestamp::created_now`]).
pub(super) fn created_now() -> anyhow::Result<String> {
    cannery_codec::timestamp::created_now().map_err(anyhow::Error::msg)
}

/// Writes `text` to `path` atomically (a new file unless `force`),
/// creating its directory.
pub(super) fn write_file(path: &Path, text: &str, force: bool) -> anyhow::Result<()> {
    output::create_parent_dir(path)?;
    Ok(output::write_file(
        path,
        text.as_bytes(),
        Existing::replace_if(force),
    )?)
}

/// `cannery train`.
pub fn train(args: TrainArgs) -> anyhow::Result<()> {
    let split = args.split.split()?;
    let topts = TrainOptions {
        parse: args
            .target
            .unwrap_or_else(|| ParseModel::from_level(args.level)),
        table: args.table.options(),
        split,
        dictionary_size: args.dict_size as usize,
        ..TrainOptions::default()
    };
    if !args.histograms.is_empty() {
        return from_histograms::train(&args, &topts);
    }
    let corpus_arg = args.corpus.as_deref().expect("clap requires --corpus");
    let corpus = CorpusSource::open(Path::new(corpus_arg))?;
    let workloads = corpus.workloads();
    // Every table file is named and checked before the work, and written
    // all together at the end: nothing is lost, and nothing is half new.
    let names: Vec<String> = workloads.iter().map(|w| w.name.clone()).collect();
    let clusters = if args.tables > 1 { args.tables } else { 0 };
    let plan = TrainFiles::plan(&args.out, names, clusters, !args.no_dicts);
    let existing = Existing::replace_if(args.force);
    output::check_outputs(&plan.every(), existing)?;
    let opts = CorpusOptions {
        corpus: corpus.name.clone(),
        train: topts,
        tables: args.tables,
        peers: !args.no_peers,
        eval_pages: (args.eval_pages > 0).then_some(args.eval_pages),
        target_matrix: args.target_matrix,
        dictionaries: !args.no_dicts,
    };
    let started = std::time::Instant::now();
    let out = train_corpus(
        &workloads,
        &opts,
        &mut progress_printer(workloads.len(), opts.tables, opts.target_matrix),
    )?;
    let elapsed = started.elapsed();

    let (tables, warnings) = plan.contents(&out, &opts.corpus, &created_now()?, args.fallback);
    for w in warnings {
        crate::cli::out::warn(w);
    }
    output::create_parent_dir(&plan.tables[0])?;
    output::write_files(&tables, existing)?;
    let written: Vec<String> = tables
        .iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    if args.json {
        let mut v = serde_json::to_value(&out.report)?;
        v["tables_written"] = written.clone().into();
        v["seconds"] = ((elapsed.as_secs_f64() * 100.0).round() / 100.0).into();
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        out!("{}", cannery_lab::render::train_report(&out.report))?;
    }
    crate::cli::out::status(format!(
        "wrote {} tables and dictionaries ({}) in {:.1} s",
        written.len(),
        written.join(", "),
        elapsed.as_secs_f64()
    ));
    Ok(())
}
