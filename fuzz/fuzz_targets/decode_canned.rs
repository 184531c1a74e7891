//! Decode arbitrary bytes as a canned stream with an arbitrary valid table,
//! and as raw deflate: never panics, never produces more than the limit.
#![no_main]

use cannery_codec::decode::inflate;
use cannery_codec::CannedDecoder;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some(table) = common::table_from(data, data.first().is_some_and(|b| b & 1 == 1)) else {
        return;
    };
    let stream = &data[common::TABLE_BYTES..];
    let limit = 1 + (data[1] as usize * 16) % 4096;
    let d = CannedDecoder::new(&table);
    let mut out = vec![0u8; limit];
    if let Ok(n) = d.decompress(stream, &mut out) {
        assert!(n <= limit);
        // The token view agrees with the byte view.
        let toks = d.tokens(stream, limit).expect("tokens of a decodable stream");
        assert_eq!(toks.iter().map(|t| t.len()).sum::<usize>(), n);
    }
    let mut out = vec![0u8; limit];
    if let Ok(n) = inflate(stream, &mut out) {
        assert!(n <= limit);
    }
});
