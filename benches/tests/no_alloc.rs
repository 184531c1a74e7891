//! The batch path allocates nothing per unit in steady state: after a
//! warm-up call, compression and decompression batches make no heap
//! allocation at all in fixed and canned modes (canned decoding too), and
//! otherwise exactly as many as the plain single-page calls on the same
//! pages (the dynamic encoder builds a table per page; the deflate inflater
//! builds decode tables per dynamic block). Counted with a global allocator
//! over all threads, so the batch path's worker threads are included.
//!
//! Up to 4 one-time allocations per worker are allowed (a lane's output
//! buffer that first meets a unit which needs more room, in whichever lane
//! timing puts it). Each measured window covers 1280 units, so per-unit
//! allocation would show as at least 1280.
//!
//! The counter is process-wide, so this test runs without libtest's harness
//! (`harness = false` in Cargo.toml): no other test, and no harness thread
//! that allocates when it first blocks waiting for the test, can add to it.

use std::alloc::System;

use cannery_benches::{pages, PAGE_SIZE};
use cannery_codec::{Format, Level, Mode, Outcome, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::batch::{BatchCompressor, BatchDecompressor, Bound};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ROUNDS: usize = 20;

fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    region.change().allocations + region.change().reallocations
}

fn main() {
    batches_allocate_nothing_per_unit();
    println!("no_alloc: batches allocate nothing per unit: ok");
}

fn batches_allocate_nothing_per_unit() {
    let table = Table::kernel_2024();
    let pages = pages(64).unwrap();
    let units = || pages.iter().map(|p| &p[..]);
    for (mode, format) in [
        (Mode::Canned, Format::Iaa),
        (Mode::Fixed, Format::Deflate),
        (Mode::Dynamic, Format::Deflate),
    ] {
        // Cannery's software engine, its encoder and decoder built up front.
        let enc = || {
            let mut s = Software::with_format(Level::Fast, format);
            s.prepare(mode, Some(&table)).unwrap();
            Bound::new(s, mode, Some(&table))
        };
        let dec = enc;
        for workers in [1, 2, 3] {
            for batch in [1, 8, 32] {
                let mut bc =
                    BatchCompressor::new(batch, (0..workers).map(|_| enc()).collect()).unwrap();
                let mut bd =
                    BatchDecompressor::new(batch, (0..workers).map(|_| dec()).collect()).unwrap();
                let mut plain = enc();
                let mut out = Vec::with_capacity(2 * PAGE_SIZE);

                // Streams to decompress, and a warm-up of every buffer.
                let mut streams = Vec::new();
                for p in &pages {
                    if let Ok(Outcome::Compressed(n)) = plain.compress_page(p, &mut out) {
                        streams.push(out[..n].to_vec());
                    }
                }
                let mut folio = vec![0u8; batch * PAGE_SIZE];
                let all: Vec<&[u8]> = units().collect();
                for chunk in all.chunks(batch) {
                    bc.compress(chunk.iter().copied()).unwrap();
                }
                for chunk in streams.chunks(batch) {
                    bd.decompress(chunk.iter().map(|s| &s[..]), &mut folio)
                        .unwrap();
                }

                let plain_allocs = allocations(|| {
                    for _ in 0..ROUNDS {
                        for p in &pages {
                            plain.compress_page(p, &mut out).unwrap();
                        }
                    }
                });
                let batch_allocs = allocations(|| {
                    for _ in 0..ROUNDS {
                        for chunk in all.chunks(batch) {
                            bc.compress(chunk.iter().copied()).unwrap();
                        }
                    }
                });
                let what = format!("{mode} {format} workers {workers} batch {batch}");
                let slack = 4 * (workers - 1);
                assert!(batch_allocs >= plain_allocs, "compress, {what}");
                assert!(
                    batch_allocs <= plain_allocs + slack,
                    "compress, {what}: {batch_allocs} allocations, plain calls {plain_allocs}"
                );
                if mode != Mode::Dynamic {
                    assert_eq!(plain_allocs, 0, "plain compress, {what}");
                }
                let decode_allocs = allocations(|| {
                    for _ in 0..ROUNDS {
                        for chunk in streams.chunks(batch) {
                            bd.decompress(chunk.iter().map(|s| &s[..]), &mut folio)
                                .unwrap();
                        }
                    }
                });
                let mut plain_dec = dec();
                let mut page = vec![0u8; PAGE_SIZE];
                let plain_decode_allocs = allocations(|| {
                    for _ in 0..ROUNDS {
                        for s in &streams {
                            plain_dec.decompress_page(s, &mut page).unwrap();
                        }
                    }
                });
                assert!(decode_allocs >= plain_decode_allocs, "decompress, {what}");
                assert!(
                    decode_allocs <= plain_decode_allocs + slack,
                    "decompress, {what}: {decode_allocs} allocations, plain calls {plain_decode_allocs}"
                );
                if mode == Mode::Canned {
                    assert_eq!(plain_decode_allocs, 0, "plain decompress, {what}");
                }
            }
        }
    }
}
