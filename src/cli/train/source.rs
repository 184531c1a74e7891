//! Corpora as page sources for the trainer: resolves `--corpus NAME|PATH`,
//! opens it with the capture crate's corpus reader (snapshots and raw
//! `.pages` files, one sub-directory per workload, or a single file) and
//! streams each workload's pages, file by file, without loading them.
//!
//! Zero and same-filled pages that snapshots counted instead of storing
//! are reported through [`PageSource::uncounted_same_filled`], scaled by
//! the share of the other pages that was stored (capture samples and
//! deduplicates the pages it stores, but counts every zero page), so they
//! stay in proportion to the pages actually read. Live
//! processes (`stats --pid`) are handled in `mod.rs`; this module only reads files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use cannery_capture::corpus::{open_pages, Corpus};
use cannery_trainer::pages::{PageSource, PageStream, SourceError};

/// One workload's files as a replayable page stream.
pub struct WorkloadSource {
    /// Workload name (the directory or file stem).
    pub name: String,
    /// Its page files.
    pub files: Vec<PathBuf>,
    uncounted: u64,
}

impl PageSource for WorkloadSource {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        let files = self.files.clone();
        let iter = files.into_iter().flat_map(|f| {
            let r: Box<dyn Iterator<Item = Result<Vec<u8>, SourceError>> + Send> =
                match open_pages(&f) {
                    Ok(reader) => Box::new(reader.map(|p| p.map(|p| p.data).map_err(Into::into))),
                    Err(e) => Box::new(std::iter::once(Err(e.into()))),
                };
            r
        });
        Ok(Box::new(iter))
    }

    fn uncounted_same_filled(&self) -> u64 {
        self.uncounted
    }
}

/// Where `--corpus NAME|PATH` points: the path itself if it exists, else
/// `corpora/NAME` under the current directory, then under the repository
/// root (found by walking up to a directory holding `corpora/`).
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    let p = Path::new(arg);
    if p.exists() {
        return Ok(p.to_path_buf());
    }
    if p.components().count() == 1 {
        let mut dir = std::env::current_dir().context("cannot read the current directory")?;
        loop {
            let cand = dir.join("corpora").join(arg);
            if cand.exists() {
                return Ok(cand);
            }
            if !dir.pop() {
                break;
            }
        }
        bail!(
            "corpus {arg:?} not found: no such path, and no corpora/{arg} in the current \
             directory or any parent"
        );
    }
    bail!("corpus {} not found", p.display());
}

/// Opens a corpus: its workloads, sorted by name.
pub fn open(arg: &str) -> anyhow::Result<(String, Vec<WorkloadSource>)> {
    let path = resolve(arg)?;
    let corpus = Corpus::open(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let name = path
        .file_name()
        .and_then(|s| s.to_str())
        .map(|s| s.trim_end_matches(".pages").to_string())
        .unwrap_or_else(|| arg.to_string());
    let mut out = Vec::new();
    for w in corpus.workloads {
        let mut uncounted = 0;
        for f in &w.files {
            let r = open_pages(f).map_err(|e| anyhow::anyhow!("{e}"))?;
            let h = r.header();
            if !h.raw {
                let c = &h.counts;
                let candidates = c.stored + c.sampled_out + c.duplicate + c.redacted;
                if candidates > 0 {
                    let share = c.stored as f64 / candidates as f64;
                    uncounted += ((c.zero + c.same_filled) as f64 * share).round() as u64;
                }
            }
        }
        out.push(WorkloadSource {
            name: w.name,
            files: w.files,
            uncounted,
        });
    }
    Ok((name, out))
}
