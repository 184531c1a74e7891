//! The batch path against the single-page calls: every unit's status and
//! bytes equal the plain call's (every mode, random batch sizes and worker
//! counts), failing and incompressible units leave their neighbours alone,
//! folios of mixed sizes, batch-size bounds, a dying worker (compression
//! and decompression), many consecutive calls whose split between workers
//! varies, and a worker that comes back late with the lane of an old call.
//!
//! Not here: speed (benches/batch.rs) and allocation counting
//! (benches/tests/no_alloc.rs in the `cannery-benches` package).

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Format, Level, Mode, Outcome};
use cannery_engines::backend::software::Software;
use cannery_engines::batch::{
    BatchCompressor, BatchDecompressor, BatchError, Bound, UnitStatus, MAX_BATCH_SIZE,
};
use cannery_engines::{Engine, EngineError};
use proptest::prelude::*;

mod common;
use common::{hooked, on_worker, software, wait_until};
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Duration;

/// Deterministic pseudo-random bytes (the workspace's xorshift64*).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    cannery_codec::rng::XorShift64Star::from_state(seed | 1).bytes(len)
}

/// A page of one of several kinds: 0 random (incompressible), 1 zero,
/// 2 text-like, 3 sparse words, 4 short (under 4096 bytes), 5 half random.
fn page(kind: u8, seed: u64) -> Vec<u8> {
    match kind % 6 {
        0 => noise(seed, PAGE_SIZE),
        1 => vec![0; PAGE_SIZE],
        2 => {
            let words = [
                &b"zswap "[..],
                b"folio ",
                b"canned ",
                b"huffman ",
                b"deflate ",
                b"page ",
            ];
            let r = noise(seed, PAGE_SIZE);
            let mut p = Vec::with_capacity(PAGE_SIZE);
            let mut i = 0;
            while p.len() < PAGE_SIZE {
                p.extend_from_slice(words[r[i % r.len()] as usize % words.len()]);
                i += 1;
            }
            p.truncate(PAGE_SIZE);
            p
        }
        3 => {
            let r = noise(seed, PAGE_SIZE / 8);
            let mut p = vec![0; PAGE_SIZE];
            for (w, &b) in p.chunks_exact_mut(8).zip(&r) {
                if b < 40 {
                    w[0] = b;
                    w[1] = 0x7f;
                }
            }
            p
        }
        4 => noise(seed, 1 + (seed % 4000) as usize)
            .iter()
            .map(|b| b & 3)
            .collect(),
        _ => {
            let mut p = noise(seed, PAGE_SIZE);
            p[..PAGE_SIZE / 2].fill(0x41);
            p
        }
    }
}

/// The codec configurations under test (Canned needs a table).
const CONFIGS: [(Mode, Format); 4] = [
    (Mode::Fixed, Format::Deflate),
    (Mode::Dynamic, Format::Deflate),
    (Mode::Canned, Format::Iaa),
    (Mode::Canned, Format::Deflate),
];

fn encoder(mode: Mode, format: Format, level: Level) -> Option<Bound<Software>> {
    software(mode, format, level)
}

fn decoder(mode: Mode, format: Format) -> Bound<Software> {
    software(mode, format, Level::Default).expect("the kernel's table decodes")
}

/// The plain single-page results.
fn single(
    enc: &mut Bound<Software>,
    pages: &[Vec<u8>],
) -> Vec<(Result<Outcome, EngineError>, Vec<u8>)> {
    pages
        .iter()
        .map(|p| {
            let mut out = Vec::new();
            let r = enc.compress_page(p, &mut out);
            (r, out)
        })
        .collect()
}

/// Asserts a batch result equals the single-page results unit by unit.
fn assert_same(
    batch: &cannery_engines::batch::CompressedBatch<'_, Software>,
    want: &[(Result<Outcome, EngineError>, Vec<u8>)],
) {
    assert_eq!(batch.len(), want.len());
    for (i, (r, bytes)) in want.iter().enumerate() {
        let expected = UnitStatus::from_result(r.clone());
        assert_eq!(batch.status(i), &expected, "unit {i}");
        match expected {
            UnitStatus::Compressed(n) => assert_eq!(batch.data(i), Some(&bytes[..n]), "unit {i}"),
            _ => assert_eq!(batch.data(i), None, "unit {i}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn every_unit_equals_the_single_page_call(
        config in 0..CONFIGS.len(),
        level in prop_oneof![Just(Level::Fast), Just(Level::Default)],
        batch_size in 1..=MAX_BATCH_SIZE,
        workers in 1..=4usize,
        kinds in proptest::collection::vec((0..6u8, any::<u64>()), 1..=MAX_BATCH_SIZE),
    ) {
        let (mode, format) = CONFIGS[config];
        let Some(mut plain) = encoder(mode, format, level) else {
            return Err(TestCaseError::reject("configuration not available for this table"));
        };
        let n = kinds.len().min(batch_size);
        let pages: Vec<Vec<u8>> = kinds[..n].iter().map(|&(k, s)| page(k, s)).collect();
        let want = single(&mut plain, &pages);

        let codecs = (0..workers).map(|_| encoder(mode, format, level).unwrap()).collect();
        let mut batch = BatchCompressor::new(batch_size, codecs).unwrap();
        {
            let r = batch.compress(pages.iter().map(|p| &p[..])).unwrap();
            assert_same(&r, &want);
        }
        // Buffers are reused: a second call, in reverse order, is as exact.
        let rev: Vec<Vec<u8>> = pages.iter().rev().cloned().collect();
        let want_rev = single(&mut plain, &rev);
        let r = batch.compress(rev.iter().map(|p| &p[..])).unwrap();
        assert_same(&r, &want_rev);

        // Decompression batches of the single-page streams give the pages back.
        let streams: Vec<&[u8]> = want_rev
            .iter()
            .filter_map(|(r, b)| match r {
                Ok(Outcome::Compressed(n)) => Some(&b[..*n]),
                _ => None,
            })
            .collect();
        let originals: Vec<&Vec<u8>> = want_rev
            .iter()
            .zip(&rev)
            .filter(|((r, _), _)| matches!(r, Ok(Outcome::Compressed(_))))
            .map(|(_, p)| p)
            .collect();
        let decoders = (0..workers).map(|_| decoder(mode, format)).collect();
        let mut dbatch = BatchDecompressor::new(batch_size, decoders).unwrap();
        let mut out = vec![0u8; batch_size * PAGE_SIZE];
        let d = dbatch.decompress(streams.iter().copied(), &mut out).unwrap();
        prop_assert_eq!(d.len(), streams.len());
        for (i, p) in originals.iter().enumerate() {
            prop_assert_eq!(d.status(i), Ok(p.len()));
            prop_assert_eq!(&out[i * PAGE_SIZE..i * PAGE_SIZE + p.len()], &p[..]);
        }
    }
}

/// An engine that refuses units starting with 0xEE (to test error
/// isolation with an engine error that is not an input-size error).
fn picky() -> Bound<impl Engine + Send + 'static> {
    hooked(Mode::Canned, Format::Iaa, Level::Fast, |unit: &[u8]| {
        if unit.first() == Some(&0xEE) {
            return Err(refused());
        }
        Ok(())
    })
}

fn refused() -> EngineError {
    EngineError::Rejected {
        backend: "picky",
        message: "unit starts with 0xee".into(),
    }
}

#[test]
fn failures_and_incompressible_units_do_not_disturb_neighbours() {
    let text = page(2, 1);
    let random = page(0, 2);
    let zero = page(1, 3);
    let oversize = vec![7u8; PAGE_SIZE + 1];
    let mut picky_page = page(2, 4);
    picky_page[0] = 0xEE;
    let sparse = page(3, 5);
    let units: [&[u8]; 7] = [
        &text,
        &random,
        &zero,
        &oversize,
        &picky_page,
        &sparse,
        &text,
    ];

    let mut plain = encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap();
    for workers in 1..=4 {
        let codecs = (0..workers).map(|_| picky()).collect();
        let mut b = BatchCompressor::new(8, codecs).unwrap();
        let r = b.compress(units).unwrap();
        assert_eq!(r.len(), 7);
        assert_eq!(r.status(1), &UnitStatus::Incompressible, "random page");
        assert_eq!(
            r.status(3),
            &UnitStatus::Failed(EngineError::InputTooLarge { len: PAGE_SIZE + 1 })
        );
        assert_eq!(r.status(4), &UnitStatus::Failed(refused()));
        assert!(!r.all_compressed());
        for i in [0, 2, 5, 6] {
            let mut out = Vec::new();
            let Outcome::Compressed(n) = plain.compress_page(units[i], &mut out).unwrap() else {
                panic!("unit {i} should compress");
            };
            assert_eq!(
                r.status(i),
                &UnitStatus::Compressed(n),
                "workers {workers} unit {i}"
            );
            assert_eq!(r.data(i), Some(&out[..n]), "workers {workers} unit {i}");
        }
    }
}

#[test]
fn corrupt_streams_do_not_disturb_neighbours_on_decompress() {
    let mut enc = encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap();
    let text = page(2, 11);
    let zero = page(1, 12);
    let short = page(4, 13);
    let compress = |enc: &mut Bound<Software>, p: &[u8]| {
        let mut out = Vec::new();
        match enc.compress_page(p, &mut out).unwrap() {
            Outcome::Compressed(n) => out[..n].to_vec(),
            Outcome::Incompressible => panic!("test page should compress"),
        }
    };
    let good_text = compress(&mut enc, &text);
    let good_zero = compress(&mut enc, &zero);
    let good_short = compress(&mut enc, &short);
    let truncated = good_text[..good_text.len() / 2].to_vec();
    let garbage = noise(99, 700);
    let mut trailing = good_zero.clone();
    trailing.extend_from_slice(&[0xff; 3]);
    let streams: [&[u8]; 8] = [
        &good_text,
        &truncated,
        &good_zero,
        &garbage,
        &[],
        &good_short,
        &trailing,
        &good_text,
    ];
    let want: [Option<&[u8]>; 8] = [
        Some(&text),
        None,
        Some(&zero),
        None,
        None,
        Some(&short),
        None,
        Some(&text),
    ];
    let mut plain = decoder(Mode::Canned, Format::Iaa);
    for workers in 1..=3 {
        let codecs = (0..workers)
            .map(|_| decoder(Mode::Canned, Format::Iaa))
            .collect();
        let mut b = BatchDecompressor::new(8, codecs).unwrap();
        let mut out = vec![0xA5u8; 8 * PAGE_SIZE];
        let r = b.decompress(streams, &mut out).unwrap();
        assert!(!r.all_ok());
        for (i, s) in streams.iter().enumerate() {
            let mut single = vec![0u8; PAGE_SIZE];
            let expected: Result<usize, EngineError> = plain.decompress_page(s, &mut single);
            assert_eq!(
                r.status(i),
                expected.as_ref().copied(),
                "workers {workers} stream {i}"
            );
            match want[i] {
                Some(p) => {
                    assert_eq!(r.status(i), Ok(p.len()));
                    let slot = &out[i * PAGE_SIZE..i * PAGE_SIZE + p.len()];
                    assert_eq!(slot, p, "workers {workers} stream {i}");
                }
                None => assert!(r.status(i).is_err(), "workers {workers} stream {i}"),
            }
        }
    }
}

#[test]
fn folios_of_mixed_sizes() {
    let mut plain = encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap();
    let codecs = (0..2)
        .map(|_| encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap())
        .collect();
    let mut b = BatchCompressor::new(16, codecs).unwrap();
    let mut seed = 0;
    // 4k, 16k, 32k, 64k, 16k, 4k folios through one batch object.
    for pages_in_folio in [1usize, 4, 8, 16, 4, 1] {
        let pages: Vec<Vec<u8>> = (0..pages_in_folio)
            .map(|_| {
                seed += 1;
                page((seed % 6) as u8, seed)
            })
            .filter(|p| p.len() == PAGE_SIZE)
            .collect();
        let folio: Vec<u8> = pages.concat();
        let want = single(&mut plain, &pages);
        let r = b.compress_folio(&folio).unwrap();
        assert_same(&r, &want);
    }
    // A 68 KiB folio does not fit a batch of 16.
    let big = vec![1u8; 17 * PAGE_SIZE];
    assert_eq!(
        b.compress_folio(&big).unwrap_err(),
        BatchError::TooManyUnits {
            given: 17,
            batch_size: 16
        }
    );
    // The batch object still works after a rejected call.
    let r = b.compress_folio(&big[..PAGE_SIZE * 2]).unwrap();
    assert_eq!(r.len(), 2);
}

#[test]
fn batch_size_bounds_have_clear_errors() {
    let enc = || encoder(Mode::Fixed, Format::Deflate, Level::Fast).unwrap();
    for bad in [0, 33, 1000] {
        let e = BatchCompressor::new(bad, vec![enc()]).unwrap_err();
        assert_eq!(e, BatchError::BatchSize(bad));
        assert_eq!(
            e.to_string(),
            format!("batch size {bad} is out of range: it must be between 1 and 32")
        );
        let e = BatchDecompressor::new(bad, vec![decoder(Mode::Fixed, Format::Deflate)]);
        assert_eq!(e.unwrap_err(), BatchError::BatchSize(bad));
    }
    assert_eq!(
        BatchCompressor::<Software>::new(8, vec![]).unwrap_err(),
        BatchError::NoWorkers
    );

    let mut b = BatchCompressor::new(8, vec![enc(), enc()]).unwrap();
    let pages = vec![vec![3u8; 100]; 9];
    let e = b.compress(pages.iter().map(|p| &p[..])).unwrap_err();
    assert_eq!(
        e,
        BatchError::TooManyUnits {
            given: 9,
            batch_size: 8
        }
    );
    assert_eq!(e.to_string(), "9 units were given but the batch size is 8");
    // Exactly the batch size, and an empty batch, are fine.
    assert_eq!(
        b.compress(pages[..8].iter().map(|p| &p[..])).unwrap().len(),
        8
    );
    assert!(b.compress(std::iter::empty()).unwrap().is_empty());

    let mut d = BatchDecompressor::new(4, vec![decoder(Mode::Fixed, Format::Deflate)]).unwrap();
    let mut out = vec![0u8; 2 * PAGE_SIZE];
    let streams: [&[u8]; 3] = [&[3, 0], &[3, 0], &[3, 0]];
    let e = d.decompress(streams, &mut out).unwrap_err();
    assert_eq!(
        e,
        BatchError::OutputTooSmall {
            units: 3,
            bytes: 2 * PAGE_SIZE
        }
    );
    let r = d
        .decompress(streams[..2].iter().copied(), &mut out)
        .unwrap();
    assert_eq!(r.iter().collect::<Vec<_>>(), vec![Ok(0), Ok(0)]);
}

/// An engine that sleeps 300 us on units (and streams) whose last byte is
/// a multiple of 5, whichever worker does them, so the split between
/// workers varies.
fn sleepy() -> Bound<impl Engine + Send + 'static> {
    hooked(Mode::Canned, Format::Iaa, Level::Fast, |unit: &[u8]| {
        if unit.last().is_some_and(|b| b % 5 == 0) {
            std::thread::sleep(Duration::from_micros(300));
        }
        Ok(())
    })
}

/// Asserts a batch result equals the single-page results, for any codec
/// with the encoder's error type.
fn assert_same_as<C: Engine + Send + 'static>(
    batch: &cannery_engines::batch::CompressedBatch<'_, C>,
    want: &[(Result<Outcome, EngineError>, Vec<u8>)],
    what: &str,
) {
    assert_eq!(batch.len(), want.len(), "{what}");
    for (i, (r, bytes)) in want.iter().enumerate() {
        let expected = UnitStatus::from_result(r.clone());
        assert_eq!(batch.status(i), &expected, "{what} unit {i}");
        match expected {
            UnitStatus::Compressed(n) => {
                assert_eq!(batch.data(i), Some(&bytes[..n]), "{what} unit {i}")
            }
            _ => assert_eq!(batch.data(i), None, "{what} unit {i}"),
        }
    }
}

/// Many calls of varying sizes on one batch object: every unit's result is
/// the plain call's on that unit, whichever worker did it. Some calls come
/// after a pause (workers asleep) with a few tiny units, which the caller
/// usually finishes alone before a worker wakes; the next call then starts
/// with that worker's lane still out, or coming back stale during the call.
/// A wrong owner map or a stale lane taking units of a newer call would
/// show as wrong bytes, a wrong status, a lost worker or a panic.
#[test]
fn consecutive_batches_of_varying_sizes_equal_the_plain_calls() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m
    };
    let mut plain = encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap();
    let mut plain_dec = decoder(Mode::Canned, Format::Iaa);
    for workers in [2, 3] {
        let codecs = (0..workers).map(|_| sleepy()).collect();
        let mut b = BatchCompressor::new(MAX_BATCH_SIZE, codecs).unwrap();
        let decoders = (0..workers).map(|_| sleepy()).collect();
        let mut d = BatchDecompressor::new(MAX_BATCH_SIZE, decoders).unwrap();
        let mut out = vec![0u8; MAX_BATCH_SIZE * PAGE_SIZE];
        for round in 0..300 {
            let tiny = round % 7 == 3;
            if tiny {
                std::thread::sleep(Duration::from_millis(1));
            }
            let n = if tiny {
                2 + next(2) as usize
            } else {
                1 + next(MAX_BATCH_SIZE as u64) as usize
            };
            let pages: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let seed = next(u64::MAX);
                    if tiny {
                        noise(seed, 1 + (seed % 40) as usize)
                    } else {
                        page((seed % 6) as u8, seed)
                    }
                })
                .collect();
            let what = format!("workers {workers} round {round} ({n} units)");
            let want = single(&mut plain, &pages);
            let r = b.compress(pages.iter().map(|p| &p[..])).unwrap();
            assert_same_as(&r, &want, &what);

            // The same pages back through the decompressor, with the random
            // (incompressible) pages' raw bytes as corrupt streams among them.
            let streams: Vec<&[u8]> = want
                .iter()
                .zip(&pages)
                .map(|((r, bytes), p)| match r {
                    Ok(Outcome::Compressed(n)) => &bytes[..*n],
                    _ => &p[..],
                })
                .collect();
            out.fill(0xA5);
            let r = d.decompress(streams.iter().copied(), &mut out).unwrap();
            assert_eq!(r.len(), n, "{what}");
            for (i, s) in streams.iter().enumerate() {
                let mut one = vec![0u8; PAGE_SIZE];
                let expected = plain_dec.decompress_page(s, &mut one);
                assert_eq!(r.status(i), expected.as_ref().copied(), "{what} stream {i}");
                if let Ok(len) = expected {
                    let slot = &out[i * PAGE_SIZE..i * PAGE_SIZE + len];
                    assert_eq!(slot, &one[..len], "{what} stream {i}");
                }
            }
        }
    }
}

/// What the [`Gate`] codecs of one batch object share.
#[derive(Default)]
struct GateState {
    /// A worker is stuck in a 0xB0 unit.
    worker_stuck: AtomicBool,
    /// Lets the stuck worker go on.
    open: AtomicBool,
    /// The stuck worker has finished its 0xB0 unit.
    released: AtomicBool,
}

/// A compressor whose 0xB0 units keep a worker busy while worker 0 panics:
/// on a worker, it gets stuck until the gate opens; on worker 0, it waits
/// until a worker is stuck, has a timer open the gate 50 ms later, and
/// panics. Other units: the plain encoder.
fn gate(st: Arc<GateState>) -> Bound<impl Engine + Send + 'static> {
    hooked(
        Mode::Canned,
        Format::Iaa,
        Level::Fast,
        move |unit: &[u8]| {
            if unit.first() == Some(&0xB0) {
                if on_worker() {
                    st.worker_stuck.store(true, SeqCst);
                    wait_until("the gate opens", || st.open.load(SeqCst));
                    std::thread::sleep(Duration::from_millis(5));
                    st.released.store(true, SeqCst);
                } else {
                    wait_until("a worker is stuck", || st.worker_stuck.load(SeqCst));
                    let timer = st.clone();
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(50));
                        timer.open.store(true, SeqCst);
                    });
                    panic!("worker 0 gives up on this call");
                }
            }
            Ok(())
        },
    )
}

/// Worker 0's codec panicking in a call while a worker is in the middle of
/// one of that call's units (which it reads in the caller's memory): the
/// panic reaches the caller only once that worker is through, and the batch
/// object then keeps giving the plain calls' results.
#[test]
fn a_panic_in_the_caller_waits_for_the_workers_then_the_object_works_on() {
    let enc = || encoder(Mode::Canned, Format::Iaa, Level::Fast).unwrap();
    let mut plain = enc();
    for workers in [2, 3] {
        let st = Arc::new(GateState::default());
        let codecs = (0..workers).map(|_| gate(st.clone())).collect();
        let mut b = BatchCompressor::new(8, codecs).unwrap();

        // Two units: worker 1 takes the top one and gets stuck in it, the
        // caller takes the bottom one and panics.
        let stuck = vec![0xB0u8; 64];
        let call = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            b.compress([&stuck[..], &stuck]).map(|r| r.len())
        }));
        assert!(call.is_err(), "worker 0 panicked");
        assert!(
            st.released.load(SeqCst),
            "workers {workers}: the panic reached the caller while a worker still read its unit"
        );
        drop(stuck);

        for round in 0..50u64 {
            let n = 1 + (round % 8) as usize;
            let pages: Vec<Vec<u8>> = (0..n as u64)
                .map(|s| page((s % 6) as u8, 100 * round + s))
                .collect();
            let want = single(&mut plain, &pages);
            let r = b.compress(pages.iter().map(|p| &p[..])).unwrap();
            assert_same_as(&r, &want, &format!("workers {workers}, round {round}"));
        }
    }
}
