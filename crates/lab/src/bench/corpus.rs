//! What `cannery bench` measures on: each workload of a corpus read and
//! split (held-out pages spread over the capture, the rest for training),
//! and a line about the machine it ran on.

use std::path::{Path, PathBuf};

use cannery_capture::Corpus;
use cannery_trainer::pages::Split;

use super::BenchWorkload;

/// Why a corpus could not be read for a bench.
#[derive(Debug, thiserror::Error)]
pub enum BenchCorpusError {
    /// The corpus could not be opened.
    #[error("corpus {}", corpus.display())]
    Open {
        /// The corpus.
        corpus: PathBuf,
        /// Why.
        #[source]
        source: cannery_capture::Error,
    },
    /// A workload's pages could not be read.
    #[error("workload {workload}")]
    Workload {
        /// The workload.
        workload: String,
        /// Why.
        #[source]
        source: cannery_capture::Error,
    },
    /// No workload had enough pages.
    #[error("corpus {}: no workload has pages to measure", corpus.display())]
    NoPages {
        /// The corpus.
        corpus: PathBuf,
    },
}

/// Every workload of the corpus at `path` with pages to measure (at most
/// `max_pages` held out by `split`); `skipped` hears of each that has too
/// few pages to train and measure.
pub fn read_workloads(
    path: &Path,
    split: Split,
    max_pages: usize,
    skipped: &mut dyn FnMut(&str),
) -> Result<Vec<BenchWorkload>, BenchCorpusError> {
    let corpus = Corpus::open(path).map_err(|source| BenchCorpusError::Open {
        corpus: path.into(),
        source,
    })?;
    let mut workloads = Vec::new();
    for w in &corpus.workloads {
        let in_workload = |source| BenchCorpusError::Workload {
            workload: w.name.clone(),
            source,
        };
        let pages = w.pages().map_err(in_workload)?;
        let unstored = w.unstored_same_filled().map_err(in_workload)?;
        let data = pages.map(|p| p.map(|p| p.data));
        match BenchWorkload::read(&w.name, data, unstored, split, max_pages).map_err(in_workload)? {
            Some(b) => workloads.push(b),
            None => skipped(&w.name),
        }
    }
    if workloads.is_empty() {
        return Err(BenchCorpusError::NoPages {
            corpus: path.into(),
        });
    }
    Ok(workloads)
}

/// The machine, for a report's header: CPU model, cores, kernel release
/// and the load average now.
pub fn machine_line() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    // The cores this process may run on (an affinity mask counts).
    let cores = match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => "1 core".to_string(),
        n => format!("{n} cores"),
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!(
        "{cpu}, {cores} for this process, Linux {}, load average at the end {}",
        kernel.trim(),
        load.join(" ")
    )
}
