//! `cannery train`, `cannery stats`, `cannery merge` and `cannery eval`:
//! argument handling, file I/O and printing around `cannery_trainer`.
//!
//! Corpora are read through [`source`]; reports are rendered as text by
//! `cannery_trainer::render` (or printed as JSON with `--json`). Progress goes to stderr
//! only when stderr is a terminal. Nothing here trains or measures.

pub mod source;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use cannery_codec::{Level, Table};
use cannery_trainer::eval_corpus::{eval_corpus, merge_all, EvalOptions};
use cannery_trainer::gather::gather_all;
use cannery_trainer::histogram::Histogram;
use cannery_trainer::pages::Part;
use cannery_trainer::report::{train_corpus, CorpusOptions, Progress};
use cannery_trainer::train::table_from_histogram;
use cannery_trainer::{ParseModel, Smoothing, Split, TableOptions, TrainOptions};

use super::load_table;

/// Options shared by the commands that build tables.
#[derive(Args, Clone, Debug)]
pub struct TableArgs {
    /// Smoothing of zero and rare counts: add-one, uniform:MASS or prior:MASS.
    #[arg(long, default_value_t = Smoothing::DEFAULT)]
    smoothing: Smoothing,
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
        let mut o = TableOptions {
            smoothing: self.smoothing,
            all_distances: self.all_distances,
            ..TableOptions::default()
        };
        o.constraints.qpl_compatible = self.qpl_compatible;
        o
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
    /// Directory the tables are written to.
    #[arg(long, default_value = "tables")]
    out: PathBuf,
    /// Fraction of pages held out for testing (chosen by page content hash).
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the train/test split and of clustering.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Parse model of the statistics: fast (the IAA-like greedy parse),
    /// default (lazy) or best (cost-aware, refined with the table's costs).
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// Also train K tables by clustering pages, and report best-of-K.
    #[arg(long, default_value_t = 1)]
    tables: usize,
    /// Skip the peer compressors (zstd, lz4, libdeflate) in the report.
    #[arg(long)]
    no_peers: bool,
    /// Held-out pages evaluated per workload at most; a larger test part
    /// is sampled by page hash (deterministic). 0 evaluates them all.
    #[arg(long, default_value_t = cannery_trainer::report::DEFAULT_EVAL_PAGES)]
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

fn parse_level(s: &str) -> Result<Level, String> {
    match s {
        "iaa" => Ok(Level::Fast),
        _ => s.parse(),
    }
}

/// `cannery stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Corpus (name under corpora/ or path).
    #[arg(long, required_unless_present = "pid", conflicts_with = "pid")]
    corpus: Option<String>,
    /// Only this workload of the corpus.
    #[arg(long, requires = "corpus")]
    workload: Option<String>,
    /// Read pages straight from a live process (nothing is written but the histogram).
    #[arg(long)]
    pid: Option<u32>,
    /// With --pid: also the process's descendants.
    #[arg(long, requires = "pid")]
    children: bool,
    /// Histogram file to write.
    #[arg(long)]
    out: PathBuf,
    /// Parse model: fast, default or best.
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// With --level best: the table whose code lengths price the parse
    /// (a file or kernel-2024/fixed; default the fixed code).
    #[arg(long)]
    pricing: Option<String>,
}

/// `cannery merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Histogram files.
    #[arg(required = true, num_args = 1..)]
    histograms: Vec<PathBuf>,
    /// Merged histogram file to write.
    #[arg(long)]
    out: PathBuf,
}

/// `cannery eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Table file (JSON or binary) or a built-in name (kernel-2024, fixed).
    #[arg(long)]
    table: String,
    /// Corpus (name under corpora/ or path).
    #[arg(long)]
    corpus: String,
    /// Which pages of each workload: all, or the held-out (test) or training
    /// part of the split `train` uses (same --test-fraction and --seed).
    #[arg(long, value_enum, default_value = "all")]
    part: PartArg,
    /// Share of pages held out (with --part).
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the split (with --part).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Skip the peer compressors.
    #[arg(long)]
    no_peers: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    table_args: TableArgs,
}

/// Which part of the train/test split to evaluate.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum PartArg {
    /// Every page.
    All,
    /// The held-out pages (what `train` reports on).
    Test,
    /// The training pages.
    Train,
}

fn progress_printer() -> impl FnMut(Progress<'_>) {
    let tty = std::io::stderr().is_terminal();
    let start = std::time::Instant::now();
    move |p| {
        if !tty {
            return;
        }
        let what = match p {
            Progress::Scanning(w) => format!("scanning {w}"),
            Progress::Training(w) => format!("training {w}"),
            Progress::Evaluating(w) => format!("evaluating {w}"),
            _ => return,
        };
        eprintln!("[{:6.1}s] {what}", start.elapsed().as_secs_f64());
    }
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn read_histogram(path: &Path) -> anyhow::Result<Histogram> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read histogram {}", path.display()))?;
    Histogram::from_json(&text).with_context(|| format!("{}", path.display()))
}

fn safe_file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `cannery train`.
pub fn train(args: TrainArgs) -> anyhow::Result<()> {
    let split = Split::new(args.test_fraction, args.seed)?;
    let topts = TrainOptions {
        parse: ParseModel::from_level(args.level),
        table: args.table.options(),
        split,
        ..TrainOptions::default()
    };
    if !args.histograms.is_empty() {
        return train_from_histograms(&args, &topts);
    }
    let corpus_arg = args.corpus.as_deref().expect("clap requires --corpus");
    let (corpus_name, sources) = source::open(corpus_arg)?;
    let workloads = source::workloads(&sources);
    let opts = CorpusOptions {
        corpus: corpus_name,
        train: topts,
        tables: args.tables,
        peers: !args.no_peers,
        eval_pages: (args.eval_pages > 0).then_some(args.eval_pages),
    };
    let started = std::time::Instant::now();
    let out = train_corpus(&workloads, &opts, &mut progress_printer())?;
    let elapsed = started.elapsed();

    let mut written = Vec::new();
    for t in &out.workload_tables {
        let name = t.name.clone().unwrap_or_default();
        let path = args
            .out
            .join(format!("{}.table.json", safe_file_name(&name)));
        write_file(&path, &t.to_json())?;
        written.push(path);
    }
    for w in &out.report.workloads {
        if let Some(reason) = &w.skipped {
            eprintln!(
                "cannery: warning: no table for workload {}: {reason}",
                w.name
            );
            if args.fallback {
                let mut k = Table::kernel_2024();
                k.provenance.corpus = Some(format!("{}/{}", opts.corpus, w.name));
                k.provenance
                    .training
                    .insert("fallback".into(), reason.clone().into());
                let path = args
                    .out
                    .join(format!("{}.table.json", safe_file_name(&w.name)));
                write_file(&path, &k.to_json())?;
                eprintln!(
                    "cannery: warning: wrote the kernel-2024 table to {} instead",
                    path.display()
                );
                written.push(path);
            }
        }
    }
    let fleet_path = args.out.join("fleet.table.json");
    write_file(&fleet_path, &out.fleet_table.to_json())?;
    written.push(fleet_path);
    for (i, t) in out.cluster_tables.iter().enumerate() {
        let path = args.out.join(format!("cluster-{i}.table.json"));
        write_file(&path, &t.to_json())?;
        written.push(path);
    }
    if args.json {
        let mut v = serde_json::to_value(&out.report)?;
        v["tables_written"] = written
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .into();
        v["seconds"] = ((elapsed.as_secs_f64() * 100.0).round() / 100.0).into();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", cannery_trainer::render::train_report(&out.report));
        println!();
        for p in &written {
            println!("wrote {}", p.display());
        }
        println!("took {:.1} s", elapsed.as_secs_f64());
    }
    Ok(())
}

fn train_from_histograms(args: &TrainArgs, topts: &TrainOptions) -> anyhow::Result<()> {
    let mut merged: Option<Histogram> = None;
    for p in &args.histograms {
        let h = read_histogram(p)?;
        merged = Some(match merged {
            None => h,
            Some(m) => m
                .merged(&h)
                .with_context(|| format!("cannot merge {}", p.display()))?,
        });
    }
    let h = merged.expect("clap requires at least one histogram");
    let mut t = match table_from_histogram(&h, &topts.table, &args.name) {
        Ok(t) => t,
        Err(e) if args.fallback => {
            eprintln!("cannery: warning: {e}; writing the kernel-2024 table instead");
            let mut k = Table::kernel_2024();
            k.provenance
                .training
                .insert("fallback".into(), e.to_string().into());
            k
        }
        Err(e) => return Err(e.into()),
    };
    t.provenance.corpus = Some(
        args.histograms
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" + "),
    );
    let path = args
        .out
        .join(format!("{}.table.json", safe_file_name(&args.name)));
    write_file(&path, &t.to_json())?;
    let bits = cannery_trainer::train::bits_under(&h.counts, &t) as f64 / h.pages.max(1) as f64;
    if args.json {
        let v = serde_json::json!({
            "table_id": t.id(),
            "path": path.display().to_string(),
            "pages": h.pages,
            "parse": h.settings().parse.name(),
            "bits_per_page": (bits * 100.0).round() / 100.0,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "trained table {} from {} pages ({} parse): {:.0} bits per page on its own data",
            t.id(),
            h.pages,
            h.settings().parse,
            bits
        );
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `cannery stats`.
pub fn stats(args: StatsArgs) -> anyhow::Result<()> {
    let model = ParseModel::from_level(args.level);
    let pricing = match (&args.pricing, model) {
        (Some(t), ParseModel::Best) => Some(load_table(t)?),
        (Some(_), _) => bail!("--pricing only applies to --level best"),
        (None, _) => None,
    };
    let h = if let Some(pid) = args.pid {
        live::stats_of_process(pid, args.children, model, pricing.as_ref())?
    } else {
        let (_, sources) = source::open(args.corpus.as_deref().expect("clap"))?;
        let selected: Vec<&source::WorkloadSource> = match &args.workload {
            Some(w) => {
                let s: Vec<_> = sources.iter().filter(|s| &s.name == w).collect();
                if s.is_empty() {
                    bail!(
                        "no workload {w:?} in the corpus (it has: {})",
                        sources
                            .iter()
                            .map(|s| s.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                s
            }
            None => sources.iter().collect(),
        };
        let mut total: Option<Histogram> = None;
        for s in selected {
            let h = gather_all(s, model, pricing.as_ref())?;
            total = Some(match total {
                None => h,
                Some(t) => t.merged(&h)?,
            });
        }
        total.expect("a corpus has at least one workload")
    };
    write_file(&args.out, &h.to_json())?;
    eprintln!(
        "cannery: {} pages parsed ({} parse), {} zero or same-filled; wrote {}",
        h.pages,
        h.settings().parse,
        h.same_filled_pages,
        args.out.display()
    );
    Ok(())
}

/// `cannery merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<()> {
    let hs = args
        .histograms
        .iter()
        .map(|p| read_histogram(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let h = merge_all(&hs)
        .context("cannot merge the histograms")?
        .expect("clap requires at least one histogram");
    write_file(&args.out, &h.to_json())?;
    eprintln!(
        "cannery: merged {} histograms: {} pages; wrote {}",
        args.histograms.len(),
        h.pages,
        args.out.display()
    );
    Ok(())
}

/// `cannery eval`.
pub fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let (corpus_name, sources) = source::open(&args.corpus)?;
    let workloads = source::workloads(&sources);
    let opts = EvalOptions {
        peers: !args.no_peers,
        table: args.table_args.options(),
        split: Split::new(args.test_fraction, args.seed)?,
        part: match args.part {
            PartArg::All => None,
            PartArg::Test => Some(Part::Test),
            PartArg::Train => Some(Part::Train),
        },
    };
    let report = eval_corpus(&table, &corpus_name, &workloads, &opts, &mut |name| {
        if std::io::stderr().is_terminal() {
            eprintln!("evaluating {name}");
        }
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", cannery_trainer::render::eval_report(&report));
    }
    Ok(())
}

/// Statistics straight from a live process: pages go from the capture
/// library into the histogram in memory, chunk by chunk; nothing else is kept.
mod live {
    use super::*;
    use cannery_capture::capture::{CaptureOptions, Capturer, PageSink};
    use cannery_capture::maps::RegionKind;
    use cannery_trainer::gather::gather_pages;
    use cannery_trainer::histogram::Settings;

    struct HistogramSink<'a> {
        model: ParseModel,
        pricing: Option<&'a Table>,
        chunk: Vec<Vec<u8>>,
        hist: Histogram,
    }

    impl HistogramSink<'_> {
        fn flush(&mut self) {
            if !self.chunk.is_empty() {
                let h = gather_pages(&self.chunk, self.model, self.pricing, &|_| true);
                self.hist.merge(&h).expect("same settings");
                self.chunk.clear();
            }
        }
    }

    impl PageSink for HistogramSink<'_> {
        fn begin_process(
            &mut self,
            _sample: u32,
            _pid: u32,
            _comm: &str,
        ) -> cannery_capture::Result<()> {
            Ok(())
        }
        fn page(
            &mut self,
            _addr: u64,
            _region: RegionKind,
            data: &[u8],
        ) -> cannery_capture::Result<()> {
            self.chunk.push(data.to_vec());
            if self.chunk.len() >= cannery_trainer::pages::CHUNK_PAGES {
                self.flush();
            }
            Ok(())
        }
    }

    pub fn stats_of_process(
        pid: u32,
        children: bool,
        model: ParseModel,
        pricing: Option<&Table>,
    ) -> anyhow::Result<Histogram> {
        let opts = CaptureOptions {
            include_children: children,
            ..CaptureOptions::default()
        };
        let mut capturer = Capturer::new(opts);
        let settings: Settings = cannery_trainer::gather::settings_for(model, pricing);
        let mut sink = HistogramSink {
            model,
            pricing,
            chunk: Vec::new(),
            hist: Histogram::zero(settings),
        };
        let report = capturer
            .sample(pid, None, &mut sink)
            .map_err(|e| anyhow::anyhow!("cannot read process {pid}: {e}"))?;
        sink.flush();
        let mut h = sink.hist;
        h.same_filled_pages += report.counts.zero + report.counts.same_filled;
        Ok(h)
    }
}
