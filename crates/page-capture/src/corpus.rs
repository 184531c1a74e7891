//! Reading corpora: a directory of workloads, each holding snapshot files
//! and/or raw `.pages` files, or a single such file. Pages are streamed one
//! at a time (never a whole file in memory). Also summarizes a corpus for
//! `cannery corpus info`. Writing is [`crate::snapshot::writer`].

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use crate::filter::same_filled;
use crate::maps::RegionKind;
use crate::snapshot::reader::SnapshotReader;
use crate::snapshot::{is_snapshot, PageCounts, SnapshotHeader};
use crate::PAGE_SIZE;
use serde::Serialize;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// One 4 KiB page and the kind of region it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Exactly 4096 bytes.
    pub data: Vec<u8>,
    /// Where it came from ([`RegionKind::Unknown`] for raw files).
    pub region: RegionKind,
}

/// The file extension of raw page files.
pub const RAW_EXTENSION: &str = "pages";

/// Streams the pages of one snapshot or raw `.pages` file.
#[derive(Debug)]
pub struct PageReader {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Snapshot(Box<SnapshotReader>),
    Raw(Box<RawReader>),
}

#[derive(Debug)]
struct RawReader {
    path: PathBuf,
    file: BufReader<File>,
    header: SnapshotHeader,
    index: u64,
    total: u64,
}

/// True for a path whose extension is `.pages`.
pub fn is_raw_pages(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some(RAW_EXTENSION)
}

/// Open one snapshot (recognised by its magic) or raw `.pages` file (by
/// extension; its length must be a multiple of 4096).
pub fn open_pages(path: &Path) -> Result<PageReader> {
    if is_snapshot(path) {
        return Ok(PageReader {
            inner: Inner::Snapshot(Box::new(SnapshotReader::open(path)?)),
        });
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "cannot open", e))?;
    if !is_raw_pages(path) {
        let mut head = Vec::new();
        File::open(path)
            .and_then(|f| f.take(8).read_to_end(&mut head))
            .map_err(|e| Error::io(path, "cannot read", e))?;
        if head.len() < 8 && crate::snapshot::MAGIC.starts_with(&head) {
            return Err(Error::at(
                ErrorKind::Truncated,
                path,
                meta.len(),
                "file too short to be a snapshot",
            ));
        }
        return Err(Error::at(
            ErrorKind::InvalidInput,
            path,
            0,
            "neither a cannery snapshot (bad magic) nor a raw .pages file",
        ));
    }
    let len = meta.len();
    if len % PAGE_SIZE as u64 != 0 {
        let whole = len - len % PAGE_SIZE as u64;
        return Err(Error::at(
            ErrorKind::Truncated,
            path,
            whole,
            format!("raw page file length {len} is not a multiple of {PAGE_SIZE}; partial page"),
        ));
    }
    let file = File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
    let total = len / PAGE_SIZE as u64;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("pages")
        .to_string();
    let mut header = SnapshotHeader {
        version: crate::snapshot::VERSION,
        finalized: true,
        page_size: PAGE_SIZE as u32,
        raw: true,
        ..SnapshotHeader::default()
    };
    header.counts = PageCounts {
        scanned: total,
        stored: total,
        ..PageCounts::default()
    };
    header.meta.label = stem;
    header.meta.sampling.rate = 1.0;
    Ok(PageReader {
        inner: Inner::Raw(Box::new(RawReader {
            path: path.to_path_buf(),
            file: BufReader::with_capacity(64 * 1024, file),
            header,
            index: 0,
            total,
        })),
    })
}

impl PageReader {
    /// The snapshot header; for raw files a synthesized one (label = file
    /// stem, `stored` = number of pages, other counts 0, `raw` = true).
    pub fn header(&self) -> &SnapshotHeader {
        match &self.inner {
            Inner::Snapshot(r) => r.header(),
            Inner::Raw(r) => &r.header,
        }
    }

    /// For snapshots, the process the last page came from.
    pub fn process(&self) -> Option<&crate::snapshot::reader::ProcessInfo> {
        match &self.inner {
            Inner::Snapshot(r) => r.process(),
            Inner::Raw(_) => None,
        }
    }
}

impl Iterator for PageReader {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Result<Page>> {
        match &mut self.inner {
            Inner::Snapshot(r) => r.next(),
            Inner::Raw(r) => {
                if r.index >= r.total {
                    return None;
                }
                let mut data = vec![0u8; PAGE_SIZE];
                let at = r.index * PAGE_SIZE as u64;
                r.index += 1;
                if let Err(e) = r.file.read_exact(&mut data) {
                    r.index = r.total;
                    let kind = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        ErrorKind::Truncated
                    } else {
                        ErrorKind::Io
                    };
                    return Some(Err(Error::at(
                        kind,
                        &r.path,
                        at,
                        format!("cannot read page: {e}"),
                    )));
                }
                Some(Ok(Page {
                    data,
                    region: RegionKind::Unknown,
                }))
            }
        }
    }
}

/// A corpus on disk.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The directory or file it was opened from.
    pub root: PathBuf,
    /// Its workloads, sorted by name.
    pub workloads: Vec<Workload>,
}

/// One workload: a name and its page files (sorted).
#[derive(Debug, Clone)]
pub struct Workload {
    /// The directory name (or file stem).
    pub name: String,
    /// Snapshot and raw `.pages` files.
    pub files: Vec<PathBuf>,
}

/// The corpora directory searched when a bare name is given.
pub const CORPORA_DIR: &str = "corpora";

impl Corpus {
    /// Open a corpus. A directory: each sub-directory holding page files is
    /// a workload, and page files directly inside form one workload named
    /// after the directory; other files (READMEs, scripts) are ignored. A
    /// file: one workload named after the file stem. If `path` does not exist
    /// and is a bare name (one component), `corpora/NAME` under the current
    /// directory is tried, so `--corpus fleet-snapshots` works from the
    /// repository root.
    pub fn open(path: &Path) -> Result<Corpus> {
        let mut root = path.to_path_buf();
        if !root.exists() && path.components().count() == 1 {
            let alt = Path::new(CORPORA_DIR).join(path);
            if alt.exists() {
                root = alt;
            }
        }
        let meta =
            std::fs::metadata(&root).map_err(|e| Error::io(&root, "cannot open corpus", e))?;
        let mut workloads = Vec::new();
        if meta.is_file() {
            // Validate early so a bad file is reported at open.
            open_pages(&root)?;
            let name = root
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("pages")
                .to_string();
            workloads.push(Workload {
                name,
                files: vec![root.clone()],
            });
        } else {
            let loose = page_files(&root)?;
            if !loose.is_empty() {
                let name = root
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or("corpus")
                    .to_string();
                workloads.push(Workload { name, files: loose });
            }
            let mut dirs: Vec<PathBuf> = read_dir_sorted(&root)?
                .into_iter()
                .filter(|p| p.is_dir())
                .collect();
            dirs.sort();
            for d in dirs {
                let files = page_files(&d)?;
                if files.is_empty() {
                    continue;
                }
                let name = d
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or("workload")
                    .to_string();
                workloads.push(Workload { name, files });
            }
            if workloads.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{}: no snapshot or .pages files found (expected one sub-directory per workload)",
                        root.display()
                    ),
                ));
            }
        }
        Ok(Corpus { root, workloads })
    }
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "cannot list", e))?;
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    Ok(v)
}

fn page_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(read_dir_sorted(dir)?
        .into_iter()
        .filter(|p| p.is_file() && (is_raw_pages(p) || is_snapshot(p)))
        .collect())
}

/// Streams every page of every file of a workload, file by file.
#[derive(Debug)]
pub struct PageIter {
    files: std::vec::IntoIter<PathBuf>,
    current: Option<PageReader>,
}

impl Workload {
    /// Stream all pages of all files in order.
    pub fn pages(&self) -> Result<PageIter> {
        Ok(PageIter {
            files: self.files.clone().into_iter(),
            current: None,
        })
    }
}

impl Iterator for PageIter {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Result<Page>> {
        loop {
            if let Some(r) = &mut self.current {
                match r.next() {
                    Some(item) => {
                        if item.is_err() {
                            self.current = None;
                            self.files = Vec::new().into_iter();
                        }
                        return Some(item);
                    }
                    None => self.current = None,
                }
            }
            let path = self.files.next()?;
            match open_pages(&path) {
                Ok(r) => self.current = Some(r),
                Err(e) => {
                    self.files = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}

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
        counts.zero = zero;
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
