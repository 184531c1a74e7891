//! Page sources for training and evaluation: a corpus on disk (one source
//! per workload, streamed file by file) or pages held by Python objects.
//!
//! This is the same glue the `cannery train` CLI uses (`src/cli/train/
//! source.rs`): the capture crate reads the files, the trainer's
//! `PageSource` streams them, and zero / same-filled pages that a snapshot
//! counted instead of storing are reported scaled by the share of the other
//! pages that was stored (capture samples and deduplicates what it stores
//! but counts every zero page), so they stay in proportion to the pages read.

use std::path::{Path, PathBuf};

use cannery_capture::corpus::open_pages as capture_open;
use cannery_capture::Corpus;
use cannery_trainer::pages::{PageSource, PageStream, SourceError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::buffer;
use crate::corpus::corpus_error;

/// One workload's page files as a replayable page stream.
pub struct FileSource {
    files: Vec<PathBuf>,
    uncounted: u64,
}

impl FileSource {
    /// A source over `files`, with their scaled capture-time zero and
    /// same-filled page counts.
    pub fn new(files: Vec<PathBuf>) -> PyResult<FileSource> {
        let mut uncounted = 0;
        for f in &files {
            let r = capture_open(f).map_err(corpus_error)?;
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
        Ok(FileSource { files, uncounted })
    }
}

impl PageSource for FileSource {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        let files = self.files.clone();
        let iter = files.into_iter().flat_map(|f| {
            let r: Box<dyn Iterator<Item = Result<Vec<u8>, SourceError>> + Send> =
                match capture_open(&f) {
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

/// Every page file under `path` (a corpus directory or one file).
fn files_of(path: &Path) -> PyResult<Vec<PathBuf>> {
    let corpus = Corpus::open(path).map_err(corpus_error)?;
    Ok(corpus.workloads.into_iter().flat_map(|w| w.files).collect())
}

/// The page source of a path: one page file, or every file of a corpus
/// directory (all workloads together).
pub fn source_of_path(path: &Path) -> PyResult<FileSource> {
    FileSource::new(files_of(path)?)
}

/// Pages of one workload: files, or pages in memory.
pub enum Source<'a> {
    /// Page files.
    Files(FileSource),
    /// Pages in memory (borrowed from Python `bytes`).
    Memory(Vec<&'a [u8]>),
}

impl PageSource for Source<'_> {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        match self {
            Source::Files(f) => f.stream(),
            Source::Memory(v) => v.stream(),
        }
    }
    fn uncounted_same_filled(&self) -> u64 {
        match self {
            Source::Files(f) => f.uncounted_same_filled(),
            Source::Memory(_) => 0,
        }
    }
}

/// One workload of a `corpus` argument, before its pages are borrowed.
pub enum WorkloadArg<'py> {
    /// Page files.
    Files(Vec<PathBuf>),
    /// Pages held by Python objects.
    Pages(buffer::Pages<'py>),
}

/// A `corpus` argument: its name (for provenance) and workloads.
pub struct CorpusArg<'py> {
    /// Corpus name recorded in table provenance.
    pub name: String,
    /// Workload name and pages, in order.
    pub workloads: Vec<(String, WorkloadArg<'py>)>,
}

fn as_path(obj: &Bound<'_, PyAny>) -> Option<PathBuf> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__").unwrap_or(false) {
        obj.extract::<PathBuf>().ok()
    } else {
        None
    }
}

/// Reads a `corpus` argument: a corpus directory or page file (path; a bare
/// name is also looked up under `corpora/`), or a dict of workload name to
/// a path, a list of paths, or pages (2-D array, buffer of whole pages,
/// iterable of pages).
pub fn corpus_arg<'py>(obj: &Bound<'py, PyAny>) -> PyResult<CorpusArg<'py>> {
    if let Some(path) = as_path(obj) {
        let corpus = Corpus::open(&path).map_err(corpus_error)?;
        let name = corpus
            .root
            .file_name()
            .and_then(|s| s.to_str())
            .map(|s| s.trim_end_matches(".pages").to_string())
            .unwrap_or_else(|| path.display().to_string());
        return Ok(CorpusArg {
            name,
            workloads: corpus
                .workloads
                .into_iter()
                .map(|w| (w.name, WorkloadArg::Files(w.files)))
                .collect(),
        });
    }
    let Ok(dict) = obj.downcast::<PyDict>() else {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "corpus must be a path (a corpus directory or a page file) or a dict of \
             workload name -> path, list of paths, or pages",
        ));
    };
    let mut workloads = Vec::new();
    for (k, v) in dict.iter() {
        let name: String = k.extract()?;
        let what = format!("corpus[{name:?}]");
        let w = if let Some(p) = as_path(&v) {
            WorkloadArg::Files(files_of(&p)?)
        } else if v.is_instance_of::<PyList>() && v.len()? > 0 && as_path(&v.get_item(0)?).is_some()
        {
            let mut files = Vec::new();
            for item in v.try_iter()? {
                let item = item?;
                let p = as_path(&item).ok_or_else(|| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "{what} mixes paths and other objects"
                    ))
                })?;
                files.extend(files_of(&p)?);
            }
            WorkloadArg::Files(files)
        } else {
            WorkloadArg::Pages(buffer::pages(&v, &what)?)
        };
        workloads.push((name, w));
    }
    Ok(CorpusArg {
        name: "pages".into(),
        workloads,
    })
}

impl CorpusArg<'_> {
    /// The workloads as page sources (borrowing the pages held here).
    pub fn sources(&self) -> PyResult<Vec<(String, Source<'_>)>> {
        self.workloads
            .iter()
            .map(|(name, w)| {
                let s = match w {
                    WorkloadArg::Files(files) => Source::Files(FileSource::new(files.clone())?),
                    WorkloadArg::Pages(p) => Source::Memory(p.slices()),
                };
                Ok((name.clone(), s))
            })
            .collect()
    }
}
