//! `cannery zram-kernel`: measures the running kernel's zram on a corpus's
//! held-out pages (the split `train` uses), each workload under each
//! compressor, with and without its dictionary from a `train` output. The
//! engine is `cannery_zswap::zram_kernel`; this file takes its parsed arguments (`cannery_cli`),
//! selects each workload's pages, wires SIGINT/SIGTERM to a clean stop (the
//! device is removed) and prints the report as text, markdown or JSON.

use crate::cli::{open_output, Privacy};
use anyhow::bail;
use cannery_cli::zram_kernel::ZramKernelArgs;
use cannery_files::interrupt;
use cannery_machine::System;
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::pages::Part;
use cannery_zswap::zram_kernel::comparison::{comparison, render, to_json, ComparisonFiles};
use cannery_zswap::zram_kernel::{choose_workloads, run_session, Chosen, ZramError, ZramOptions};
use std::io::Write;
use std::path::Path;

/// Runs `cannery zram-kernel`.
pub fn run(args: ZramKernelArgs) -> anyhow::Result<()> {
    let corpus = CorpusSource::open(Path::new(&args.corpus))?;
    let split = args.split.split()?;
    let part = Part::selection(&args.part).map_err(anyhow::Error::msg)?;
    let Chosen {
        workloads,
        table_files: used_files,
    } = choose_workloads(
        &corpus,
        &args.corpus,
        &split,
        part,
        args.max_pages,
        args.tables.as_deref(),
        &mut |name| crate::cli::out::warn(format!("workload {name}: no {} pages", args.part)),
    )?;
    if workloads.is_empty() {
        bail!("the corpus {} has no {} pages", args.corpus, args.part);
    }
    // Opened first, so an existing report is refused before the device is added.
    let mut out = open_output(
        &args.report.out,
        args.report.force,
        &[Path::new(&args.corpus)],
        Privacy::Normal,
    )?;
    let opts = ZramOptions {
        compressors: (!args.compressor.is_empty()).then(|| args.compressor.clone()),
        level: args.level,
    };
    let handlers = interrupt::install();
    let result = run_session(
        &System::default(),
        &corpus.name,
        &args.part,
        &workloads,
        &opts,
        &interrupt::interrupted,
        &mut |line| crate::cli::out::status(line),
    );
    drop(handlers);
    if let Err(ZramError::Interrupted) = result {
        // The device is already removed (the guard ran on the way out).
        eprintln!("cannery: interrupted; the zram device was removed");
        std::process::exit(130);
    }
    let report = result?;
    let compared = if args.compare {
        let files = ComparisonFiles {
            tables: args.tables.as_deref(),
            table_files: &used_files,
            zswap_report: args.zswap_report.as_deref(),
        };
        let handlers = interrupt::install();
        let rows = comparison(
            &files,
            &args.corpus,
            &workloads,
            &report.rows,
            &interrupt::interrupted,
            &mut |line| crate::cli::out::status(line),
            &mut |why| crate::cli::out::warn(why),
        )?;
        drop(handlers);
        Some(rows)
    } else {
        None
    };
    if args.report.json {
        serde_json::to_writer_pretty(&mut out, &to_json(&report, compared.as_deref()))?;
        writeln!(out)?;
    } else {
        write!(
            out,
            "{}",
            render(&report, compared.as_deref(), args.report.markdown)
        )?;
    }
    out.finish()?;
    if !report.restore_failures.is_empty() {
        bail!("the zram device could not be removed (see the report; `cannery restore` retries)");
    }
    let bad = report.mismatches();
    if bad > 0 {
        return Err(super::finding(format!(
            "{bad} pages came back from zram different from what was written"
        )));
    }
    Ok(())
}
