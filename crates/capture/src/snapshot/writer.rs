//! Writes a snapshot file: fixed header and metadata first (marked not
//! finalized), then page records through a zstd stream, then on
//! [`SnapshotWriter::finish`] an end record and the final counts patched into
//! the header. The file is an [`AtomicFile`]: it is written under a
//! temporary name and only `finish` puts it at its path, so a capture that
//! fails (or a writer dropped without `finish`) leaves nothing there and
//! keeps the file it would have replaced. [`SnapshotWriter::flush`] pushes
//! everything so far to disk, so even a process killed outright leaves its
//! temporary file ([`SnapshotWriter::partial_path`]) readable up to its last
//! flush.
//!
//! Record bytes are held in memory until they reach [`HOLD`]: a snapshot
//! that ends below it is one zstd frame of known size, whose window is no
//! larger than the snapshot (a reader then needs no 8 MiB window for it);
//! past it, or at a flush, they stream with the 8 MiB window.

#![forbid(unsafe_code)]

use super::{
    Metadata, PageCounts, SnapshotHeader, FIXED_LEN, TAG_END, TAG_PAGE, TAG_PROCESS, VERSION,
};
use crate::error::{Error, ErrorKind, Result};
use crate::maps::RegionKind;
use crate::PAGE_SIZE;
use cannery_files::output::{AtomicFile, Existing, Privacy};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Spare bytes after the metadata JSON so it can be rewritten at the end.
const META_SLACK: usize = 512;

/// Default zstd level.
pub const DEFAULT_LEVEL: i32 = 9;

/// Hashes the compressed bytes on their way to the file.
struct HashWriter {
    inner: BufWriter<AtomicFile>,
    hasher: sha2::Sha256,
}

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

type Enc = zstd::stream::write::Encoder<'static, HashWriter>;

/// Record bytes held before they stream (see the module's doc): no more
/// than zstd's own input buffer for the stream's 8 MiB window.
pub const HOLD: usize = 1 << 20;

/// Where record bytes go.
enum Sink {
    /// Held until [`HOLD`], a flush or the end.
    Held(HashWriter, Vec<u8>),
    Streaming(Enc),
}

impl Sink {
    fn file(&self) -> &AtomicFile {
        match self {
            Sink::Held(w, _) => w.inner.get_ref(),
            Sink::Streaming(enc) => enc.get_ref().inner.get_ref(),
        }
    }
}

/// Streams page records into a snapshot file.
pub struct SnapshotWriter {
    path: PathBuf,
    /// zstd level.
    level: i32,
    sink: Option<Sink>,
    header: SnapshotHeader,
    meta_len: u32,
    pages: u64,
}

impl std::fmt::Debug for SnapshotWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotWriter")
            .field("path", &self.path)
            .field("pages", &self.pages)
            .finish()
    }
}

/// A zstd encoder of the record stream at `level`, with a checksum.
fn encoder(w: HashWriter, level: i32) -> std::io::Result<Enc> {
    let mut enc = zstd::stream::write::Encoder::new(w, level)?;
    enc.include_checksum(true)?;
    Ok(enc)
}

/// The error of a writer whose stream could not start: its file is gone
/// (an [`AtomicFile`] dropped), so every later write fails with this.
fn stopped(path: &Path) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "{}: the snapshot writer stopped at an earlier write error",
            path.display()
        ),
    )
}

fn padded_meta(meta: &Metadata, len: Option<usize>) -> Option<Vec<u8>> {
    let mut json = serde_json::to_vec(meta).ok()?;
    let want = len.unwrap_or(json.len() + META_SLACK);
    if json.len() > want {
        return None;
    }
    json.resize(want, b' ');
    Some(json)
}

impl SnapshotWriter {
    /// Starts the snapshot `path` (an existing file is kept or replaced as
    /// `existing` says, at [`SnapshotWriter::finish`]) and writes the
    /// header. `level` is the zstd level (1..=22).
    pub fn create(
        path: &Path,
        meta: Metadata,
        level: i32,
        existing: Existing,
    ) -> Result<SnapshotWriter> {
        let io = |e| Error::io(path, "cannot write", e);
        let mut file = AtomicFile::create_with(path, existing, Privacy::Private)?;
        let header = SnapshotHeader {
            version: VERSION,
            finalized: false,
            page_size: PAGE_SIZE as u32,
            meta,
            ..SnapshotHeader::default()
        };
        let json = padded_meta(&header.meta, None).ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidInput,
                "snapshot metadata cannot be encoded",
            )
        })?;
        let meta_len = json.len() as u32;
        file.write_all(&super::sealed_fixed(&header, &json))
            .map_err(io)?;
        file.write_all(&json).map_err(io)?;
        let sink = HashWriter {
            inner: BufWriter::new(file),
            hasher: sha2::Digest::new(),
        };
        Ok(SnapshotWriter {
            path: path.to_path_buf(),
            level: level.clamp(1, 22),
            sink: Some(Sink::Held(sink, Vec::new())),
            header,
            meta_len,
            pages: 0,
        })
    }

    /// The streaming encoder, started (with the bytes held so far) if the
    /// bytes were still held.
    fn stream(&mut self) -> Result<&mut Enc> {
        match self.sink.take() {
            Some(Sink::Held(w, held)) => {
                let io = |e| Error::io(&self.path, "cannot write", e);
                let mut enc = encoder(w, self.level).map_err(io)?;
                // An 8 MiB window keeps the reader's memory bounded.
                enc.window_log(23).map_err(io)?;
                enc.write_all(&held).map_err(io)?;
                self.sink = Some(Sink::Streaming(enc));
            }
            other => self.sink = other,
        }
        match &mut self.sink {
            Some(Sink::Streaming(enc)) => Ok(enc),
            _ => Err(stopped(&self.path)),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if let Some(Sink::Held(_, held)) = &mut self.sink {
            if held.len() + bytes.len() < HOLD {
                held.extend_from_slice(bytes);
                return Ok(());
            }
        }
        let r = self.stream()?.write_all(bytes);
        r.map_err(|e| Error::io(&self.path, "cannot write", e))
    }

    /// Mark that following pages come from process `pid` (`comm`) in sample
    /// `sample`.
    pub fn begin_process(&mut self, sample: u32, pid: u32, comm: &str) -> Result<()> {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let name = &comm.as_bytes()[..comm.len().min(255)];
        let mut rec = Vec::with_capacity(18 + name.len());
        rec.push(TAG_PROCESS);
        rec.extend_from_slice(&sample.to_le_bytes());
        rec.extend_from_slice(&now_ms.to_le_bytes());
        rec.extend_from_slice(&pid.to_le_bytes());
        rec.push(name.len() as u8);
        rec.extend_from_slice(name);
        self.write(&rec)
    }

    /// Append one page record. `data` must be exactly 4096 bytes.
    pub fn write_page(&mut self, region: RegionKind, data: &[u8]) -> Result<()> {
        if data.len() != PAGE_SIZE {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("page of {} bytes; pages are {PAGE_SIZE} bytes", data.len()),
            ));
        }
        self.write(&[TAG_PAGE, region.code()])?;
        self.write(data)?;
        self.pages += 1;
        Ok(())
    }

    /// Page records written so far.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Push everything written so far to the file.
    pub fn flush(&mut self) -> Result<()> {
        let r = self.stream()?.flush();
        r.map_err(|e| Error::io(&self.path, "cannot write", e))
    }

    /// Set the counts recorded at finish (`stored` is always the number of
    /// page records actually written).
    pub fn set_counts(&mut self, counts: PageCounts) {
        self.header.counts = counts;
    }

    /// Records the hot and cold page counts of a cold-page capture (its
    /// metadata must have been created with `cold` set).
    pub fn set_hot_cold(&mut self, hot: u64, cold: u64) {
        if let Some(c) = &mut self.header.meta.cold {
            c.hot = hot;
            c.cold = cold;
        }
    }

    /// Records a reclaim capture's cold-page counts (`cold` metadata).
    pub fn set_cold(&mut self, cold: super::ColdPages) {
        self.header.meta.cold = Some(cold);
    }

    /// Set the number of samples taken and pause figures.
    pub fn set_samples(&mut self, samples: u64, pause_max_ns: u64, pause_total_ns: u64) {
        self.header.samples = samples;
        self.header.pause_max_ns = pause_max_ns;
        self.header.pause_total_ns = pause_total_ns;
    }

    /// Record how the capture ended.
    pub fn set_end_reason(&mut self, reason: &str) {
        self.header.meta.end_reason = reason.chars().take(200).collect();
    }

    /// Where the file is written until [`SnapshotWriter::finish`].
    pub fn partial_path(&self) -> Option<&Path> {
        Some(self.sink.as_ref()?.file().partial_path())
    }

    /// Write the end record, close the stream, patch the header and put the
    /// file at its path.
    pub fn finish(mut self) -> Result<SnapshotHeader> {
        let pages = self.pages;
        let mut end = vec![TAG_END];
        end.extend_from_slice(&pages.to_le_bytes());
        self.write(&end)?;
        let path = self.path.clone();
        let io = |e| Error::io(&path, "cannot write", e);
        let Some(sink) = self.sink.take() else {
            return Err(stopped(&path));
        };
        let sink = match sink {
            // One frame of known size: zstd fits its window to the bytes.
            Sink::Held(w, held) => {
                let mut enc = encoder(w, self.level).map_err(io)?;
                enc.set_pledged_src_size(Some(held.len() as u64))
                    .map_err(io)?;
                enc.write_all(&held).map_err(io)?;
                enc.finish().map_err(io)?
            }
            Sink::Streaming(enc) => enc.finish().map_err(io)?,
        };
        let digest = sha2::Digest::finalize(sink.hasher);
        self.header.stream_checksum = u32::from_le_bytes(digest[..4].try_into().expect("4 bytes"));
        let mut file = sink.inner.into_inner().map_err(|e| io(e.into_error()))?;
        let end_pos = file.stream_position().map_err(io)?;
        let data_start = (FIXED_LEN + self.meta_len as usize) as u64;
        self.header.stream_len = end_pos - data_start;
        self.header.counts.stored = pages;
        self.header.finalized = true;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let json = match padded_meta(&self.header.meta, Some(self.meta_len as usize)) {
            Some(json) => json,
            None => {
                // The end reason made it too long: keep the metadata as first written.
                self.header.meta.end_reason.clear();
                padded_meta(&self.header.meta, Some(self.meta_len as usize)).unwrap_or_default()
            }
        };
        file.write_all(&super::sealed_fixed(&self.header, &json))
            .map_err(io)?;
        file.write_all(&json).map_err(io)?;
        file.commit()?;
        Ok(self.header.clone())
    }
}
