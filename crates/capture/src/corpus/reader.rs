//! Reading one page file: a snapshot (recognised by its magic) or a raw
//! `.pages` file (by extension), streamed one page at a time, never a whole
//! file in memory. Does not know about directories or workloads
//! ([`super::layout`]) and does not summarize ([`super::summary`]).
//!
//! A sparse `.pages` file's holes are zero pages that were never written:
//! they are counted as zero pages (as a capture counts them, without
//! storing them) and skipped without being read, found with
//! `SEEK_DATA`/`SEEK_HOLE`, so a 100 GiB file of holes takes no time.

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use crate::maps::RegionKind;
use crate::snapshot::reader::SnapshotReader;
use crate::snapshot::{is_snapshot, PageCounts, SnapshotHeader};
use crate::PAGE_SIZE;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
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
    /// The page after the data segment being read (see [`next_data`]).
    segment_end: u64,
    /// Progress steps reported so far ([`set_read_progress`]).
    reported: u64,
}

/// Pages between two progress reports of a long raw read (1 GiB).
pub const PROGRESS_EVERY: u64 = 1 << 18;

/// Called as a raw file's read passes each [`PROGRESS_EVERY`] pages
/// (holes included): the file, the page reached, its total.
static PROGRESS: std::sync::OnceLock<fn(&Path, u64, u64)> = std::sync::OnceLock::new();

/// Installs the hook that hears how far long raw reads got (the CLI prints
/// it on stderr); the first call wins.
pub fn set_read_progress(hook: fn(&Path, u64, u64)) {
    let _ = PROGRESS.set(hook);
}

/// The next stretch of pages at or after page `from` of `file` (of `total`
/// pages) that holds data, as `(first, end)` page indices; the pages before
/// `first` lie wholly in a hole. `None` when only holes follow. A file
/// system that cannot tell holes gives the whole rest.
fn next_data(file: &File, from: u64, total: u64) -> Option<(u64, u64)> {
    let page = PAGE_SIZE as u64;
    let whole = Some((from, total));
    if from >= total {
        return None;
    }
    let start = match crate::sys::seek_data(file, from * page) {
        Ok(Some(d)) => d / page,
        Ok(None) => return None,
        Err(_) => return whole,
    };
    let end = match crate::sys::seek_hole(file, start * page) {
        Ok(Some(h)) => h.div_ceil(page),
        _ => return whole,
    };
    (start < total).then_some((start.max(from), end.clamp(start + 1, total)))
}

/// The pages of `file` (of `total`) that hold data; the rest are holes.
fn data_pages(file: &File, total: u64) -> u64 {
    let (mut at, mut n) = (0, 0);
    while let Some((first, end)) = next_data(file, at, total) {
        n += end - first;
        at = end;
    }
    n
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
    let file = cannery_files::input::open_input(path, "cannot open")?;
    let total = len / PAGE_SIZE as u64;
    let stored = data_pages(&file, total);
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
        stored,
        zero: total - stored,
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
            segment_end: 0,
            reported: 0,
        })),
    })
}

impl PageReader {
    /// The snapshot header; for raw files a synthesized one (label = file
    /// stem, `scanned` = number of pages, `zero` = pages in holes of a
    /// sparse file, `stored` = the others, other counts 0, `raw` = true).
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
                if r.index >= r.segment_end {
                    // A new data segment: skip the hole before it.
                    let (first, end) = next_data(r.file.get_ref(), r.index, r.total)?;
                    r.index = first;
                    r.segment_end = end;
                    let at = first * PAGE_SIZE as u64;
                    if let Err(e) = r.file.seek(std::io::SeekFrom::Start(at)) {
                        r.index = r.total;
                        r.segment_end = r.total;
                        return Some(Err(Error::at(
                            ErrorKind::Io,
                            &r.path,
                            at,
                            format!("cannot seek: {e}"),
                        )));
                    }
                }
                if r.index >= r.total {
                    return None;
                }
                if r.index / PROGRESS_EVERY > r.reported {
                    r.reported = r.index / PROGRESS_EVERY;
                    if let Some(hook) = PROGRESS.get() {
                        hook(&r.path, r.index, r.total);
                    }
                }
                let mut data = vec![0u8; PAGE_SIZE];
                let at = r.index * PAGE_SIZE as u64;
                r.index += 1;
                if let Err(e) = r.file.read_exact(&mut data) {
                    r.index = r.total;
                    r.segment_end = r.total;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, SeekFrom, Write};

    #[test]
    fn holes_of_a_sparse_file_are_zero_pages_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.pages");
        let mut f = File::create(&p).unwrap();
        // 64 GiB, with data in pages 1 and 2^20 (and the last one).
        let total = 16u64 << 20;
        f.set_len(total * PAGE_SIZE as u64).unwrap();
        for (i, b) in [(1u64, 1u8), (1 << 20, 2), (total - 1, 3)] {
            f.seek(SeekFrom::Start(i * PAGE_SIZE as u64)).unwrap();
            f.write_all(&[b; PAGE_SIZE]).unwrap();
        }
        drop(f);
        static HEARD: std::sync::Mutex<Vec<(PathBuf, u64, u64)>> =
            std::sync::Mutex::new(Vec::new());
        fn hear(p: &Path, done: u64, total: u64) {
            HEARD.lock().unwrap().push((p.to_path_buf(), done, total));
        }
        set_read_progress(hear);
        let start = std::time::Instant::now();
        let r = open_pages(&p).unwrap();
        let c = r.header().counts;
        // (Every Linux file system of a test directory reports holes.)
        assert_eq!((c.scanned, c.stored, c.zero), (total, 3, total - 3));
        let pages: Vec<u8> = r.map(|p| p.unwrap().data[0]).collect();
        assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
        assert_eq!(pages, [1, 2, 3]);
        // Progress was heard as the read passed page 2^20 and the last one.
        let heard: Vec<_> = HEARD
            .lock()
            .unwrap()
            .iter()
            .filter(|(f, _, _)| *f == p)
            .map(|&(_, done, t)| (done, t))
            .collect();
        assert_eq!(heard, [(1 << 20, total), (total - 1, total)]);
    }
}
