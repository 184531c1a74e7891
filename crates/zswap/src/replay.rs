//! The replay engine: [`run`] stores a corpus folio by folio through a
//! [`BatchCompressor`] into a modelled zsmalloc [`Pool`], then loads every
//! stored page back through a [`BatchDecompressor`] and checks it (the
//! model is described in the crate doc).
//!
//! One run is one batch size; sweeping sizes, choosing codecs and reading
//! corpora are the caller's. Pages are held in memory, back to back; no
//! swap device, no frees, no reclaim order.

use std::time::Instant;

use cannery_capture::same_filled;
use cannery_codec::constants::PAGE_SIZE;
use cannery_engines::batch::{
    BatchCompressor, BatchDecompressor, Bound, UnitStatus, MAX_BATCH_SIZE,
};
use cannery_engines::Engine;
use cannery_lab::figures::{self, percentile};

use crate::folio::{folios, FolioSize};
use crate::report::RunReport;
use crate::zsmalloc::Pool;
use crate::Error;

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

impl Policy {
    /// The name used in reports: `store-raw` or `reject-folio`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::StoreRaw => "store-raw",
            Policy::Reject => "reject-folio",
        }
    }
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
    /// Zero/same-filled pages the corpus' captures counted without storing,
    /// in proportion to the pages replayed: they are not replayed, but the
    /// effective ratio counts them as zswap would (no pool space).
    pub unstored_same_filled: f64,
}

/// Records `n` pages of a batch that took `ns`.
fn record(samples: &mut Vec<u64>, ns: u128, n: usize) {
    if n > 0 {
        let per = (ns / n as u128) as u64;
        samples.extend(std::iter::repeat_n(per, n));
    }
}

/// Replays `corpus` (whole pages, back to back; a trailing partial page is
/// ignored) once: store every folio, then load every stored page,
/// verifying it. One codec per worker: `compressors.len()` and
/// `decompressors.len()` workers.
pub fn run<C, D>(
    corpus: &[u8],
    cfg: RunConfig,
    compressors: Vec<Bound<C>>,
    decompressors: Vec<Bound<D>>,
) -> Result<RunReport, Error>
where
    C: Engine + Send + 'static,
    D: Engine + Send + 'static,
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
        pool_ratio: None,
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
    report.pool_ratio = (pool.bytes > 0).then(|| (held * PAGE_SIZE) as f64 / pool.bytes as f64);
    let stored = (report.compressed_pages + report.raw_pages) as u64;
    report.effective_ratio = (stored > 0).then(|| {
        figures::effective_ratio(
            stored,
            report.same_filled_pages as f64 + cfg.unstored_same_filled,
            pool.payload as u64,
        )
    });
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn policy_names() {
        assert_eq!(Policy::StoreRaw.name(), "store-raw");
        assert_eq!(Policy::Reject.name(), "reject-folio");
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;
    use cannery_codec::{Format, Level, Mode};
    use cannery_engines::backend::software::Software;
    use cannery_engines::backend::tampered::{flip_middle_bit, Step, Tampered};
    use cannery_engines::EngineError;

    fn fixed() -> Bound<Software> {
        Software::bound(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap()
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
            unstored_same_filled: 0.0,
        }
    }

    /// Decodes correctly, then flips a bit of the page.
    type Corrupting = Tampered<Software, fn(Step<'_>) -> Result<(), EngineError>>;

    fn corrupting() -> Bound<Corrupting> {
        let s = Software::with_format(Level::Fast, Format::Deflate);
        let flip: fn(Step<'_>) -> Result<(), EngineError> = |step| {
            if let Step::Decompressed(page) = step {
                flip_middle_bit(page, 1);
            }
            Ok(())
        };
        Bound::new(Tampered::new(s, "corrupting", flip), Mode::Fixed, None)
    }

    fn encoders() -> Vec<Bound<Software>> {
        (0..2).map(|_| fixed()).collect()
    }

    #[test]
    fn loads_are_verified_and_mismatches_counted() {
        let c = corpus();
        let good = run(&c, cfg(), encoders(), vec![fixed(), fixed()]).unwrap();
        assert_eq!(good.mismatches, 0);
        assert_eq!(good.compressed_pages, 4);
        assert_eq!(good.same_filled_pages, 1);
        let bad = run(&c, cfg(), encoders(), vec![corrupting(), corrupting()]).unwrap();
        // Every compressed page is caught; the same-filled one is not decoded.
        assert_eq!(bad.mismatches, 4);
        assert_eq!(bad.pool_bytes, good.pool_bytes);
    }

    #[test]
    fn batch_settings_are_checked_by_the_batch_path() {
        let c = corpus();
        let mut bad = cfg();
        bad.compress_batch = 33;
        let err = run(&c, bad, encoders(), vec![fixed()]).unwrap_err();
        assert!(matches!(
            err,
            Error::Batch(cannery_engines::batch::BatchError::BatchSize(33))
        ));
    }
}
