//! `cannery eval`: one table on a corpus (every page, or one part of the
//! train/test split, sampled to `--eval-pages` per workload) beside every
//! codec, and its drift; or, with `--histograms`, its drift against fleet
//! histograms alone. The evaluation is `cannery_lab::eval_corpus`, the
//! text `cannery_lab::render`.

use crate::cli::load_table;
use cannery_cli::eval::EvalArgs;
use cannery_lab::eval_corpus::{eval_corpus, EvalOptions};
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::pages::Part;

/// `cannery eval`.
pub fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    if !args.histograms.is_empty() {
        return eval_histograms_cmd(&table, &args);
    }
    let corpus = CorpusSource::open(std::path::Path::new(
        args.corpus.as_deref().expect("clap requires --corpus"),
    ))?;
    let workloads = corpus.workloads();
    let opts = EvalOptions {
        eval_pages: (args.eval_pages > 0).then_some(args.eval_pages),
        peers: !args.no_peers,
        train: cannery_trainer::TrainOptions {
            split: args.split.split()?,
            ..args.table_args.options()
        },
        part: Part::selection(&args.part).map_err(anyhow::Error::msg)?,
    };
    // As in train: the bar counts the workloads begun.
    let bar = crate::cli::out::bar(workloads.len() as u64, "eval", "workloads");
    let report = eval_corpus(&table, &corpus.name, &workloads, &opts, &mut |name| {
        bar.inc(1);
        bar.set_message(name.to_string());
        bar.suspend(|| crate::cli::out::detail(format!("evaluating {name}")));
    })?;
    bar.finish_and_clear();
    crate::cli::print_report(args.json, &report, cannery_lab::render::eval_report)?;
    Ok(())
}

/// `cannery eval --histograms`.
fn eval_histograms_cmd(table: &cannery_codec::Table, args: &EvalArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    let named = cannery_lab::histogram_files::read_named(&args.histograms)?;
    let report =
        cannery_lab::eval_corpus::eval_histograms(table, &named, &args.table_args.options())
            .context("cannot compare the table with the histograms")?;
    crate::cli::print_report(args.json, &report, |r| {
        cannery_lab::render::histogram_eval_report(r)
    })?;
    Ok(())
}
