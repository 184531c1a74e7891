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

fn info(a: InfoArgs) -> anyhow::Result<()> {
    let s = cannery_capture::corpus::summarize(&a.path)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", s.render_text());
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
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.render_text(50));
    }
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
