//! `cannery bench`: per-page speed and ratio of cannery's modes and the peer
//! compressors on held-out pages of each workload of a corpus, measured in
//! one run, written as a markdown report (and JSON).
//!
//! The measuring is `cannery_trainer::bench`; this module reads the corpus,
//! trains each workload's table and zstd dictionary on its training pages,
//! and renders the report.

use std::path::PathBuf;

use anyhow::{bail, Context};
use cannery_capture::Corpus;
use cannery_codec::peer::train_zstd_dictionary;
use cannery_trainer::bench::{bench_codec, standard_codecs, BenchResult};
use cannery_trainer::pages::Part;
use cannery_trainer::train::{histogram_of, table_from_histogram};
use cannery_trainer::{ParseModel, Split, TableOptions};
use clap::Args;

#[derive(Args)]
pub struct BenchArgs {
    /// Corpus: a directory with one sub-directory per workload, a snapshot or
    /// `.pages` file, or a name under corpora/.
    #[arg(long)]
    corpus: PathBuf,
    /// Pages per workload to measure at most (held-out pages, spread over the capture).
    #[arg(long, default_value_t = 400)]
    max_pages: usize,
    /// Timed repetitions per page (the fastest counts).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Share of pages held out for measuring (the rest trains tables and dictionaries).
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the train/test split.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the markdown report here (default: print it).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print JSON (one entry per workload and codec) instead of markdown.
    #[arg(long)]
    json: bool,
}

/// One workload's pages, split.
struct WorkloadPages {
    name: String,
    train: Vec<Vec<u8>>,
    test: Vec<Vec<u8>>,
    same_filled: u64,
}

fn load(args: &BenchArgs) -> anyhow::Result<Vec<WorkloadPages>> {
    let corpus =
        Corpus::open(&args.corpus).with_context(|| format!("corpus {}", args.corpus.display()))?;
    let split = Split::new(args.test_fraction, args.seed)?;
    let mut out = Vec::new();
    for w in &corpus.workloads {
        let (mut train, mut test) = (Vec::new(), Vec::new());
        let mut same_filled = 0;
        for page in w.pages().with_context(|| format!("workload {}", w.name))? {
            let page = page.with_context(|| format!("workload {}", w.name))?;
            if cannery_capture::same_filled(&page.data).is_some() {
                same_filled += 1;
                continue;
            }
            match split.part(&page.data) {
                Part::Test => test.push(page.data),
                _ => train.push(page.data),
            }
        }
        // Spread the measured pages over the whole capture.
        let step = (test.len() / args.max_pages.max(1)).max(1);
        let test: Vec<Vec<u8>> = test
            .into_iter()
            .step_by(step)
            .take(args.max_pages)
            .collect();
        if test.is_empty() || train.is_empty() {
            eprintln!(
                "cannery: workload {}: too few pages to train and measure, skipped",
                w.name
            );
            continue;
        }
        out.push(WorkloadPages {
            name: w.name.clone(),
            train,
            test,
            same_filled,
        });
    }
    if out.is_empty() {
        bail!(
            "corpus {}: no workload has pages to measure",
            args.corpus.display()
        );
    }
    Ok(out)
}

pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    let workloads = load(&args)?;
    let mut results: Vec<BenchResult> = Vec::new();
    for w in &workloads {
        let h = histogram_of(&w.train, ParseModel::Fast);
        let table = table_from_histogram(&h, &TableOptions::default(), &w.name)?;
        let refs: Vec<&[u8]> = w.train.iter().map(|p| &p[..]).collect();
        let dict = train_zstd_dictionary(&refs, 16 << 10);
        for codec in standard_codecs(&table, dict) {
            eprintln!(
                "cannery: bench {} {} ({} pages)",
                w.name,
                codec.name(),
                w.test.len()
            );
            results.push(bench_codec(
                &w.name,
                &codec,
                &w.test,
                w.same_filled,
                args.reps,
            )?);
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
        return Ok(());
    }
    let report = markdown(&args, &workloads, &results);
    match &args.out {
        Some(p) => std::fs::write(p, report).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{report}"),
    }
    Ok(())
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    format!(
        "{cpu}, {cores} cores, Linux {}, load average at the end {}",
        kernel.trim(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    )
}

fn markdown(args: &BenchArgs, workloads: &[WorkloadPages], results: &[BenchResult]) -> String {
    let mut s = String::new();
    s += "# cannery benchmarks\n\n";
    s += &format!(
        "Generated by `cannery bench --corpus {} --max-pages {} --reps {}` (cannery {}).\n\n",
        args.corpus.display(),
        args.max_pages,
        args.reps,
        env!("CARGO_PKG_VERSION")
    );
    s += &format!("Machine: {}.\n\n", machine());
    s += "Every codec compresses and decompresses each held-out page of a workload on its own, \
          and every round trip is verified. A page's time is the fastest of the repetitions; \
          p50/p99 are over pages. The machine is shared and noisy: read the `/ld1` and `/lz4` \
          columns (this codec's figure divided by libdeflate -1's or lz4's on the same pages in \
          the same run), not the absolute times. `canned-*` use the workload's own table trained \
          on its training pages (fast parse); `zstd-1-dict` uses a 16 KiB dictionary trained on \
          the same pages. Ratio counts incompressible pages as 4096 bytes; effective ratio also \
          counts the workload's same-filled pages as free.\n\n";
    for w in workloads {
        s += &format!(
            "## {} ({} held-out pages measured, {} training pages)\n\n",
            w.name,
            w.test.len(),
            w.train.len()
        );
        s += "| codec | ratio | eff. ratio | incompr. | comp ns p50 | comp ns p99 | comp MB/s | decomp ns p50 | decomp ns p99 | decomp MB/s | ratio /ld1 | comp time /ld1 | decomp time /ld1 | decomp time /lz4 |\n";
        s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        let rs: Vec<&BenchResult> = results.iter().filter(|r| r.workload == w.name).collect();
        let find = |name: &str| rs.iter().find(|r| r.codec == name).copied();
        let (ld1, lz4) = (find("libdeflate-1"), find("lz4"));
        let rel = |a: f64, b: Option<f64>| {
            b.filter(|b| *b > 0.0)
                .map(|b| format!("{:.2}", a / b))
                .unwrap_or_else(|| "-".into())
        };
        for r in &rs {
            s += &format!(
                "| {} | {:.3} | {:.3} | {} | {} | {} | {:.0} | {} | {} | {:.0} | {} | {} | {} | {} |\n",
                r.codec,
                r.ratio,
                r.effective_ratio,
                r.incompressible_pages,
                r.compress_ns_p50,
                r.compress_ns_p99,
                r.compress_mb_s,
                r.decompress_ns_p50,
                r.decompress_ns_p99,
                r.decompress_mb_s,
                rel(r.ratio, ld1.map(|x| x.ratio)),
                rel(r.compress_ns_p50 as f64, ld1.map(|x| x.compress_ns_p50 as f64)),
                rel(r.decompress_ns_p50 as f64, ld1.map(|x| x.decompress_ns_p50 as f64)),
                rel(r.decompress_ns_p50 as f64, lz4.map(|x| x.decompress_ns_p50 as f64)),
            );
        }
        s += "\n";
    }
    s
}
