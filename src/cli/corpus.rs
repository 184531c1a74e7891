//! `cannery corpus info`, `corpus export` and `corpus scan-secrets`:
//! summarize a corpus, take its pages out as raw pages or records, and look
//! for secret-looking strings before sharing one. Output only (the
//! arguments are `cannery_cli::corpus`); the work is in `cannery_capture::corpus` and `::secrets`.

use crate::cli::{open_output, Privacy};
use anyhow::bail;
use cannery_cli::corpus::{CorpusCommand, EmitArg, ExportArgs, InfoArgs, ScanArgs};

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
