//! The records reader behind `cannery decompress`: arbitrary bytes read as a
//! records file (`RecordReader`) and decoded record by record
//! (`decompress_records`, in the mode the first byte picks: fixed, dynamic,
//! or canned with `common::sample_table`). No panic; a read either ends
//! cleanly with records that tile the input exactly, or fails with an error
//! that names the record and its byte offset. A page stream decodes to
//! whole pages. Write then read: the input's bytes written as records read
//! back unchanged; on one input in [`PAGES_EVERY`] (by a hash of its bytes:
//! compressing three pages cost more than the rest of an execution), so do
//! the bytes as compressed pages.
#![no_main]

use std::cell::RefCell;

use cannery_codec::records::{Record, RecordReader, RecordWriter};
use cannery_codec::transcode::{compress_pages, decompress_records};
use cannery_codec::{Decoder, Encoder, Format, Level, Mode};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// One input in this many (by `common::hash`) is also compressed as pages
/// and read back.
const PAGES_EVERY: u32 = 16;

thread_local! {
    /// A (decoder, encoder) per mode, built once.
    static CODECS: RefCell<Vec<(Decoder, Encoder)>> = RefCell::new(
        Mode::ALL
            .into_iter()
            .map(|mode| {
                let t = common::sample_table();
                let e = Encoder::new(mode, Format::Iaa, Level::Fast, Some(&t)).expect("complete table");
                (Decoder::new(mode, Format::Iaa, Some(&t)).expect("table given"), e)
            })
            .collect()
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&ctl, rest)) = data.split_first() else {
        return;
    };
    // The records as read: they tile the input, or the error says where.
    let mut end = 0u64;
    let mut reader = RecordReader::new(rest);
    let mut r = Record::default();
    let mut i = 0;
    while let Some(read) = reader.next_into(&mut r) {
        match read {
            Ok(()) => {
                assert_eq!((r.index, r.offset), (i as u64, end));
                end += 4 + r.data.len() as u64;
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains(&format!("record {i} at byte offset {end}")),
                    "{msg}"
                );
                end = u64::MAX;
            }
        }
        i += 1;
    }
    assert!(end == rest.len() as u64 || end == u64::MAX);

    CODECS.with_borrow_mut(|codecs| {
        let (decoder, encoder) = &mut codecs[ctl as usize % 3];
        let max_output = (ctl & 0x80 != 0).then_some(1 + 512 * (ctl as usize >> 3 & 15));
        let mut out = Vec::new();
        match decompress_records(decoder, rest, &mut out, max_output) {
            Ok(n) => {
                assert!(end == rest.len() as u64);
                if max_output.is_none() {
                    assert_eq!(out.len() as u64, 4096 * n);
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with("record "), "{msg}");
            }
        }

        // Write then read: records of the input's bytes (lengths from the
        // control byte), and the bytes as pages compressed then decoded.
        let step = 1 + (ctl as usize & 0x7f) * 37;
        let mut w = RecordWriter::new(Vec::new());
        for chunk in rest.chunks(step) {
            w.write(chunk).expect("to memory");
        }
        let file = w.finish().expect("to memory");
        // Record by record into one buffer (a vector per record, up to
        // 8,192 of them, cost more than the rest under ASan's allocator).
        let mut chunks = rest.chunks(step);
        let mut reader = RecordReader::new(&file[..]);
        while let Some(read) = reader.next_into(&mut r) {
            read.expect("own records");
            assert_eq!(Some(&r.data[..]), chunks.next());
        }
        assert_eq!(chunks.next(), None, "every record read back");

        if !common::hash(data).is_multiple_of(PAGES_EVERY) {
            return;
        }
        let pages: Vec<Vec<u8>> = rest
            .chunks(4096)
            .take(3)
            .map(|c| [c, &vec![0; 4096 - c.len()]].concat())
            .collect();
        let mut file = Vec::new();
        let pages_ok = pages.iter().map(|p| Ok::<_, std::io::Error>(p.clone()));
        compress_pages(encoder, pages_ok, &mut file).expect("pages compress");
        let mut out = Vec::new();
        let n = decompress_records(decoder, &file[..], &mut out, None).expect("own records decode");
        assert_eq!(n, pages.len() as u64);
        assert_eq!(out, pages.concat());
    });
});
