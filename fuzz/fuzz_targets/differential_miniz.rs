//! Differential: a canned stream with the table's header in front, read by
//! miniz_oxide, must give what our canned decoder gives. Our decoder is the
//! stricter one (4096-byte window, zero padding, nothing after the stream
//! but QPL's empty fixed block), so whenever ours accepts, miniz_oxide must
//! accept with the same bytes. Our own streams must decode in both.
//! Input: the table (`common::with_table`), then the stream (or page).
#![no_main]

use cannery_codec::{Level, Outcome};
use cannery_engines::backend::canned_to_deflate;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::with_table(data, false, |c, rest| {
        // Arbitrary bytes as a canned stream.
        let mut ours = vec![0u8; 4096];
        if let Ok(n) = c.decoder().decompress(rest, &mut ours) {
            let deflate = canned_to_deflate(&c.table, rest).expect("complete table");
            let theirs = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflate, 4096)
                .expect("miniz_oxide accepts what ours accepts");
            assert_eq!(&theirs[..], &ours[..n]);
        }
        // The bytes as a page, compressed by us.
        let page = &rest[..rest.len().min(4096)];
        let e = c.encoder(Level::Fast).expect("encodable table");
        let mut out = Vec::new();
        if let Outcome::Compressed(n) = e.compress(page, &mut out).unwrap() {
            let deflate = canned_to_deflate(&c.table, &out[..n]).unwrap();
            let theirs =
                miniz_oxide::inflate::decompress_to_vec_with_limit(&deflate, 4096).unwrap();
            assert_eq!(theirs, page);
        }
    });
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    common::mutate(data, size, max_size, seed)
});
