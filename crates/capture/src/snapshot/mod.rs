//! Step 6: the snapshot file format (version 1), its header and counts.
//! The layout is documented in the crate docs ([`crate`]); this module holds
//! the constants and the fixed header codec. Writing is in [`writer`],
//! streaming reading in [`reader`].

#![forbid(unsafe_code)]

pub mod reader;
pub mod writer;

use crate::error::{Error, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The first eight bytes of every snapshot.
pub const MAGIC: [u8; 8] = *b"CNRYSNAP";
/// The format version this crate writes and the newest it reads.
pub const VERSION: u16 = 1;
/// Length of the fixed binary header, before the metadata JSON.
pub const FIXED_LEN: usize = 128;
/// Largest metadata block a reader accepts.
pub const MAX_META_LEN: u32 = 1 << 20;
/// The file name extension used for snapshots (files are recognised by
/// their magic, not their name).
pub const EXTENSION: &str = "cansnap";

/// Flag bit: the writer finished cleanly and the counts are final.
pub const FLAG_FINALIZED: u16 = 1;

/// Record tag: one page (`u8` region code, then 4096 bytes).
pub const TAG_PAGE: u8 = 1;
/// Record tag: pages that follow come from this process in this sample
/// (`u32` sample index, `u64` unix milliseconds, `u32` pid, `u8` length,
/// that many bytes of the process name).
pub const TAG_PROCESS: u8 = 2;
/// Record tag: end of records (`u64` number of page records).
pub const TAG_END: u8 = 0x7f;

/// How many pages went where. Every scanned page lands in exactly one of
/// the other counters: `scanned = unreadable + zero + same_filled +
/// redacted + duplicate + sampled_out + stored`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCounts {
    /// Resident private pages found by the page map (before any filter).
    pub scanned: u64,
    /// Pages written as records.
    pub stored: u64,
    /// All-zero pages (counted, not stored).
    pub zero: u64,
    /// Pages of one repeated non-zero 64-bit value (counted, not stored).
    pub same_filled: u64,
    /// Pages identical to an earlier one (with dedup on).
    pub duplicate: u64,
    /// Resident pages that could not be read.
    pub unreadable: u64,
    /// Pages left out by `--sample` / `--max-pages`.
    pub sampled_out: u64,
    /// Pages chosen for storing but dropped because they looked like they
    /// held secrets (`redact_secrets`); the check runs after sampling.
    pub redacted: u64,
}

impl PageCounts {
    /// The most pages one count may hold: 2^52 pages of 4 KiB are all of a
    /// 64-bit address space; more is a damaged file, whose counts would
    /// otherwise wrap around in sums.
    pub const MAX_PAGES: u64 = 1 << 52;

    /// Fails, naming the field, if a count read from `path` is impossible
    /// (over [`PageCounts::MAX_PAGES`]).
    pub fn check(&self, path: &std::path::Path) -> crate::Result<()> {
        let fields = [
            ("scanned", self.scanned),
            ("stored", self.stored),
            ("zero", self.zero),
            ("same_filled", self.same_filled),
            ("duplicate", self.duplicate),
            ("unreadable", self.unreadable),
            ("sampled_out", self.sampled_out),
            ("redacted", self.redacted),
        ];
        match fields.iter().find(|(_, n)| *n > Self::MAX_PAGES) {
            Some((name, n)) => Err(crate::Error::at(
                crate::ErrorKind::Corrupt,
                path,
                0,
                format!("header count {name} = {n} is more pages than an address space holds"),
            )),
            None => Ok(()),
        }
    }

    /// Add another set of counts (saturating: counts checked by
    /// [`PageCounts::check`] never reach the limit).
    pub fn add(&mut self, o: &PageCounts) {
        self.scanned = self.scanned.saturating_add(o.scanned);
        self.stored = self.stored.saturating_add(o.stored);
        self.zero = self.zero.saturating_add(o.zero);
        self.same_filled = self.same_filled.saturating_add(o.same_filled);
        self.duplicate = self.duplicate.saturating_add(o.duplicate);
        self.unreadable = self.unreadable.saturating_add(o.unreadable);
        self.sampled_out = self.sampled_out.saturating_add(o.sampled_out);
        self.redacted = self.redacted.saturating_add(o.redacted);
    }

    /// Zero and same-filled pages this capture counted instead of storing,
    /// scaled by the share of the other candidate pages it stored (sampling,
    /// deduplication and redaction thin the stored pages but every zero page
    /// is counted), so they stay in proportion to the pages in the file.
    /// The effective ratio attributes them to measured pages
    /// (`cannery_lab::figures`).
    pub fn unstored_same_filled(&self) -> f64 {
        let candidates = self.stored + self.sampled_out + self.duplicate + self.redacted;
        if candidates == 0 {
            return 0.0;
        }
        (self.zero + self.same_filled) as f64 * self.stored as f64 / candidates as f64
    }
}

/// Sampling parameters recorded in the header.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SamplingParams {
    /// Probability each candidate page is kept (1.0 = all).
    pub rate: f64,
    /// Cap on stored pages for the whole file, if any.
    pub max_pages: Option<u64>,
    /// Seed of the SplitMix64 generator.
    pub seed: u64,
    /// Whether identical pages were deduplicated.
    pub dedup: bool,
}

/// Free-form metadata, stored as a JSON object after the fixed header.
/// Unknown fields are ignored on reading, missing ones default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// Workload label (`--label`).
    pub label: String,
    /// The command name (program base name, or the target's `comm`).
    pub command: String,
    /// Capture start, seconds since the Unix epoch.
    pub capture_time_unix: u64,
    /// Capture start, RFC 3339 UTC.
    pub capture_time: String,
    /// `uname -r` of the capturing machine.
    pub kernel_release: String,
    /// Version of the writing tool.
    pub tool_version: String,
    /// Sampling parameters.
    pub sampling: SamplingParams,
    /// Samples requested (`--count`).
    pub count: u64,
    /// Interval between samples in milliseconds.
    pub interval_ms: u64,
    /// Whether copy-on-write pages of private file mappings were included.
    pub include_file_private: bool,
    /// Whether descendants of the workload were captured too.
    pub include_children: bool,
    /// Whether the target was stopped during each sample.
    pub freeze: bool,
    /// The stated maximum pause per process with `freeze`, milliseconds.
    pub max_pause_ms: u64,
    /// Whether secret-looking pages were dropped.
    pub redact_secrets: bool,
    /// How the capture ended (e.g. "completed", "workload exited", "interrupted").
    pub end_reason: String,
    /// Set when only cold pages were captured (`--cold-after`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdPages>,
}

/// How a cold-page capture chose its pages, and what it found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ColdPages {
    /// How accesses were detected (`page_idle`: the kernel's idle bitmap).
    pub method: String,
    /// How long pages had to stay untouched, milliseconds.
    pub after_ms: u64,
    /// Resident pages touched during the wait (not captured), all samples.
    pub hot: u64,
    /// Resident pages left untouched (the ones captured from), all samples.
    pub cold: u64,
    /// `reclaim`: the memory cgroup interface used (`v1` or `v2`).
    pub cgroup: String,
    /// `reclaim`: the amount asked for (`50%`, `256M`), of the workload's
    /// anonymous memory.
    pub amount: String,
    /// `reclaim`: the workload's pages the kernel's reclaim swapped out
    /// during the steps, all cycles.
    pub reclaimed_pages: u64,
    /// `reclaim`: of those, the pages read (each read brings a page back
    /// in: this is also the count of pages read back).
    pub captured_pages: u64,
    /// `reclaim`: pages already swapped out before a step (another
    /// reclaimer, such as a DAMON scheme, took them), not captured.
    pub swapped_before: u64,
    /// `reclaim`: the workload's pages still resident after the steps.
    pub resident_after: u64,
    /// `reclaim`: the kernel's LRU (`classic` or `mglru`).
    pub lru: String,
    /// `reclaim`: pages zswap stored during the steps (the machine's
    /// `Zswapped` growth in `/proc/meminfo`, in pages; other processes
    /// count too).
    pub zswap_stored: u64,
    /// `reclaim`: pages written to swap devices during the steps (the
    /// machine's `pswpout` growth in `/proc/vmstat`).
    pub swap_written: u64,
    /// `reclaim`: where the last step stopped and why.
    pub stopped: String,
}

impl ColdPages {
    /// A reclaim capture's counts as one line (`corpus info`, `capture`).
    pub fn describe_reclaim(&self) -> String {
        format!(
            "cgroup {}, {} of the anonymous memory, {} LRU: {} pages reclaimed, {} captured \
             (read back in), {} swapped before the step, {} resident after; {} stored by zswap, \
             {} written to swap (machine-wide); {}",
            self.cgroup,
            self.amount,
            self.lru,
            self.reclaimed_pages,
            self.captured_pages,
            self.swapped_before,
            self.resident_after,
            self.zswap_stored,
            self.swap_written,
            self.stopped
        )
    }
}

/// Everything before the records: fixed fields plus metadata.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotHeader {
    /// Format version of the file.
    pub version: u16,
    /// The writer finished; counts are final.
    pub finalized: bool,
    /// Page size in bytes (always 4096).
    pub page_size: u32,
    /// Page accounting.
    pub counts: PageCounts,
    /// Samples taken.
    pub samples: u64,
    /// Longest pause of a frozen process, nanoseconds (0 without freeze).
    pub pause_max_ns: u64,
    /// Sum of all pauses, nanoseconds.
    pub pause_total_ns: u64,
    /// Length of the zstd record stream in bytes (final only).
    pub stream_len: u64,
    /// First 4 bytes (little-endian) of SHA-256 over the compressed record
    /// stream (final only).
    pub stream_checksum: u32,
    /// Metadata.
    pub meta: Metadata,
    /// True when synthesized for a raw `.pages` file.
    pub raw: bool,
}

impl SnapshotHeader {
    pub(crate) fn encode_fixed(&self, meta_len: u32) -> [u8; FIXED_LEN] {
        let mut b = [0u8; FIXED_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.version.to_le_bytes());
        let flags = if self.finalized { FLAG_FINALIZED } else { 0 };
        b[10..12].copy_from_slice(&flags.to_le_bytes());
        b[12..16].copy_from_slice(&self.page_size.to_le_bytes());
        b[16..20].copy_from_slice(&meta_len.to_le_bytes());
        b[20..24].copy_from_slice(&self.stream_checksum.to_le_bytes());
        let c = &self.counts;
        let words = [
            c.scanned,
            c.stored,
            c.zero,
            c.same_filled,
            c.duplicate,
            c.unreadable,
            c.sampled_out,
            c.redacted,
            self.samples,
            self.pause_max_ns,
            self.pause_total_ns,
            self.stream_len,
        ];
        for (i, w) in words.iter().enumerate() {
            b[24 + i * 8..32 + i * 8].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// Decode the fixed part; returns the header (metadata empty) and the
    /// metadata length.
    pub(crate) fn decode_fixed(b: &[u8; FIXED_LEN], path: &Path) -> Result<(SnapshotHeader, u32)> {
        if b[0..8] != MAGIC {
            return Err(Error::at(
                ErrorKind::InvalidInput,
                path,
                0,
                "not a cannery snapshot (bad magic)",
            ));
        }
        let u16at = |o: usize| u16::from_le_bytes([b[o], b[o + 1]]);
        let u32at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let u64at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let version = u16at(8);
        if version == 0 || version > VERSION {
            return Err(Error::at(
                ErrorKind::UnsupportedVersion,
                path,
                8,
                format!("snapshot format version {version} is not supported (this build reads 1..={VERSION})"),
            ));
        }
        let page_size = u32at(12);
        if page_size as usize != crate::PAGE_SIZE {
            return Err(Error::at(
                ErrorKind::Corrupt,
                path,
                12,
                format!("page size {page_size} is not 4096"),
            ));
        }
        let meta_len = u32at(16);
        if meta_len > MAX_META_LEN {
            return Err(Error::at(
                ErrorKind::Corrupt,
                path,
                16,
                format!("metadata length {meta_len} is implausible"),
            ));
        }
        let w = |i: usize| u64at(24 + i * 8);
        let h = SnapshotHeader {
            version,
            finalized: u16at(10) & FLAG_FINALIZED != 0,
            page_size,
            counts: PageCounts {
                scanned: w(0),
                stored: w(1),
                zero: w(2),
                same_filled: w(3),
                duplicate: w(4),
                unreadable: w(5),
                sampled_out: w(6),
                redacted: w(7),
            },
            samples: w(8),
            pause_max_ns: w(9),
            pause_total_ns: w(10),
            stream_len: w(11),
            stream_checksum: u32at(20),
            meta: Metadata::default(),
            raw: false,
        };
        Ok((h, meta_len))
    }
}

/// The header checksum: the first 8 bytes of SHA-256 over bytes 0..120 of
/// the fixed header followed by the metadata block.
pub(crate) fn header_checksum(fixed: &[u8; FIXED_LEN], meta: &[u8]) -> [u8; 8] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(&fixed[..120]);
    h.update(meta);
    let d = h.finalize();
    d[..8].try_into().expect("8 bytes")
}

/// The fixed header with its checksum filled in.
pub(crate) fn sealed_fixed(h: &SnapshotHeader, meta: &[u8]) -> [u8; FIXED_LEN] {
    let mut fixed = h.encode_fixed(meta.len() as u32);
    let sum = header_checksum(&fixed, meta);
    fixed[120..128].copy_from_slice(&sum);
    fixed
}

/// True if `path` starts with the snapshot magic.
pub fn is_snapshot(path: &Path) -> bool {
    use std::io::Read;
    let mut m = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut m))
        .map(|_| m == MAGIC)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_counts_are_refused_by_name_and_sums_never_wrap() {
        let p = Path::new("x.cansnap");
        let mut c = PageCounts {
            zero: 1 << 63,
            same_filled: 1 << 63,
            ..PageCounts::default()
        };
        let e = c.check(p).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Corrupt);
        assert!(e.to_string().contains("zero = 9223372036854775808"), "{e}");
        c.zero = PageCounts::MAX_PAGES;
        c.same_filled = 3;
        c.check(p).unwrap();
        let mut total = c;
        total.add(&PageCounts {
            zero: u64::MAX,
            ..PageCounts::default()
        });
        assert_eq!(total.zero, u64::MAX);
    }
}
