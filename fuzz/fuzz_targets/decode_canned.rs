//! Decode arbitrary bytes as a canned stream with an arbitrary valid table,
//! and as raw deflate: never panics, never produces more than the limit.
//! Input: the table (`common::with_table`), a limit byte, the stream.
#![no_main]

use cannery_codec::decode::inflate;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::with_table(data, true, |c, rest| {
        let Some((&lim, stream)) = rest.split_first() else {
            return;
        };
        let limit = 1 + (lim as usize * 16) % 4096;
        let d = c.decoder();
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

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    common::mutate(data, size, max_size, seed)
});
