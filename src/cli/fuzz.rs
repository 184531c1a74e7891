//! `cannery fuzz`: decompression-equivalence fuzzing of one backend against
//! the others on seeded stress pages (and mutations of corpus pages), in
//! every mode both sides speak; the first failures of each pair are written
//! as reproducers. Like `validate` it counts what ran and fails when a
//! requested check did not (no backend to compare against, a table the
//! backend cannot use) unless `--allow-skips`. The engine and its report are
//! `cannery_engines::backend::check::fuzz`; this file takes its parsed arguments (`cannery_cli`), opens
//! backends, prints and sets the exit status.

use super::load_table;
use super::validate::read_corpus;
use cannery_cli::fuzz::FuzzArgs;
use cannery_engines::backend;
use cannery_engines::backend::check::fuzz::{default_table, participants};
use cannery_engines::backend::check::{fuzz, FuzzReport, MatrixSpec};
use cannery_lab::reproducers::write_reproducer;

/// Runs `cannery fuzz`.
pub fn run(args: FuzzArgs) -> anyhow::Result<()> {
    let corpus = match &args.corpus {
        Some(p) => read_corpus(p, Some(2_000))?.0,
        None => Vec::new(),
    };
    let names = participants(&args.backend, args.against.as_deref()).map_err(anyhow::Error::msg)?;
    let mut comps = backend::open_many(Some(&names))?;
    let mut decomps = backend::open_many(Some(&names))?;
    let table = match &args.table {
        Some(n) => load_table(n)?,
        None => default_table(comps[0].as_ref()),
    };
    let spec = MatrixSpec {
        table: &table,
        modes: &args.modes,
        only_involving: Some(&args.backend),
    };
    let bar = crate::cli::out::bar(args.iterations, "fuzz", "pages");
    let cells = fuzz(
        &spec,
        &mut comps,
        &mut decomps,
        args.seed,
        args.iterations,
        &corpus,
        &mut |f| write_reproducer(Some(&args.repro_dir), f),
        &mut |done| bar.set_position(done),
    )?;
    bar.finish_and_clear();
    let report = FuzzReport::new(
        &names,
        args.seed,
        args.iterations,
        &table,
        cells,
        args.allow_skips,
    );
    crate::cli::print_report(args.json, &report, |r| {
        cannery_lab::engine_reports::render_fuzz(r)
    })?;
    report.verdict().map_err(|e| {
        let e = super::finding(format!("fuzz: {e}"));
        if report.counts.pages_failed > 0 {
            e.context(format!("reproducers in {}", args.repro_dir.display()))
        } else {
            e
        }
    })
}
