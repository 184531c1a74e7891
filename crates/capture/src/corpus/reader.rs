//! Reading one page file: a snapshot (recognised by its magic) or a raw
//! `.pages` file (by extension), streamed one page at a time, never a whole
//! file in memory. Does not know about directories or workloads
//! ([`super::layout`]) and does not summarize ([`super::summary`]).

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use crate::maps::RegionKind;
use crate::snapshot::reader::SnapshotReader;
use crate::snapshot::{is_snapshot, PageCounts, SnapshotHeader};
use crate::PAGE_SIZE;
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
    let file = crate::input::open_input(path, "cannot open")?;
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
