//! `cannery train` (here), `cannery stats` and `cannery merge` ([`stats`])
//! and `cannery eval` ([`eval`]): argument handling, file I/O and printing
//! around `cannery_trainer`.
//!
//! Corpora are read through `cannery_trainer::corpus::CorpusSource`; reports are rendered as text by
//! `cannery_lab::render` (or printed as JSON with `--json`). Progress goes to stderr
//! only when stderr is a terminal. Nothing here trains or measures.

use cannery_cli::train::TrainArgs;
use cannery_files::output::{self, Existing};
use cannery_lab::fleet::train_corpus;
use cannery_lab::report::{CorpusOptions, Progress};
use cannery_lab::train_files::TrainFiles;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::TrainOptions;
use std::path::Path;

pub mod eval;

mod from_histograms;

pub mod stats;

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
        parse: args.parse,
        split,
        dictionary_size: args.dict_size as usize,
        ..args.table.options()
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
