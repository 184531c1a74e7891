//! Which pages `cannery zram-kernel` writes: each workload's pages of one
//! part of the split `train` uses (held-out by default), at most so many,
//! with its dictionary and table file from a `train` output directory.

use std::path::{Path, PathBuf};

use cannery_lab::report::{dictionary_file_name, table_file_names};
use cannery_trainer::corpus::CorpusSource;
use cannery_trainer::pages::{select_part, Part};
use cannery_trainer::{Split, TrainError};

use super::ZramWorkload;

/// Why the workloads could not be chosen.
#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    /// Reading a workload's pages failed.
    #[error(transparent)]
    Pages(#[from] TrainError),
    /// A `train` output directory lacks a workload's dictionary.
    #[error(
        "no dictionary {} for workload {workload} (train with dictionaries: cannery train --corpus {corpus} -o {})",
        .dictionary.display(),
        .tables.display()
    )]
    NoDictionary {
        /// The file looked for.
        dictionary: PathBuf,
        /// The workload.
        workload: String,
        /// The corpus, as the user named it.
        corpus: String,
        /// The `train` output directory.
        tables: PathBuf,
    },
}

/// The workloads to measure and, in the same order, the name of each one's
/// table file in a `train` output.
pub struct Chosen {
    /// Workloads with pages of the part, in corpus order.
    pub workloads: Vec<ZramWorkload>,
    /// Their table file names (`NAME.table.json`).
    pub table_files: Vec<String>,
}

/// Each workload of `corpus` (named `corpus_name` as the user gave it) with
/// its `part` pages under `split`, at most `max_pages`, and its dictionary
/// from `tables` when given (an error if it is missing there). A workload
/// with no such pages is left out, and `empty` hears its name.
pub fn choose_workloads(
    corpus: &CorpusSource,
    corpus_name: &str,
    split: &Split,
    part: Option<Part>,
    max_pages: Option<usize>,
    tables: Option<&Path>,
    empty: &mut dyn FnMut(&str),
) -> Result<Chosen, ChooseError> {
    let names: Vec<String> = corpus.workloads.iter().map(|w| w.0.clone()).collect();
    let files = table_file_names(&names, 0);
    let mut chosen = Chosen {
        workloads: Vec::new(),
        table_files: Vec::new(),
    };
    for ((name, source), file) in corpus.workloads.iter().zip(&files) {
        let sel = select_part(source, split, part, max_pages)?;
        let dictionary = match tables {
            Some(dir) => {
                let d = dir.join(dictionary_file_name(file));
                if !d.exists() {
                    return Err(ChooseError::NoDictionary {
                        dictionary: d,
                        workload: name.clone(),
                        corpus: corpus_name.to_string(),
                        tables: dir.to_path_buf(),
                    });
                }
                Some(d)
            }
            None => None,
        };
        if sel.pages.is_empty() && sel.zero_pages == 0 {
            empty(name);
            continue;
        }
        chosen.table_files.push(file.clone());
        chosen.workloads.push(ZramWorkload {
            name: name.clone(),
            pages: sel.pages,
            zero_pages: sel.zero_pages,
            dictionary,
        });
    }
    Ok(chosen)
}
