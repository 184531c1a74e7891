//! Page sources for training and evaluation: a corpus on disk (one source
//! per workload, streamed file by file) or pages held by Python objects.
//!
//! Corpus files stream through `cannery_trainer::corpus::FileSource`, the
//! same source the `cannery train` CLI uses.

use std::path::{Path, PathBuf};

use cannery_capture::Corpus;
use cannery_trainer::pages::{PageSource, PageStream, SourceError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::buffer;
use crate::corpus::corpus_error;

/// One workload's page files as a replayable page stream (the trainer's,
/// shared with the CLI).
pub use cannery_trainer::corpus::FileSource;

/// Every page file under `path` (a corpus directory or one file).
fn files_of(path: &Path) -> PyResult<Vec<PathBuf>> {
    let corpus = Corpus::open(path).map_err(corpus_error)?;
    Ok(corpus.workloads.into_iter().flat_map(|w| w.files).collect())
}

/// The page source of a path: one page file, or every file of a corpus
/// directory (all workloads together).
pub fn source_of_path(path: &Path) -> PyResult<FileSource> {
    FileSource::new(files_of(path)?).map_err(corpus_error)
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
                    WorkloadArg::Files(files) => {
                        Source::Files(FileSource::new(files.clone()).map_err(corpus_error)?)
                    }
                    WorkloadArg::Pages(p) => Source::Memory(p.slices()),
                };
                Ok((name.clone(), s))
            })
            .collect()
    }
}
