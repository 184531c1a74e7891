//! Canned round trip: any page (≤ 4096 bytes) with any encodable table, at
//! any level, decodes back to the page, and the stream re-encodes to the
//! same bytes from its tokens. Input: the table (`common::with_table`), a
//! level byte, the page.
#![no_main]

use cannery_codec::{Level, Outcome};
use cannery_engines::backend::check::{reencode_canned_with, Reencode};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::with_table(data, false, |c, rest| {
        let Some((&lvl, page)) = rest.split_first() else {
            return;
        };
        let page = &page[..page.len().min(4096)];
        let level = Level::ALL[lvl as usize % 3];
        let e = c.encoder(level).expect("encodable table");
        let mut out = Vec::new();
        match e.compress(page, &mut out).expect("page fits") {
            Outcome::Incompressible => {}
            Outcome::Compressed(n) => {
                let mut back = vec![0u8; 4096];
                let (t, d) = c.table_and_decoder();
                let m = d
                    .decompress(&out[..n], &mut back)
                    .expect("own stream decodes");
                assert_eq!(&back[..m], page);
                let again = reencode_canned_with(d, t, &out[..n]).expect("decodes");
                assert_eq!(again, Ok(Reencode::Exact));
            }
        }
    });
});
