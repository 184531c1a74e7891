//! `cannery eval`: one table on a corpus (every page, or one part of the
//! train/test split) beside every codec, and its drift. The evaluation is
//! `cannery_trainer::eval_corpus`, the text `cannery_trainer::render`.

use clap::Args;

use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::eval_corpus::{eval_corpus, EvalOptions};
use cannery_trainer::pages::Part;
use cannery_trainer::Split;

use super::TableArgs;
use crate::cli::load_table;

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
    #[arg(long, default_value = "all", value_parser = ["all", "test", "train"])]
    part: String,
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

/// `cannery eval`.
pub fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let corpus = CorpusSource::open(std::path::Path::new(&args.corpus))?;
    let workloads = corpus.workloads();
    let opts = EvalOptions {
        peers: !args.no_peers,
        table: args.table_args.options(),
        split: Split::new(args.test_fraction, args.seed)?,
        part: Part::selection(&args.part).map_err(anyhow::Error::msg)?,
    };
    let bar = crate::cli::out::bar(workloads.len() as u64, "eval", "workloads");
    let report = eval_corpus(&table, &corpus.name, &workloads, &opts, &mut |name| {
        if bar.position() > 0 || !bar.message().is_empty() {
            bar.inc(1);
        }
        bar.set_message(name.to_string());
        bar.suspend(|| crate::cli::out::detail(format!("evaluating {name}")));
    })?;
    bar.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", cannery_trainer::render::eval_report(&report));
    }
    Ok(())
}
