//! `cannery validate`: every page of a corpus through every available
//! (compressor, decompressor) pair that speaks a mode; prints a pass/fail
//! matrix (or JSON) with counts of cells and page checks run, passed,
//! failed and skipped, writes a reproducer per mismatch, and exits non-zero
//! on any mismatch and on anything requested that did not run (a table a
//! backend cannot use, a mode no backend speaks) unless `--allow-skips`.
//!
//! Which tables a backend can use comes from its capabilities (the codec's
//! table rules); nothing here decides it by backend name. Corpora are read
//! with page-capture's reader (snapshots, raw `.pages` files, workload
//! directories). Also home of the helpers `cannery fuzz` shares: corpus
//! reading, backend opening, reproducers, the matrix and its counts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;

use cannery_codec::backend::check::{check_stream, PairOutcome, Reencode};
use cannery_codec::backend::{self, Backend};
use cannery_codec::{Mode, Outcome, Table};

/// Arguments of `cannery validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Table file (JSON or binary) or built-in name (fixed, kernel-2024).
    #[arg(long)]
    pub table: String,
    /// Corpus: a snapshot or raw `.pages` file, a directory of them, or a
    /// directory of workload directories (a bare name is looked up under corpora/).
    #[arg(long)]
    pub corpus: PathBuf,
    /// Backends to use, comma-separated (default: every available one).
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<String>>,
    /// Modes to check, comma-separated (default: canned,fixed,dynamic).
    #[arg(long, value_delimiter = ',', default_value = "canned,fixed,dynamic")]
    pub modes: Vec<Mode>,
    /// Directory for one reproducer file per mismatch.
    #[arg(long)]
    pub repro_dir: Option<PathBuf>,
    /// Check at most this many pages (at least 1).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_pages: Option<u64>,
    /// Exit 0 even if some requested checks could not run (they are still
    /// counted and listed).
    #[arg(long)]
    pub allow_skips: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub use super::load_table;

/// Reads pages (at most `limit`) from a corpus as page-capture opens it: a
/// snapshot or raw `.pages` file, a directory of them, or a directory of
/// workload directories (a bare name is looked up under `corpora/`).
/// Returns the pages and a label for each (`workload#index`).
pub fn read_corpus(
    path: &Path,
    limit: Option<usize>,
) -> anyhow::Result<(Vec<Vec<u8>>, Vec<String>)> {
    let corpus = cannery_capture::Corpus::open(path)
        .with_context(|| format!("cannot open corpus {}", path.display()))?;
    let limit = limit.unwrap_or(usize::MAX);
    let (mut pages, mut labels) = (Vec::new(), Vec::new());
    'all: for w in &corpus.workloads {
        for (i, page) in w.pages()?.enumerate() {
            if pages.len() >= limit {
                break 'all;
            }
            let page = page.with_context(|| format!("reading workload {}", w.name))?;
            pages.push(page.data);
            labels.push(format!("{}#{i}", w.name));
        }
    }
    if pages.is_empty() {
        bail!("corpus {} holds no pages", path.display());
    }
    Ok((pages, labels))
}

/// Opens the named backends (all available ones if `None`); a named one
/// that cannot be opened is an error.
pub fn open_backends(names: Option<&[String]>) -> anyhow::Result<Vec<Box<dyn Backend>>> {
    match names {
        Some(list) => list
            .iter()
            .map(|n| backend::open(n).map_err(anyhow::Error::from))
            .collect(),
        None => Ok(backend::NAMES
            .iter()
            .filter_map(|n| backend::open(n).ok())
            .collect()),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// What a reproducer file holds.
#[derive(Serialize)]
pub struct Reproducer<'a> {
    /// Always "cannery-reproducer".
    pub format: &'static str,
    /// Table id.
    pub table_id: String,
    /// Table code lengths, literal/length then distance.
    pub litlen_lengths: Vec<u8>,
    /// Distance code lengths.
    pub dist_lengths: Vec<u8>,
    /// Mode.
    pub mode: &'static str,
    /// Compressor and its path.
    pub compressor: String,
    /// Decompressor and its path.
    pub decompressor: String,
    /// Where the page came from.
    pub page_source: String,
    /// Stage that failed and why.
    pub stage: &'a str,
    /// Detail.
    pub detail: &'a str,
    /// The page, hex.
    pub page_hex: String,
    /// The stream, hex.
    pub stream_hex: String,
}

/// Writes one reproducer; returns its path.
#[allow(clippy::too_many_arguments)]
pub fn write_reproducer(
    dir: &Path,
    table: &Table,
    mode: Mode,
    comp: &dyn Backend,
    decomp: &dyn Backend,
    source: &str,
    stage: &str,
    detail: &str,
    page: &[u8],
    stream: &[u8],
) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let safe: String = source
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let path = dir.join(format!(
        "{}-{}-{}-{}-{safe}.json",
        table.id(),
        mode.name(),
        comp.name(),
        decomp.name()
    ));
    let r = Reproducer {
        format: "cannery-reproducer",
        table_id: table.id(),
        litlen_lengths: table.lengths().litlen.to_vec(),
        dist_lengths: table.lengths().dist.to_vec(),
        mode: mode.name(),
        compressor: format!("{} ({})", comp.name(), comp.last_path().name()),
        decompressor: format!("{} ({})", decomp.name(), decomp.last_path().name()),
        page_source: source.into(),
        stage,
        detail,
        page_hex: hex(page),
        stream_hex: hex(stream),
    };
    std::fs::write(&path, serde_json::to_string_pretty(&r)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// One failure in a matrix cell.
#[derive(Serialize, Clone)]
pub struct Failure {
    /// Page index or description.
    pub page: String,
    /// Failed stage.
    pub stage: String,
    /// Detail.
    pub detail: String,
    /// Reproducer file, if written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
}

/// One (mode, compressor, decompressor) cell.
#[derive(Serialize, Clone, Default)]
pub struct Cell {
    /// Mode name.
    pub mode: String,
    /// Compressor name.
    pub compressor: String,
    /// Compressor path (software/hardware).
    pub compressor_path: String,
    /// Decompressor name.
    pub decompressor: String,
    /// "pass", "fail" or "skipped".
    pub status: String,
    /// Pages tried.
    pub pages: usize,
    /// Pages that round-tripped.
    pub passed: usize,
    /// Pages that failed.
    pub failed: usize,
    /// Pages the compressor declined (≥ 4096 bytes).
    pub incompressible: usize,
    /// Sum of compressed sizes of passing pages.
    pub compressed_bytes: usize,
    /// Canned re-encoding results by kind.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reencode: BTreeMap<String, usize>,
    /// Why the cell was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// The failures (at most 20 kept).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
}

/// A rule check of the table for one backend and direction.
#[derive(Serialize)]
pub struct RuleResult {
    /// Backend.
    pub backend: String,
    /// "compress" or "decompress" (canned mode).
    pub direction: &'static str,
    /// Rule name.
    pub rule: &'static str,
    /// True if the table follows it.
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Checks `table` against the canned-mode rules each backend states in its
/// capabilities.
pub fn rule_results(table: &Table, backends: &[Box<dyn Backend>]) -> Vec<RuleResult> {
    let mut v = Vec::new();
    for b in backends {
        let caps = b.capabilities();
        let dirs = [
            (Mode::Canned, "compress", caps.canned_compress_rules),
            (Mode::Canned, "decompress", caps.canned_decompress_rules),
        ];
        for (mode, direction, rules) in dirs {
            let able = match direction {
                "compress" => caps.can_compress(mode),
                _ => caps.can_decompress(mode),
            };
            for r in rules.iter().filter(|_| able) {
                let res = r.check(table);
                v.push(RuleResult {
                    backend: b.name().into(),
                    direction,
                    rule: r.name(),
                    ok: res.is_ok(),
                    detail: res.err(),
                });
            }
        }
    }
    v
}

/// What a matrix ran: cells (one per mode, compressor and decompressor) and
/// page checks (one per page per cell), each run, passed, failed or
/// skipped. A skipped cell counts every page it would have checked.
#[derive(Serialize, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Cells that ran.
    pub cells_run: usize,
    /// Cells whose every page passed (or was declined as incompressible).
    pub cells_passed: usize,
    /// Cells with at least one failure.
    pub cells_failed: usize,
    /// Cells that could not run.
    pub cells_skipped: usize,
    /// Page checks run.
    pub pages_run: usize,
    /// Page checks that round-tripped.
    pub pages_passed: usize,
    /// Page checks that failed.
    pub pages_failed: usize,
    /// Page checks the compressor declined (≥ 4096 bytes): run, not failed.
    pub pages_incompressible: usize,
    /// Page checks of skipped cells.
    pub pages_skipped: usize,
}

impl Counts {
    /// Counts of `cells`, each of which was to check `pages` pages.
    pub fn of(cells: &[Cell], pages: usize) -> Counts {
        let mut c = Counts::default();
        for cell in cells {
            if cell.skip_reason.is_some() {
                c.cells_skipped += 1;
                c.pages_skipped += pages;
                continue;
            }
            c.cells_run += 1;
            if cell.failed > 0 {
                c.cells_failed += 1;
            } else {
                c.cells_passed += 1;
            }
            c.pages_run += cell.pages;
            c.pages_passed += cell.passed;
            c.pages_failed += cell.failed;
            c.pages_incompressible += cell.incompressible;
        }
        c
    }

    /// One line: `cells: R run (P passed, F failed), S skipped; page checks: ...`.
    pub fn line(&self) -> String {
        format!(
            "cells: {} run ({} passed, {} failed), {} skipped; page checks: {} run ({} passed, {} \
             incompressible, {} failed), {} skipped",
            self.cells_run,
            self.cells_passed,
            self.cells_failed,
            self.cells_skipped,
            self.pages_run,
            self.pages_passed,
            self.pages_incompressible,
            self.pages_failed,
            self.pages_skipped
        )
    }

    /// The verdict: `Err` on any failure, and on any skip unless allowed.
    pub fn verdict(&self, allow_skips: bool, what: &str) -> anyhow::Result<()> {
        if self.pages_failed > 0 {
            bail!(
                "{what}: {} of {} page checks failed (see the matrix above)",
                self.pages_failed,
                self.pages_run
            );
        }
        if self.cells_run == 0 {
            bail!(
                "{what}: nothing was checked ({} cells skipped)",
                self.cells_skipped
            );
        }
        if self.cells_skipped > 0 && !allow_skips {
            bail!(
                "{what}: {} of {} cells did not run ({} page checks skipped; listed above); \
                 pass --allow-skips to accept that",
                self.cells_skipped,
                self.cells_skipped + self.cells_run,
                self.pages_skipped
            );
        }
        Ok(())
    }
}

/// Runs every pair over `pages` (labelled by `sources`) and fills cells.
#[allow(clippy::too_many_arguments)]
pub fn run_matrix(
    table: &Table,
    modes: &[Mode],
    comps: &mut [Box<dyn Backend>],
    decomps: &mut [Box<dyn Backend>],
    pages: &[Vec<u8>],
    sources: &[String],
    repro_dir: Option<&Path>,
    only_involving: Option<&str>,
) -> anyhow::Result<Vec<Cell>> {
    let mut cells = Vec::new();
    for &mode in modes {
        let before = cells.len();
        for comp in comps.iter_mut() {
            if !comp.capabilities().can_compress(mode) {
                continue;
            }
            let comp_block = if mode == Mode::Canned {
                comp.capabilities()
                    .canned_compress_check(table)
                    .err()
                    .map(|e| format!("{} cannot compress with the table: {e}", comp.name()))
            } else {
                None
            };
            let mut row: Vec<Cell> = decomps
                .iter()
                .filter(|d| d.capabilities().can_decompress(mode))
                .filter(|d| only_involving.is_none_or(|b| b == comp.name() || b == d.name()))
                .map(|d| {
                    let block = comp_block.clone().or_else(|| {
                        (mode == Mode::Canned)
                            .then(|| {
                                d.capabilities()
                                    .canned_decompress_check(table)
                                    .err()
                                    .map(|e| {
                                        format!(
                                            "{} cannot decompress with the table: {e}",
                                            d.name()
                                        )
                                    })
                            })
                            .flatten()
                    });
                    Cell {
                        mode: mode.name().into(),
                        compressor: comp.name().into(),
                        compressor_path: comp.capabilities().path.name().into(),
                        decompressor: d.name().into(),
                        status: if block.is_some() { "skipped" } else { "pass" }.into(),
                        skip_reason: block,
                        ..Cell::default()
                    }
                })
                .collect();
            if row.iter().all(|c| c.skip_reason.is_some()) {
                cells.extend(row);
                continue;
            }
            let mut stream = Vec::new();
            for (pi, page) in pages.iter().enumerate() {
                let res = comp.compress(mode, Some(table), page, &mut stream);
                let comp_path = comp.last_path().name();
                for cell in row.iter_mut().filter(|c| c.skip_reason.is_none()) {
                    cell.pages += 1;
                    cell.compressor_path = comp_path.into();
                    let d = decomps
                        .iter_mut()
                        .find(|d| d.name() == cell.decompressor)
                        .expect("decompressor of the row");
                    let outcome = match &res {
                        Err(e) => PairOutcome::Fail {
                            stage: "compress",
                            detail: e.to_string(),
                        },
                        Ok(Outcome::Incompressible) => PairOutcome::Incompressible,
                        Ok(Outcome::Compressed(n)) => {
                            check_stream(d.as_mut(), mode, Some(table), page, &stream[..*n])
                        }
                    };
                    match outcome {
                        PairOutcome::Pass { bytes, reencode } => {
                            cell.passed += 1;
                            cell.compressed_bytes += bytes;
                            if let Some(r) = reencode {
                                let k = match r {
                                    Reencode::Exact => "exact",
                                    Reencode::ExactWithQplTail => "exact-with-qpl-tail",
                                };
                                *cell.reencode.entry(k.into()).or_default() += 1;
                            }
                        }
                        PairOutcome::Incompressible => cell.incompressible += 1,
                        PairOutcome::Fail { stage, detail } => {
                            cell.failed += 1;
                            cell.status = "fail".into();
                            if cell.failures.len() < 20 {
                                let s = match &res {
                                    Ok(Outcome::Compressed(n)) => &stream[..*n],
                                    _ => &[][..],
                                };
                                let reproducer = match repro_dir {
                                    Some(dir) => Some(
                                        write_reproducer(
                                            dir,
                                            table,
                                            mode,
                                            comp.as_ref(),
                                            d.as_ref(),
                                            &sources[pi],
                                            stage,
                                            &detail,
                                            page,
                                            s,
                                        )?
                                        .display()
                                        .to_string(),
                                    ),
                                    None => None,
                                };
                                cell.failures.push(Failure {
                                    page: sources[pi].clone(),
                                    stage: stage.into(),
                                    detail,
                                    reproducer,
                                });
                            }
                        }
                    }
                }
            }
            cells.extend(row);
        }
        if cells.len() == before {
            cells.push(Cell {
                mode: mode.name().into(),
                compressor: "(none)".into(),
                decompressor: "(none)".into(),
                status: "skipped".into(),
                skip_reason: Some(format!(
                    "no pair of the chosen backends compresses and decompresses {mode} streams"
                )),
                ..Cell::default()
            });
        }
    }
    Ok(cells)
}

/// Prints cells as one matrix per mode.
pub fn print_matrix(cells: &[Cell]) {
    let mut modes: Vec<&str> = Vec::new();
    for c in cells {
        if !modes.contains(&c.mode.as_str()) {
            modes.push(&c.mode);
        }
    }
    for mode in modes {
        let mode_cells: Vec<&Cell> = cells.iter().filter(|c| c.mode == mode).collect();
        let mut comps: Vec<(&str, &str)> = Vec::new();
        let mut decomps: Vec<&str> = Vec::new();
        for c in &mode_cells {
            if !comps.iter().any(|(n, _)| *n == c.compressor) {
                comps.push((&c.compressor, &c.compressor_path));
            }
            if !decomps.contains(&c.decompressor.as_str()) {
                decomps.push(&c.decompressor);
            }
        }
        println!("\nmode {mode}: rows compress, columns decompress; cell = passed/pages (incompressible)");
        print!("{:<24}", "");
        for d in &decomps {
            print!(" {d:>14}");
        }
        println!();
        for (comp, path) in &comps {
            print!("{:<24}", format!("{comp} ({path})"));
            for d in &decomps {
                let cell = mode_cells
                    .iter()
                    .find(|c| c.compressor == *comp && c.decompressor == *d);
                let text = match cell {
                    None => "-".to_string(),
                    Some(c) if c.skip_reason.is_some() => "skipped".into(),
                    Some(c) if c.failed > 0 => format!("FAIL {}/{}", c.failed, c.pages),
                    Some(c) => format!("{}/{} ({})", c.passed, c.pages, c.incompressible),
                };
                print!(" {text:>14}");
            }
            println!();
        }
        for c in &mode_cells {
            if let Some(r) = &c.skip_reason {
                println!("  skipped {} -> {}: {r}", c.compressor, c.decompressor);
            }
            for f in &c.failures {
                println!(
                    "  FAIL {} -> {} page {}: {}: {}{}",
                    c.compressor,
                    c.decompressor,
                    f.page,
                    f.stage,
                    f.detail,
                    f.reproducer
                        .as_ref()
                        .map(|p| format!(" (reproducer {p})"))
                        .unwrap_or_default()
                );
            }
            if !c.reencode.is_empty() && c.decompressor == "software" {
                let parts: Vec<String> =
                    c.reencode.iter().map(|(k, v)| format!("{k} {v}")).collect();
                println!(
                    "  {} canned streams re-encode bit-exactly with our Huffman stage: {}",
                    c.compressor,
                    parts.join(", ")
                );
            }
        }
    }
}

/// Runs `cannery validate`.
pub fn run(args: ValidateArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let limit = args
        .max_pages
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let (pages, sources) = read_corpus(&args.corpus, limit)?;
    let mut comps = open_backends(args.backends.as_deref())?;
    let mut decomps = open_backends(args.backends.as_deref())?;
    let rules = rule_results(&table, &comps);
    let cells = run_matrix(
        &table,
        &args.modes,
        &mut comps,
        &mut decomps,
        &pages,
        &sources,
        args.repro_dir.as_deref(),
        None,
    )?;
    let counts = Counts::of(&cells, pages.len());
    let verdict = counts.verdict(args.allow_skips, "validate");
    if args.json {
        let v = serde_json::json!({
            "table": {"id": table.id(), "name": table.name},
            "corpus": args.corpus.display().to_string(),
            "pages": pages.len(),
            "backends": comps.iter().map(|b| serde_json::json!({
                "name": b.name(),
                "path": b.capabilities().path.name(),
                "path_note": b.capabilities().path_note,
            })).collect::<Vec<_>>(),
            "rules": rules,
            "matrix": cells,
            "counts": counts,
            "allow_skips": args.allow_skips,
            "ok": verdict.is_ok(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "table {} ({}), corpus {}: {} pages",
            table.id(),
            table.name.as_deref().unwrap_or("unnamed"),
            args.corpus.display(),
            pages.len()
        );
        for b in &comps {
            let c = b.capabilities();
            println!(
                "backend {:<12} path {}{}",
                b.name(),
                c.path.name(),
                c.path_note
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            );
        }
        println!("canned-mode table rules:");
        for r in &rules {
            println!(
                "  {:<12} {:<10} {:<13} {}",
                r.backend,
                r.direction,
                r.rule,
                match &r.detail {
                    None => "ok".to_string(),
                    Some(d) => format!("BROKEN: {d}"),
                }
            );
        }
        print_matrix(&cells);
        println!("\nvalidate: {}", counts.line());
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::backend::software::Software;
    use cannery_codec::backend::{BackendError, Capabilities};

    /// Our software backend with one bit of every compressed stream
    /// flipped: a faulty engine, to prove mismatches are caught.
    struct Faulty(Software);

    impl Backend for Faulty {
        fn name(&self) -> &'static str {
            "faulty"
        }
        fn capabilities(&self) -> &Capabilities {
            self.0.capabilities()
        }
        fn compress(
            &mut self,
            mode: Mode,
            table: Option<&Table>,
            page: &[u8],
            out: &mut Vec<u8>,
        ) -> Result<Outcome, BackendError> {
            let r = self.0.compress(mode, table, page, out)?;
            if let Outcome::Compressed(n) = r {
                out[n / 2] ^= 0x10;
            }
            Ok(r)
        }
        fn decompress(
            &mut self,
            mode: Mode,
            table: Option<&Table>,
            data: &[u8],
            out: &mut [u8],
        ) -> Result<usize, BackendError> {
            self.0.decompress(mode, table, data, out)
        }
    }

    fn text_page(i: usize) -> Vec<u8> {
        format!("page {i}: the quick brown fox jumps over the lazy dog. ")
            .repeat(80)
            .into_bytes()[..4096]
            .to_vec()
    }

    #[test]
    fn a_faulty_compressor_fails_every_decompressor_and_leaves_reproducers() {
        let dir = tempfile::tempdir().unwrap();
        let table = Table::kernel_2024();
        let pages: Vec<Vec<u8>> = (0..3).map(text_page).collect();
        let sources: Vec<String> = (0..3).map(|i| format!("page{i}")).collect();
        let mut comps: Vec<Box<dyn Backend>> =
            vec![Box::new(Software::new()), Box::new(Faulty(Software::new()))];
        let mut decomps = open_backends(Some(&["software".into(), "zlib".into()])).unwrap();
        let cells = run_matrix(
            &table,
            &[Mode::Canned],
            &mut comps,
            &mut decomps,
            &pages,
            &sources,
            Some(dir.path()),
            None,
        )
        .unwrap();
        assert_eq!(cells.len(), 4);
        for c in &cells {
            if c.compressor == "software" {
                assert_eq!((c.status.as_str(), c.passed, c.failed), ("pass", 3, 0));
                assert_eq!(c.reencode.get("exact"), Some(&3));
            } else {
                assert_eq!(
                    (c.status.as_str(), c.failed),
                    ("fail", 3),
                    "{}",
                    c.decompressor
                );
                for f in &c.failures {
                    let path = f.reproducer.as_ref().unwrap();
                    let v: serde_json::Value =
                        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
                    assert_eq!(v["table_id"], table.id());
                    assert_eq!(v["mode"], "canned");
                    assert_eq!(v["page_hex"].as_str().unwrap().len(), 8192);
                    assert!(!v["stream_hex"].as_str().unwrap().is_empty());
                }
            }
        }
    }

    #[test]
    fn corpus_files_must_hold_whole_pages() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.pages");
        std::fs::write(&f, vec![0u8; 4095]).unwrap();
        assert!(read_corpus(&f, None).is_err());
        std::fs::write(&f, vec![7u8; 8192]).unwrap();
        let (pages, labels) = read_corpus(dir.path(), None).unwrap();
        assert_eq!(pages.len(), 2);
        assert!(labels[1].ends_with("#1"), "{labels:?}");
        assert_eq!(read_corpus(dir.path(), Some(1)).unwrap().0.len(), 1);
        let empty = tempfile::tempdir().unwrap();
        assert!(read_corpus(empty.path(), None).is_err());
    }

    #[test]
    fn tables_load_by_name_or_file_with_clear_errors() {
        assert_eq!(load_table("kernel-2024").unwrap(), Table::kernel_2024());
        assert!(load_table("/nonexistent/t.json").is_err());
    }
}
