//! The snapshot file format and corpus reading: round trip, a snapshot read
//! from memory as from its file, truncated and corrupt files (typed errors naming the offset, never a panic), a writer
//! killed before finishing, raw `.pages` files, corpus directories and the
//! secret scanner (`corpus info`'s summaries: cannery-lab tests/corpus_summary.rs).

use cannery_capture::corpus::{open_pages, Corpus};
use cannery_capture::secrets::{scan_path, SecretKind};
use cannery_capture::snapshot::reader::SnapshotReader;
use cannery_capture::snapshot::writer::{SnapshotWriter, HOLD};
use cannery_capture::snapshot::{Metadata, PageCounts};
use cannery_capture::{ErrorKind, RegionKind, Result, PAGE_SIZE};
use cannery_files::output::Existing;
use std::path::{Path, PathBuf};

fn page(i: u32) -> Vec<u8> {
    let mut v = vec![0u8; PAGE_SIZE];
    for (k, b) in v.iter_mut().enumerate() {
        *b = ((k as u32).wrapping_mul(31) ^ i.wrapping_mul(2654435761)) as u8;
    }
    v[..4].copy_from_slice(&i.to_le_bytes());
    v
}

fn meta(label: &str) -> Metadata {
    Metadata {
        label: label.into(),
        command: "test".into(),
        kernel_release: "6.0-test".into(),
        ..Metadata::default()
    }
}

fn write_snapshot(path: &Path, n: u32) -> Vec<u8> {
    let mut w = SnapshotWriter::create(path, meta("unit"), 3, Existing::Keep).unwrap();
    w.begin_process(0, 42, "proc").unwrap();
    for i in 0..n {
        let region = [
            RegionKind::Heap,
            RegionKind::Stack,
            RegionKind::Anon,
            RegionKind::FilePrivate,
        ][i as usize % 4];
        w.write_page(region, &page(i)).unwrap();
    }
    w.set_counts(PageCounts {
        scanned: n as u64 + 5,
        zero: 3,
        same_filled: 2,
        ..PageCounts::default()
    });
    w.set_samples(1, 7, 9);
    w.set_end_reason("completed");
    w.finish().unwrap();
    std::fs::read(path).unwrap()
}

/// Read a file to the end; Ok(pages) or the first error.
fn read_all(path: &Path) -> Result<Vec<Vec<u8>>> {
    open_pages(path)?.map(|p| p.map(|p| p.data)).collect()
}

#[test]
fn round_trip_keeps_pages_regions_and_header() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.cansnap");
    write_snapshot(&p, 10);
    let mut r = open_pages(&p).unwrap();
    let h = r.header().clone();
    assert!(h.finalized && !h.raw);
    assert_eq!(h.version, 1);
    assert_eq!(h.counts.stored, 10);
    assert_eq!(
        (h.counts.scanned, h.counts.zero, h.counts.same_filled),
        (15, 3, 2)
    );
    assert_eq!((h.samples, h.pause_max_ns, h.pause_total_ns), (1, 7, 9));
    assert_eq!(h.meta.label, "unit");
    assert_eq!(h.meta.end_reason, "completed");
    let pages: Vec<_> = r.by_ref().map(|p| p.unwrap()).collect();
    assert_eq!(pages.len(), 10);
    assert_eq!(pages[3].data, page(3));
    assert_eq!(pages[1].region, RegionKind::Stack);
    assert_eq!(pages[3].region, RegionKind::FilePrivate);
    assert_eq!(r.process().unwrap().comm, "proc");
    assert_eq!(r.process().unwrap().pid, 42);
}

#[test]
fn truncated_files_give_an_error_naming_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.cansnap");
    let bytes = write_snapshot(&full, 40);
    let cut = dir.path().join("cut.cansnap");
    let mut lens: Vec<usize> = (0..bytes.len()).step_by(97).collect();
    lens.extend([1, 7, 8, 127, 128, 129, bytes.len() - 1]);
    for len in lens {
        std::fs::write(&cut, &bytes[..len]).unwrap();
        let e = read_all(&cut).expect_err(&format!("length {len} accepted"));
        assert!(
            matches!(e.kind(), ErrorKind::Truncated | ErrorKind::InvalidInput),
            "length {len}: {:?} {e}",
            e.kind()
        );
        let msg = e.to_string();
        assert!(
            msg.contains("cut.cansnap") && msg.contains("offset"),
            "{msg}"
        );
        assert!(e.offset().unwrap() <= len as u64, "{msg}");
    }
}

/// `SnapshotReader::from_reader` on the bytes in memory (what the fuzz
/// target reads) gives what `open` gives on the file: the same pages and
/// process, or the same error (kind, offset, message naming the path).
#[test]
fn a_snapshot_in_memory_reads_as_its_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mem.cansnap");
    let bytes = write_snapshot(&path, 5);
    let cut = bytes[..bytes.len() - 7].to_vec();
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x20;
    for (case, b) in [bytes.clone(), cut, flipped].into_iter().enumerate() {
        std::fs::write(&path, &b).unwrap();
        let len = b.len() as u64;
        let from_file = SnapshotReader::open(&path);
        let from_mem = SnapshotReader::from_reader(&path, std::io::Cursor::new(b), len);
        let read = |r: Result<SnapshotReader>| -> Result<Vec<(Vec<u8>, RegionKind, String)>> {
            let mut r = r?;
            let mut out = Vec::new();
            while let Some(p) = r.next() {
                let p = p?;
                let comm = r.process().map(|p| p.comm.clone()).unwrap_or_default();
                out.push((p.data, p.region, comm));
            }
            Ok(out)
        };
        match (read(from_file), read(from_mem)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(case, 0, "only the whole file reads");
                assert_eq!(a.len(), 5);
                assert_eq!(a, b);
                assert_eq!(a[4].0, page(4));
                assert_eq!(a[4].2, "proc");
            }
            (Err(a), Err(b)) => {
                assert_ne!(case, 0, "the whole file reads: {a}");
                assert_eq!((a.kind(), a.offset()), (b.kind(), b.offset()));
                assert_eq!(a.to_string(), b.to_string());
                assert!(b.to_string().contains("mem.cansnap"), "{b}");
            }
            (a, b) => panic!("case {case}: file {:?} but memory {:?}", a.err(), b.err()),
        }
    }
}

#[test]
fn corrupt_files_give_an_error_and_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.cansnap");
    let bytes = write_snapshot(&full, 40);
    let bad = dir.path().join("bad.cansnap");
    let mut detected = 0;
    let positions: Vec<usize> = (0..bytes.len()).step_by(13).collect();
    for &at in &positions {
        let mut b = bytes.clone();
        b[at] ^= 0x5a;
        std::fs::write(&bad, &b).unwrap();
        match read_all(&bad) {
            Err(e) => {
                detected += 1;
                assert!(e.to_string().contains("bad.cansnap"), "{e}");
                assert!(e.offset().is_some(), "no offset: {e}");
            }
            Ok(pages) => panic!("flip at {at} not detected ({} pages read)", pages.len()),
        }
    }
    assert_eq!(detected, positions.len());
    // Specific cases name the right place.
    let mut b = bytes.clone();
    b[9] = 9; // version 2305
    std::fs::write(&bad, &b).unwrap();
    assert_eq!(
        read_all(&bad).unwrap_err().kind(),
        ErrorKind::UnsupportedVersion
    );
    let mut b = bytes.clone();
    b.extend_from_slice(b"junk");
    std::fs::write(&bad, &b).unwrap();
    let e = read_all(&bad).unwrap_err();
    assert_eq!(
        (e.kind(), e.offset()),
        (ErrorKind::Corrupt, Some(bytes.len() as u64))
    );
    std::fs::write(&bad, b"hello world, not a snapshot").unwrap();
    assert_eq!(read_all(&bad).unwrap_err().kind(), ErrorKind::InvalidInput);
}

#[test]
fn unfinished_writer_leaves_its_partial_file_readable_up_to_its_last_flush() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("killed.cansnap");
    let mut w = SnapshotWriter::create(&p, meta("killed"), 3, Existing::Keep).unwrap();
    for i in 0..5 {
        w.write_page(RegionKind::Anon, &page(i)).unwrap();
    }
    w.flush().unwrap();
    let partial = w.partial_path().unwrap().to_path_buf();
    // As if the process were killed: no finish, no drop.
    std::mem::forget(w);
    assert!(!p.exists(), "nothing at the final path before finish");
    let mut r = open_pages(&partial).unwrap();
    assert!(!r.header().finalized);
    let mut got = Vec::new();
    let err = loop {
        match r.next() {
            Some(Ok(pg)) => got.push(pg.data),
            Some(Err(e)) => break e,
            None => panic!("no error at the end of an unfinished file"),
        }
    };
    assert_eq!(got, (0..5).map(page).collect::<Vec<_>>());
    assert_eq!(err.kind(), ErrorKind::Truncated);
    assert!(err.to_string().contains("not finalized"), "{err}");
    assert!(r.next().is_none());
}

/// The zstd frame of a finished snapshot: its content size, if the frame
/// declares one, and its window size (RFC 8878, 3.1.1.1).
fn frame_of(path: &Path) -> (Option<u64>, u64) {
    let bytes = std::fs::read(path).unwrap();
    let stream_len = SnapshotReader::open(path).unwrap().header().stream_len as usize;
    let frame = &bytes[bytes.len() - stream_len..];
    assert_eq!(frame[..4], [0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    let content = zstd::zstd_safe::get_frame_content_size(frame).unwrap();
    let single_segment = frame[4] & 0x20 != 0;
    let window = if single_segment {
        content.expect("a single segment declares its size")
    } else {
        let (exp, mantissa) = (u64::from(frame[5] >> 3), u64::from(frame[5] & 7));
        let base = 1u64 << (10 + exp);
        base + base / 8 * mantissa
    };
    (content, window)
}

/// A snapshot that ends below the writer's hold without a flush is one
/// frame of known size, with a window no larger than itself (its reader
/// allocates no 8 MiB window); one that flushes, or outgrows the hold,
/// streams with the 8 MiB window. All read back to their pages.
#[test]
fn small_snapshots_are_one_frame_of_their_size_flushed_or_large_ones_stream() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.cansnap");
    write_snapshot(&small, 5);
    let (content, window) = frame_of(&small);
    let content = content.expect("a held snapshot declares its size");
    assert!(
        content > 5 * PAGE_SIZE as u64 && content < HOLD as u64,
        "{content}"
    );
    assert!(window <= content, "window {window} for {content} bytes");
    assert_eq!(
        read_all(&small).unwrap(),
        (0..5).map(page).collect::<Vec<_>>()
    );

    let flushed = dir.path().join("flushed.cansnap");
    let mut w = SnapshotWriter::create(&flushed, meta("flushed"), 3, Existing::Keep).unwrap();
    for i in 0..5 {
        w.write_page(RegionKind::Anon, &page(i)).unwrap();
        if i == 0 {
            w.flush().unwrap();
        }
    }
    w.finish().unwrap();
    assert_eq!(frame_of(&flushed), (None, 8 << 20));
    assert_eq!(
        read_all(&flushed).unwrap(),
        (0..5).map(page).collect::<Vec<_>>()
    );

    let large = dir.path().join("large.cansnap");
    let n = (HOLD / PAGE_SIZE) as u32 + 20;
    write_snapshot(&large, n);
    assert_eq!(frame_of(&large), (None, 8 << 20));
    assert_eq!(
        read_all(&large).unwrap(),
        (0..n).map(page).collect::<Vec<_>>()
    );
}

#[test]
fn a_dropped_writer_leaves_nothing_and_keeps_the_file_it_would_replace() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dropped.cansnap");
    std::fs::write(&p, b"old").unwrap();
    {
        let mut w = SnapshotWriter::create(&p, meta("dropped"), 3, Existing::Replace).unwrap();
        w.write_page(RegionKind::Anon, &page(1)).unwrap();
    }
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // Finished, it replaces the old file.
    let mut w = SnapshotWriter::create(&p, meta("new"), 3, Existing::Replace).unwrap();
    w.write_page(RegionKind::Anon, &page(1)).unwrap();
    w.finish().unwrap();
    let r = open_pages(&p).unwrap();
    assert!(r.header().finalized);
    assert_eq!(r.count(), 1);
    // Keeping, an existing file is refused before anything is written.
    let e = SnapshotWriter::create(&p, meta("again"), 3, Existing::Keep).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
}

#[test]
fn raw_pages_files_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dump.pages");
    let mut bytes = page(1);
    bytes.extend(vec![0u8; PAGE_SIZE]);
    bytes.extend(page(2));
    std::fs::write(&p, &bytes).unwrap();
    let r = open_pages(&p).unwrap();
    assert!(r.header().raw);
    assert_eq!(r.header().meta.label, "dump");
    assert_eq!(r.header().counts.stored, 3);
    let pages: Vec<_> = r.map(|p| p.unwrap()).collect();
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[2].data, page(2));
    assert_eq!(pages[0].region, RegionKind::Unknown);
    bytes.push(0);
    std::fs::write(&p, &bytes).unwrap();
    let e = open_pages(&p).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Truncated);
    assert_eq!(e.offset(), Some(3 * PAGE_SIZE as u64));
}

#[test]
fn corpus_directories_group_files_by_workload() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("fleet");
    for (w, n) in [("beta", 3u32), ("alpha", 2)] {
        std::fs::create_dir_all(root.join(w)).unwrap();
        write_snapshot(&root.join(w).join(format!("{w}.cansnap")), n);
    }
    std::fs::write(root.join("alpha").join("extra.pages"), page(9)).unwrap();
    std::fs::write(root.join("alpha").join("README.md"), "notes").unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let c = Corpus::open(&root).unwrap();
    let names: Vec<_> = c.workloads.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, vec!["alpha", "beta"]);
    assert_eq!(c.workloads[0].files.len(), 2);
    let pages: Vec<_> = c.workloads[0]
        .pages()
        .unwrap()
        .map(|p| p.unwrap())
        .collect();
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[2].data, page(9));
    // A single file is a one-workload corpus.
    let one = Corpus::open(&root.join("beta").join("beta.cansnap")).unwrap();
    assert_eq!(one.workloads[0].name, "beta");
    let e = Corpus::open(&root.join("empty")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        Corpus::open(Path::new("/nonexistent/x"))
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound
    );
}

#[test]
fn scan_secrets_finds_planted_secrets_and_passes_clean_data() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    write_snapshot(&clean.join("a.cansnap"), 8);
    std::fs::write(clean.join("notes.txt"), "PATH=/usr/bin\nnothing to see").unwrap();
    let r = scan_path(&clean).unwrap();
    assert_eq!(r.findings, vec![]);
    assert_eq!((r.corpus_files, r.pages, r.other_files), (1, 8, 1));
    // A directory with no snapshot: scanned, but no corpus was there.
    let none = dir.path().join("none");
    std::fs::create_dir_all(&none).unwrap();
    std::fs::write(none.join("notes.txt"), "nothing").unwrap();
    let r = scan_path(&none).unwrap();
    assert_eq!((r.corpus_files, r.pages, r.other_files), (0, 0, 1));
    // A device never ends: refused at once, not read.
    let e = scan_path(Path::new("/dev/zero")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    let dirty = dir.path().join("dirty");
    std::fs::create_dir_all(&dirty).unwrap();
    let snap = dirty.join("s.cansnap");
    let mut w = SnapshotWriter::create(&snap, meta("s"), 3, Existing::Keep).unwrap();
    w.write_page(RegionKind::Heap, &page(0)).unwrap();
    let mut secret = page(1);
    let key = b"-----BEGIN OPENSSH PRIVATE KEY-----";
    secret[1000..1000 + key.len()].copy_from_slice(key);
    w.write_page(RegionKind::Heap, &secret).unwrap();
    w.finish().unwrap();
    let mut big = vec![b'x'; (1 << 20) - 5];
    big.extend_from_slice(b" DB_PASSWORD=hunter2 ");
    std::fs::write(dirty.join("env.txt"), &big).unwrap();
    let found = scan_path(&dirty).unwrap().findings;
    let summary: Vec<(PathBuf, Option<u64>, u64, SecretKind)> = found
        .iter()
        .map(|f| (f.path.clone(), f.page, f.offset, f.finding.kind))
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                dirty.join("env.txt"),
                None,
                (1 << 20) - 4,
                SecretKind::SecretVariable
            ),
            (snap.clone(), Some(1), 1005, SecretKind::PrivateKey),
        ]
    );
}

#[test]
fn a_reclaim_captures_counts_survive_the_file() {
    use cannery_capture::snapshot::ColdPages;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cold.cansnap");
    let mut m = meta("cold");
    // As the cold capture starts it: the counts filled in at the end must
    // fit the metadata's reserved room.
    m.cold = Some(ColdPages {
        method: "reclaim".into(),
        cgroup: "v1".into(),
        amount: "50%".into(),
        lru: "classic".into(),
        ..ColdPages::default()
    });
    let mut w = SnapshotWriter::create(&p, m, 3, Existing::Keep).unwrap();
    w.begin_process(0, 42, "proc").unwrap();
    w.write_page(RegionKind::Anon, &page(1)).unwrap();
    let cold = ColdPages {
        method: "reclaim".into(),
        cgroup: "v1".into(),
        amount: "50%".into(),
        lru: "classic".into(),
        reclaimed_pages: 12_846_123,
        captured_pages: 12_846_120,
        swapped_before: 105,
        resident_after: 37_232_000,
        zswap_stored: 13_122_000,
        swap_written: 7,
        stopped: "x".repeat(120),
        ..ColdPages::default()
    };
    w.set_cold(cold.clone());
    w.set_end_reason(&"y".repeat(200));
    w.finish().unwrap();
    let r = open_pages(&p).unwrap();
    assert_eq!(r.header().meta.cold.as_ref(), Some(&cold));
    assert_eq!(r.header().meta.end_reason.len(), 200);
}
