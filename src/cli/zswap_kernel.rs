//! `cannery zswap-kernel`: measures the running kernel's zswap on a
//! corpus's pages (pages out with `MADV_PAGEOUT`, counters from debugfs,
//! faults back in, every page verified) and, with `--compare-sim`, sets the
//! simulator's prediction beside each measurement. The engine is
//! `cannery_zswap::kernel`; this file parses arguments, reads each
//! workload's pages, wires SIGINT/SIGTERM to a clean stop (every changed
//! setting is restored), and prints the report as text or JSON.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::{open_output, Privacy};
use anyhow::bail;
use cannery_files::interrupt;
use cannery_zswap::kernel::{read_workloads, run_session, SessionOptions, System};
use clap::Args;

/// Arguments of `cannery zswap-kernel`.
#[derive(Args, Debug)]
pub struct ZswapKernelArgs {
    /// A corpus: a snapshot or raw `.pages` file, or a directory with one
    /// sub-directory per workload (each workload is measured on its own).
    #[arg(long)]
    corpus: PathBuf,
    /// Kernel compressors to measure, in order (names of `/proc/crypto`,
    /// e.g. deflate lzo lzo-rle).
    #[arg(long, num_args = 1.., default_values = ["deflate", "lzo"])]
    compressor: Vec<String>,
    /// Pages per MADV_PAGEOUT call.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=65536))]
    batch: u32,
    /// Set the machine up and undo it afterwards: enable zswap, set
    /// vm.page-cluster to 0 (one page per swap-in), and make a temporary
    /// swap file when the free swap is short.
    #[arg(long)]
    setup: bool,
    /// Where --setup makes its swap file (must not exist).
    #[arg(long)]
    swap_file: Option<PathBuf>,
    /// Predict each measurement with the simulator and print the error.
    #[arg(long)]
    compare_sim: bool,
    /// A directory of per-workload tables as `cannery train` writes them
    /// (`NAME.table.json`): the simulator also predicts IAA's canned mode
    /// with each workload's own table, beside the kernel's compressors.
    #[arg(long)]
    tables: Option<PathBuf>,
    /// At most this many pages of each workload.
    #[arg(long, value_parser = super::at_least_one)]
    max_pages: Option<usize>,
    /// Print the report as JSON.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the report as markdown tables (as in BENCHMARKS.md).
    #[arg(long)]
    markdown: bool,
    /// Write the report here instead of standard output (`-`).
    #[arg(short = 'o', long = "out", default_value = "-")]
    out: PathBuf,
    /// Replace an existing output file.
    #[arg(short, long)]
    force: bool,
}

/// Runs `cannery zswap-kernel`.
pub fn run(args: ZswapKernelArgs) -> anyhow::Result<()> {
    let workloads = read_workloads(&args.corpus, args.max_pages, args.tables.as_deref())?;
    // Opened first, so an existing report is refused before any setting changes.
    let mut out = open_output(&args.out, args.force, &[&args.corpus], Privacy::Normal)?;
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
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else if args.markdown {
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
