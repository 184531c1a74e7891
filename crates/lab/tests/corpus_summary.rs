//! `corpus info`'s summaries ([`cannery_lab::corpus_summary`]) of a raw
//! `.pages` file, a corpus directory of snapshots and a cold (reclaim)
//! capture: pages, zero pages and the recorded counts as the files hold them.

use cannery_capture::snapshot::writer::SnapshotWriter;
use cannery_capture::snapshot::{ColdPages, Metadata, PageCounts};
use cannery_capture::{RegionKind, PAGE_SIZE};
use cannery_files::output::Existing;
use cannery_lab::corpus_summary::summarize;
use std::path::Path;

/// A page that is neither zero nor same-filled, distinct for each `i`.
fn page(i: u32) -> Vec<u8> {
    (0..PAGE_SIZE as u32)
        .map(|k| (k.wrapping_mul(7) ^ i) as u8 | 1)
        .collect()
}

/// A finished snapshot of `n` pages with `label`, `cold` recorded if given.
fn snapshot(path: &Path, label: &str, n: u32, cold: Option<ColdPages>) {
    let meta = Metadata {
        label: label.into(),
        command: "test".into(),
        ..Metadata::default()
    };
    let mut w = SnapshotWriter::create(path, meta, 3, Existing::Keep).unwrap();
    w.begin_process(0, 42, "proc").unwrap();
    for i in 0..n {
        w.write_page(RegionKind::Anon, &page(i)).unwrap();
    }
    w.set_counts(PageCounts {
        scanned: u64::from(n) + 5,
        zero: 3,
        same_filled: 2,
        ..PageCounts::default()
    });
    if let Some(c) = cold {
        w.set_cold(c);
    }
    w.finish().unwrap();
}

#[test]
fn a_raw_pages_file_counts_its_zero_pages() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dump.pages");
    std::fs::write(&p, [page(1), vec![0u8; PAGE_SIZE], page(2)].concat()).unwrap();
    let s = summarize(&p).unwrap();
    assert_eq!((s.pages, s.zero_pages), (3, 1));
}

#[test]
fn a_corpus_directory_sums_its_workloads() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("fleet");
    for (w, n) in [("beta", 3u32), ("alpha", 2)] {
        std::fs::create_dir_all(root.join(w)).unwrap();
        snapshot(&root.join(w).join(format!("{w}.cansnap")), w, n, None);
    }
    std::fs::write(root.join("alpha").join("extra.pages"), page(9)).unwrap();
    let s = summarize(&root).unwrap();
    assert_eq!(s.pages, 6);
    // Three zero pages recorded per snapshot, none in the raw file.
    assert_eq!(s.zero_pages, 6);
    assert_eq!(s.workloads[1].files[0].counts.scanned, 8);
}

#[test]
fn corpus_info_shows_a_reclaim_captures_counts() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cold.cansnap");
    let cold = ColdPages {
        method: "reclaim".into(),
        cgroup: "v1".into(),
        amount: "50%".into(),
        lru: "classic".into(),
        reclaimed_pages: 12_846_123,
        captured_pages: 12_846_120,
        ..ColdPages::default()
    };
    snapshot(&p, "cold", 1, Some(cold));
    let text = summarize(&p).unwrap().render_text();
    assert!(
        text.contains("the kernel's reclaim, cgroup v1, 50% of the anonymous memory, classic LRU: 12846123 pages reclaimed, 12846120 captured"),
        "{text}"
    );
}
