//! The simulator's reports: [`RunReport`] (one run, one batch size, what
//! [`crate::replay::run`] returns) and [`Report`] (the settings of a sweep
//! and its runs), both serde-serializable, and the report's text rendering
//! (`Display`) as `cannery zswap-sim` prints it: settings lines, then one
//! row per run (`runs_table`; times in µs, pool sizes in KiB).
//!
//! Pure data and string building: nothing here runs a codec or prints.

use std::fmt;

use cannery_lab::tabular::{Align, Grid, Style};
use cannery_lab::units::{kib, micros};
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
    /// (`cannery_lab::figures`): stored pages plus the same-filled ones
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
    /// Parallel workers of the batch path (`engines` in JSON, as the
    /// `--engines` flag that sets it).
    #[serde(rename = "engines")]
    pub workers: usize,
    /// Policy name ([`crate::Policy::name`]).
    pub policy: String,
    /// How the pool is modelled ([`POOL_MODEL`]).
    pub pool_model: String,
    /// How latency is measured ([`LATENCY`]).
    pub latency: String,
    /// One run per batch size.
    pub runs: Vec<RunReport>,
    /// Peers replayed with the same plan, reported beside the codec
    /// (`--beside`; absent from JSON when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub beside: Vec<BesideReport>,
}

/// A peer's runs beside the report's codec: the same corpus, batch sizes,
/// folio, policy and workers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BesideReport {
    /// The peer's name (`lz4`, `zstd-1`, ...).
    pub mode: String,
    /// One run per batch size.
    pub runs: Vec<RunReport>,
}

impl Report {
    /// Loaded pages that differ from the originals, over all runs (the
    /// peers' beside included).
    pub fn mismatches(&self) -> usize {
        let beside = self.beside.iter().flat_map(|b| &b.runs);
        self.runs.iter().chain(beside).map(|r| r.mismatches).sum()
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
            r.workers,
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
        f.write_str(&runs_table(&self.runs).render(Style::Text))?;
        for b in &self.beside {
            writeln!(f, "beside: {}", b.mode)?;
            f.write_str(&runs_table(&b.runs).render(Style::Text))?;
        }
        Ok(())
    }
}

/// One row per run: batch sizes, latency percentiles (µs per page),
/// pool sizes (KiB), ratios, rejected pages and mismatches.
fn runs_table(runs: &[RunReport]) -> Grid {
    let mut g = Grid::new(&[
        ("cbatch", Align::Right),
        ("dbatch", Align::Right),
        ("store p50 µs", Align::Right),
        ("store p99 µs", Align::Right),
        ("load p50 µs", Align::Right),
        ("load p99 µs", Align::Right),
        ("pool KiB", Align::Right),
        ("zspage KiB", Align::Right),
        ("eff.ratio", Align::Right),
        ("pool ratio", Align::Right),
        ("rejected", Align::Right),
        ("mismatches", Align::Right),
    ]);
    let ratio = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.3}"));
    for x in runs {
        g.row(vec![
            x.compress_batch.to_string(),
            x.decompress_batch.to_string(),
            micros(x.store_p50_ns),
            micros(x.store_p99_ns),
            micros(x.load_p50_ns),
            micros(x.load_p99_ns),
            kib(x.pool_bytes as i64),
            kib(x.zspage_bytes as i64),
            ratio(x.effective_ratio),
            ratio(x.pool_ratio),
            x.rejected_pages.to_string(),
            x.mismatches.to_string(),
        ]);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_lab::tabular::cells;

    fn run(batch: usize, store_p50_ns: u64, store_p99_ns: u64) -> RunReport {
        RunReport {
            compress_batch: batch,
            decompress_batch: batch,
            max_units_per_store_call: batch,
            pages: 8,
            same_filled_pages: 1,
            compressed_pages: 7,
            incompressible_pages: 0,
            failed_pages: 0,
            raw_pages: 0,
            rejected_pages: 0,
            payload_bytes: 9000,
            pool_bytes: 10_240,
            zspage_bytes: 16_384,
            effective_ratio: Some(3.64),
            pool_ratio: None,
            store_p50_ns,
            store_p99_ns,
            load_p50_ns: 900,
            load_p99_ns: 1_234_567,
            mismatches: 0,
        }
    }

    fn report() -> Report {
        Report {
            corpus: "c".into(),
            workloads: vec!["w".into()],
            files: 1,
            pages: 8,
            omitted_same_filled_pages: 0,
            mode: "fixed".into(),
            table: None,
            format: None,
            level: Some("fast".into()),
            folio: "16k".into(),
            workers: 1,
            policy: "store-raw".into(),
            pool_model: POOL_MODEL.into(),
            latency: LATENCY.into(),
            runs: vec![run(1, 7_090, 20_000), run(32, 90, 123_456)],
            beside: vec![],
        }
    }

    #[test]
    fn peers_beside_get_a_table_each_and_count_their_mismatches() {
        let mut r = report();
        let plain_json = serde_json::to_value(&r).unwrap();
        assert!(plain_json.get("beside").is_none(), "no key without peers");
        let mut lz4 = run(8, 1_000, 2_000);
        lz4.mismatches = 2;
        r.beside = vec![BesideReport {
            mode: "lz4".into(),
            runs: vec![lz4, run(16, 900, 1_900)],
        }];
        assert_eq!(r.mismatches(), 2);
        let text = r.to_string();
        let after = text
            .split("beside: lz4\n")
            .nth(1)
            .expect("a beside section");
        assert_eq!(after.lines().filter(|l| l.starts_with("cbatch")).count(), 1);
        assert_eq!(after.lines().count(), 3, "{after}");
        let back: Report = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn the_runs_table_has_the_same_columns_as_text_and_markdown() {
        let text = report().to_string();
        let header = text.lines().find(|l| l.starts_with("cbatch")).unwrap();
        let md = runs_table(&report().runs).render(Style::Markdown);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            cells(header, Style::Text),
            cells(lines[0], Style::Markdown),
            "{text}\n{md}"
        );
        assert!(
            lines[1].starts_with("|---") && lines[1].ends_with(":|"),
            "{md}"
        );
        assert!(lines
            .iter()
            .all(|l| cells(l, Style::Markdown).len() == cells(lines[0], Style::Markdown).len()));
        assert_eq!(lines.len(), 2 + 2);
    }

    #[test]
    fn times_are_microseconds_and_pools_kib_in_every_row() {
        let text = report().to_string();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip_while(|l| !l.starts_with("cbatch"))
            .map(|l| cells(l, Style::Text))
            .collect();
        assert_eq!(
            rows[0][2..8],
            [
                "store p50 µs",
                "store p99 µs",
                "load p50 µs",
                "load p99 µs",
                "pool KiB",
                "zspage KiB"
            ]
        );
        assert_eq!(
            rows[1][2..8],
            ["7.09", "20.00", "0.90", "1234.57", "10", "16"]
        );
        assert_eq!(rows[2][2..4], ["0.09", "123.46"]);
        // Bare numbers: the unit is the header's, never a cell's.
        for row in &rows[1..] {
            for cell in &row[2..8] {
                assert!(cell.parse::<f64>().is_ok(), "{cell:?} in {text}");
            }
        }
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
