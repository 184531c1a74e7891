//! Histogram files (`cannery stats` writes them): several read and merged
//! (`merge`, `train --histograms`), and one table trained from them (the
//! fleet workflow: `stats` on each machine, `merge`, then `train`).

use std::path::PathBuf;

use cannery_codec::Table;
use cannery_files::input::{read_text_limited, SMALL_FILE_LIMIT};
use cannery_trainer::histogram::{Histogram, HistogramError};
use cannery_trainer::train::{bits_under, fallback_table, table_from_histogram};
use cannery_trainer::TrainError;
use cannery_trainer::TrainOptions;

use crate::eval_corpus::merge_all;

/// Why histogram files could not be read, merged or trained from.
#[derive(Debug, thiserror::Error)]
pub enum HistogramFileError {
    /// A file could not be read.
    #[error(transparent)]
    Read(#[from] cannery_files::Error),
    /// A file is no histogram.
    #[error("{}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: HistogramError,
    },
    /// The histograms have different settings, or their counts overflow.
    #[error("cannot merge the histograms")]
    Merge(#[source] HistogramError),
    /// No file was given.
    #[error("no histogram given")]
    None,
    /// No table could be trained (and no fallback was asked for).
    #[error(transparent)]
    Train(#[from] TrainError),
}

/// Reads histogram files, each named by its path.
pub fn read_named(paths: &[PathBuf]) -> Result<Vec<(String, Histogram)>, HistogramFileError> {
    let mut hs = Vec::with_capacity(paths.len());
    for p in paths {
        let text = read_text_limited(p, SMALL_FILE_LIMIT, "histogram")?;
        let h = Histogram::from_json(&text).map_err(|source| HistogramFileError::Parse {
            path: p.clone(),
            source,
        })?;
        hs.push((p.display().to_string(), h));
    }
    Ok(hs)
}

/// Reads histogram files and merges them (every one with the same settings).
pub fn read_merged(paths: &[PathBuf]) -> Result<Histogram, HistogramFileError> {
    let hs = read_named(paths)?;
    merge_all(hs.iter().map(|(_, h)| h))
        .map_err(HistogramFileError::Merge)?
        .ok_or(HistogramFileError::None)
}

/// A table trained from merged histogram files, and how it codes them.
pub struct HistogramTable {
    /// The table (named `name`, its corpus the files joined by ` + `).
    pub table: Table,
    /// The merged histogram.
    pub histogram: Histogram,
    /// Bits per page the table spends on the histogram's own symbols.
    pub bits_per_page: f64,
}

/// Trains a table named `name` from the merged histograms of `paths`.
/// With `fallback`, a histogram too small to train writes the kernel-2024
/// table instead and `warn` says why.
pub fn train_from_files(
    paths: &[PathBuf],
    opts: &TrainOptions,
    name: &str,
    fallback: bool,
    created: &str,
    warn: &mut dyn FnMut(String),
) -> Result<HistogramTable, HistogramFileError> {
    let histogram = read_merged(paths)?;
    let mut table = match table_from_histogram(&histogram, opts, name) {
        Ok(t) => t,
        Err(e) if fallback => {
            warn(format!("{e}; writing the kernel-2024 table instead"));
            fallback_table(&e.to_string(), None)
        }
        Err(e) => return Err(e.into()),
    };
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    table.provenance.corpus = Some(names.join(" + "));
    table.provenance.created = Some(created.to_string());
    let bits = bits_under(&histogram.counts, &table) as f64 / histogram.pages.max(1) as f64;
    Ok(HistogramTable {
        table,
        histogram,
        bits_per_page: bits,
    })
}
