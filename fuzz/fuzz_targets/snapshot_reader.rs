//! The snapshot reader (`SnapshotReader`: fixed header, metadata JSON, the
//! zstd record stream of page, process and end records), on the input read
//! from memory (`SnapshotReader::from_reader`, the code `open` runs on a
//! file). No panic; at most 1024 pages read per input (a few bytes of zstd
//! can stand for gigabytes), memory bounded by `-rss_limit_mb`; every error
//! names the file and a byte offset inside it, and ends the stream. Write
//! then read, on one input in [`WRITE_EVERY`] (by a hash of its bytes; a
//! writer's zstd context cost more than the rest of an execution): a
//! snapshot written with `SnapshotWriter` (a file in a tmpfs) of pages,
//! regions and process names cut from the input reads back to exactly them.
//! One such write in [`FLUSH_EVERY`] flushes after its first page, so it
//! streams with the 8 MiB window as a capture does; the others end as one
//! frame of known size (the writer holds bytes until a flush or 1 MiB).
#![no_main]

use std::path::{Path, PathBuf};

use cannery_capture::maps::RegionKind;
use cannery_capture::snapshot::reader::SnapshotReader;
use cannery_capture::snapshot::writer::SnapshotWriter;
use cannery_capture::Metadata;
use cannery_files::output::Existing;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// One input in this many (by `common::hash`) is also written and read back.
const WRITE_EVERY: u32 = 16;

/// One write in this many (by the same hash) flushes after its first page.
const FLUSH_EVERY: u32 = 4;

/// This process's scratch files.
fn scratch(name: &str) -> PathBuf {
    common::scratch_dir().join(name)
}

/// An error of the reader names `path` and an offset no further than `len`.
fn check_error(e: &cannery_capture::Error, path: &std::path::Path, len: u64) {
    let msg = e.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    if let Some(off) = e.offset() {
        assert!(
            off <= len.max(128) + (1 << 20),
            "offset {off} beyond a {len}-byte file: {msg}"
        );
        assert!(msg.contains(&format!("at byte offset {off}")), "{msg}");
    }
}

fuzz_target!(|data: &[u8]| {
    let path = Path::new("input.cansnap");
    let len = data.len() as u64;
    match SnapshotReader::from_reader(path, std::io::Cursor::new(data.to_vec()), len) {
        Ok(mut r) => {
            for _ in 0..1024 {
                match r.next() {
                    None => break,
                    Some(Ok(p)) => assert_eq!(p.data.len(), 4096),
                    Some(Err(e)) => {
                        check_error(&e, path, len);
                        assert!(r.next().is_none(), "the stream ends at its first error");
                        break;
                    }
                }
            }
        }
        Err(e) => check_error(&e, path, len),
    }

    // Write then read: up to 3 pages and 2 processes cut from the input.
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    if !common::hash(data).is_multiple_of(WRITE_EVERY) {
        return;
    }
    let out = scratch("written.cansnap");
    let meta = Metadata {
        label: String::from_utf8_lossy(&rest[..rest.len().min(16)]).into_owned(),
        ..Metadata::default()
    };
    let mut w = SnapshotWriter::create(&out, meta.clone(), 1, Existing::Replace).expect("writer");
    let comm = String::from_utf8_lossy(&rest[..rest.len().min(ctl as usize % 20)]).into_owned();
    let regions = [
        RegionKind::Heap,
        RegionKind::Stack,
        RegionKind::Anon,
        RegionKind::FilePrivate,
    ];
    let mut written = Vec::new();
    let flush = (common::hash(data) / WRITE_EVERY).is_multiple_of(FLUSH_EVERY);
    for (i, chunk) in rest.chunks(4096).take(3).enumerate() {
        if i == usize::from(ctl >> 6) {
            w.begin_process(i as u32, u32::from(ctl), &comm)
                .expect("process record");
        }
        let page = [chunk, &vec![ctl; 4096 - chunk.len()]].concat();
        let region = regions[(ctl as usize + i) % 4];
        w.write_page(region, &page).expect("page record");
        if flush && i == 0 {
            w.flush().expect("flush");
        }
        written.push((page, region));
    }
    let header = w.finish().expect("snapshot finishes");
    assert_eq!(header.meta, meta);
    let mut r = SnapshotReader::open(&out).expect("own snapshot opens");
    assert_eq!(r.header().meta, meta);
    let mut back = Vec::new();
    while let Some(p) = r.next() {
        let p = p.expect("own pages read");
        if back.len() >= usize::from(ctl >> 6) {
            assert_eq!(r.process().map(|p| p.comm.as_str()), Some(comm.as_str()));
        }
        back.push((p.data, p.region));
    }
    assert_eq!(back, written);
});
