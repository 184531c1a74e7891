//! The simulator's reports: [`RunReport`] (one run, one batch size, what
//! [`crate::replay::run`] returns) and [`Report`] (the settings of a sweep
//! and its runs), both serde-serializable, and the report's text rendering
//! (`Display`), a fixed-width table as `cannery zswap-sim` prints it.
//!
//! Pure data and string building: nothing here runs a codec or prints.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How the pool is modelled, as reports state it.
pub const POOL_MODEL: &str = "zsmalloc x86-64 4 KiB pages: classes 32..4096 step 16, \
                              +8-byte handle, merged classes, zspages of up to 8 pages (a model)";

/// How latency is measured, as reports state it.
pub const LATENCY: &str =
    "per page: batch wall time / pages in the batch; nearest-rank percentiles";

/// Results of one run (one batch size of the sweep).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    /// Pages per compression batch.
    pub compress_batch: usize,
    /// Pages per decompression batch.
    pub decompress_batch: usize,
    /// Largest number of units one compression call had (folios limit it).
    pub max_units_per_store_call: usize,
    /// Pages replayed.
    pub pages: usize,
    /// Same-filled pages (kept as a value, not compressed).
    pub same_filled_pages: usize,
    /// Pages stored compressed.
    pub compressed_pages: usize,
    /// Pages whose output would be 4096 bytes or more.
    pub incompressible_pages: usize,
    /// Pages the codec failed on.
    pub failed_pages: usize,
    /// Pages stored raw (4096 bytes).
    pub raw_pages: usize,
    /// Pages zswap refused (their folio's store failed).
    pub rejected_pages: usize,
    /// Sum of compressed lengths and raw pages in the pool.
    pub payload_bytes: usize,
    /// Sum of zsmalloc class sizes of the pool's objects.
    pub pool_bytes: usize,
    /// Memory of a perfectly compacted pool (whole zspages).
    pub zspage_bytes: usize,
    /// The effective ratio as every cannery report defines it
    /// (`cannery_codec::figures`): stored pages plus the same-filled ones
    /// (replayed, and counted at capture in proportion) times 4096, over
    /// `payload_bytes`; null when nothing was stored.
    pub effective_ratio: Option<f64>,
    /// Pages held by zswap (stored or same-filled) times 4096 over
    /// `pool_bytes`, the allocator's overhead included; null when the pool
    /// is empty.
    pub pool_ratio: Option<f64>,
    /// Per-page store latency, median (ns).
    pub store_p50_ns: u64,
    /// Per-page store latency, 99th percentile (ns).
    pub store_p99_ns: u64,
    /// Per-page load latency, median (ns).
    pub load_p50_ns: u64,
    /// Per-page load latency, 99th percentile (ns).
    pub load_p99_ns: u64,
    /// Loaded pages that differ from the original (or failed to decode).
    pub mismatches: usize,
}

/// The whole report: settings and one run per batch size.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// The corpus path, as given.
    pub corpus: String,
    /// Workload names, in replay order.
    pub workloads: Vec<String>,
    /// Corpus files read.
    pub files: usize,
    /// Pages replayed.
    pub pages: usize,
    /// Zero/same-filled pages the capture counted but left out of the
    /// corpus; not replayed (zswap would keep them as values, no pool space).
    pub omitted_same_filled_pages: u64,
    /// The mode, named as everywhere in cannery (README, "Mode names"):
    /// `canned:<table>` (`@<level>` unless fast), `fixed`,
    /// `dynamic-<level>`, or a peer's name (`zstd-3`, `kernel-deflate`).
    pub mode: String,
    /// Canned table name or id (canned mode only).
    pub table: Option<String>,
    /// Canned stream format (canned mode only).
    pub format: Option<String>,
    /// LZ77 level (cannery's own modes only).
    pub level: Option<String>,
    /// Folio size name ([`crate::FolioSize::name`]).
    pub folio: String,
    /// Parallel engines.
    pub engines: usize,
    /// Policy name ([`crate::Policy::name`]).
    pub policy: String,
    /// How the pool is modelled ([`POOL_MODEL`]).
    pub pool_model: String,
    /// How latency is measured ([`LATENCY`]).
    pub latency: String,
    /// One run per batch size.
    pub runs: Vec<RunReport>,
}

impl Report {
    /// Loaded pages that differ from the originals, over all runs.
    pub fn mismatches(&self) -> usize {
        self.runs.iter().map(|r| r.mismatches).sum()
    }
}

impl fmt::Display for Report {
    /// A settings line, the model lines, the page counts of the first run,
    /// and one table row per run; every line ends in a newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self;
        writeln!(
            f,
            "corpus {} ({} workloads, {} files, {} pages; {} zero/same-filled pages left out by the capture), mode {}{}, folio {}, {} engines, policy {}",
            r.corpus,
            r.workloads.len(),
            r.files,
            r.pages,
            r.omitted_same_filled_pages,
            r.mode,
            r.format
                .as_ref()
                .map(|f| format!(" format {f}"))
                .unwrap_or_default(),
            r.folio,
            r.engines,
            r.policy
        )?;
        writeln!(f, "pool model: {}", r.pool_model)?;
        writeln!(f, "latency: {}", r.latency)?;
        if let Some(x) = r.runs.first() {
            writeln!(
                f,
                "pages: {} same-filled, {} compressed, {} incompressible, {} failed, {} stored raw, {} rejected",
                x.same_filled_pages,
                x.compressed_pages,
                x.incompressible_pages,
                x.failed_pages,
                x.raw_pages,
                x.rejected_pages
            )?;
        }
        writeln!(
            f,
            "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>9} {:>10} {:>8} {:>10}",
            "cbatch",
            "dbatch",
            "store p50",
            "store p99",
            "load p50",
            "load p99",
            "pool bytes",
            "zspage bytes",
            "eff.ratio",
            "pool ratio",
            "rejected",
            "mismatches"
        )?;
        for x in &r.runs {
            writeln!(
                f,
                "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>9} {:>10} {:>8} {:>10}",
                x.compress_batch,
                x.decompress_batch,
                ns(x.store_p50_ns),
                ns(x.store_p99_ns),
                ns(x.load_p50_ns),
                ns(x.load_p99_ns),
                x.pool_bytes,
                x.zspage_bytes,
                x.effective_ratio
                    .map(|v| format!("{v:.3}"))
                    .unwrap_or_else(|| "-".into()),
                x.pool_ratio
                    .map(|v| format!("{v:.3}"))
                    .unwrap_or_else(|| "-".into()),
                x.rejected_pages,
                x.mismatches
            )?;
        }
        Ok(())
    }
}

/// A latency for the table, always in microseconds (one unit per column).
fn ns(v: u64) -> String {
    format!("{:.2} us", v as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_share_one_unit() {
        assert_eq!(ns(7_090), "7.09 us");
        assert_eq!(ns(20_000), "20.00 us");
        assert_eq!(ns(123_456), "123.46 us");
    }

    #[test]
    fn the_model_strings_are_the_reported_ones() {
        assert_eq!(
            POOL_MODEL,
            "zsmalloc x86-64 4 KiB pages: classes 32..4096 step 16, +8-byte handle, \
             merged classes, zspages of up to 8 pages (a model)"
        );
    }
}
