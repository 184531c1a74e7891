//! `cannery validate`: every page of a corpus through every available
//! (compressor, decompressor) pair that speaks a mode; prints a pass/fail
//! matrix (or JSON) with counts of cells and page checks run, passed,
//! failed and skipped, writes a reproducer per mismatch, and exits non-zero
//! on any mismatch and on anything requested that did not run (a table a
//! backend cannot use, a mode no backend speaks) unless `--allow-skips`.
//!
//! The checks and the report are `cannery_engines::backend::check`; corpora
//! are read by `cannery_capture::Corpus`. This file parses arguments, opens
//! what they name, writes reproducers and prints.

use super::load_table;
use cannery_capture::Corpus;
use cannery_cli::validate::ValidateArgs;
use cannery_engines::backend;
use cannery_engines::backend::check::validate;
use cannery_lab::reproducers::write_reproducer;
use std::path::Path;

/// Reads at most `limit` pages of a corpus, labelled `workload#index`.
pub fn read_corpus(path: &Path, limit: Option<u64>) -> anyhow::Result<(Vec<Vec<u8>>, Vec<String>)> {
    let limit = limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    Ok(Corpus::open(path)?.read_pages(limit)?)
}

/// Runs `cannery validate`.
pub fn run(args: ValidateArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let (pages, sources) = read_corpus(&args.corpus, args.max_pages)?;
    let mut comps = backend::open_many(args.backends.as_deref())?;
    let mut decomps = backend::open_many(args.backends.as_deref())?;
    let bar = crate::cli::out::bar(0, "validate", "pages");
    let report = validate(
        &table,
        &args.corpus.display().to_string(),
        &args.modes,
        &mut comps,
        &mut decomps,
        &pages,
        &sources,
        args.allow_skips,
        &mut |f| write_reproducer(args.repro_dir.as_deref(), f),
        &mut |done, total| {
            bar.set_length(total);
            bar.set_position(done);
        },
    )?;
    bar.finish_and_clear();
    crate::cli::print_report(args.json, &report, |r| {
        cannery_lab::engine_reports::render_validation(r)
    })?;
    report
        .verdict()
        .map_err(|e| super::finding(format!("validate: {e}")))
}
