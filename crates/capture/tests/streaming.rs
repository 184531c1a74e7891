//! The reader streams: counting the pages of a 200 MiB-equivalent snapshot
//! never holds more than a record or so in (Rust-side) memory. Measured with
//! a counting global allocator, so this file holds this one test only.

use cannery_capture::corpus::{open_pages, Corpus};
use cannery_capture::snapshot::writer::SnapshotWriter;
use cannery_capture::snapshot::Metadata;
use cannery_capture::{RegionKind, PAGE_SIZE};
use cannery_files::output::Existing;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: delegates to the system allocator and only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(l.size(), Ordering::SeqCst) + l.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Ordering::SeqCst);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn reading_a_large_snapshot_keeps_memory_bounded() {
    const PAGES: u32 = 51_200; // 200 MiB of pages
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.cansnap");
    let mut w = SnapshotWriter::create(&path, Metadata::default(), 1, Existing::Keep).unwrap();
    let mut buf = vec![0u8; PAGE_SIZE];
    for i in 0..PAGES {
        buf[..4].copy_from_slice(&i.to_le_bytes());
        buf[PAGE_SIZE - 4..].copy_from_slice(&(!i).to_le_bytes());
        w.write_page(RegionKind::Anon, &buf).unwrap();
    }
    w.finish().unwrap();
    let on_disk = std::fs::metadata(&path).unwrap().len();

    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let mut n = 0u32;
    for page in open_pages(&path).unwrap() {
        let page = page.unwrap();
        assert_eq!(page.data[..4], n.to_le_bytes());
        n += 1;
    }
    assert_eq!(n, PAGES);
    let used = PEAK.load(Ordering::SeqCst) - base;
    assert!(
        used < 1 << 20,
        "reader held {used} bytes at peak while streaming {} MiB of pages ({on_disk} bytes on disk)",
        (PAGES as usize * PAGE_SIZE) >> 20
    );

    // The same through the corpus API.
    let corpus = Corpus::open(dir.path()).unwrap();
    PEAK.store(CURRENT.load(Ordering::SeqCst), Ordering::SeqCst);
    let base = CURRENT.load(Ordering::SeqCst);
    let count = corpus.workloads[0]
        .pages()
        .unwrap()
        .inspect(|p| assert!(p.is_ok()))
        .count();
    assert_eq!(count, PAGES as usize);
    assert!(PEAK.load(Ordering::SeqCst) - base < 1 << 20);
}
