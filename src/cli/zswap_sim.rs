//! `cannery zswap-sim`: replays a corpus of 4 KiB pages the way zswap
//! stores and loads them, through the batch path of `cannery_codec::batch`,
//! and reports the pool size, the effective ratio, rejected pages and
//! per-page store/load latency percentiles for each batch size of a sweep.
//!
//! What is modelled (each a model, not the kernel):
//! - Folios: the corpus, in order, is cut into folios of 4, 16, 32 or 64 KiB
//!   (`mixed` repeats 64k, 4k, 32k, 16k). A store takes one folio and
//!   compresses its pages in batches of `--compress-batch` consecutive
//!   pages, never across folios (zswap_store of a large folio, kernel
//!   series v14). Loads take `--decompress-batch` consecutive stored pages,
//!   across folios (swap-in readahead).
//! - Same-filled pages (one 8-byte value repeated, as zswap tested before
//!   6.12 and zram still does) are not compressed: the entry keeps the value
//!   and takes no pool space; a load fills the page.
//! - Incompressible pages (output of 4096 bytes or more) and pages the codec
//!   fails on are stored raw, 4096 bytes, as zswap does when memcg writeback
//!   is enabled (the default). With `--reject-incompressible` (writeback
//!   disabled) such a page makes the whole folio's store fail, as zswap
//!   rejects a large folio if any page fails: every page of that folio is
//!   counted in `rejected_pages` and none is in the pool.
//! - The pool: zsmalloc size classes on x86-64 with 4 KiB pages. An object
//!   of `len` bytes asks for `len + 8` (zs_malloc adds ZS_HANDLE_SIZE), is
//!   put in the class of index ceil((len + 8 - 32) / 16) of the classes 32,
//!   48, ..., 4096 (the last for anything larger), and classes with the same
//!   pages-per-zspage and objects-per-zspage are merged into the larger one
//!   as zs_create_pool does, with up to 8 pages per zspage
//!   (CONFIG_ZSMALLOC_CHAIN_SIZE's default). `pool_bytes` is the sum of the
//!   class sizes of the stored objects; `zspage_bytes` is the memory of a
//!   perfectly compacted pool (whole zspages per class). Partly empty
//!   zspages left by frees, zswap's entry metadata and compaction are not
//!   modelled.
//! - Latency: the wall time of each store batch (same-filled check,
//!   compression, copy into the pool) or load batch (fill, copy or
//!   decompression) divided by its pages, recorded once per page; p50 and
//!   p99 are nearest-rank percentiles over all pages.
//!
//! The corpus is read with `cannery_capture::corpus` (snapshots or raw
//! `.pages` files); pages the capture left out as zero or same-filled are
//! counted in the report but not replayed.
//!
//! Every loaded page is compared with the original; mismatches are counted
//! and reported, and make the command fail.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use cannery_capture::corpus::{open_pages, Corpus};
use cannery_capture::same_filled;
use cannery_codec::batch::{
    BatchCompressor, BatchDecompressor, PageCompressor, PageDecompressor, UnitStatus,
    MAX_BATCH_SIZE,
};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome};
use cannery_trainer::peers::{Peer, PeerError, PeerKind};
use clap::{Args, ValueEnum};
use serde::Serialize;

/// Batch sizes swept when `--compress-batch` is not given.
const SWEEP: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Arguments of `cannery zswap-sim`.
#[derive(Args, Debug)]
pub struct ZswapSimArgs {
    /// A corpus: a snapshot or raw `.pages` file, or a directory with one
    /// sub-directory per workload (all workloads are replayed in order).
    #[arg(long)]
    corpus: PathBuf,
    /// Canned table: a built-in name (kernel-2024, fixed) or a table file
    /// (JSON or binary). Required for canned mode, ignored otherwise.
    #[arg(long)]
    table: Option<String>,
    /// Compressor.
    #[arg(long, value_enum)]
    mode: SimMode,
    /// Canned stream format: iaa (no header) or deflate.
    #[arg(long, default_value = "iaa", value_parser = parse_format)]
    format: Format,
    /// LZ77 level of cannery's own modes: fast, default or best.
    #[arg(long, default_value = "fast", value_parser = parse_level)]
    level: Level,
    /// zstd level in zstd mode (the kernel's crypto zstd uses 3).
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Folio size the corpus is cut into.
    #[arg(long, value_enum, default_value = "64k")]
    folio: FolioSize,
    /// Pages per compression batch (1..=32); without it, sweep 1, 2, 4, 8, 16, 32.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    compress_batch: Option<u16>,
    /// Pages per decompression batch (1..=32); default: the compression batch.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=32))]
    decompress_batch: Option<u16>,
    /// Parallel engines (the calling thread plus worker threads); default:
    /// the number of CPUs, at most 8.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    engines: Option<u16>,
    /// Reject a folio whose pages do not all compress (memcg writeback
    /// disabled) instead of storing such pages raw.
    #[arg(long)]
    reject_incompressible: bool,
    /// Use at most this many pages of the corpus.
    #[arg(long)]
    max_pages: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

fn parse_level(s: &str) -> Result<Level, String> {
    s.parse()
}

/// The compressors the simulator can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimMode {
    /// Canned Huffman table (needs --table).
    Canned,
    /// RFC 1951 fixed codes.
    Fixed,
    /// Per-page dynamic Huffman codes.
    Dynamic,
    /// zstd (libzstd) at --zstd-level.
    Zstd,
    /// LZ4 block format (liblz4).
    Lz4,
}

/// Folio sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FolioSize {
    /// 4 KiB (one page).
    #[value(name = "4k")]
    K4,
    /// 16 KiB.
    #[value(name = "16k")]
    K16,
    /// 32 KiB.
    #[value(name = "32k")]
    K32,
    /// 64 KiB.
    #[value(name = "64k")]
    K64,
    /// Repeating 64k, 4k, 32k, 16k.
    Mixed,
}

impl FolioSize {
    fn name(self) -> &'static str {
        match self {
            FolioSize::K4 => "4k",
            FolioSize::K16 => "16k",
            FolioSize::K32 => "32k",
            FolioSize::K64 => "64k",
            FolioSize::Mixed => "mixed",
        }
    }

    /// Pages per folio, cycled.
    fn pattern(self) -> &'static [usize] {
        match self {
            FolioSize::K4 => &[1],
            FolioSize::K16 => &[4],
            FolioSize::K32 => &[8],
            FolioSize::K64 => &[16],
            FolioSize::Mixed => &[16, 1, 8, 4],
        }
    }
}

/// Cuts `pages` pages into folios of the pattern's sizes (the last may be short).
pub fn folios(size: FolioSize, pages: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for &n in size.pattern().iter().cycle() {
        if at >= pages {
            break;
        }
        let end = (at + n).min(pages);
        out.push(at..end);
        at = end;
    }
    out
}

/// zsmalloc's size classes for x86-64 with 4 KiB pages (see the module doc).
#[derive(Clone, Debug)]
pub struct Zsmalloc {
    /// Size of the (possibly merged) class each class index uses.
    class_size: Vec<usize>,
    /// Pages per zspage and objects per zspage of that class.
    geometry: Vec<(usize, usize)>,
}

impl Zsmalloc {
    /// Smallest class.
    pub const MIN_ALLOC: usize = 32;
    /// Step between classes (PAGE_SIZE >> 8).
    pub const DELTA: usize = 16;
    /// Bytes zs_malloc adds to every object for its handle.
    pub const HANDLE: usize = 8;
    /// Most pages in one zspage (CONFIG_ZSMALLOC_CHAIN_SIZE default).
    pub const CHAIN: usize = 8;
    /// Number of class indices: 32, 48, ..., 4096.
    pub const CLASSES: usize = (PAGE_SIZE - Self::MIN_ALLOC) / Self::DELTA + 1;

    /// The class table, built as zs_create_pool builds it.
    pub fn new() -> Zsmalloc {
        let mut class_size = vec![0; Self::CLASSES];
        let mut geometry = vec![(0, 0); Self::CLASSES];
        let mut prev: Option<(usize, usize, usize)> = None; // (size, pages, objs)
        for i in (0..Self::CLASSES).rev() {
            let size = (Self::MIN_ALLOC + i * Self::DELTA).min(PAGE_SIZE);
            let pages = Self::pages_per_zspage(size);
            let objs = pages * PAGE_SIZE / size;
            match prev {
                Some((psize, ppages, pobjs)) if ppages == pages && pobjs == objs => {
                    class_size[i] = psize;
                    geometry[i] = (ppages, pobjs);
                }
                _ => {
                    class_size[i] = size;
                    geometry[i] = (pages, objs);
                    prev = Some((size, pages, objs));
                }
            }
        }
        Zsmalloc {
            class_size,
            geometry,
        }
    }

    /// zsmalloc's get_pages_per_zspage: the zspage length (1..=8 pages)
    /// that wastes the least, by integer percent used.
    fn pages_per_zspage(size: usize) -> usize {
        let mut best = 1;
        let mut best_used = 0;
        for i in 1..=Self::CHAIN {
            let zspage = i * PAGE_SIZE;
            let used = (zspage - zspage % size) * 100 / zspage;
            if used > best_used {
                best_used = used;
                best = i;
            }
        }
        best
    }

    /// Class index of an object of `len` bytes (a compressed page, or 4096 raw).
    pub fn index(&self, len: usize) -> usize {
        let size = len + Self::HANDLE;
        let idx = if size > Self::MIN_ALLOC {
            (size - Self::MIN_ALLOC).div_ceil(Self::DELTA)
        } else {
            0
        };
        idx.min(Self::CLASSES - 1)
    }

    /// Bytes an object of `len` bytes occupies in the pool.
    pub fn class_size(&self, len: usize) -> usize {
        self.class_size[self.index(len)]
    }

    /// (pages per zspage, objects per zspage) of the class for `len`.
    #[cfg(test)]
    pub fn geometry(&self, len: usize) -> (usize, usize) {
        self.geometry[self.index(len)]
    }
}

impl Default for Zsmalloc {
    fn default() -> Self {
        Zsmalloc::new()
    }
}

/// Objects stored per class, and the sums the report needs.
#[derive(Clone, Debug)]
pub struct Pool {
    model: Zsmalloc,
    /// Objects per class index (merged classes count under their own index).
    objects: Vec<usize>,
    /// Sum of the class sizes of the objects.
    pub bytes: usize,
    /// Sum of the objects' own lengths.
    pub payload: usize,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool {
            model: Zsmalloc::new(),
            objects: vec![0; Zsmalloc::CLASSES],
            bytes: 0,
            payload: 0,
        }
    }

    /// Accounts an object of `len` bytes.
    pub fn add(&mut self, len: usize) {
        let class = self.model.class_size(len);
        // Count under the index of the class actually used, so merged
        // classes share zspages.
        self.objects[self.model.index(class - Zsmalloc::HANDLE)] += 1;
        self.bytes += class;
        self.payload += len;
    }

    /// Memory of a perfectly compacted pool: whole zspages per class.
    pub fn zspage_bytes(&self) -> usize {
        self.objects
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let (pages, objs) = self.model.geometry[i];
                n.div_ceil(objs) * pages * PAGE_SIZE
            })
            .sum()
    }
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new()
    }
}

/// A trainer peer (zstd, lz4) as a batch codec.
pub struct PeerCodec(Peer);

impl PageCompressor for PeerCodec {
    type Error = PeerError;
    fn compress_page(&mut self, unit: &[u8], out: &mut Vec<u8>) -> Result<Outcome, PeerError> {
        Ok(match self.0.compress(unit, out)? {
            Some(n) => Outcome::Compressed(n),
            None => Outcome::Incompressible,
        })
    }
}

impl PageDecompressor for PeerCodec {
    type Error = PeerError;
    fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, PeerError> {
        self.0.decompress(data, out)
    }
}

/// Where a stored page lives.
#[derive(Clone, Copy, Debug)]
enum Entry {
    /// Not stored yet.
    None,
    /// Same-filled: the value only.
    Same(u64),
    /// Stored raw at this arena offset (4096 bytes).
    Raw(usize),
    /// Compressed: arena range.
    Compressed(usize, usize),
    /// The folio's store failed: the page went to the swap device.
    Rejected,
}

/// What to do with incompressible and failed pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Store them raw (memcg writeback enabled, the default).
    StoreRaw,
    /// Reject the folio (memcg writeback disabled).
    Reject,
}

/// Settings of one run.
#[derive(Clone, Copy, Debug)]
pub struct RunConfig {
    /// Pages per compression batch.
    pub compress_batch: usize,
    /// Pages per decompression batch.
    pub decompress_batch: usize,
    /// Folio size.
    pub folio: FolioSize,
    /// Incompressible page policy.
    pub policy: Policy,
}

/// Results of one run (one batch size of the sweep).
#[derive(Clone, Debug, Serialize, PartialEq)]
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
    /// Pages held by zswap (stored or same-filled) times 4096 over
    /// `pool_bytes`; null when the pool is empty.
    pub effective_ratio: Option<f64>,
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

/// Nearest-rank percentile of sorted samples (0 if there are none).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Records `n` pages of a batch that took `ns`.
fn record(samples: &mut Vec<u64>, ns: u128, n: usize) {
    if n > 0 {
        let per = (ns / n as u128) as u64;
        samples.extend(std::iter::repeat_n(per, n));
    }
}

/// Replays `corpus` (whole pages, back to back) once: store every folio,
/// then load every stored page, verifying it.
pub fn run<C, D>(
    corpus: &[u8],
    cfg: RunConfig,
    compressors: Vec<C>,
    decompressors: Vec<D>,
) -> anyhow::Result<RunReport>
where
    C: PageCompressor,
    D: PageDecompressor,
{
    let mut bc = BatchCompressor::new(cfg.compress_batch, compressors)?;
    let mut bd = BatchDecompressor::new(cfg.decompress_batch, decompressors)?;
    let pages: Vec<&[u8]> = corpus.chunks_exact(PAGE_SIZE).collect();
    let n = pages.len();
    let mut entries = vec![Entry::None; n];
    let mut arena: Vec<u8> = Vec::with_capacity(n * PAGE_SIZE);
    let mut pool = Pool::new();
    let mut report = RunReport {
        compress_batch: cfg.compress_batch,
        decompress_batch: cfg.decompress_batch,
        max_units_per_store_call: 0,
        pages: n,
        same_filled_pages: 0,
        compressed_pages: 0,
        incompressible_pages: 0,
        failed_pages: 0,
        raw_pages: 0,
        rejected_pages: 0,
        payload_bytes: 0,
        pool_bytes: 0,
        zspage_bytes: 0,
        effective_ratio: None,
        store_p50_ns: 0,
        store_p99_ns: 0,
        load_p50_ns: 0,
        load_p99_ns: 0,
        mismatches: 0,
    };

    // Store.
    let mut store_ns = Vec::with_capacity(n);
    let mut units: [usize; MAX_BATCH_SIZE] = [0; MAX_BATCH_SIZE];
    let mut pending: Vec<(usize, usize)> = Vec::with_capacity(64); // (page, len) for the pool
    for folio in folios(cfg.folio, n) {
        let arena_mark = arena.len();
        pending.clear();
        let mut rejected = false;
        let mut same_in_folio = 0;
        let starts = folio.clone().step_by(cfg.compress_batch);
        for start in starts {
            let chunk = start..(start + cfg.compress_batch).min(folio.end);
            let t0 = Instant::now();
            let mut m = 0;
            for i in chunk.clone() {
                match same_filled(pages[i]) {
                    Some(v) => {
                        entries[i] = Entry::Same(v);
                        same_in_folio += 1;
                    }
                    None => {
                        units[m] = i;
                        m += 1;
                    }
                }
            }
            let batch = bc.compress(units[..m].iter().map(|&i| pages[i]))?;
            report.max_units_per_store_call = report.max_units_per_store_call.max(m);
            for (j, &i) in units[..m].iter().enumerate() {
                match batch.status(j) {
                    UnitStatus::Compressed(len) => {
                        let at = arena.len();
                        arena.extend_from_slice(batch.data(j).expect("compressed"));
                        entries[i] = Entry::Compressed(at, at + len);
                        pending.push((i, *len));
                    }
                    status => {
                        if matches!(status, UnitStatus::Failed(_)) {
                            report.failed_pages += 1;
                        } else {
                            report.incompressible_pages += 1;
                        }
                        if cfg.policy == Policy::Reject {
                            rejected = true;
                            continue;
                        }
                        let at = arena.len();
                        arena.extend_from_slice(pages[i]);
                        entries[i] = Entry::Raw(at);
                        pending.push((i, PAGE_SIZE));
                    }
                }
            }
            record(&mut store_ns, t0.elapsed().as_nanos(), chunk.len());
            if rejected {
                break; // zswap gives up on the folio at the first failed batch
            }
        }
        if rejected {
            arena.truncate(arena_mark);
            for e in &mut entries[folio.clone()] {
                *e = Entry::Rejected;
            }
            report.rejected_pages += folio.len();
        } else {
            report.same_filled_pages += same_in_folio;
            for &(_, len) in &pending {
                pool.add(len);
                if len == PAGE_SIZE {
                    report.raw_pages += 1;
                } else {
                    report.compressed_pages += 1;
                }
            }
        }
    }

    // Load, in store order, batches of consecutive stored pages.
    let stored: Vec<usize> = (0..n)
        .filter(|&i| !matches!(entries[i], Entry::Rejected | Entry::None))
        .collect();
    let mut load_ns = Vec::with_capacity(stored.len());
    let db = cfg.decompress_batch;
    let mut dest = vec![0u8; db * PAGE_SIZE];
    let mut scratch = vec![0u8; db * PAGE_SIZE];
    let mut comp: [usize; MAX_BATCH_SIZE] = [0; MAX_BATCH_SIZE];
    let mut results: [Option<usize>; MAX_BATCH_SIZE] = [None; MAX_BATCH_SIZE];
    for group in stored.chunks(db) {
        let t0 = Instant::now();
        let mut m = 0;
        for (slot, &i) in group.iter().enumerate() {
            let page = &mut dest[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
            match entries[i] {
                Entry::Same(v) => {
                    let word = v.to_ne_bytes();
                    for w in page.chunks_exact_mut(8) {
                        w.copy_from_slice(&word);
                    }
                }
                Entry::Raw(at) => page.copy_from_slice(&arena[at..at + PAGE_SIZE]),
                Entry::Compressed(..) => {
                    comp[m] = slot;
                    m += 1;
                }
                Entry::None | Entry::Rejected => unreachable!("only stored pages are loaded"),
            }
        }
        let streams = comp[..m].iter().map(|&slot| match entries[group[slot]] {
            Entry::Compressed(a, b) => &arena[a..b],
            _ => unreachable!("slot holds a compressed page"),
        });
        let batch = bd.decompress(streams, &mut scratch)?;
        for (j, r) in results[..m].iter_mut().enumerate() {
            *r = batch.status(j).ok();
        }
        record(&mut load_ns, t0.elapsed().as_nanos(), group.len());

        // Verify (outside the timed region).
        let mut next = 0;
        for (slot, &i) in group.iter().enumerate() {
            let got = if next < m && comp[next] == slot {
                let j = next;
                next += 1;
                match results[j] {
                    Some(PAGE_SIZE) => &scratch[j * PAGE_SIZE..(j + 1) * PAGE_SIZE],
                    _ => {
                        report.mismatches += 1;
                        continue;
                    }
                }
            } else {
                &dest[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE]
            };
            if got != pages[i] {
                report.mismatches += 1;
            }
        }
    }

    store_ns.sort_unstable();
    load_ns.sort_unstable();
    report.store_p50_ns = percentile(&store_ns, 50.0);
    report.store_p99_ns = percentile(&store_ns, 99.0);
    report.load_p50_ns = percentile(&load_ns, 50.0);
    report.load_p99_ns = percentile(&load_ns, 99.0);
    report.payload_bytes = pool.payload;
    report.pool_bytes = pool.bytes;
    report.zspage_bytes = pool.zspage_bytes();
    let held = report.same_filled_pages + report.compressed_pages + report.raw_pages;
    report.effective_ratio =
        (pool.bytes > 0).then(|| (held * PAGE_SIZE) as f64 / pool.bytes as f64);
    Ok(report)
}

/// The whole report: settings and one run per batch size.
#[derive(Debug, Serialize)]
struct Report {
    corpus: String,
    workloads: Vec<String>,
    files: usize,
    pages: usize,
    /// Zero/same-filled pages the capture counted but left out of the
    /// corpus; not replayed (zswap would keep them as values, no pool space).
    omitted_same_filled_pages: u64,
    mode: String,
    table: Option<String>,
    format: Option<String>,
    level: Option<String>,
    folio: &'static str,
    engines: usize,
    policy: &'static str,
    pool_model: &'static str,
    latency: &'static str,
    runs: Vec<RunReport>,
}

/// A corpus read into memory.
struct Loaded {
    /// All pages of all workloads, in order, back to back.
    data: Vec<u8>,
    /// Workload names.
    workloads: Vec<String>,
    /// Files read.
    files: usize,
    /// Zero and same-filled pages the capture counted but did not store.
    omitted_same_filled: u64,
}

/// Reads a corpus (snapshots or raw `.pages` files, through
/// `cannery_capture::corpus`): every workload in order, up to `max_pages`.
fn load_corpus(path: &Path, max_pages: Option<usize>) -> anyhow::Result<Loaded> {
    let corpus =
        Corpus::open(path).with_context(|| format!("cannot open corpus {}", path.display()))?;
    let limit = max_pages.unwrap_or(usize::MAX).saturating_mul(PAGE_SIZE);
    let mut loaded = Loaded {
        data: Vec::new(),
        workloads: Vec::new(),
        files: 0,
        omitted_same_filled: 0,
    };
    'all: for w in &corpus.workloads {
        loaded.workloads.push(w.name.clone());
        for f in &w.files {
            let reader = open_pages(f)?;
            let counts = &reader.header().counts;
            loaded.omitted_same_filled += counts.zero + counts.same_filled;
            loaded.files += 1;
            for page in reader {
                let page = page?;
                loaded.data.extend_from_slice(&page.data);
                if loaded.data.len() >= limit {
                    loaded.data.truncate(limit);
                    break 'all;
                }
            }
        }
    }
    if loaded.data.is_empty() {
        bail!("the corpus {} has no pages", path.display());
    }
    Ok(loaded)
}

/// Runs `cannery zswap-sim`.
pub fn zswap_sim(args: ZswapSimArgs) -> anyhow::Result<()> {
    let loaded = load_corpus(&args.corpus, args.max_pages)?;
    let corpus = &loaded.data;
    let engines = match args.engines {
        Some(e) => e as usize,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8),
    };
    let batches: Vec<usize> = match args.compress_batch {
        Some(b) => vec![b as usize],
        None => SWEEP.to_vec(),
    };
    let policy = if args.reject_incompressible {
        Policy::Reject
    } else {
        Policy::StoreRaw
    };
    let ours = matches!(
        args.mode,
        SimMode::Canned | SimMode::Fixed | SimMode::Dynamic
    );
    let (mode, format) = match args.mode {
        SimMode::Canned => (Some(Mode::Canned), args.format),
        SimMode::Fixed => (Some(Mode::Fixed), Format::Deflate),
        SimMode::Dynamic => (Some(Mode::Dynamic), Format::Deflate),
        SimMode::Zstd | SimMode::Lz4 => (None, Format::Deflate),
    };
    let table = match (args.mode, &args.table) {
        (SimMode::Canned, Some(spec)) => Some(super::load_table(spec)?),
        (SimMode::Canned, None) => bail!("canned mode needs --table (a built-in name or a file)"),
        _ => None,
    };
    let peer_kind = match args.mode {
        SimMode::Zstd => Some(PeerKind::Zstd(args.zstd_level)),
        SimMode::Lz4 => Some(PeerKind::Lz4),
        _ => None,
    };

    let mut runs = Vec::new();
    for &b in &batches {
        let cfg = RunConfig {
            compress_batch: b,
            decompress_batch: args.decompress_batch.map_or(b, |d| d as usize),
            folio: args.folio,
            policy,
        };
        let report = match (mode, &peer_kind) {
            (Some(mode), _) => {
                let t = table.as_ref();
                let enc = (0..engines)
                    .map(|_| Encoder::new(mode, format, args.level, t))
                    .collect::<Result<Vec<_>, _>>()
                    .context("cannot set up the encoder")?;
                let dec = (0..engines)
                    .map(|_| Decoder::new(mode, format, t))
                    .collect::<Option<Vec<_>>>()
                    .context("cannot set up the decoder")?;
                run(corpus, cfg, enc, dec)?
            }
            (None, Some(kind)) => {
                let peers = || {
                    (0..engines)
                        .map(|_| Peer::new(kind.clone(), None).map(PeerCodec))
                        .collect::<Result<Vec<_>, _>>()
                };
                run(corpus, cfg, peers()?, peers()?)?
            }
            (None, None) => unreachable!("every mode has a codec"),
        };
        runs.push(report);
    }

    let report = Report {
        corpus: args.corpus.display().to_string(),
        workloads: loaded.workloads,
        files: loaded.files,
        pages: corpus.len() / PAGE_SIZE,
        omitted_same_filled_pages: loaded.omitted_same_filled,
        mode: match &peer_kind {
            Some(k) => k.to_string(),
            None => args
                .mode
                .to_possible_value()
                .expect("named")
                .get_name()
                .to_string(),
        },
        table: table
            .as_ref()
            .map(|t| t.name.clone().unwrap_or_else(|| t.id())),
        format: (args.mode == SimMode::Canned).then(|| format.to_string()),
        level: ours.then(|| args.level.to_string()),
        folio: args.folio.name(),
        engines,
        policy: match policy {
            Policy::StoreRaw => "store-raw",
            Policy::Reject => "reject-folio",
        },
        pool_model: "zsmalloc x86-64 4 KiB pages: classes 32..4096 step 16, +8-byte handle, \
                     merged classes, zspages of up to 8 pages (a model)",
        latency: "per page: batch wall time / pages in the batch; nearest-rank percentiles",
        runs,
    };
    let mismatches: usize = report.runs.iter().map(|r| r.mismatches).sum();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    if mismatches > 0 {
        bail!("{mismatches} loaded pages differ from the originals");
    }
    Ok(())
}

fn print_text(r: &Report) {
    println!(
        "corpus {} ({} workloads, {} files, {} pages; {} zero/same-filled pages left out by the capture), mode {}{}{}, folio {}, {} engines, policy {}",
        r.corpus,
        r.workloads.len(),
        r.files,
        r.pages,
        r.omitted_same_filled_pages,
        r.mode,
        r.table
            .as_ref()
            .map(|t| format!(" table {t}"))
            .unwrap_or_default(),
        r.format
            .as_ref()
            .map(|f| format!(" format {f}"))
            .unwrap_or_default(),
        r.folio,
        r.engines,
        r.policy
    );
    println!("pool model: {}", r.pool_model);
    println!("latency: {}", r.latency);
    if let Some(f) = r.runs.first() {
        println!(
            "pages: {} same-filled, {} compressed, {} incompressible, {} failed, {} stored raw, {} rejected",
            f.same_filled_pages,
            f.compressed_pages,
            f.incompressible_pages,
            f.failed_pages,
            f.raw_pages,
            f.rejected_pages
        );
    }
    println!(
        "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>7} {:>8} {:>10}",
        "cbatch",
        "dbatch",
        "store p50",
        "store p99",
        "load p50",
        "load p99",
        "pool bytes",
        "zspage bytes",
        "ratio",
        "rejected",
        "mismatches"
    );
    for x in &r.runs {
        println!(
            "{:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12} {:>12} {:>7} {:>8} {:>10}",
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
            x.rejected_pages,
            x.mismatches
        );
    }
}

fn ns(v: u64) -> String {
    if v >= 10_000 {
        format!("{:.1} us", v as f64 / 1000.0)
    } else {
        format!("{v} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zsmalloc_classes() {
        let z = Zsmalloc::new();
        assert_eq!(Zsmalloc::CLASSES, 255);
        // len + 8 rounded up to 32 + 16k.
        assert_eq!(z.class_size(1), 32);
        assert_eq!(z.class_size(24), 32);
        assert_eq!(z.class_size(25), 48);
        assert_eq!(z.class_size(40), 48);
        assert_eq!(z.class_size(41), 64);
        assert_eq!(z.class_size(100), 112);
        // 112: 7 pages hold 256 objects exactly; 128: 1 page holds 32.
        assert_eq!(z.geometry(100), (7, 256));
        assert_eq!(z.geometry(120), (1, 32));
        // Raw pages and anything above 4088 bytes: the 4096 class.
        assert_eq!(z.class_size(4088), 4096);
        assert_eq!(z.class_size(PAGE_SIZE), 4096);
        // 4016 would waste 80 bytes per page in every zspage length, so it
        // holds one object per page like 4096, and is merged into it.
        assert_eq!(z.class_size(4000), 4096);
    }

    #[test]
    fn merged_classes_are_never_smaller_than_the_request() {
        let z = Zsmalloc::new();
        for len in 1..=PAGE_SIZE {
            let c = z.class_size(len);
            assert!(c >= (len + Zsmalloc::HANDLE).min(PAGE_SIZE), "len {len}");
            assert!(c <= PAGE_SIZE && c % 16 == 0, "len {len}");
            assert!(
                c >= z.class_size(len.saturating_sub(1).max(1)),
                "monotone at {len}"
            );
        }
    }

    #[test]
    fn zspage_bytes_rounds_up_to_whole_zspages() {
        let mut p = Pool::new();
        p.add(100); // class 112: 7 pages per zspage
        p.add(100);
        p.add(PAGE_SIZE);
        assert_eq!(p.bytes, 112 * 2 + 4096);
        assert_eq!(p.zspage_bytes(), 7 * PAGE_SIZE + PAGE_SIZE);
    }

    #[test]
    fn same_filled_pages() {
        assert_eq!(same_filled(&[0; PAGE_SIZE]), Some(0));
        let p: Vec<u8> = (0..PAGE_SIZE).map(|i| (i % 8) as u8).collect();
        assert_eq!(
            same_filled(&p),
            Some(u64::from_ne_bytes([0, 1, 2, 3, 4, 5, 6, 7]))
        );
        let q: Vec<u8> = (0..PAGE_SIZE).map(|i| (i % 3) as u8).collect();
        assert_eq!(same_filled(&q), None);
    }

    #[test]
    fn folio_patterns() {
        assert_eq!(folios(FolioSize::K16, 9), vec![0..4, 4..8, 8..9]);
        assert_eq!(
            folios(FolioSize::Mixed, 40),
            vec![0..16, 16..17, 17..25, 25..29, 29..40]
        );
        assert_eq!(folios(FolioSize::K4, 2), vec![0..1, 1..2]);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let s: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&s, 50.0), 50);
        assert_eq!(percentile(&s, 99.0), 99);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use cannery_codec::DecodeError;

    /// Decodes correctly, then flips a bit of the page.
    struct Corrupting(Decoder);

    impl PageDecompressor for Corrupting {
        type Error = DecodeError;
        fn decompress_page(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
            let n = self.0.decompress(data, out)?;
            if n > 0 {
                out[n / 2] ^= 1;
            }
            Ok(n)
        }
    }

    fn corpus() -> Vec<u8> {
        let mut c = Vec::new();
        for i in 0..5usize {
            if i == 2 {
                c.extend_from_slice(&[0u8; PAGE_SIZE]);
            } else {
                c.extend((0..PAGE_SIZE).map(|k| (k / (i + 7)) as u8));
            }
        }
        c
    }

    fn cfg() -> RunConfig {
        RunConfig {
            compress_batch: 2,
            decompress_batch: 3,
            folio: FolioSize::K16,
            policy: Policy::StoreRaw,
        }
    }

    fn encoders() -> Vec<Encoder> {
        (0..2)
            .map(|_| Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap())
            .collect()
    }

    #[test]
    fn loads_are_verified_and_mismatches_counted() {
        let c = corpus();
        let dec = || Decoder::new(Mode::Fixed, Format::Deflate, None).unwrap();
        let good = run(&c, cfg(), encoders(), vec![dec(), dec()]).unwrap();
        assert_eq!(good.mismatches, 0);
        assert_eq!(good.compressed_pages, 4);
        assert_eq!(good.same_filled_pages, 1);
        let bad = run(
            &c,
            cfg(),
            encoders(),
            vec![Corrupting(dec()), Corrupting(dec())],
        )
        .unwrap();
        // Every compressed page is caught; the same-filled one is not decoded.
        assert_eq!(bad.mismatches, 4);
        assert_eq!(bad.pool_bytes, good.pool_bytes);
    }
}
