//! Corpora as page sources for the trainer: resolves `--corpus NAME|PATH`,
//! opens it with the capture crate's corpus reader (snapshots and raw
//! `.pages` files, one sub-directory per workload, or a single file) and
//! streams each workload's pages, file by file, without loading them.
//!
//! Streaming and the accounting of same-filled pages are
//! `cannery_trainer::corpus::FileSource`. Live
//! processes (`stats --pid`) are handled in `mod.rs`; this module only reads files.

use cannery_trainer::report::Workload;
use std::path::{Path, PathBuf};

use cannery_capture::corpus::Corpus;
use cannery_trainer::corpus::FileSource;
use cannery_trainer::pages::{PageSource, PageStream, SourceError};

/// One workload's files as a replayable page stream.
pub struct WorkloadSource {
    /// Workload name (the directory or file stem).
    pub name: String,
    /// Its page files.
    pub files: FileSource,
}

impl PageSource for WorkloadSource {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        self.files.stream()
    }

    fn uncounted_same_filled(&self) -> u64 {
        self.files.uncounted_same_filled()
    }
}

/// Where `--corpus NAME|PATH` points, by page-capture's one rule
/// ([`cannery_capture::corpus::resolve`]).
pub fn resolve(arg: &str) -> anyhow::Result<PathBuf> {
    Ok(cannery_capture::corpus::resolve(Path::new(arg))?)
}

/// Opens a corpus: its workloads, sorted by name.
/// The trainer's view of `sources`: one [`Workload`] per source.
pub fn workloads(sources: &[WorkloadSource]) -> Vec<Workload<'_>> {
    sources
        .iter()
        .map(|s| Workload {
            name: s.name.clone(),
            source: s,
        })
        .collect()
}

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
        let files = FileSource::new(w.files).map_err(|e| anyhow::anyhow!("{e}"))?;
        out.push(WorkloadSource {
            name: w.name,
            files,
        });
    }
    Ok((name, out))
}
