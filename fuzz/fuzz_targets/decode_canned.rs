//! Decode arbitrary bytes as a canned stream with an arbitrary valid table,
//! and as raw deflate: never panics, never produces more than the limit.
#![no_main]

use cannery_codec::decode::inflate;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let allow_uncoded = data.first().is_some_and(|b| b & 1 == 1);
    common::with_codec(data, allow_uncoded, |c| {
        let stream = &data[common::TABLE_BYTES..];
        let limit = 1 + (data[1] as usize * 16) % 4096;
        let d = &c.decoder;
        let mut out = vec![0u8; limit];
        if let Ok(n) = d.decompress(stream, &mut out) {
            assert!(n <= limit);
            // The token view agrees with the byte view.
            let toks = d
                .tokens(stream, limit)
                .expect("tokens of a decodable stream");
            assert_eq!(toks.iter().map(|t| t.len()).sum::<usize>(), n);
        }
        let mut out = vec![0u8; limit];
        if let Ok(n) = inflate(stream, &mut out) {
            assert!(n <= limit);
        }
    });
});
