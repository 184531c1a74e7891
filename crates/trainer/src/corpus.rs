//! Page files on disk (capture snapshots and raw `.pages` files) as a
//! [`PageSource`]: streamed file by file through the capture crate's
//! reader, never loaded whole. Shared by the CLI and the Python package.
//!
//! Zero and same-filled pages that snapshots counted instead of storing are
//! reported through [`PageSource::uncounted_same_filled`], in proportion to
//! the pages stored (the capture crate's
//! `PageCounts::unstored_same_filled`). [`CorpusSource`] is a whole corpus
//! so: names resolved and files grouped into workloads by
//! `cannery_capture::Corpus` (the one corpus layer), each workload a
//! [`FileSource`].

use std::path::{Path, PathBuf};

use cannery_capture::corpus::{open_pages, resolve, unstored_same_filled, Corpus};

use crate::pages::Workload;
use crate::pages::{PageSource, PageStream, SourceError};

/// Page files as one replayable page stream.
#[derive(Clone, Debug)]
pub struct FileSource {
    files: Vec<PathBuf>,
    uncounted: u64,
}

impl FileSource {
    /// A source over `files`; opens each once to read its header counts.
    pub fn new(files: Vec<PathBuf>) -> Result<FileSource, cannery_capture::Error> {
        let uncounted = unstored_same_filled(&files)?;
        Ok(FileSource { files, uncounted })
    }

    /// The files, in stream order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl PageSource for FileSource {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        let iter = self.files.clone().into_iter().flat_map(|f| {
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

/// A corpus as the trainer reads it: its name and one [`FileSource`] per
/// workload, in the corpus' order.
#[derive(Clone, Debug)]
pub struct CorpusSource {
    /// The corpus' name (its directory or file name, without `.pages`).
    pub name: String,
    /// Workload names and their pages.
    pub workloads: Vec<(String, FileSource)>,
}

impl CorpusSource {
    /// Opens the corpus `arg` names (a path, or a name under `corpora/` by
    /// `cannery_capture::corpus::resolve`'s one rule).
    pub fn open(arg: &Path) -> Result<CorpusSource, cannery_capture::Error> {
        let path = resolve(arg)?;
        let corpus = Corpus::open(&path)?;
        let name = path
            .file_name()
            .and_then(|s| s.to_str())
            .map(|s| s.trim_end_matches(".pages").to_string())
            .unwrap_or_else(|| arg.display().to_string());
        let workloads = corpus
            .workloads
            .into_iter()
            .map(|w| Ok((w.name, FileSource::new(w.files)?)))
            .collect::<Result<_, cannery_capture::Error>>()?;
        Ok(CorpusSource { name, workloads })
    }

    /// The workloads as `cannery_lab::fleet::train_corpus` and
    /// `cannery_lab::eval_corpus::eval_corpus` take them.
    pub fn workloads(&self) -> Vec<Workload<'_>> {
        self.workloads
            .iter()
            .map(|(name, source)| Workload {
                name: name.clone(),
                source,
            })
            .collect()
    }
}
