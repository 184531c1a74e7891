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

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use serde::Serialize;

use cannery_codec::backend::check::{
    render_matrix, run_matrix, Cell, Counts, FailureCase, MatrixSpec, Reproducer,
};
use cannery_codec::backend::{self, Backend};
use cannery_codec::{Mode, Table};

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

/// Writes the reproducer of `f` into `dir`; returns its path.
pub fn write_reproducer(dir: &Path, f: &FailureCase<'_>) -> anyhow::Result<String> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let r = Reproducer::of(f);
    let path = dir.join(r.file_name());
    std::fs::write(&path, serde_json::to_string_pretty(&r)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path.display().to_string())
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
            (
                "compress",
                caps.can_compress(Mode::Canned),
                caps.canned_compress_rules,
            ),
            (
                "decompress",
                caps.can_decompress(Mode::Canned),
                caps.canned_decompress_rules,
            ),
        ];
        for (direction, able, rules) in dirs {
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

/// Runs the matrix, writing a reproducer per kept failure into `repro_dir`.
pub fn run_cells(
    spec: &MatrixSpec<'_>,
    comps: &mut [Box<dyn Backend>],
    decomps: &mut [Box<dyn Backend>],
    pages: &[Vec<u8>],
    labels: &[String],
    repro_dir: Option<&Path>,
) -> anyhow::Result<Vec<Cell>> {
    run_matrix(
        spec,
        comps,
        decomps,
        pages,
        labels,
        &mut |f| match repro_dir {
            Some(dir) => write_reproducer(dir, f).map(Some),
            None => Ok(None),
        },
    )
}

/// Runs `cannery validate`.
pub fn run(args: ValidateArgs) -> anyhow::Result<()> {
    let table = load_table(&args.table)?;
    let limit = args
        .max_pages
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let (pages, sources) = read_corpus(&args.corpus, limit)?;
    let mut comps = backend::open_many(args.backends.as_deref())?;
    let mut decomps = backend::open_many(args.backends.as_deref())?;
    let rules = rule_results(&table, &comps);
    let spec = MatrixSpec {
        table: &table,
        modes: &args.modes,
        only_involving: None,
    };
    let cells = run_cells(
        &spec,
        &mut comps,
        &mut decomps,
        &pages,
        &sources,
        args.repro_dir.as_deref(),
    )?;
    let counts = Counts::of(&cells, pages.len());
    let verdict = counts.verdict(args.allow_skips);
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
        print!("{}", render_matrix(&cells));
        println!("\nvalidate: {}", counts.line());
    }
    verdict.map_err(|e| anyhow::anyhow!("validate: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
