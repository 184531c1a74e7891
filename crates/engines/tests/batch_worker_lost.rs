//! The batch path when a worker dies: a worker thread whose codec panics makes
//! the batch object return a typed error (`WorkerLost`) instead of hanging,
//! on compression and on decompression, and the object stays unusable with
//! that same error. The rest of the batch tests are in `batch.rs`.

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Format, Level, Mode};
use cannery_engines::batch::{BatchCompressor, BatchDecompressor, BatchError, Bound};
use cannery_engines::Engine;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

mod common;
use common::{hooked, on_worker, wait_until};

/// What the [`panicky`] engines of one batch object share.
#[derive(Default)]
struct PanickyState {
    /// Units a worker has compressed.
    worker_units: AtomicUsize,
    /// A worker is about to panic.
    worker_panicked: AtomicBool,
}

/// An engine whose workers panic on units starting with 0xFF. Which
/// worker claims which unit depends on timing, so worker 0 (which must not
/// panic: its panic would reach the test) waits on 0xFF units until a worker
/// has panicked, and on other units until a worker has done a unit: a worker
/// always takes part, and always meets a 0xFF unit of a call made of them.
fn panicky(st: Arc<PanickyState>) -> Bound<impl Engine + Send + 'static> {
    hooked(
        Mode::Fixed,
        Format::Deflate,
        Level::Fast,
        move |unit: &[u8]| {
            let bad = unit.first() == Some(&0xFF);
            if on_worker() {
                if bad {
                    st.worker_panicked.store(true, SeqCst);
                    panic!("test engine refuses 0xff");
                }
                st.worker_units.fetch_add(1, SeqCst);
            } else if bad {
                wait_until("a worker panics", || st.worker_panicked.load(SeqCst));
            } else {
                wait_until("a worker does a unit", || st.worker_units.load(SeqCst) > 0);
            }
            Ok(())
        },
    )
}

#[test]
fn a_dead_worker_is_a_typed_error_not_a_hang() {
    for workers in [2, 3] {
        let st = Arc::new(PanickyState::default());
        let codecs = (0..workers).map(|_| panicky(st.clone())).collect();
        let mut b = BatchCompressor::new(4, codecs).unwrap();
        let ok = [1u8; 8];
        let bad = [0xFFu8; 8];
        assert!(b.compress([&ok[..], &ok]).unwrap().all_compressed());
        // A worker claims at least one of these units and dies on it.
        let e = b.compress([&bad[..], &bad, &bad, &bad]).unwrap_err();
        assert!(
            matches!(e, BatchError::WorkerLost(k) if (1..workers).contains(&k)),
            "{e:?}"
        );
        // The batch object stays unusable, with the same error.
        assert_eq!(b.compress([&ok[..]]).unwrap_err(), e);
        assert_eq!(b.compress([&ok[..], &ok]).unwrap_err(), e);
        drop(b); // joins the surviving threads without hanging
    }
}

/// An engine whose workers panic (decompressing) on every stream; once armed, worker 0
/// waits for that before it decodes, so a worker always claims a stream and
/// dies.
fn panicky_decoder(st: Arc<PanickyState>) -> Bound<impl Engine + Send + 'static> {
    hooked(
        Mode::Fixed,
        Format::Deflate,
        Level::Fast,
        move |_: &[u8]| {
            if on_worker() {
                st.worker_panicked.store(true, SeqCst);
                panic!("test engine gives up");
            }
            if st.worker_units.load(SeqCst) > 0 {
                wait_until("a worker panics", || st.worker_panicked.load(SeqCst));
            }
            Ok(())
        },
    )
}

#[test]
fn a_dead_decompression_worker_is_a_typed_error_not_a_hang() {
    let st = Arc::new(PanickyState::default());
    let codecs = (0..2).map(|_| panicky_decoder(st.clone())).collect();
    let mut d = BatchDecompressor::new(4, codecs).unwrap();
    let mut out = vec![0u8; 4 * PAGE_SIZE];
    // One stream stays with worker 0: no worker is involved.
    let one: [&[u8]; 1] = [&[3, 0]];
    assert_eq!(d.decompress(one, &mut out).unwrap().status(0), Ok(0));
    st.worker_units.store(1, SeqCst); // arm worker 0's wait
    let streams: [&[u8]; 3] = [&[3, 0], &[3, 0], &[3, 0]];
    let e = d.decompress(streams, &mut out).unwrap_err();
    assert_eq!(e, BatchError::WorkerLost(1));
    assert_eq!(d.decompress(streams, &mut out).unwrap_err(), e);
}
