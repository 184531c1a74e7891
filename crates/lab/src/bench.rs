//! Per-page speed and ratio of cannery's modes and the peer compressors on
//! the same pages, in the same run: what `cannery bench` reports.
//!
//! Each codec compresses every page on its own and decompresses it again;
//! the round trip is verified. A page's time is the fastest of a few
//! repetitions (the machine is shared and noisy; the minimum is the least
//! disturbed figure), and the report gives the median and 99th percentile
//! over pages. Figures are meant to be read as ratios between codecs of the
//! same run, never as absolute speeds. Those are the warm figures: the
//! branch predictor and the caches have learned the page; [`bench_cycled`]
//! adds each codec's figures with every page timed once, cold, while
//! cycling through a working set larger than the last-level cache (as zswap
//! sees pages), and [`bench_batches`] canned-fast's, lz4's and zstd -1's in
//! batches of 1, 8 and 16 pages on one core. [`workload_codecs`] sets a
//! workload up as the report describes (its table and zstd dictionary
//! trained on its training pages,
//! a spread sample of its held-out pages measured), [`bench_codecs`]
//! measures them ([`bench_workload`] both) and [`markdown`] renders the
//! results; [`read_workloads`] reads a corpus's workloads
//! ([`BenchWorkload::read`] one) and [`machine_line`] describes the
//! machine; the caller writes the report.

use std::time::Instant;

mod batches;
mod corpus;
mod cycled;
mod runner;
pub use batches::{bench_batches, bench_workload_batches, in_batches, BatchFigures, BATCH_SIZES};
pub use corpus::{machine_line, read_workloads, BenchCorpusError};
pub use cycled::{bench_cycled, last_level_cache, CycledFigures, CycledOptions, CycledRun};
use runner::engine;

use crate::figures::{self, percentile, SameFilledShare};
use crate::tabular::{Align, Grid, Style};
use crate::units::micros;
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Format, Level, Mode, Table};
use cannery_engines::peer::train_zstd_dictionary;

use crate::mode_key::{ModeKey, QplMode};
use crate::report::DICTIONARY_SIZE;
use cannery_trainer::histogram::ParseModel;
use cannery_trainer::pages::{same_filled, Part, Split};
use cannery_trainer::scan::histogram_of;
use cannery_trainer::train::table_from_histogram;
use cannery_trainer::TrainOptions;

use cannery_engines::peer::{PeerKind, BENCH_PEERS};

/// One codec to measure.
#[derive(Clone, Debug)]
pub enum BenchCodec {
    /// A cannery mode: key, mode, format, level, table (canned only).
    Cannery {
        /// Report key, e.g. `canned-fast`.
        key: ModeKey,
        /// Mode.
        mode: Mode,
        /// Format.
        format: Format,
        /// Level.
        level: Level,
        /// Table for canned mode.
        table: Option<Box<Table>>,
    },
    /// A peer compressor, with its dictionary when it needs one.
    Peer(PeerKind, Option<Vec<u8>>),
    /// QPL's software path (feature `qpl`), with the table for canned modes.
    Qpl(QplMode, Option<Box<Table>>),
}

impl BenchCodec {
    /// Its key in reports and JSON (`canned-fast`, `libdeflate-1`, `lz4`, ...).
    pub fn key(&self) -> ModeKey {
        match self {
            BenchCodec::Cannery { key, .. } => key.clone(),
            BenchCodec::Peer(k, _) => ModeKey::Peer(k.clone()),
            BenchCodec::Qpl(m, _) => ModeKey::Qpl(*m),
        }
    }
}

/// What one codec did on one workload's pages.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BenchResult {
    /// Workload name.
    pub workload: String,
    /// Codec.
    pub codec: ModeKey,
    /// Pages measured (compressed pages; same-filled pages are not among them).
    pub pages: usize,
    /// Uncompressed bytes / stored bytes, incompressible pages stored as 4096.
    pub ratio: f64,
    /// As `ratio`, with the workload's zero and same-filled pages
    /// attributed to the measured ones (`crate::figures`).
    pub effective_ratio: f64,
    /// Pages whose stream would be 4096 bytes or more (stored raw).
    pub incompressible_pages: usize,
    /// Median compress time per page, ns.
    pub compress_ns_p50: u64,
    /// 99th percentile compress time per page, ns.
    pub compress_ns_p99: u64,
    /// Median decompress time per page, ns (compressible pages only).
    pub decompress_ns_p50: u64,
    /// 99th percentile decompress time per page, ns.
    pub decompress_ns_p99: u64,
    /// Uncompressed MB/s of compression over all pages.
    pub compress_mb_s: f64,
    /// Uncompressed MB/s of decompression over compressible pages.
    pub decompress_mb_s: f64,
    /// The same codec timed once per page while cycling through a working
    /// set larger than the last-level cache ([`bench_cycled`]); `None`
    /// when that pass did not run (its keys are then absent from JSON).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cycled: Option<CycledFigures>,
    /// Per-page times in batches ([`bench_batches`]), for the codecs
    /// measured so ([`in_batches`]); empty (and absent from JSON) otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<BatchFigures>,
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A codec could not be set up.
    #[error("{codec}: {message}")]
    Setup {
        /// Codec name.
        codec: String,
        /// What went wrong.
        message: String,
    },
    /// A page did not come back as it went in: a codec bug, never expected.
    #[error("{codec}: page {page} of {workload} did not round-trip ({message})")]
    RoundTrip {
        /// Codec name.
        codec: String,
        /// Workload name.
        workload: String,
        /// Page index.
        page: usize,
        /// What happened.
        message: String,
    },
    /// There was nothing to measure: no pages, or no pass.
    #[error("nothing to measure: {0}")]
    Empty(String),
}

/// Measures `codec` on `pages` (each exactly 4096 bytes) of one workload;
/// `same_filled` is the workload's same-filled share (for the effective
/// ratio). Each page is timed `reps` times and its fastest time kept.
pub fn bench_codec(
    workload: &str,
    codec: &BenchCodec,
    pages: &[Vec<u8>],
    same_filled: SameFilledShare,
    reps: usize,
) -> Result<BenchResult, BenchError> {
    let mut engine = engine(codec)?;
    let reps = reps.max(1);
    let mut out = Vec::with_capacity(2 * PAGE_SIZE);
    let mut back = vec![0u8; PAGE_SIZE];
    let (mut ctimes, mut dtimes) = (
        Vec::with_capacity(pages.len()),
        Vec::with_capacity(pages.len()),
    );
    let (mut stored, mut incompressible) = (0u64, 0usize);
    let round_trip = |page: usize, message: String| BenchError::RoundTrip {
        codec: codec.key().to_string(),
        workload: workload.to_string(),
        page,
        message,
    };
    for (i, page) in pages.iter().enumerate() {
        let mut best = u64::MAX;
        let mut size = None;
        for _ in 0..reps {
            let t = Instant::now();
            size = engine
                .compress(page, &mut out)
                .map_err(|e| round_trip(i, e))?;
            best = best.min(t.elapsed().as_nanos() as u64);
        }
        ctimes.push(best);
        let Some(n) = size else {
            incompressible += 1;
            stored += PAGE_SIZE as u64;
            continue;
        };
        stored += n as u64;
        let mut best = u64::MAX;
        for _ in 0..reps {
            let t = Instant::now();
            let got = engine.decompress(&out[..n], &mut back);
            best = best.min(t.elapsed().as_nanos() as u64);
            match got {
                Ok(m) if m == PAGE_SIZE && back == *page => {}
                Ok(m) => {
                    return Err(round_trip(
                        i,
                        format!("decoded {m} bytes that differ from the page"),
                    ))
                }
                Err(e) => return Err(round_trip(i, e)),
            }
        }
        dtimes.push(best);
    }
    let bytes = (pages.len() * PAGE_SIZE) as f64;
    let ctotal: u64 = ctimes.iter().sum();
    let dtotal: u64 = dtimes.iter().sum();
    ctimes.sort_unstable();
    dtimes.sort_unstable();
    let n = pages.len() as u64;
    Ok(BenchResult {
        workload: workload.to_string(),
        codec: codec.key(),
        pages: pages.len(),
        ratio: figures::ratio(n, stored),
        effective_ratio: figures::effective_ratio(n, same_filled.attributed(n), stored),
        incompressible_pages: incompressible,
        compress_ns_p50: percentile(&ctimes, 50.0),
        compress_ns_p99: percentile(&ctimes, 99.0),
        decompress_ns_p50: percentile(&dtimes, 50.0),
        decompress_ns_p99: percentile(&dtimes, 99.0),
        compress_mb_s: if ctotal == 0 {
            0.0
        } else {
            bytes / ctotal as f64 * 1e3
        },
        decompress_mb_s: if dtotal == 0 {
            0.0
        } else {
            (dtimes.len() * PAGE_SIZE) as f64 / dtotal as f64 * 1e3
        },
        cycled: None,
        batches: Vec::new(),
    })
}

/// The codecs `cannery bench` compares: cannery's modes with `table` (the
/// workload's own trained table) and the kernel's 2024 table, and the peers;
/// `zstd_dict` is a dictionary trained on the same training pages.
pub fn standard_codecs(table: &Table, zstd_dict: Option<Vec<u8>>) -> Vec<BenchCodec> {
    let cannery = |key: ModeKey, mode, level, table: Option<&Table>| BenchCodec::Cannery {
        key,
        mode,
        format: Format::Iaa,
        level,
        table: table.cloned().map(Box::new),
    };
    let kernel = Table::kernel_2024();
    let mut v = vec![
        cannery(
            ModeKey::Canned(Level::Fast),
            Mode::Canned,
            Level::Fast,
            Some(table),
        ),
        cannery(
            ModeKey::Canned(Level::Default),
            Mode::Canned,
            Level::Default,
            Some(table),
        ),
        cannery(
            ModeKey::Canned(Level::Best),
            Mode::Canned,
            Level::Best,
            Some(table),
        ),
        cannery(
            ModeKey::table("kernel-2024"),
            Mode::Canned,
            Level::Fast,
            Some(&kernel),
        ),
        cannery(ModeKey::Fixed, Mode::Fixed, Level::Fast, None),
        cannery(
            ModeKey::Dynamic(Level::Default),
            Mode::Dynamic,
            Level::Default,
            None,
        ),
        cannery(
            ModeKey::Dynamic(Level::Best),
            Mode::Dynamic,
            Level::Best,
            None,
        ),
    ];
    for kind in BENCH_PEERS {
        v.push(BenchCodec::Peer(kind, None));
    }
    if let Some(d) = zstd_dict {
        v.push(BenchCodec::Peer(PeerKind::ZstdDict(1), Some(d)));
    }
    v
}

/// QPL's software path (with the `qpl` feature): fixed, dynamic, and canned
/// at QPL's default and high levels, each canned level with the workload's
/// table trained for it on its training pages (`--target qpl-default`,
/// `qpl-high`: QPL-compatible, so QPL loads it unchanged).
pub fn qpl_codecs(w: &BenchWorkload) -> Result<Vec<BenchCodec>, BenchError> {
    let mut v = Vec::new();
    for m in QplMode::ALL {
        let parse = match m {
            QplMode::CannedDefault => ParseModel::QplDefault,
            QplMode::CannedHigh => ParseModel::QplHigh,
            QplMode::Fixed | QplMode::Dynamic => {
                v.push(BenchCodec::Qpl(m, None));
                continue;
            }
        };
        let table = histogram_of(&w.train, parse)
            .and_then(|h| table_from_histogram(&h, &TrainOptions::default(), &w.name))
            .map_err(|e| BenchError::Setup {
                codec: ModeKey::Qpl(m).to_string(),
                message: e.to_string(),
            })?;
        v.push(BenchCodec::Qpl(m, Some(Box::new(table))));
    }
    Ok(v)
}

/// One workload as `cannery bench` measures it.
#[derive(Clone, Debug)]
pub struct BenchWorkload {
    /// Workload name.
    pub name: String,
    /// Training pages (they train the table and the zstd dictionary).
    pub train: Vec<Vec<u8>>,
    /// Held-out pages measured: at most `max_pages`, spread over the capture.
    pub test: Vec<Vec<u8>>,
    /// The workload's same-filled share, for the effective ratio.
    pub same_filled: SameFilledShare,
}

impl BenchWorkload {
    /// Splits a workload's pages (`pages`, plus `unstored_same_filled`
    /// zero/same-filled pages its captures counted without storing) into
    /// training pages and at most `max_pages` held-out pages spread over the
    /// capture. `None` if either part is empty.
    pub fn read<E>(
        name: &str,
        pages: impl IntoIterator<Item = Result<Vec<u8>, E>>,
        unstored_same_filled: u64,
        split: Split,
        max_pages: usize,
    ) -> Result<Option<BenchWorkload>, E> {
        let (mut train, mut test) = (Vec::new(), Vec::new());
        let mut seen_same = 0u64;
        for page in pages {
            let page = page?;
            if same_filled(&page).is_some() {
                seen_same += 1;
            } else if split.part(&page) == Part::Test {
                test.push(page);
            } else {
                train.push(page);
            }
        }
        let others = (train.len() + test.len()) as u64;
        let step = (test.len() / max_pages.max(1)).max(1);
        let test: Vec<Vec<u8>> = test.into_iter().step_by(step).take(max_pages).collect();
        if test.is_empty() || train.is_empty() {
            return Ok(None);
        }
        Ok(Some(BenchWorkload {
            name: name.to_string(),
            train,
            test,
            same_filled: SameFilledShare::new((seen_same + unstored_same_filled) as f64, others),
        }))
    }
}

/// The codecs measured on a workload: [`standard_codecs`] with the
/// workload's table (`table`, or one trained with the fast parse on its
/// training pages) and a zstd dictionary ([`DICTIONARY_SIZE`], as `cannery
/// train`) trained on the same pages, then with the `qpl` feature
/// [`qpl_codecs`]. Every workload gets the same keys in the same order.
pub fn workload_codecs(
    w: &BenchWorkload,
    table: Option<&Table>,
) -> Result<Vec<BenchCodec>, BenchError> {
    let table = match table {
        Some(t) => t.clone(),
        None => histogram_of(&w.train, ParseModel::Fast)
            .and_then(|h| table_from_histogram(&h, &TrainOptions::default(), &w.name))
            .map_err(|e| BenchError::Setup {
                codec: ModeKey::Canned(Level::Fast).to_string(),
                message: e.to_string(),
            })?,
    };
    let refs: Vec<&[u8]> = w.train.iter().map(|p| &p[..]).collect();
    let dict = train_zstd_dictionary(&refs, DICTIONARY_SIZE);
    let mut codecs = standard_codecs(&table, dict);
    if cfg!(feature = "qpl") {
        codecs.extend(qpl_codecs(w)?);
    }
    Ok(codecs)
}

/// Measures every codec of `codecs` on the workload's held-out pages
/// ([`bench_codec`]); `progress` hears each codec before it runs.
pub fn bench_codecs(
    w: &BenchWorkload,
    codecs: &[BenchCodec],
    reps: usize,
    progress: &mut dyn FnMut(&ModeKey),
) -> Result<Vec<BenchResult>, BenchError> {
    codecs
        .iter()
        .map(|codec| {
            progress(&codec.key());
            bench_codec(&w.name, codec, &w.test, w.same_filled, reps)
        })
        .collect()
}

/// [`bench_codecs`] on the workload's [`workload_codecs`].
pub fn bench_workload(
    w: &BenchWorkload,
    table: Option<&Table>,
    reps: usize,
    progress: &mut dyn FnMut(&ModeKey),
) -> Result<Vec<BenchResult>, BenchError> {
    bench_codecs(w, &workload_codecs(w, table)?, reps, progress)
}

/// The row of peer `kind` among a workload's rows.
fn peer_row<'a>(rs: &[&'a BenchResult], kind: PeerKind) -> Option<&'a BenchResult> {
    rs.iter()
        .find(|r| r.codec == ModeKey::Peer(kind.clone()))
        .copied()
}

/// `a / b` as a report cell (two decimals), `-` without a positive `b`.
fn relative(a: f64, b: Option<f64>) -> String {
    b.filter(|b| *b > 0.0)
        .map(|b| format!("{:.2}", a / b))
        .unwrap_or_else(|| "-".into())
}

/// [`relative`] of two times in ns.
fn relative_ns(a: u64, b: Option<u64>) -> String {
    relative(a as f64, b.map(|b| b as f64))
}

/// One workload's results: a row per codec with its ratios, per-page
/// times (µs) and throughput (MB/s), and its ratio and times divided by
/// libdeflate -1's and lz4's on the same pages.
fn workload_table(rs: &[&BenchResult]) -> Grid {
    let mut g = Grid::new(&[
        ("codec", Align::Left),
        ("ratio", Align::Right),
        ("eff.ratio", Align::Right),
        ("incompr.", Align::Right),
        ("comp p50 µs", Align::Right),
        ("comp p99 µs", Align::Right),
        ("comp MB/s", Align::Right),
        ("decomp p50 µs", Align::Right),
        ("decomp p99 µs", Align::Right),
        ("decomp MB/s", Align::Right),
        ("ratio /ld1", Align::Right),
        ("comp time /ld1", Align::Right),
        ("decomp time /ld1", Align::Right),
        ("decomp time /lz4", Align::Right),
    ]);
    let (ld1, lz4) = (
        peer_row(rs, PeerKind::Libdeflate(1)),
        peer_row(rs, PeerKind::Lz4),
    );
    for r in rs {
        g.row(vec![
            r.codec.to_string(),
            format!("{:.3}", r.ratio),
            format!("{:.3}", r.effective_ratio),
            r.incompressible_pages.to_string(),
            micros(r.compress_ns_p50),
            micros(r.compress_ns_p99),
            format!("{:.0}", r.compress_mb_s),
            micros(r.decompress_ns_p50),
            micros(r.decompress_ns_p99),
            format!("{:.0}", r.decompress_mb_s),
            relative(r.ratio, ld1.map(|x| x.ratio)),
            relative_ns(r.compress_ns_p50, ld1.map(|x| x.compress_ns_p50)),
            relative_ns(r.decompress_ns_p50, ld1.map(|x| x.decompress_ns_p50)),
            relative_ns(r.decompress_ns_p50, lz4.map(|x| x.decompress_ns_p50)),
        ]);
    }
    g
}

/// The markdown report: `title` (how it was made) and `machine` first,
/// then, when the cycled pass ran (`cycled`), its figures (one table per
/// workload) and the warm figures after them: one table per workload, each codec's
/// figures beside its ratio to libdeflate -1's and lz4's on the same pages;
/// then the batch figures, where results carry them.
pub fn markdown(
    title: &str,
    machine: &str,
    workloads: &[BenchWorkload],
    results: &[BenchResult],
    cycled: Option<&CycledRun>,
) -> String {
    let mut s = String::new();
    s += "# cannery benchmarks\n\n";
    s += &format!("{title}\n\nMachine: {machine}.\n\n");
    if let Some(run) = cycled {
        s += &cycled::markdown_section(run, workloads, results);
        s += "## Warm: each page timed several times in a row\n\n";
    }
    s += &format!(
        "Every codec compresses and decompresses each held-out page of a workload on its own, \
         and every round trip is verified. A page's time is the fastest of the repetitions; \
         p50/p99 are over pages, in µs. The machine is shared and noisy: read the `/ld1` and `/lz4` \
         columns (this codec's figure divided by libdeflate -1's or lz4's on the same pages in \
         the same run), not the absolute times. `canned-*` use the workload's own table trained \
         on its training pages (fast parse), `canned:kernel-2024` the kernel's table; \
         `zstd-1-dict` uses a {} KiB dictionary trained on the same pages. Ratio counts \
         incompressible pages as 4096 bytes; effective ratio also counts the workload's zero \
         and same-filled pages, in their share of the measured pages, as free (zswap keeps \
         only their fill value).\n\n",
        DICTIONARY_SIZE / 1024
    );
    for w in workloads {
        s += &format!(
            "## {} ({} held-out pages measured, {} training pages)\n\n",
            w.name,
            w.test.len(),
            w.train.len()
        );
        let rs: Vec<&BenchResult> = results.iter().filter(|r| r.workload == w.name).collect();
        s += &workload_table(&rs).render(Style::Markdown);
        s += "\n";
    }
    if results.iter().any(|r| !r.batches.is_empty()) {
        s += &batches::markdown_section(workloads, results);
    }
    s
}

#[cfg(test)]
mod tests;
