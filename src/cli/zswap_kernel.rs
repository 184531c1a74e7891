//! `cannery zswap-kernel`: measures the running kernel's zswap on a
//! corpus's pages (pages out with `MADV_PAGEOUT`, counters from debugfs,
//! faults back in, every page verified) and, with `--compare-sim`, sets the
//! simulator's prediction beside each measurement. The engine is
//! `cannery_zswap::kernel`; this file takes its parsed arguments (`cannery_cli`), reads each
//! workload's pages, wires SIGINT/SIGTERM to a clean stop (every changed
//! setting is restored), and prints the report as text or JSON.

use crate::cli::{open_output, Privacy};
use anyhow::bail;
use cannery_cli::zswap_kernel::ZswapKernelArgs;
use cannery_files::interrupt;
use cannery_zswap::kernel::{read_workloads, run_session, SessionOptions, System};
use std::io::Write;
use std::path::PathBuf;

/// Runs `cannery zswap-kernel`.
pub fn run(args: ZswapKernelArgs) -> anyhow::Result<()> {
    let workloads = read_workloads(&args.corpus, args.max_pages, args.tables.as_deref())?;
    // Opened first, so an existing report is refused before any setting changes.
    let mut out = open_output(
        &args.report.out,
        args.report.force,
        &[&args.corpus],
        Privacy::Normal,
    )?;
    let opts = SessionOptions {
        compressors: args.compressor.clone(),
        batch: args.batch as usize,
        setup: args.setup,
        swap_file: args.swap_file.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "/var/tmp/cannery-zswap-{}.swap",
                std::process::id()
            ))
        }),
        compare_sim: args.compare_sim,
    };
    let handlers = interrupt::install();
    let result = run_session(
        &System::default(),
        &args.corpus.display().to_string(),
        &workloads,
        &opts,
        &interrupt::interrupted,
        &mut |line| crate::cli::out::status(line),
    );
    drop(handlers);
    let report = result?;
    if args.report.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if args.report.markdown {
        write!(out, "{}", report.render_markdown())?;
    } else {
        write!(out, "{report}")?;
    }
    out.finish()?;
    if !report.restore_failures.is_empty() {
        bail!(
            "{} settings could not be restored (see the report)",
            report.restore_failures.len()
        );
    }
    let bad = report.mismatches();
    if bad > 0 {
        return Err(super::finding(format!(
            "{bad} pages came back from zswap different from what was put in"
        )));
    }
    Ok(())
}
