//! Which pages `cannery zswap-kernel` pushes through zswap: each workload
//! of a corpus, its first pages (at most so many), with its table from a
//! `train` output directory when one is given.

use std::path::{Path, PathBuf};

use cannery_capture::corpus::Corpus;
use cannery_codec::constants::PAGE_SIZE;
use cannery_lab::report::table_file_names;
use cannery_lab::table_file::{self, TableFileError};

use super::SessionWorkload;

/// Why the workloads could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadsError {
    /// The corpus or a workload's pages could not be read.
    #[error("cannot read corpus {}", corpus.display())]
    Corpus {
        /// The corpus.
        corpus: PathBuf,
        /// Why.
        #[source]
        source: cannery_capture::Error,
    },
    /// A workload's table could not be loaded.
    #[error(transparent)]
    Table(#[from] TableFileError),
    /// No workload has a page.
    #[error("the corpus {} has no pages", corpus.display())]
    NoPages {
        /// The corpus.
        corpus: PathBuf,
    },
}

/// Every workload of the corpus at `path` that has pages: its first
/// `max_pages` pages (all without a limit), and its table from the `train`
/// output `tables` if given.
pub fn read_workloads(
    path: &Path,
    max_pages: Option<usize>,
    tables: Option<&Path>,
) -> Result<Vec<SessionWorkload>, WorkloadsError> {
    let corpus_error = |source| WorkloadsError::Corpus {
        corpus: path.into(),
        source,
    };
    let corpus = Corpus::open(path).map_err(corpus_error)?;
    let names: Vec<String> = corpus.workloads.iter().map(|w| w.name.clone()).collect();
    let files = table_file_names(&names, 0);
    let mut workloads = Vec::new();
    for (w, file) in corpus.workloads.iter().zip(&files) {
        let mut pages = Vec::new();
        for page in w.pages().map_err(corpus_error)? {
            if max_pages.is_some_and(|m| pages.len() >= m * PAGE_SIZE) {
                break;
            }
            pages.extend_from_slice(&page.map_err(corpus_error)?.data);
        }
        let table = tables
            .map(|dir| table_file::load(&dir.join(file).display().to_string()))
            .transpose()?;
        if !pages.is_empty() {
            workloads.push(SessionWorkload {
                name: w.name.clone(),
                pages,
                table,
            });
        }
    }
    if workloads.is_empty() {
        return Err(WorkloadsError::NoPages {
            corpus: path.into(),
        });
    }
    Ok(workloads)
}
