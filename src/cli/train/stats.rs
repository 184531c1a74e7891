//! `cannery stats` and `cannery merge`: symbol statistics (histogram
//! files) from a corpus or a live process, and their sum. The gathering is
//! `cannery_trainer::gather`; this file takes its parsed arguments (`cannery_cli`), reads and writes
//! the files.

use super::write_file;
use crate::cli::load_table;
use anyhow::bail;
use cannery_cli::stats::{MergeArgs, StatsArgs};
use cannery_files::output::refuse_same_file;
use cannery_lab::histogram_files::read_merged;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::gather::{gather_corpus, gather_process};
use cannery_trainer::ParseModel;
use std::path::Path;

/// `cannery stats`.
pub fn stats(args: StatsArgs) -> anyhow::Result<()> {
    // Refuse the output before the work, not after it.
    let existing = cannery_files::output::Existing::replace_if(args.force);
    cannery_files::output::check_outputs(&[&args.out], existing)?;
    refuse_same_file(
        &args.corpus.iter().map(Path::new).collect::<Vec<_>>(),
        &args.out,
    )?;
    let model = args.parse;
    model.check_available()?;
    let pricing = match (&args.pricing, model) {
        (Some(t), ParseModel::Best) => Some(load_table(t)?),
        (Some(_), _) => bail!("--pricing only applies to --parse best"),
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
