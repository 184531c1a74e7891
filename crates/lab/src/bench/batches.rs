//! Batches as zswap hands them over (8 pages in the IAA batching series, 16
//! for a 64 KiB folio): each workload's held-out pages in batches of
//! [`BATCH_SIZES`] through the batch path (`cannery_engines::batch`) on one
//! core (one worker: the calling thread), for canned-fast and the two peers
//! zswap offers beside it, lz4 and zstd -1 ([`in_batches`]). A page's time
//! is its batch's wall time over the pages in it, the fastest of the
//! repetitions as in the warm figures; every batch's streams decode back to
//! its pages. Batch 1 is the plain single-page call; larger batches pay for
//! what the batch path adds and gain what it overlaps, so the same pages one
//! after another are the figure to beat.

use std::time::Instant;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::Level;
use cannery_engines::backend::software::Software;
use cannery_engines::peer::{Peer, PeerKind};
use cannery_engines::{BatchCompressor, BatchDecompressor, Bound, Engine, UnitStatus};

use super::{peer_row, relative_ns, BenchCodec, BenchError, BenchResult, BenchWorkload};
use crate::figures::percentile;
use crate::mode_key::ModeKey;
use crate::tabular::{Align, Grid, Style};
use crate::units::micros;

/// Pages per batch measured.
pub const BATCH_SIZES: [usize; 3] = [1, 8, 16];

/// One codec's per-page times at one batch size (only whole batches of
/// the workload's held-out pages are measured).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct BatchFigures {
    /// Pages per batch.
    pub batch: usize,
    /// Pages measured (whole batches).
    pub pages: usize,
    /// Median compress time per page (batch time / its pages), ns.
    pub compress_ns_p50: u64,
    /// 99th percentile compress time per page, ns.
    pub compress_ns_p99: u64,
    /// Median decompress time per page, ns (compressible pages' batches).
    pub decompress_ns_p50: u64,
    /// 99th percentile decompress time per page, ns.
    pub decompress_ns_p99: u64,
    /// Median compress time per page of the same batches done as plain
    /// single-page calls one after another (no batch path), ns: the
    /// figure a batch has to beat.
    pub sequential_compress_ns_p50: u64,
    /// As `sequential_compress_ns_p50`, decompressing, ns.
    pub sequential_decompress_ns_p50: u64,
}

/// Whether `cannery bench` measures `codec` in batches: canned-fast, lz4
/// and zstd -1.
pub fn in_batches(codec: &BenchCodec) -> bool {
    match codec {
        BenchCodec::Cannery { key, .. } => *key == ModeKey::Canned(Level::Fast),
        BenchCodec::Peer(kind, None) => matches!(kind, PeerKind::Lz4 | PeerKind::Zstd(1)),
        _ => false,
    }
}

/// Measures `codec` on `pages` in batches of each of [`BATCH_SIZES`].
pub fn bench_batches(
    workload: &str,
    codec: &BenchCodec,
    pages: &[Vec<u8>],
    reps: usize,
) -> Result<Vec<BatchFigures>, BenchError> {
    let setup = |message: String| BenchError::Setup {
        codec: codec.key().to_string(),
        message,
    };
    match codec {
        BenchCodec::Cannery {
            mode,
            format,
            level,
            table,
            ..
        } => measure(workload, codec, pages, reps, || {
            Software::bound(*mode, *format, *level, table.as_deref())
                .map_err(|e| setup(e.to_string()))
        }),
        BenchCodec::Peer(kind, dict) => measure(workload, codec, pages, reps, || {
            Peer::new(kind.clone(), dict.as_deref())
                .map(Peer::bound)
                .map_err(|e| setup(e.to_string()))
        }),
        BenchCodec::Qpl(..) => Err(setup("not measured in batches".into())),
    }
}

/// Records `n` pages of a batch that took `ns`.
fn record(times: &mut Vec<u64>, ns: u64, n: usize) {
    times.extend(std::iter::repeat_n(ns / n as u64, n));
}

fn measure<E: Engine + Send + 'static>(
    workload: &str,
    codec: &BenchCodec,
    pages: &[Vec<u8>],
    reps: usize,
    lane: impl Fn() -> Result<Bound<E>, BenchError>,
) -> Result<Vec<BatchFigures>, BenchError> {
    let key = codec.key().to_string();
    let batch_error = |e: cannery_engines::BatchError| BenchError::Setup {
        codec: key.clone(),
        message: e.to_string(),
    };
    let round_trip = |page: usize, message: String| BenchError::RoundTrip {
        codec: key.clone(),
        workload: workload.to_string(),
        page,
        message,
    };
    if pages.is_empty() {
        return Err(BenchError::Empty(format!(
            "{workload}: no pages to measure in batches"
        )));
    }
    let mut figures = Vec::new();
    for batch in BATCH_SIZES {
        let whole = pages.len() / batch * batch;
        if whole == 0 {
            continue;
        }
        let mut bc = BatchCompressor::new(batch, vec![lane()?]).map_err(batch_error)?;
        let mut bd = BatchDecompressor::new(batch, vec![lane()?]).map_err(batch_error)?;
        let mut plain = lane()?;
        let mut back = vec![0u8; batch * PAGE_SIZE];
        let (mut ctimes, mut dtimes) = (Vec::with_capacity(whole), Vec::with_capacity(whole));
        let (mut cseq, mut dseq) = (Vec::with_capacity(whole), Vec::with_capacity(whole));
        let mut out = Vec::with_capacity(2 * PAGE_SIZE);
        for (k, chunk) in pages[..whole].chunks_exact(batch).enumerate() {
            let units = || chunk.iter().map(|p| &p[..]);
            // Batch and plain calls take turns going first, so that neither
            // is always the warmer one; each keeps its fastest repetition.
            let (mut best, mut best_seq) = (u64::MAX, u64::MAX);
            for rep in 0..reps.max(1) {
                for plain_turn in [rep % 2 == 1, rep % 2 == 0] {
                    let t = Instant::now();
                    if plain_turn {
                        for page in units() {
                            plain
                                .compress_page(page, &mut out)
                                .map_err(|e| round_trip(k * batch, e.to_string()))?;
                        }
                        best_seq = best_seq.min(t.elapsed().as_nanos() as u64);
                    } else {
                        bc.compress(units()).map_err(batch_error)?;
                        best = best.min(t.elapsed().as_nanos() as u64);
                    }
                }
            }
            record(&mut ctimes, best, batch);
            record(&mut cseq, best_seq, batch);
            // The streams of one more call, and which page each belongs to.
            let done = bc.compress(units()).map_err(batch_error)?;
            let mut streams: Vec<(usize, &[u8])> = Vec::with_capacity(batch);
            for i in 0..batch {
                match (done.status(i), done.data(i)) {
                    (_, Some(s)) => streams.push((k * batch + i, s)),
                    (UnitStatus::Failed(e), _) => {
                        return Err(round_trip(k * batch + i, e.to_string()))
                    }
                    _ => {} // incompressible: stored raw, nothing to decode
                }
            }
            if streams.is_empty() {
                continue;
            }
            // Both turns are checked the same way after their timing (every
            // slot against its page), so each is timed after the same work:
            // a check only after batch turns would leave the plain calls'
            // tables warmer.
            let (mut best, mut best_seq) = (u64::MAX, u64::MAX);
            let mut sizes: Vec<Result<usize, String>> = Vec::with_capacity(batch);
            for rep in 0..reps.max(1) {
                for plain_turn in [rep % 2 == 1, rep % 2 == 0] {
                    sizes.clear();
                    let t = Instant::now();
                    if plain_turn {
                        for (slot, &(_, stream)) in streams.iter().enumerate() {
                            let out = &mut back[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
                            sizes.push(
                                plain
                                    .decompress_page(stream, out)
                                    .map_err(|e| e.to_string()),
                            );
                        }
                        best_seq = best_seq.min(t.elapsed().as_nanos() as u64);
                    } else {
                        let got = bd
                            .decompress(streams.iter().map(|s| s.1), &mut back)
                            .map_err(batch_error)?;
                        best = best.min(t.elapsed().as_nanos() as u64);
                        sizes.extend(
                            (0..streams.len())
                                .map(|slot| got.status(slot).map_err(|e| e.to_string())),
                        );
                    }
                    for (slot, (&(page, _), size)) in streams.iter().zip(&sizes).enumerate() {
                        let out = &back[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
                        match size {
                            Ok(PAGE_SIZE) if out == &pages[page][..] => {}
                            Ok(n) => {
                                return Err(round_trip(
                                    page,
                                    format!("decoded {n} bytes that differ"),
                                ))
                            }
                            Err(e) => return Err(round_trip(page, e.clone())),
                        }
                    }
                }
            }
            record(&mut dtimes, best, streams.len());
            record(&mut dseq, best_seq, streams.len());
        }
        for v in [&mut ctimes, &mut dtimes, &mut cseq, &mut dseq] {
            v.sort_unstable();
        }
        figures.push(BatchFigures {
            batch,
            pages: whole,
            compress_ns_p50: percentile(&ctimes, 50.0),
            compress_ns_p99: percentile(&ctimes, 99.0),
            decompress_ns_p50: percentile(&dtimes, 50.0),
            decompress_ns_p99: percentile(&dtimes, 99.0),
            sequential_compress_ns_p50: percentile(&cseq, 50.0),
            sequential_decompress_ns_p50: percentile(&dseq, 50.0),
        });
    }
    Ok(figures)
}

/// Adds each batched codec's [`BatchFigures`] to its row of `results`.
pub fn bench_workload_batches(
    w: &BenchWorkload,
    codecs: &[BenchCodec],
    reps: usize,
    results: &mut [BenchResult],
    progress: &mut dyn FnMut(&ModeKey),
) -> Result<(), BenchError> {
    for codec in codecs.iter().filter(|c| in_batches(c)) {
        progress(&codec.key());
        let figures = bench_batches(&w.name, codec, &w.test, reps)?;
        if let Some(r) = results
            .iter_mut()
            .find(|r| r.workload == w.name && r.codec == codec.key())
        {
            r.batches = figures;
        }
    }
    Ok(())
}

/// The batch section of the markdown report: per workload, each batched
/// codec's per-page times at each batch size, divided by libdeflate -1's
/// single-page warm time and by lz4's at the same batch size.
pub(super) fn markdown_section(workloads: &[BenchWorkload], results: &[BenchResult]) -> String {
    let mut s = String::from("## Batches: one core, per page\n\n");
    s += "Each workload's held-out pages in batches of 1, 8 and 16 through the batch path \
          (`BatchCompressor`, `BatchDecompressor`) with one worker, the calling thread: \
          a page's time is its batch's wall time over its pages, the fastest of the \
          repetitions, p50/p99 over pages in µs. `/seq` divides by the p50 of the same \
          batches done as plain single-page calls one after another (no batch path), \
          `/ld1` by libdeflate -1's single-page warm p50 above, `/lz4` by lz4's at the \
          same batch size. Batch 1 is the plain single-page call; a batch's pages are \
          less warm than one page timed again and again, so batches of 8 and 16 \
          compare with `/seq`, not with batch 1.\n\n";
    for w in workloads {
        let rs: Vec<&BenchResult> = results.iter().filter(|r| r.workload == w.name).collect();
        let ld1 = peer_row(&rs, PeerKind::Libdeflate(1));
        let lz4 = peer_row(&rs, PeerKind::Lz4);
        let mut g = Grid::new(&[
            ("codec", Align::Left),
            ("batch", Align::Right),
            ("comp p50 µs", Align::Right),
            ("comp p99 µs", Align::Right),
            ("decomp p50 µs", Align::Right),
            ("decomp p99 µs", Align::Right),
            ("comp /seq", Align::Right),
            ("decomp /seq", Align::Right),
            ("comp /ld1", Align::Right),
            ("decomp /ld1", Align::Right),
            ("decomp /lz4", Align::Right),
        ]);
        for r in rs.iter().filter(|r| !r.batches.is_empty()) {
            for b in &r.batches {
                let lz4_same = lz4.and_then(|l| l.batches.iter().find(|x| x.batch == b.batch));
                g.row(vec![
                    r.codec.to_string(),
                    b.batch.to_string(),
                    micros(b.compress_ns_p50),
                    micros(b.compress_ns_p99),
                    micros(b.decompress_ns_p50),
                    micros(b.decompress_ns_p99),
                    relative_ns(b.compress_ns_p50, Some(b.sequential_compress_ns_p50)),
                    relative_ns(b.decompress_ns_p50, Some(b.sequential_decompress_ns_p50)),
                    relative_ns(b.compress_ns_p50, ld1.map(|x| x.compress_ns_p50)),
                    relative_ns(b.decompress_ns_p50, ld1.map(|x| x.decompress_ns_p50)),
                    relative_ns(b.decompress_ns_p50, lz4_same.map(|x| x.decompress_ns_p50)),
                ]);
            }
        }
        s += &format!("### {} (batches)\n\n", w.name);
        s += &g.render(Style::Markdown);
        s += "\n";
    }
    s
}
