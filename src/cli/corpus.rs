//! `cannery corpus info` and `cannery corpus scan-secrets`: summarize a
//! corpus, and look for secret-looking strings before sharing one.
//! Reporting only; the work is in `cannery_capture::corpus` and `::secrets`.

use anyhow::bail;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Corpus subcommands.
#[derive(Subcommand, Debug)]
pub enum CorpusCommand {
    /// Summarize a snapshot, a .pages file or a corpus directory.
    Info(InfoArgs),
    /// Flag secret-looking strings (private keys, tokens, KEY/TOKEN/PASSWORD variables); exit 1 if any.
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
        CorpusCommand::ScanSecrets(a) => scan(a),
    }
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn info(a: InfoArgs) -> anyhow::Result<()> {
    let s = cannery_capture::corpus::summarize(&a.path)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(());
    }
    println!("corpus {}", s.root.display());
    println!(
        "{:<24} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10}",
        "workload", "files", "samples", "pages", "zero", "same", "dup", "disk MiB", "pause ms"
    );
    for w in &s.workloads {
        println!(
            "{:<24} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10.2} {:>10.2}",
            w.name,
            w.files.len(),
            w.samples,
            w.pages,
            w.zero_pages,
            w.same_filled_pages,
            w.duplicate_pages,
            mib(w.bytes_on_disk),
            w.pause_max_ms
        );
    }
    println!(
        "total: {} workloads, {} pages ({:.1} MiB of pages), {} zero pages, {} same-filled pages, {:.2} MiB on disk",
        s.workloads.len(),
        s.pages,
        mib(s.bytes_uncompressed),
        s.zero_pages,
        s.same_filled_pages,
        mib(s.bytes_on_disk)
    );
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
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for (i, f) in found.iter().enumerate() {
            if i == 50 {
                println!("... and {} more", found.len() - 50);
                break;
            }
            match f.page {
                Some(p) => println!(
                    "{}: page {p} offset {}: {:?} {}",
                    f.path.display(),
                    f.offset,
                    f.finding.kind,
                    f.finding.preview
                ),
                None => println!(
                    "{}: byte {}: {:?} {}",
                    f.path.display(),
                    f.offset,
                    f.finding.kind,
                    f.finding.preview
                ),
            }
        }
    }
    if !found.is_empty() {
        let files: std::collections::BTreeSet<_> = found.iter().map(|f| &f.path).collect();
        bail!(
            "found {} secret-looking string(s) in {} file(s) under {}",
            found.len(),
            files.len(),
            a.path.display()
        );
    }
    eprintln!(
        "cannery: no secret-looking strings found under {} ({} corpus file(s), {} pages, {} \
         other file(s) scanned)",
        a.path.display(),
        report.corpus_files,
        report.pages,
        report.other_files
    );
    Ok(())
}
