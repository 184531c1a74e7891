//! Page files on disk (capture snapshots and raw `.pages` files) as a
//! [`PageSource`]: streamed file by file through the capture crate's
//! reader, never loaded whole. Shared by the CLI and the Python package.
//!
//! Zero and same-filled pages that snapshots counted instead of storing are
//! reported through [`PageSource::uncounted_same_filled`], in proportion to
//! the pages stored (the capture crate's
//! `PageCounts::unstored_same_filled`). This module does not
//! resolve corpus names or group files into workloads (`cannery_capture::Corpus`
//! does that).

use std::path::PathBuf;

use cannery_capture::corpus::{open_pages, unstored_same_filled};

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
