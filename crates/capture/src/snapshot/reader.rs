//! Streams the pages of a snapshot file: validates the header, then decodes
//! the zstd record stream one record at a time, so memory stays bounded (one
//! page plus the decoder's window: at most 8 MiB for files this crate writes, files
//! asking for more than 16 MiB are refused) however large the file. Truncation and
//! corruption are reported with the path and the byte offset in the file.

#![forbid(unsafe_code)]

use super::{SnapshotHeader, FIXED_LEN, TAG_END, TAG_PAGE, TAG_PROCESS};
use crate::corpus::Page;
use crate::error::{Error, ErrorKind, Result};
use crate::maps::RegionKind;
use crate::PAGE_SIZE;
use sha2::{Digest, Sha256};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Counts (and hashes) the bytes the decoder consumes from the file.
struct Counting<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
    hasher: Arc<std::sync::Mutex<Sha256>>,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        if let Ok(mut h) = self.hasher.lock() {
            h.update(&buf[..n]);
        }
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.consumed.fetch_add(amt as u64, Ordering::Relaxed);
        // The bytes being consumed are still in the buffer.
        if let (Ok(buf), Ok(mut h)) = (self.inner.fill_buf(), self.hasher.lock()) {
            h.update(&buf[..amt.min(buf.len())]);
        }
        self.inner.consume(amt)
    }
}

type Source = Counting<BufReader<io::Take<Box<dyn Read + Send>>>>;

/// The process the current pages came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Sample index (0-based).
    pub sample: u32,
    /// Unix time of the sample in milliseconds.
    pub time_ms: u64,
    /// Process id at capture time.
    pub pid: u32,
    /// Process name.
    pub comm: String,
}

/// A streaming snapshot reader; an iterator of pages.
pub struct SnapshotReader {
    path: PathBuf,
    header: SnapshotHeader,
    dec: zstd::stream::read::Decoder<'static, Source>,
    consumed: Arc<AtomicU64>,
    hasher: Arc<std::sync::Mutex<Sha256>>,
    data_start: u64,
    pages: u64,
    process: Option<ProcessInfo>,
    done: bool,
}

impl std::fmt::Debug for SnapshotReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotReader")
            .field("path", &self.path)
            .field("pages", &self.pages)
            .finish()
    }
}

impl SnapshotReader {
    /// Open `path` and validate its header.
    pub fn open(path: &Path) -> Result<SnapshotReader> {
        let file = cannery_files::input::open_input(path, "cannot open")?;
        let file_len = file
            .metadata()
            .map_err(|e| Error::io(path, "cannot stat", e))?
            .len();
        SnapshotReader::from_reader(path, file, file_len)
    }

    /// Read a snapshot of `file_len` bytes from `file` (positioned at its
    /// start) and validate its header; errors name `path`. [`open`] is this
    /// on the opened file; the fuzz target reads its input from memory
    /// through it.
    ///
    /// [`open`]: SnapshotReader::open
    pub fn from_reader(
        path: &Path,
        file: impl Read + Send + 'static,
        file_len: u64,
    ) -> Result<SnapshotReader> {
        let mut file: Box<dyn Read + Send> = Box::new(file);
        let mut fixed = [0u8; FIXED_LEN];
        read_exact_at_start(&mut file, &mut fixed, path, 0, file_len)?;
        let (mut header, meta_len) = SnapshotHeader::decode_fixed(&fixed, path)?;
        let mut meta = vec![0u8; meta_len as usize];
        read_exact_at_start(&mut file, &mut meta, path, FIXED_LEN as u64, file_len)?;
        if super::header_checksum(&fixed, &meta)[..] != fixed[120..128] {
            return Err(Error::at(
                ErrorKind::Corrupt,
                path,
                120,
                "header checksum mismatch (header or metadata damaged)",
            ));
        }
        header.meta = serde_json::from_slice(&meta).map_err(|e| {
            Error::at(
                ErrorKind::Corrupt,
                path,
                FIXED_LEN as u64 + e.column().saturating_sub(1) as u64,
                format!("bad metadata: {e}"),
            )
        })?;
        let data_start = FIXED_LEN as u64 + meta_len as u64;
        header.counts.check(path)?;
        let limit = if header.finalized {
            let want = data_start.checked_add(header.stream_len).ok_or_else(|| {
                Error::at(
                    ErrorKind::Corrupt,
                    path,
                    0,
                    format!(
                        "header field stream_len {} is impossibly large",
                        header.stream_len
                    ),
                )
            })?;
            if file_len < want {
                return Err(Error::at(
                    ErrorKind::Truncated,
                    path,
                    file_len,
                    format!(
                        "snapshot truncated: file ends at {file_len} bytes, header says {want}"
                    ),
                ));
            }
            if file_len > want {
                return Err(Error::at(
                    ErrorKind::Corrupt,
                    path,
                    want,
                    format!(
                        "{} unexpected bytes after the record stream",
                        file_len - want
                    ),
                ));
            }
            header.stream_len
        } else {
            file_len - data_start
        };
        let consumed = Arc::new(AtomicU64::new(0));
        let hasher = Arc::new(std::sync::Mutex::new(Sha256::new()));
        let src = Counting {
            inner: BufReader::with_capacity(64 * 1024, file.take(limit)),
            consumed: consumed.clone(),
            hasher: hasher.clone(),
        };
        let mut dec = zstd::stream::read::Decoder::with_buffer(src)
            .map_err(|e| Error::io(path, "cannot start decoding", e))?;
        // Bound the decoder's window (and so its memory) to 16 MiB; writers
        // of this crate use 8 MiB.
        dec.window_log_max(24)
            .map_err(|e| Error::io(path, "cannot start decoding", e))?;
        Ok(SnapshotReader {
            path: path.to_path_buf(),
            header,
            dec,
            consumed,
            hasher,
            data_start,
            pages: 0,
            process: None,
            done: false,
        })
    }

    /// The header (counts are final only if `finalized`).
    pub fn header(&self) -> &SnapshotHeader {
        &self.header
    }

    /// The process the most recently returned page came from.
    pub fn process(&self) -> Option<&ProcessInfo> {
        self.process.as_ref()
    }

    fn offset(&self) -> u64 {
        self.data_start + self.consumed.load(Ordering::Relaxed)
    }

    fn fail(&mut self, e: io::Error, what: &str) -> Error {
        self.done = true;
        let off = self.offset();
        let msg = e.to_string();
        if e.kind() == io::ErrorKind::UnexpectedEof || msg.contains("incomplete frame") {
            let why = if self.header.finalized {
                "snapshot truncated"
            } else {
                "snapshot was not finalized (capture killed?) and its records end"
            };
            Error::at(
                ErrorKind::Truncated,
                &self.path,
                off,
                format!("{why} in {what}"),
            )
        } else {
            Error::at(
                ErrorKind::Corrupt,
                &self.path,
                off,
                format!("corrupt record stream in {what}: {msg}"),
            )
        }
    }

    /// Read exactly `buf.len()` bytes, or report a clean end of stream.
    fn read_exact_or_eof(&mut self, buf: &mut [u8]) -> io::Result<bool> {
        let mut got = 0;
        while got < buf.len() {
            match self.dec.read(&mut buf[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    fn next_page(&mut self) -> Result<Option<Page>> {
        loop {
            let mut tag = [0u8; 1];
            match self.read_exact_or_eof(&mut tag) {
                Ok(true) => {}
                Ok(false) => {
                    let e = io::Error::from(io::ErrorKind::UnexpectedEof);
                    return Err(self.fail(e, "the record stream (no end record)"));
                }
                Err(e) => return Err(self.fail(e, "a record tag")),
            }
            match tag[0] {
                TAG_PAGE => {
                    let mut region = [0u8; 1];
                    if let Err(e) = self.dec.read_exact(&mut region) {
                        return Err(self.fail(e, "a page record"));
                    }
                    let Some(region) = RegionKind::from_code(region[0]) else {
                        self.done = true;
                        return Err(Error::at(
                            ErrorKind::Corrupt,
                            &self.path,
                            self.offset(),
                            format!(
                                "unknown region code {} in page record {}",
                                region[0], self.pages
                            ),
                        ));
                    };
                    let mut data = vec![0u8; PAGE_SIZE];
                    if let Err(e) = self.dec.read_exact(&mut data) {
                        return Err(self.fail(e, "a page record"));
                    }
                    self.pages += 1;
                    return Ok(Some(Page { data, region }));
                }
                TAG_PROCESS => {
                    let mut fixed = [0u8; 17];
                    if let Err(e) = self.dec.read_exact(&mut fixed) {
                        return Err(self.fail(e, "a process record"));
                    }
                    let mut name = vec![0u8; fixed[16] as usize];
                    if let Err(e) = self.dec.read_exact(&mut name) {
                        return Err(self.fail(e, "a process record"));
                    }
                    self.process = Some(ProcessInfo {
                        sample: u32::from_le_bytes(fixed[0..4].try_into().expect("4")),
                        time_ms: u64::from_le_bytes(fixed[4..12].try_into().expect("8")),
                        pid: u32::from_le_bytes(fixed[12..16].try_into().expect("4")),
                        comm: String::from_utf8_lossy(&name).into_owned(),
                    });
                }
                TAG_END => {
                    let mut n = [0u8; 8];
                    if let Err(e) = self.dec.read_exact(&mut n) {
                        return Err(self.fail(e, "the end record"));
                    }
                    let n = u64::from_le_bytes(n);
                    self.done = true;
                    let stored = self.header.counts.stored;
                    let wrong = if n != self.pages {
                        Some(format!(
                            "end record counts {n} pages but {} were read",
                            self.pages
                        ))
                    } else if self.header.finalized && n != stored {
                        Some(format!(
                            "{n} pages were read (as the end record says) but the header's \
                             \"stored\" count is {stored}"
                        ))
                    } else {
                        None
                    };
                    if let Some(message) = wrong {
                        return Err(Error::at(
                            ErrorKind::Corrupt,
                            &self.path,
                            self.offset(),
                            message,
                        ));
                    }
                    return self.check_stream_end().map(|()| None);
                }
                other => {
                    self.done = true;
                    return Err(Error::at(
                        ErrorKind::Corrupt,
                        &self.path,
                        self.offset(),
                        format!("unknown record tag {other:#04x} after {} pages", self.pages),
                    ));
                }
            }
        }
    }
}

impl SnapshotReader {
    /// After the end record: nothing may follow, and (for finalized files)
    /// the compressed stream must match its checksum.
    fn check_stream_end(&mut self) -> Result<()> {
        let mut extra = [0u8; 1];
        match self.read_exact_or_eof(&mut extra) {
            Ok(false) => {}
            Ok(true) => {
                return Err(Error::at(
                    ErrorKind::Corrupt,
                    &self.path,
                    self.offset(),
                    "records continue after the end record",
                ))
            }
            Err(e) => return Err(self.fail(e, "the end of the record stream")),
        }
        if self.header.finalized {
            let digest = match self.hasher.lock() {
                Ok(h) => h.clone().finalize(),
                Err(_) => return Ok(()),
            };
            let sum = u32::from_le_bytes(digest[..4].try_into().expect("4 bytes"));
            let consumed = self.consumed.load(Ordering::Relaxed);
            if sum != self.header.stream_checksum || consumed != self.header.stream_len {
                return Err(Error::at(
                    ErrorKind::Corrupt,
                    &self.path,
                    self.data_start,
                    format!(
                        "record stream checksum mismatch (damage somewhere in bytes {}..{})",
                        self.data_start,
                        self.data_start + self.header.stream_len
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn read_exact_at_start(
    file: &mut dyn Read,
    buf: &mut [u8],
    path: &Path,
    at: u64,
    file_len: u64,
) -> Result<()> {
    if file_len < at + buf.len() as u64 {
        if file_len == 0 {
            return Err(Error::at(
                ErrorKind::Truncated,
                path,
                0,
                "empty file, not a snapshot",
            ));
        }
        let mut magic = [0u8; 8];
        let n = if at == 0 {
            file.read(&mut magic).unwrap_or(0)
        } else {
            8
        };
        if at > 0 {
            // The magic was already checked.
        } else if n < 8 && !super::MAGIC.starts_with(&magic[..n]) || n == 8 && magic != super::MAGIC
        {
            return Err(Error::at(
                ErrorKind::InvalidInput,
                path,
                0,
                "not a cannery snapshot (bad magic)",
            ));
        }
        return Err(Error::at(
            ErrorKind::Truncated,
            path,
            file_len,
            "snapshot truncated inside its header",
        ));
    }
    file.read_exact(buf)
        .map_err(|e| Error::io(path, "cannot read", e))
}

impl Iterator for SnapshotReader {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Result<Page>> {
        if self.done {
            return None;
        }
        self.next_page().transpose()
    }
}
