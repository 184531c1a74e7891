//! `cannery corpus info`, `corpus export` and `corpus scan-secrets`:
//! summarize a corpus, take its pages out as raw pages or records, and look
//! for secret-looking strings before sharing one. Arguments and output
//! only; the work is in `cannery_capture::corpus` and `::secrets`.

use crate::cli::{open_output, Privacy};
use anyhow::bail;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Corpus subcommands.
#[derive(Subcommand, Debug)]
pub enum CorpusCommand {
    /// Summarize a snapshot, a .pages file or a corpus directory.
    Info(InfoArgs),
    /// Write a corpus's pages (all, one workload's, or a seeded sample per
    /// workload) as raw 4 KiB pages or as JSON Lines records.
    Export(ExportArgs),
    /// Flag secret-looking strings (private keys, tokens, KEY/TOKEN/PASSWORD
    /// variables). Exit status: 0 none found, 1 found, 2 error (nothing
    /// scanned, unreadable input).
    ScanSecrets(ScanArgs),
}

/// Arguments of `corpus info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Corpus directory, snapshot file or .pages file.
    pub path: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `corpus export` writes per page.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum EmitArg {
    /// Raw 4096-byte pages back to back (a `.pages` file).
    Pages,
    /// JSON Lines: workload, index, region, data (hex).
    Records,
}

/// Arguments of `corpus export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Corpus directory, snapshot file or .pages file (or a name under corpora/).
    pub path: PathBuf,
    /// Only this workload.
    #[arg(long)]
    pub workload: Option<String>,
    /// At most this many pages per workload, chosen uniformly at random.
    #[arg(long)]
    pub sample: Option<u64>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// What to write per page.
    #[arg(long, value_enum, default_value = "pages")]
    pub emit: EmitArg,
    /// Output file (`-` for standard output).
    #[arg(short, long)]
    pub out: PathBuf,
    /// Replace the output file if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// Print what was exported as JSON on stdout (not with `-o -`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `corpus scan-secrets`.
#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Directory (scanned recursively) or file.
    pub path: PathBuf,
    /// Print findings as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: CorpusCommand) -> anyhow::Result<()> {
    match cmd {
        CorpusCommand::Info(a) => info(a),
        CorpusCommand::Export(a) => export(a),
        CorpusCommand::ScanSecrets(a) => scan(a),
    }
}

fn info(a: InfoArgs) -> anyhow::Result<()> {
    let s = cannery_lab::corpus_summary::summarize(&a.path)?;
    crate::cli::print_report(a.json, &s, |r| r.render_text())?;
    Ok(())
}

fn export(a: ExportArgs) -> anyhow::Result<()> {
    use cannery_capture::corpus::{Corpus, Emit, ExportOptions};
    if a.json && a.out == std::path::Path::new("-") {
        bail!("--json prints on stdout, where -o - writes the pages: choose one");
    }
    if a.sample == Some(0) {
        bail!("--sample 0 exports nothing; give at least 1");
    }
    let corpus = Corpus::open(&a.path)?;
    let inputs: Vec<&std::path::Path> = corpus
        .workloads
        .iter()
        .flat_map(|w| w.files.iter().map(|f| f.as_path()))
        .collect();
    let mut out = open_output(&a.out, a.force, &inputs, Privacy::Private)?;
    let opts = ExportOptions {
        workload: a.workload.clone(),
        sample: a.sample,
        seed: a.seed,
    };
    let emit = match a.emit {
        EmitArg::Pages => Emit::Pages,
        EmitArg::Records => Emit::Records,
    };
    let bar = super::out::bar(0, "export", "pages");
    let report = cannery_capture::corpus::export(&corpus, &opts, emit, &mut out, &mut |n, of| {
        bar.set_length(of);
        bar.set_position(n);
    })?;
    bar.finish_and_clear();
    out.finish()?;
    let per: Vec<String> = report
        .workloads
        .iter()
        .map(|w| format!("{} {}/{}", w.name, w.exported, w.pages))
        .collect();
    super::out::status(format!(
        "exported {} pages ({}) to {}",
        report.pages,
        per.join(", "),
        a.out.display()
    ));
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}

fn scan(a: ScanArgs) -> anyhow::Result<()> {
    let report = cannery_capture::secrets::scan_path(&a.path)?;
    if report.corpus_files == 0 {
        bail!(
            "{} holds no snapshot or .pages file, so no corpus was scanned ({} other file(s) \
             looked at); name a corpus directory or file",
            a.path.display(),
            report.other_files
        );
    }
    let found = &report.findings;
    crate::cli::print_report(a.json, &report, |r| r.render_text(50))?;
    if !found.is_empty() {
        let files: std::collections::BTreeSet<_> = found.iter().map(|f| &f.path).collect();
        // Findings are exit status 1; an error (nothing scanned, I/O) is 2.
        return Err(super::finding(format!(
            "found {} secret-looking string(s) in {} file(s) under {}",
            found.len(),
            files.len(),
            a.path.display()
        )));
    }
    crate::cli::out::status(format!(
        "no secret-looking strings found under {} ({} corpus file(s), {} pages, {} \
         other file(s) scanned)",
        a.path.display(),
        report.corpus_files,
        report.pages,
        report.other_files
    ));
    Ok(())
}
