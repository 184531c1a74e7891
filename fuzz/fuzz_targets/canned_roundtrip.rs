//! Canned round trip: any page (≤ 4096 bytes) with any encodable table, at
//! any level, decodes back to the page, and the stream re-encodes to the
//! same bytes from its tokens.
#![no_main]

use cannery_codec::backend::check::{reencode_canned, Reencode};
use cannery_codec::{CannedDecoder, Encoder, Format, Level, Mode, Outcome};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some(table) = common::table_from(data, false) else {
        return;
    };
    let rest = &data[common::TABLE_BYTES..];
    let Some((&lvl, page)) = rest.split_first() else {
        return;
    };
    let page = &page[..page.len().min(4096)];
    let level = Level::ALL[lvl as usize % 3];
    let mut e = Encoder::new(Mode::Canned, Format::Iaa, level, Some(&table)).expect("encodable table");
    let mut out = Vec::new();
    match e.compress(page, &mut out).expect("page fits") {
        Outcome::Incompressible => {}
        Outcome::Compressed(n) => {
            let mut back = vec![0u8; 4096];
            let m = CannedDecoder::new(&table).decompress(&out[..n], &mut back).expect("own stream decodes");
            assert_eq!(&back[..m], page);
            assert_eq!(reencode_canned(&table, &out[..n]).expect("decodes"), Ok(Reencode::Exact));
        }
    }
});
