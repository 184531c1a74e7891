//! Per-page latency of the batch path (canned IAA format, kernel-2024 table,
//! level fast): compression and decompression batches of 1, 2, 4, 8, 16 and
//! 32 units on 1 and 2 workers, next to the plain single-page calls that
//! batch 1 must not be slower than.
//!
//! Each criterion iteration is one page, so the times criterion prints are
//! per-page latencies (a batch's time divided by its units), except in
//! `batch/round-trip`, where an iteration is one call of units that each
//! take a fixed 3 µs: there the time beyond 3 µs of two units on two
//! workers is the hand-off's round trip. Pages come from
//! `CANNERY_BENCH_PAGES` (a raw `.pages` file) or the synthetic mix of
//! `cannery_benches::pages`. Run briefly with:
//! `cargo bench -p cannery-benches --bench batch -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::{Duration, Instant};

use cannery_benches::{pages, PAGE_SIZE};
use cannery_codec::{Level, Mode, Outcome, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::batch::{BatchCompressor, BatchDecompressor, Bound};
use cannery_engines::{Capabilities, Engine, EngineError, Job};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const BATCHES: [usize; 6] = [1, 2, 4, 8, 16, 32];
const WORKERS: [usize; 2] = [1, 2];
/// Pages cycled through; a multiple of every batch size.
const N: usize = 256;

/// Cannery's software engine, canned with `table` at the fast level.
fn encoder(table: &Table) -> Bound<Software> {
    let mut s = Software::with_level(Level::Fast);
    s.prepare(Mode::Canned, Some(table))
        .expect("kernel table encodes");
    Bound::new(s, Mode::Canned, Some(table))
}

fn decoder(table: &Table) -> Bound<Software> {
    encoder(table)
}

/// Scales a run of whole batches to the `iters` pages criterion asked for.
fn per_page(elapsed: Duration, iters: u64, pages_done: u64) -> Duration {
    elapsed.mul_f64(iters as f64 / pages_done as f64)
}

fn compress(c: &mut Criterion) {
    let pages = pages(N).expect("bench pages");
    let table = Table::kernel_2024();
    let mut g = c.benchmark_group("batch/compress");

    let mut plain = encoder(&table);
    let mut out = Vec::with_capacity(2 * PAGE_SIZE);
    let mut i = 0;
    g.bench_function("plain", |b| {
        b.iter(|| {
            let r = plain.compress_page(black_box(&pages[i % N]), &mut out);
            i += 1;
            black_box(r)
        })
    });

    for workers in WORKERS {
        for batch in BATCHES {
            let codecs = (0..workers).map(|_| encoder(&table)).collect();
            let mut bc = BatchCompressor::new(batch, codecs).expect("batch");
            let mut k = 0;
            g.bench_with_input(
                BenchmarkId::new(format!("engines{workers}"), batch),
                &batch,
                |b, &batch| {
                    b.iter_custom(|iters| {
                        let calls = iters.div_ceil(batch as u64);
                        let start = Instant::now();
                        for _ in 0..calls {
                            let base = (k * batch) % N;
                            k += 1;
                            let units = pages[base..base + batch].iter().map(|p| &p[..]);
                            black_box(bc.compress(units).expect("batch call").len());
                        }
                        per_page(start.elapsed(), iters, calls * batch as u64)
                    })
                },
            );
        }
    }
    g.finish();
}

fn decompress(c: &mut Criterion) {
    let pages = pages(N).expect("bench pages");
    let table = Table::kernel_2024();
    let mut enc = encoder(&table);
    let mut compressed = Vec::new();
    for p in &pages {
        let mut out = Vec::new();
        if let Ok(Outcome::Compressed(n)) = enc.compress_page(p, &mut out) {
            out.truncate(n);
            compressed.push(out);
        }
    }
    assert!(!compressed.is_empty(), "no bench page compresses");
    // Cycle the compressible pages' streams up to N.
    let streams: Vec<&[u8]> = (0..N)
        .map(|i| &compressed[i % compressed.len()][..])
        .collect();
    let mut g = c.benchmark_group("batch/decompress");

    let mut plain = decoder(&table);
    let mut page = vec![0u8; PAGE_SIZE];
    let mut i = 0;
    g.bench_function("plain", |b| {
        b.iter(|| {
            let r = plain.decompress_page(black_box(streams[i % N]), &mut page);
            i += 1;
            black_box(r)
        })
    });

    for workers in WORKERS {
        for batch in BATCHES {
            let codecs = (0..workers).map(|_| decoder(&table)).collect();
            let mut bd = BatchDecompressor::new(batch, codecs).expect("batch");
            let mut out = vec![0u8; batch * PAGE_SIZE];
            let mut k = 0;
            g.bench_with_input(
                BenchmarkId::new(format!("engines{workers}"), batch),
                &batch,
                |b, &batch| {
                    b.iter_custom(|iters| {
                        let calls = iters.div_ceil(batch as u64);
                        let start = Instant::now();
                        for _ in 0..calls {
                            let base = (k * batch) % N;
                            k += 1;
                            let units = streams[base..base + batch].iter().copied();
                            let r = bd.decompress(units, &mut out).expect("batch call");
                            black_box(r.len());
                        }
                        per_page(start.elapsed(), iters, calls * batch as u64)
                    })
                },
            );
        }
    }
    g.finish();
}

fn handoff(c: &mut Criterion) {
    let pages = pages(N).expect("bench pages");
    let mut g = c.benchmark_group("batch/handoff");
    for workers in WORKERS {
        for batch in [1, 8, 32] {
            let mut bc = BatchCompressor::new(batch, spin(workers, Duration::ZERO)).expect("batch");
            let mut k = 0;
            g.bench_with_input(
                BenchmarkId::new(format!("engines{workers}"), batch),
                &batch,
                |b, &batch| {
                    b.iter_custom(|iters| {
                        let calls = iters.div_ceil(batch as u64);
                        let start = Instant::now();
                        for _ in 0..calls {
                            let base = (k * batch) % N;
                            k += 1;
                            let units = pages[base..base + batch].iter().map(|p| &p[..]);
                            black_box(bc.compress(units).expect("batch call").len());
                        }
                        per_page(start.elapsed(), iters, calls * batch as u64)
                    })
                },
            );
        }
    }
    g.finish();
}

/// A codec that busy-waits a fixed time a unit (no time: it does no work,
/// and measures the batch path itself); with 3 µs, the round trip to a
/// worker is what a batch of two units on two workers takes beyond one.
struct Spin(Duration);

/// `n` spinning engines, each `unit` a unit.
fn spin(n: usize, unit: Duration) -> Vec<Bound<Spin>> {
    (0..n)
        .map(|_| Bound::new(Spin(unit), Mode::Fixed, None))
        .collect()
}

impl Engine for Spin {
    fn name(&self) -> &'static str {
        "spin"
    }

    fn capabilities(&self) -> &Capabilities {
        Capabilities::unchecked()
    }

    fn decompress_job(&mut self, _: Job<'_>, _: &mut [u8]) -> Result<usize, EngineError> {
        unreachable!("only compresses")
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        let unit = job.data;
        if !self.0.is_zero() {
            let start = Instant::now();
            while start.elapsed() < self.0 {
                std::hint::spin_loop();
            }
        }
        out.clear();
        out.push(unit[0]);
        Ok(Outcome::Compressed(1))
    }
}

/// The hand-off's round trip, per call: `plain` is one 3 µs unit on the
/// calling thread; `engines2` two such units, one on the caller and one on
/// the worker (its excess over `plain` is the round trip: the worker's
/// pickup plus the return of its lane); `engines1` the same two units on the
/// caller alone (6 µs of work), the peer a second worker has to beat.
fn round_trip(c: &mut Criterion) {
    const UNIT: Duration = Duration::from_micros(3);
    let page = vec![1u8; PAGE_SIZE];
    let mut g = c.benchmark_group("batch/round-trip");
    for (name, workers, units) in [("plain", 1, 1), ("engines1", 1, 2), ("engines2", 2, 2)] {
        let mut bc = BatchCompressor::new(units, spin(workers, UNIT)).expect("batch");
        g.bench_function(format!("spin-3us/{name}"), |b| {
            b.iter(|| {
                black_box(
                    bc.compress((0..units).map(|_| &page[..]))
                        .expect("call")
                        .len(),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, compress, decompress, handoff, round_trip);
criterion_main!(benches);
