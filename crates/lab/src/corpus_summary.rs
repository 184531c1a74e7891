//! Summaries of files, workloads and corpora for `cannery corpus info`:
//! header counts for snapshots, a scan for zero and same-filled pages in raw
//! files. Does not open directories itself (`cannery_capture::corpus`) or decode
//! records (`cannery_capture::corpus`).

#![forbid(unsafe_code)]

use crate::tabular::{Align, Grid, Style};
use crate::units::{mib, size};
use cannery_capture::corpus::open_pages;
use cannery_capture::corpus::Corpus;
use cannery_capture::error::{Error, Result};
use cannery_capture::filter::same_filled;
use cannery_capture::snapshot::PageCounts;
use cannery_capture::PAGE_SIZE;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Summary of one file, for `corpus info`.
#[derive(Debug, Clone, Serialize)]
pub struct FileSummary {
    /// The file.
    pub path: PathBuf,
    /// True for raw `.pages` files.
    pub raw: bool,
    /// Label recorded in the snapshot (file stem for raw files).
    pub label: String,
    /// Command name recorded.
    pub command: String,
    /// Capture time (RFC 3339), empty for raw files.
    pub capture_time: String,
    /// Kernel release of the capturing machine.
    pub kernel_release: String,
    /// Whether the writer finished cleanly.
    pub finalized: bool,
    /// How the capture ended.
    pub end_reason: String,
    /// Samples taken.
    pub samples: u64,
    /// Page accounting. For raw files, zero and same-filled pages are
    /// counted by scanning and are also included in `stored`.
    pub counts: PageCounts,
    /// Stored pages that are zero-filled (raw files only; snapshots never
    /// store them).
    pub stored_zero: u64,
    /// Longest freeze pause, milliseconds.
    pub pause_max_ms: f64,
    /// Total freeze pause, milliseconds.
    pub pause_total_ms: f64,
    /// Bytes on disk.
    pub bytes_on_disk: u64,
    /// Stored pages × 4096.
    pub bytes_uncompressed: u64,
    /// Set for a cold-page capture: the method and the hot/cold counts.
    pub cold: Option<cannery_capture::snapshot::ColdPages>,
}

/// Summary of one workload.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadSummary {
    /// Workload name.
    pub name: String,
    /// Stored pages over all files.
    pub pages: u64,
    /// Zero-filled pages (counted at capture, or found in raw files).
    pub zero_pages: u64,
    /// Same-value-filled (non-zero) pages.
    pub same_filled_pages: u64,
    /// Duplicate pages left out by dedup.
    pub duplicate_pages: u64,
    /// Unreadable pages.
    pub unreadable_pages: u64,
    /// Pages scanned.
    pub scanned_pages: u64,
    /// Samples.
    pub samples: u64,
    /// Longest freeze pause over the files, milliseconds.
    pub pause_max_ms: f64,
    /// Bytes on disk.
    pub bytes_on_disk: u64,
    /// Stored pages × 4096.
    pub bytes_uncompressed: u64,
    /// Per file.
    pub files: Vec<FileSummary>,
}

/// Summary of a corpus.
#[derive(Debug, Clone, Serialize)]
pub struct CorpusSummary {
    /// Where it was opened from.
    pub root: PathBuf,
    /// Stored pages, all workloads.
    pub pages: u64,
    /// Zero pages, all workloads.
    pub zero_pages: u64,
    /// Same-filled pages, all workloads.
    pub same_filled_pages: u64,
    /// Bytes on disk.
    pub bytes_on_disk: u64,
    /// Stored pages × 4096.
    pub bytes_uncompressed: u64,
    /// Per workload.
    pub workloads: Vec<WorkloadSummary>,
}

impl CorpusSummary {
    /// The summary as text: a table with one row per workload (disk size
    /// in MiB, longest pause in ms), the totals, then the cold-page
    /// captures.
    pub fn render_text(&self) -> String {
        let mut g = Grid::new(&[
            ("workload", Align::Left),
            ("files", Align::Right),
            ("samples", Align::Right),
            ("pages", Align::Right),
            ("zero", Align::Right),
            ("same", Align::Right),
            ("dup", Align::Right),
            ("disk MiB", Align::Right),
            ("pause ms", Align::Right),
        ]);
        let mut cold_lines = String::new();
        for w in &self.workloads {
            for f in &w.files {
                if let Some(c) = f
                    .cold
                    .as_ref()
                    .filter(|c| c.method == cannery_capture::cold::METHOD)
                {
                    cold_lines += &format!(
                        "{}: cold pages only (the kernel's reclaim, {})\n",
                        f.path.display(),
                        c.describe_reclaim()
                    );
                } else if let Some(c) = &f.cold {
                    cold_lines += &format!(
                        "{}: cold pages only ({}, untouched for {} ms): {} hot pages left out, {} cold\n",
                        f.path.display(),
                        c.method,
                        c.after_ms,
                        c.hot,
                        c.cold
                    );
                }
            }
            g.row(vec![
                w.name.clone(),
                w.files.len().to_string(),
                w.samples.to_string(),
                w.pages.to_string(),
                w.zero_pages.to_string(),
                w.same_filled_pages.to_string(),
                w.duplicate_pages.to_string(),
                mib(w.bytes_on_disk),
                format!("{:.2}", w.pause_max_ms),
            ]);
        }
        format!(
            "corpus {}\n{}total: {} workloads, {} pages ({} of pages), {} zero pages, {} same-filled \
             pages, {} on disk\n{cold_lines}",
            self.root.display(),
            g.render(Style::Text),
            self.workloads.len(),
            self.pages,
            size(self.bytes_uncompressed),
            self.zero_pages,
            self.same_filled_pages,
            size(self.bytes_on_disk)
        )
    }
}

/// Summarize one file. Snapshots are summarized from their header (and
/// their records checked by streaming through them); raw files are scanned
/// to count zero and same-filled pages.
pub fn summarize_file(path: &Path) -> Result<FileSummary> {
    let mut reader = open_pages(path)?;
    let h = reader.header().clone();
    let mut stored = 0u64;
    let mut zero = 0u64;
    let mut same = 0u64;
    for page in reader.by_ref() {
        let page = page?;
        stored += 1;
        match same_filled(&page.data) {
            Some(0) => zero += 1,
            Some(_) => same += 1,
            None => {}
        }
    }
    let mut counts = h.counts;
    let mut stored_zero = 0;
    if h.raw {
        // Pages in holes of a sparse file (counted at open) and stored
        // zero pages alike.
        counts.zero = h.counts.zero + zero;
        counts.same_filled = same;
        stored_zero = zero;
    }
    counts.stored = stored;
    let bytes_on_disk = std::fs::metadata(path)
        .map_err(|e| Error::io(path, "cannot stat", e))?
        .len();
    Ok(FileSummary {
        path: path.to_path_buf(),
        raw: h.raw,
        label: h.meta.label.clone(),
        command: h.meta.command.clone(),
        capture_time: h.meta.capture_time.clone(),
        kernel_release: h.meta.kernel_release.clone(),
        finalized: h.finalized,
        end_reason: h.meta.end_reason.clone(),
        samples: h.samples,
        counts,
        stored_zero,
        pause_max_ms: h.pause_max_ns as f64 / 1e6,
        pause_total_ms: h.pause_total_ns as f64 / 1e6,
        bytes_on_disk,
        bytes_uncompressed: stored * PAGE_SIZE as u64,
        cold: h.meta.cold.clone(),
    })
}

/// Summarize a corpus (directory or file).
pub fn summarize(path: &Path) -> Result<CorpusSummary> {
    let corpus = Corpus::open(path)?;
    let mut out = CorpusSummary {
        root: corpus.root.clone(),
        pages: 0,
        zero_pages: 0,
        same_filled_pages: 0,
        bytes_on_disk: 0,
        bytes_uncompressed: 0,
        workloads: Vec::new(),
    };
    for w in &corpus.workloads {
        let mut ws = WorkloadSummary {
            name: w.name.clone(),
            pages: 0,
            zero_pages: 0,
            same_filled_pages: 0,
            duplicate_pages: 0,
            unreadable_pages: 0,
            scanned_pages: 0,
            samples: 0,
            pause_max_ms: 0.0,
            bytes_on_disk: 0,
            bytes_uncompressed: 0,
            files: Vec::new(),
        };
        for f in &w.files {
            let s = summarize_file(f)?;
            ws.pages += s.counts.stored;
            ws.zero_pages += s.counts.zero;
            ws.same_filled_pages += s.counts.same_filled;
            ws.duplicate_pages += s.counts.duplicate;
            ws.unreadable_pages += s.counts.unreadable;
            ws.scanned_pages += s.counts.scanned;
            ws.samples += s.samples;
            ws.pause_max_ms = ws.pause_max_ms.max(s.pause_max_ms);
            ws.bytes_on_disk += s.bytes_on_disk;
            ws.bytes_uncompressed += s.bytes_uncompressed;
            ws.files.push(s);
        }
        out.pages += ws.pages;
        out.zero_pages += ws.zero_pages;
        out.same_filled_pages += ws.same_filled_pages;
        out.bytes_on_disk += ws.bytes_on_disk;
        out.bytes_uncompressed += ws.bytes_uncompressed;
        out.workloads.push(ws);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tabular::cells;

    #[test]
    fn one_row_per_workload_in_one_unit_per_column() {
        let w = |name: &str, disk: u64, pause: f64| WorkloadSummary {
            name: name.into(),
            pages: 300,
            zero_pages: 20,
            same_filled_pages: 5,
            duplicate_pages: 0,
            unreadable_pages: 0,
            scanned_pages: 325,
            samples: 3,
            pause_max_ms: pause,
            bytes_on_disk: disk,
            bytes_uncompressed: 300 * 4096,
            files: Vec::new(),
        };
        let s = CorpusSummary {
            root: "c".into(),
            pages: 600,
            zero_pages: 40,
            same_filled_pages: 10,
            bytes_on_disk: 1_572_864 + 2048,
            bytes_uncompressed: 600 * 4096,
            workloads: vec![w("redis", 1_572_864, 12.5), w("tiny", 2048, 0.25)],
        };
        let text = s.render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            cells(lines[1], Style::Text),
            [
                "workload", "files", "samples", "pages", "zero", "same", "dup", "disk MiB",
                "pause ms"
            ]
        );
        assert_eq!(cells(lines[2], Style::Text)[7..], ["1.50", "12.50"]);
        assert_eq!(cells(lines[3], Style::Text)[7..], ["0.00", "0.25"]);
        assert_eq!(
            lines[4],
            "total: 2 workloads, 600 pages (2.3 MiB of pages), 40 zero pages, 10 same-filled pages, 1.5 MiB on disk"
        );
    }
}
