//! `cannery stats` and `cannery merge`: symbol statistics (histogram
//! files) from a corpus or a live process, and their sum. The gathering is
//! `cannery_trainer::gather`; this file parses arguments, reads and writes
//! the files.

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::Args;

use cannery_codec::Level;
use cannery_files::output::refuse_same_file;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::gather::{gather_corpus, gather_process};
use cannery_trainer::target::parse_of_target;
use cannery_trainer::ParseModel;

use super::{parse_level, write_file};
use crate::cli::load_table;
use cannery_lab::histogram_files::read_merged;

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
    /// Histogram file to write (a new file unless --force).
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    force: bool,
    /// Parse model: fast, default or best.
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// Gather with the parse of the compressor the table is for: iaa
    /// (= --level fast), qpl-default or qpl-high (the symbols QPL's canned
    /// compressor emits at that level; feature `qpl`), isal (those of
    /// ISA-L's level-0 compressor; feature `isal`).
    #[arg(long, conflicts_with = "level", value_parser = parse_of_target)]
    target: Option<ParseModel>,
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
    /// Merged histogram file to write (a new file unless --force; never
    /// one of the inputs).
    #[arg(long, short = 'o')]
    out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(long, short = 'f')]
    force: bool,
}

/// `cannery stats`.
pub fn stats(args: StatsArgs) -> anyhow::Result<()> {
    // Refuse the output before the work, not after it.
    let existing = cannery_files::output::Existing::replace_if(args.force);
    cannery_files::output::check_outputs(&[&args.out], existing)?;
    refuse_same_file(
        &args.corpus.iter().map(Path::new).collect::<Vec<_>>(),
        &args.out,
    )?;
    let model = args
        .target
        .unwrap_or_else(|| ParseModel::from_level(args.level));
    model.check_available()?;
    let pricing = match (&args.pricing, model) {
        (Some(t), ParseModel::Best) => Some(load_table(t)?),
        (Some(_), _) => bail!("--pricing only applies to --level best"),
        (None, _) => None,
    };
    let h = if let Some(pid) = args.pid {
        gather_process(pid, args.children, model, pricing.as_ref())?
    } else {
        let corpus = CorpusSource::open(Path::new(args.corpus.as_deref().expect("clap")))?;
        let n = match &args.workload {
            Some(_) => 1,
            None => corpus.workloads.len() as u64,
        };
        let bar = crate::cli::out::bar(n, "stats", "workloads");
        let (workload, pricing) = (args.workload.as_deref(), pricing.as_ref());
        gather_corpus(&corpus, workload, model, pricing, &mut || bar.inc(1))?
    };
    write_file(&args.out, &h.to_json(), args.force)?;
    crate::cli::out::status(format!(
        "{} pages parsed ({} parse), {} zero or same-filled; wrote {}",
        h.pages,
        h.settings().parse,
        h.same_filled_pages,
        args.out.display()
    ));
    Ok(())
}

/// `cannery merge`.
pub fn merge(args: MergeArgs) -> anyhow::Result<()> {
    refuse_same_file(&args.histograms, &args.out)?;
    let h = read_merged(&args.histograms)?;
    write_file(&args.out, &h.to_json(), args.force)?;
    crate::cli::out::status(format!(
        "merged {} histograms: {} pages; wrote {}",
        args.histograms.len(),
        h.pages,
        args.out.display()
    ));
    Ok(())
}
